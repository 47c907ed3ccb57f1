"""``read {path}``: a workspace file as strict UTF-8 text, long files cut in the middle.

Counting characters. A file of at most ``WHOLE_READ_BYTES`` is read whole and decoded. A larger
one is streamed in ``CHUNK_BYTES`` pieces through an incremental strict UTF-8 decoder that keeps
only the first ``LIMIT`` characters and a rolling window of the last ``TAIL_CHARS``: so the
truncation count is exact, invalid UTF-8 anywhere is reported (not silently replaced), and memory
stays a few MiB whatever the file size. The price is one sequential pass over a huge file
(about a second per GiB here), which a cancel request interrupts between chunks.
"""

from __future__ import annotations

import codecs
import os
import threading
from typing import IO, Any

import safefs
from agent.tools.base import Tool, ToolOutput, check_path, path_error, string_schema

HEAD_CHARS = 8000
TAIL_CHARS = 8000
LIMIT = HEAD_CHARS + TAIL_CHARS  # more characters than this are truncated
CHUNK_BYTES = 1 << 20
# A UTF-8 character is at most 4 bytes, so a file this small holds at most 16,000 characters'
# worth of bytes times 4: reading it whole costs no more than one chunk.
WHOLE_READ_BYTES = 4 * LIMIT


class ReadCancelled(Exception):
    pass


class InvalidUtf8(Exception):
    def __init__(self, offset: int) -> None:
        super().__init__(f"invalid UTF-8 at byte offset {offset}")
        self.offset = offset


def truncation_marker(omitted: int) -> str:
    return f"[truncated {omitted} characters]"


def render(head: str, tail: str, total: int) -> str:
    """The text shown for a file of ``total`` characters starting with ``head``, ending with ``tail``."""
    if total <= LIMIT:
        return head
    return f"{head[:HEAD_CHARS]}\n{truncation_marker(total - LIMIT)}\n{tail[-TAIL_CHARS:]}"


def read_bounded(stream: IO[bytes], size_hint: int,
                 cancel: threading.Event | None = None) -> str:
    """Decode ``stream`` as strict UTF-8 and render it, holding at most a few chunks in memory."""
    if size_hint <= WHOLE_READ_BYTES:
        data = stream.read(WHOLE_READ_BYTES + 1)
        if len(data) <= WHOLE_READ_BYTES:
            try:
                text = data.decode("utf-8", "strict")
            except UnicodeDecodeError as exc:
                raise InvalidUtf8(exc.start) from None
            return render(text, text, len(text))
        # The file grew past the hint while we looked: stream it from where we are.
        return _stream(stream, data, cancel)
    return _stream(stream, b"", cancel)


def _stream(stream: IO[bytes], first: bytes, cancel: threading.Event | None) -> str:
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    head = ""
    tail = ""
    total = 0
    offset = 0  # bytes consumed before the current chunk
    chunk = first or stream.read(CHUNK_BYTES)
    while True:
        final = not chunk
        pending = len(decoder.getstate()[0])  # bytes of a character split across chunks
        try:
            text = decoder.decode(chunk, final=final)
        except UnicodeDecodeError as exc:
            raise InvalidUtf8(offset - pending + exc.start) from None
        offset += len(chunk)
        total += len(text)
        if len(head) < LIMIT:
            head += text[: LIMIT - len(head)]
        tail = (tail + text)[-TAIL_CHARS:] if len(text) < TAIL_CHARS else text[-TAIL_CHARS:]
        if final:
            return render(head, tail, total)
        if cancel is not None and cancel.is_set():
            raise ReadCancelled()
        chunk = stream.read(CHUNK_BYTES)


class ReadTool(Tool):
    name = "read"
    description = (
        "Read a UTF-8 text file in the workspace. Paths are relative to the workspace. Files over "
        f"{LIMIT} characters are shown as the first {HEAD_CHARS} and last {TAIL_CHARS} characters "
        "with a [truncated N characters] line between them."
    )
    input_schema = string_schema(path="File path, relative to the workspace root.")

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        path: str = args["path"]
        problem = check_path(path)
        if problem is not None:
            return ToolOutput(f"invalid path: {problem}", is_error=True)
        try:
            # safefs refuses a FIFO, socket or device at open time (O_NONBLOCK, then fstat).
            with self.root.open(path, "rb") as stream:
                size = os.fstat(stream.fileno()).st_size
                return ToolOutput(read_bounded(stream, size, cancel))
        except ReadCancelled:
            return ToolOutput(f"read of {path!r} cancelled", is_error=True)
        except InvalidUtf8 as exc:
            return ToolOutput(f"not valid UTF-8: {path!r} ({exc})", is_error=True)
        except OSError as exc:
            return path_error(exc, path)
