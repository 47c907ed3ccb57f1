"""Reading workspace files as text, in bounded memory, whole or by line range.

A file is decoded as it is streamed, ``CHUNK_BYTES`` at a time, through an incremental UTF-8
decoder: memory stays a few MiB whatever the file size, and a cancel request stops the read
between chunks. ``errors="strict"`` reports invalid UTF-8 with its byte offset (the agent's
``read``); ``errors="replace"`` shows it as U+FFFD (the MCP server, as the official one does).

Two views:

- :func:`read_whole`: a file of at most ``LIMIT`` characters as it is; a longer one as its first
  ``HEAD_CHARS`` and last ``TAIL_CHARS`` characters around a line saying how many were cut and
  which lines to ask for to see them.
- :func:`read_lines`: lines ``offset`` .. ``offset + limit - 1`` (1-based) and the file's line
  count, cut at whole lines to stay within a character budget.
"""

from __future__ import annotations

import codecs
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

import safefs
from safefs.workspace.errors import PATH, WorkspaceError, os_failure, require_path
from safefs.workspace.limits import MAX_RESULT_CHARS

HEAD_CHARS = 8000
TAIL_CHARS = 8000
LIMIT = HEAD_CHARS + TAIL_CHARS  # more characters than this are cut in the middle
CHUNK_BYTES = 1 << 20
# A UTF-8 character is at most 4 bytes: a file this small costs no more than one chunk.
WHOLE_READ_BYTES = 4 * LIMIT
DEFAULT_LINE_LIMIT = 2000
RANGE_CHUNK_BYTES = 1 << 16  # decoding stops soon after the range ends
COUNT_AFTER_RANGE_BYTES = 1 << 20  # past the range, lines are counted this far, then estimated


class ReadCancelled(Exception):
    pass


class InvalidUtf8(Exception):
    def __init__(self, offset: int) -> None:
        super().__init__(f"invalid UTF-8 at byte offset {offset}")
        self.offset = offset


def decoded_chunks(
    stream: IO[bytes], *, errors: str = "strict", first: bytes = b"", cancel: threading.Event | None = None
) -> Iterator[str]:
    """The stream's text, a chunk at a time; InvalidUtf8 names the byte offset (strict only)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
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
        if text:
            yield text
        if final:
            return
        if cancel is not None and cancel.is_set():
            raise ReadCancelled()
        chunk = stream.read(CHUNK_BYTES)


def truncation_marker(omitted: int, first_line: int, last_line: int, total_lines: int) -> str:
    return (
        f"[truncated {omitted} characters, within lines {first_line}-{last_line} of "
        f"{total_lines}; read with offset and limit to see them]"
    )


def _line_count(newlines: int, last_char: str) -> int:
    return newlines + (1 if last_char and last_char != "\n" else 0)


def read_bounded(stream: IO[bytes], size_hint: int, cancel: threading.Event | None = None) -> str:
    """The text of ``stream`` (strict UTF-8), cut in the middle past ``LIMIT`` characters."""
    first = b""
    if size_hint <= WHOLE_READ_BYTES:
        first = stream.read(WHOLE_READ_BYTES + 1)
        if len(first) <= WHOLE_READ_BYTES:
            try:
                text = first.decode("utf-8", "strict")
            except UnicodeDecodeError as exc:
                raise InvalidUtf8(exc.start) from None
            if len(text) <= LIMIT:
                return text
        # Too many characters, or the file grew past the hint: stream it from the start.
    head = ""
    tail = ""
    total = 0
    newlines = 0
    for text in decoded_chunks(stream, first=first, cancel=cancel):
        total += len(text)
        newlines += text.count("\n")
        if len(head) < LIMIT:
            head += text[: LIMIT - len(head)]
        tail = (tail + text)[-TAIL_CHARS:] if len(text) < TAIL_CHARS else text[-TAIL_CHARS:]
    if total <= LIMIT:
        return head
    head = head[:HEAD_CHARS]
    first_line = head.count("\n") + 1
    last_line = newlines - tail.count("\n") + 1
    marker = truncation_marker(total - LIMIT, first_line, last_line, _line_count(newlines, tail[-1:]))
    return f"{head}\n{marker}\n{tail}"


@contextmanager
def _reading(root: safefs.Root, path: str) -> Iterator[IO[bytes]]:
    """The file open for reading; every failure becomes a WorkspaceError naming ``path``."""
    require_path(path)
    try:
        # safefs refuses a FIFO, socket or device at open time (O_NONBLOCK, then fstat).
        with root.open(path, "rb") as stream:
            yield stream
    except OSError as exc:
        raise os_failure(exc, path) from None
    except InvalidUtf8 as exc:
        raise WorkspaceError.naming(f"not valid UTF-8: {PATH} ({exc})", path) from None
    except ReadCancelled:
        raise WorkspaceError.naming(f"read of {PATH} cancelled", path) from None


def read_whole(root: safefs.Root, path: str, cancel: threading.Event | None = None) -> str:
    """The file's text by the 16,000-character rule (strict UTF-8)."""
    with _reading(root, path) as stream:
        return read_bounded(stream, os.fstat(stream.fileno()).st_size, cancel)


