"""Append-only JSON Lines files: the session and the audit log are both written through here.

A line is written whole and flushed before :meth:`JsonLinesWriter.append` returns, so a reader
(the next run, ``audit verify``) sees every line appended so far and a crash tears at most the line
being written. Files are flushed, not fsynced: a power loss may lose the last lines.

Lines are ASCII: both callers serialise with ``ensure_ascii``, so a file reads the same in any
ASCII-compatible encoding, and a line that was not ASCII (or held a newline) fails here instead of
being stored. Parent directories are made. A file whose last line lost its newline gets it back
before the first line appended, so a new line is never glued to an old one.
"""

from __future__ import annotations

import fcntl
import os
from typing import IO


class JsonLinesWriter:
    """Appends lines to ``path`` (created with its parent directories if missing).

    ``exclusive`` takes an advisory lock (``flock``) for as long as the writer is open; when
    another writer holds it, :class:`BlockingIOError` is raised at once and nothing is written.
    """

    def __init__(self, path: str, *, exclusive: bool = False) -> None:
        self.path = path
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        # "a+" (read as well) only so that the last byte can be read back with pread.
        self._stream: IO[str] = open(path, "a+", encoding="ascii", newline="\n")  # noqa: SIM115
        try:
            if exclusive:
                fcntl.flock(self._stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._line_open = not _ends_a_line(self._stream.fileno())
        except BaseException:
            self._stream.close()
            raise

    def append(self, line: str) -> None:
        """Write ``line`` (one JSON value, ASCII, no newline) and its newline, and flush."""
        if "\n" in line:
            raise ValueError("a JSON Lines line cannot hold a newline")
        if not line.isascii():
            raise ValueError("a JSON Lines line here must be ASCII (serialise with ensure_ascii)")
        self._stream.write(("\n" if self._line_open else "") + line + "\n")
        self._stream.flush()
        self._line_open = False

    def close(self) -> None:
        self._stream.close()


def _ends_a_line(fd: int) -> bool:
    """Whether the file is empty or ends with a newline."""
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"
