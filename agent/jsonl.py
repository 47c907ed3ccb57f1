"""Append-only JSON Lines files: the session and the audit log are both written through here.

A line is written whole and flushed before :meth:`JsonLinesWriter.append` returns, so a reader
(the next run, ``audit verify``) sees every line appended so far and a crash tears at most the line
being written. Files are flushed, not fsynced: a power loss may lose the last lines.

Each append goes by path and checks the path still names the file first opened, so a file
replaced under the writer (an atomic rewrite swaps the inode) stops the writer instead of
lines going to a file nobody will read.

Lines are ASCII: both callers serialise with ``ensure_ascii``, so a file reads the same in any
ASCII-compatible encoding, and a line that was not ASCII (or held a newline) fails here instead of
being stored. Parent directories are made. A file whose last line lost its newline gets it back
before the first line appended, so a new line is never glued to an old one.
"""

from __future__ import annotations

import fcntl
import os


class FileReplaced(OSError):
    """The file at the writer's path is no longer the one it opened (replaced or removed)."""


class JsonLinesWriter:
    """Appends lines to ``path`` (created with its parent directories if missing).

    Each line is appended by path (``O_APPEND``, never through a final symlink) and only after
    checking that the path still names the file first opened (device and inode): a file swapped
    in by an atomic rename, or removed, is refused with :class:`FileReplaced` instead of lines
    going on to an unlinked inode nobody will read.

    ``exclusive`` takes an advisory lock (``flock``) for as long as the writer is open; when
    another writer holds it, :class:`BlockingIOError` is raised at once and nothing is written.
    """

    def __init__(self, path: str, *, exclusive: bool = False) -> None:
        self.path = path
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        # Read as well only so that the last byte can be read back with pread; kept open for
        # the lock and as the identity every append is checked against.
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        self._fd = os.open(path, flags, 0o600)
        try:
            if exclusive:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            status = os.fstat(self._fd)
            self._identity = (status.st_dev, status.st_ino)
            self._line_open = not _ends_a_line(self._fd)
        except BaseException:
            os.close(self._fd)
            raise

    def append(self, line: str) -> None:
        """Write ``line`` (one JSON value, ASCII, no newline) and its newline, and flush."""
        if "\n" in line:
            raise ValueError("a JSON Lines line cannot hold a newline")
        if not line.isascii():
            raise ValueError("a JSON Lines line here must be ASCII (serialise with ensure_ascii)")
        data = (("\n" if self._line_open else "") + line + "\n").encode("ascii")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            raise self._replaced() from None
        try:
            status = os.fstat(fd)
            if (status.st_dev, status.st_ino) != self._identity:
                raise self._replaced()
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        self._line_open = False

    def _replaced(self) -> FileReplaced:
        return FileReplaced(
            f"{self.path} was replaced or removed since this run opened it; nothing more is written to it"
        )

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _ends_a_line(fd: int) -> bool:
    """Whether the file is empty or ends with a newline."""
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"
