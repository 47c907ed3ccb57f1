"""A conversation stored as JSON Lines: one message a line, appended and flushed as produced.

Resuming reads every complete line. A last line without its newline that does not parse is what
a crash mid-write leaves: it is set aside in a ``.partial`` file next to the session (so nothing
is lost, not even the fragment), the session is cut back to its last complete line, and the
caller is told. Any other unreadable line is corruption and stops the resume.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import IO

from agent.messages import Message, MessageFormatError, dumps, loads
from agent.redact import Redactor


class SessionError(Exception):
    """A session file that cannot be resumed."""


@dataclass(frozen=True)
class TruncatedTail:
    """What resuming found and did about an incomplete last line."""

    line_number: int
    kept_messages: int
    saved_to: str

    def describe(self, path: str) -> str:
        return (f"session {path}: line {self.line_number} was cut off mid-write (the previous run "
                f"stopped while saving it); resuming from the {self.kept_messages} complete "
                f"messages before it; the incomplete line was moved to {self.saved_to}")


def _free_name(base: str) -> str:
    candidate, n = base, 1
    while os.path.lexists(candidate):
        n += 1
        candidate = f"{base}.{n}"
    return candidate


def _parse(path: str, data: bytes) -> tuple[list[Message], int | None]:
    """The complete messages, and the byte offset where an incomplete last line starts (if any)."""
    messages: list[Message] = []
    lines = data.split(b"\n")
    last = lines.pop()  # after the final newline: b"" for a well-formed file
    offset = 0
    for number, raw in enumerate(lines, start=1):
        if raw.strip():
            try:
                messages.append(loads(raw.decode("utf-8")))
            except (MessageFormatError, UnicodeDecodeError) as exc:
                raise SessionError(f"session {path}: line {number} is not a valid message: "
                                   f"{exc}") from None
        offset += len(raw) + 1
    if last.strip():
        try:
            messages.append(loads(last.decode("utf-8")))
        except (MessageFormatError, UnicodeDecodeError):
            return messages, offset
    return messages, None


class Session:
    """An append-only session file. Use :meth:`open`; ``messages`` holds what was resumed."""

    def __init__(self, path: str, stream: IO[str], messages: list[Message],
                 truncated: TruncatedTail | None, redactor: Redactor) -> None:
        self.path = path
        self.messages = messages
        self.truncated = truncated
        self._stream = stream
        self._redact = redactor

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, secrets: Iterable[str] = ()) -> Session:
        """Open (creating if needed) and resume ``path``. ``secrets`` are never written."""
        path = os.fspath(path)
        try:
            with open(path, "rb") as existing:
                data = existing.read()
        except FileNotFoundError:
            data = b""
        messages, cut = _parse(path, data)
        truncated = None
        if cut is not None:
            saved = _free_name(path + ".partial")
            with open(saved, "xb") as aside:
                aside.write(data[cut:])
            os.truncate(path, cut)
            data = data[:cut]
            truncated = TruncatedTail(data.count(b"\n") + 1, len(messages), saved)
        stream = open(path, "a", encoding="utf-8", newline="\n")  # noqa: SIM115 (owned by the Session)
        if data and not data.endswith(b"\n"):
            # A complete last message that only lost its newline: finish the line first.
            stream.write("\n")
            stream.flush()
        return cls(path, stream, messages, truncated, Redactor(secrets))

    def append(self, message: Message) -> None:
        self._stream.write(self._redact(dumps(message)) + "\n")
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
