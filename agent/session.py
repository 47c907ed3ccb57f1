"""A conversation stored as JSON Lines: one message a line, appended and flushed as produced.

The first line of a file this module creates is a header, ``{"format":"safefs-agent-session",
"version":1}``; a file with another version is refused, with a message saying so. Files written
before the header existed (their first line is a message) are read as version 1, which they are.
A UTF-8 byte order mark at the start (as some editors add) is skipped. The API key is kept out of
the file by spelling (see ``agent.redact.JsonHider``), never by changing what is stored.

Resuming reads every complete line. A last line without its newline that does not parse is what
a crash mid-write leaves: it is set aside in a ``.partial`` file next to the session (so nothing
is lost, not even the fragment), the session is cut back to its last complete line, and the
caller is told. Any other unreadable line is corruption and stops the resume.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType

from agent.jsonl import JsonLinesWriter
from agent.messages import Message, MessageFormatError, loads, message_to_dict
from agent.redact import JsonHider

FORMAT = "safefs-agent-session"
VERSION = 1
BOM = b"\xef\xbb\xbf"


class SessionError(Exception):
    """A session file that cannot be resumed."""


@dataclass(frozen=True)
class TruncatedTail:
    """What resuming found and did about an incomplete last line."""

    line_number: int
    kept_messages: int
    saved_to: str

    def describe(self, path: str) -> str:
        return (
            f"session {path}: line {self.line_number} was cut off mid-write (the previous run "
            f"stopped while saving it); resuming from the {self.kept_messages} complete "
            f"messages before it; the incomplete line was moved to {self.saved_to}"
        )


def _free_name(base: str) -> str:
    candidate, n = base, 1
    while os.path.lexists(candidate):
        n += 1
        candidate = f"{base}.{n}"
    return candidate


def _header_version(path: str, raw: bytes) -> int | None:
    """The version a header line declares (refusing any other); None when the line is not a
    header, as in files from before the header existed."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or "format" not in data:
        return None
    if data["format"] != FORMAT:
        raise SessionError(f"session {path}: not a safefs-agent session (format {data['format']!r})")
    version = data.get("version")
    if version != VERSION:
        raise SessionError(
            f"session {path}: format version {version!r} is not supported (this "
            f"safefs-agent reads version {VERSION}); use the safefs-agent that "
            "wrote it, or start a new session file"
        )
    return VERSION


def _parse(path: str, data: bytes) -> tuple[list[Message], int | None]:
    """The complete messages, and the byte offset where an incomplete last line starts (if any)."""
    messages: list[Message] = []
    offset = len(BOM) if data.startswith(BOM) else 0
    lines = data[offset:].split(b"\n")
    last = lines.pop()  # after the final newline: b"" for a well-formed file
    for number, raw in enumerate(lines, start=1):
        if raw.strip() and (number > 1 or _header_version(path, raw) is None):
            try:
                messages.append(loads(raw.decode("utf-8")))
            except (MessageFormatError, UnicodeDecodeError) as exc:
                raise SessionError(f"session {path}: line {number} is not a valid message: {exc}") from None
        offset += len(raw) + 1
    if last.strip():
        if not lines and _header_version(path, last) is not None:
            return messages, None
        try:
            messages.append(loads(last.decode("utf-8")))
        except (MessageFormatError, UnicodeDecodeError):
            return messages, offset
    return messages, None


def read_messages(path: str | os.PathLike[str]) -> list[Message]:
    """The complete messages of a session file, without changing it (a torn last line is
    left out)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        return _parse(path, f.read())[0]


class Session:
    """An append-only session file. Use :meth:`open`; ``messages`` holds what was resumed."""

    def __init__(
        self,
        path: str,
        writer: JsonLinesWriter,
        messages: list[Message],
        truncated: TruncatedTail | None,
        hider: JsonHider,
    ) -> None:
        self.path = path
        self.messages = messages
        self.truncated = truncated
        self._writer = writer
        self._hider = hider

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, secrets: Iterable[str] = ()) -> Session:
        """Open (creating it and its parent directories if needed) and resume ``path``.
        No run of a ``secrets`` value appears in the file."""
        path = os.fspath(path)
        try:
            return cls._open(path, secrets)
        except OSError as exc:
            raise SessionError(f"cannot use session {path}: {exc.strerror or exc}") from None

    @classmethod
    def _open(cls, path: str, secrets: Iterable[str]) -> Session:
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
        # A complete last message that only lost its newline gets it back from the writer.
        writer = JsonLinesWriter(path)
        if not data.strip(BOM + b" \t\r\n"):
            writer.append(json.dumps({"format": FORMAT, "version": VERSION}, separators=(",", ":")))
        return cls(path, writer, messages, truncated, JsonHider(secrets))

    def append(self, message: Message) -> None:
        self._writer.append(self._hider.dumps(message_to_dict(message)))

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