@dataclass(frozen=True)
class LineRange:
    """Lines ``first`` .. ``last`` (1-based; ``last < first`` when none) of ``total``."""

    text: str
    first: int
    last: int
    total: int
    cut_at_budget: bool  # the range asked for did not fit; ``last`` is where it stopped
    line_cut: bool = False  # the only line shown was itself cut to fit
    total_known: bool = True  # False: the file goes on past what was counted; ``total`` is a floor

    @property
    def total_text(self) -> str:
        """The line count as a reader should see it: ``2735``, or ``at least 10101``."""
        return str(self.total) if self.total_known else f"at least {self.total}"


def number_prefix(line: int) -> str:
    """``cat -n``'s prefix: the line number right-aligned in six columns, then a tab."""
    return f"{line:6}\t"


def lines_of(
    stream: IO[bytes],
    offset: int,
    limit: int,
    *,
    budget: int = MAX_RESULT_CHARS,
    errors: str = "strict",
    numbered: bool = False,
    count_all: bool = False,
    cancel: threading.Event | None = None,
) -> LineRange:
    """Lines ``offset`` .. ``offset + limit - 1`` of ``stream`` within ``budget`` characters
    (``numbered``: each line after its ``cat -n`` prefix, counted in the budget).

    Lines are shown whole: one that does not fit is left for the next read (``last`` is the
    line before it), however many chunks it took to decode. Only the range's first line may be
    shown in part, when it alone is longer than the budget (``line_cut``).

    Only the bytes up to the end of the range are decoded; past it the rest of the file is only
    counted, newline bytes in raw chunks (a UTF-8 multi-byte sequence never holds the byte
    ``\n``), and only for ``COUNT_AFTER_RANGE_BYTES`` unless ``count_all``: a range near the
    start of a 50 MB file costs about what ``sed -n 'A,Bp;Bq'`` costs, and its line count is then
    a floor (``total_known`` False). Memory holds one chunk."""
    end = offset + limit - 1
    kept: list[str] = []
    size = 0
    line = 1  # the line the next character belongs to
    last_shown = offset - 1
    cut = line_cut = False
    line_from = size_from = 0  # in ``kept``, where the line being shown starts, and the size before it
    last_char = ""
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    consumed = 0  # bytes read before the current chunk
    done = False  # the range is shown (or cut): the rest is only counted
    counted = 0
    total_known = True
    # Lines before the range are skipped in raw bytes: counted, never decoded.
    skipped = b""
    while line < offset:
        if cancel is not None and cancel.is_set():
            raise ReadCancelled()
        # Small reads: the chunk that holds the range's start is split only up to it, so the
        # split makes few pieces (a cost per line skipped), and what follows is small.
        chunk = stream.read(RANGE_CHUNK_BYTES)
        if not chunk:
            break
        found = chunk.count(b"\n")
        if line + found < offset:
            line += found
            consumed += len(chunk)
            last_char = "\n" if chunk.endswith(b"\n") else "x"
            continue
        skipped = chunk.split(b"\n", offset - line)[-1]  # what follows the newline ending line offset-1
        consumed += len(chunk) - len(skipped)
        line = offset
        last_char = "\n"
    while True:
        if cancel is not None and cancel.is_set():
            raise ReadCancelled()
        if skipped:
            chunk, skipped = skipped, b""
        else:
            chunk = stream.read(CHUNK_BYTES if done else RANGE_CHUNK_BYTES)
        if done:
            if not chunk:
                break
            line += chunk.count(b"\n")
            last_char = chr(chunk[-1]) if chunk[-1] < 0x80 else "x"
            counted += len(chunk)
            if not count_all and counted >= COUNT_AFTER_RANGE_BYTES:
                total_known = not stream.read(1)  # the end came just here: the count is whole
                break
            continue
        pending = len(decoder.getstate()[0])
        try:
            text = decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            raise InvalidUtf8(consumed - pending + exc.start) from None
        consumed += len(chunk)
        if text:
            last_char = text[-1]
            pieces = text.split("\n")
            last = len(pieces) - 1
            for i, piece in enumerate(pieces):
                if cut or line > end:
                    line += last - i  # the rest of this text is only counted
                    break
                ends_line = i < last
                if not piece and not ends_line:
                    continue  # nothing of this line yet (the chunk ended at a newline)
                if offset <= line <= end and not cut:
                    starts = last_shown < line
                    if starts:  # where this line's parts begin, to take them back if it overflows
                        line_from, size_from = len(kept), size
                    part = (number_prefix(line) if numbered and starts else "") + piece
                    part += "\n" if ends_line else ""
                    if size + len(part) > budget:
                        if line_from == 0:  # the range's first line is longer than the budget
                            kept.append(part[: budget - size])
                            line_cut = True
                            last_shown = line
                        else:  # a line shown whole or not at all: the next read starts at it
                            del kept[line_from:]
                            size = size_from
                            last_shown = line - 1
                        cut = True
                    else:
                        kept.append(part)
                        size += len(part)
                        last_shown = line
                if ends_line:
                    line += 1
            if cut or line > end:
                done = True
        if not chunk:
            break
    total = _line_count(line - 1, last_char) if total_known else max(line, 1)
    return LineRange("".join(kept), offset, min(last_shown, total), total, cut, line_cut, total_known)


def read_lines(
    root: safefs.Root,
    path: str,
    offset: int = 1,
    limit: int = DEFAULT_LINE_LIMIT,
    *,
    budget: int = MAX_RESULT_CHARS,
    errors: str = "strict",
    numbered: bool = False,
    count_all: bool = False,
    cancel: threading.Event | None = None,
) -> LineRange:
    if offset < 1:
        raise WorkspaceError(f"offset must be 1 or more (lines are numbered from 1), got {offset}")
    if limit < 1:
        raise WorkspaceError(f"limit must be 1 or more, got {limit}")
    with _reading(root, path) as stream:
        return lines_of(
            stream,
            offset,
            limit,
            budget=budget,
            errors=errors,
            numbered=numbered,
            count_all=count_all,
            cancel=cancel,
        )


def count_lines(root: safefs.Root, path: str, *, cancel: threading.Event | None = None) -> int:
    return read_lines(root, path, 1, 1, budget=0, errors="replace", count_all=True, cancel=cancel).total


def describe_range(r: LineRange, tool_hint: str) -> str:
    """A header line: which lines of how many, and how to go on when there is more."""
    if r.total == 0:
        return "[empty file: 0 lines]"
    if r.first > r.total and r.total_known:
        return f"[offset {r.first} is past the end: the file has {r.total} lines]"
    head = f"[lines {r.first}-{r.last} of {r.total_text}"
    if r.line_cut:
        head += f"; line {r.last} is longer than {MAX_RESULT_CHARS} characters and was cut"
    elif r.cut_at_budget:
        head += f"; stopped at {MAX_RESULT_CHARS} characters"
    if r.last < r.total or not r.total_known:
        head += f"; {tool_hint} offset={r.last + 1} to continue"
    return head + "]"


@dataclass(frozen=True)
class Tail:
    text: str  # the last lines, each ending in "\n" but perhaps the file's last
    cut: bool  # fewer lines than asked: they did not fit in the budget


def tail_lines(
    root: safefs.Root, path: str, count: int, *, budget: int = MAX_RESULT_CHARS, errors: str = "strict"
) -> Tail:
    """The last ``count`` lines of the file, found by reading backwards from its end: the time
    and memory are those of the lines shown (at most ``budget`` characters, so at most
    ``4 * budget`` bytes are ever read), never of the file."""
    with _reading(root, path) as stream:
        size = os.fstat(stream.fileno()).st_size
        limit = 4 * budget + 4  # no more bytes can fit in the budget
        start = size
        newlines = 0
        tail = b""
        while start > 0 and size - start < limit:
            step = min(RANGE_CHUNK_BYTES, start, limit - (size - start))
            stream.seek(start - step)
            block = stream.read(step)
            start -= len(block)
            if not block:
                break
            tail = block + tail
            # A last line without "\n" counts as a line; the newline ending the file does not.
            newlines = tail.count(b"\n", 0, len(tail) - 1 if tail.endswith(b"\n") else len(tail))
            if newlines >= count:
                break
        body = tail
        if tail.endswith(b"\n"):
            body, last = tail[:-1], b"\n"
        else:
            last = b""
        pieces = body.split(b"\n")
        cut = False
        if start > 0 and len(pieces) <= count:
            pieces = pieces[1:]  # the first piece is a part of a line longer than the budget
            cut = True
        pieces = pieces[-count:]
        data = b"\n".join(pieces) + last
        try:
            text = data.decode("utf-8", errors)
        except UnicodeDecodeError as exc:
            raise WorkspaceError.naming(
                f"not valid UTF-8: {PATH} (invalid UTF-8 near the end, at byte {exc.start})", path
            ) from None
        while len(text) > budget and "\n" in text[:-1]:
            text = text[text.index("\n") + 1 :]  # drop whole lines from the start to fit
            cut = True
        if len(text) > budget:
            text, cut = text[-budget:], True
        return Tail(text, cut)
