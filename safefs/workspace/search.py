"""Finding files by name (glob) and by content (grep) in a workspace directory tree.

Both walk with :class:`safefs.workspace.walk.Walk`: git's ignore rules apply (unless
``ignore=False``), ``.git`` is skipped, symlinks are listed by name and never followed, special
files are never opened, and paths a policy hides (``hide``) are neither searched nor counted.

grep matches with RE2 (:mod:`safefs.workspace.regex`): linear time, whatever the pattern. A file
of up to ``BLOCK_BYTES`` is read whole by one bounded read (``Root.read_heads``, a batch of
files at a time in a worker thread, a batch ahead: see :func:`_read_ahead`) and answered by one
search of the buffer (a substring search first, when every match holds some literal bytes: see
:func:`required_literal`); a longer one is read a block of whole lines at a time, never whole.
Each block is searched by one RE2 call with ``never_nl`` (a match never spans lines, as in
ripgrep), so the cost per file is a few calls, not a Python loop over its lines; only a file
with a match to show is gone through line by line. RE2 holds the interpreter lock while it
matches; a block is small enough that each call is short, and the deadline and the cancel flag
are checked between files and blocks, so other threads (another MCP call) go on and a cancel
lands within one block. Binary files (a NUL byte in the first 8 KiB) and files over
``MAX_GREP_FILE_BYTES`` are skipped and counted.

Lines are ripgrep's: a line ends at ``\n`` and the newline ending the file starts no line after
it, so a pattern that matches empty text (``^$``, ``.*``) never matches past it; a UTF-8 byte
order mark at the start of a file is not part of line 1. A pattern that looks at where its text
starts or ends (``\\A``, ``\\z``, ``(?-m)^``) matches each line on its own, as in ripgrep, where
each line is the text: such a pattern is matched line by line (see :func:`matches_per_line`).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from typing import IO, Any

import safefs
from safefs.workspace.errors import WorkspaceError, os_failure, require_path
from safefs.workspace.limits import MAX_ENTRIES, MAX_GREP_FILE_BYTES, shorten_line
from safefs.workspace.patterns import compile_glob, glob_depth, literal_prefix, matches
from safefs.workspace.regex import Regex, compile_regex
from safefs.workspace.walk import STOP_CANCELLED, STOP_TIME, Entry, Hide, Walk, stop_note

BINARY_SNIFF_BYTES = 8192
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark: not part of line 1
BLOCK_BYTES = 256 << 10
READ_BATCH = 64  # files read by one Root.read_heads call (see _read_ahead)
SEARCH_SECONDS = 30.0  # every search has a deadline; past it the result is partial
MAX_CONTEXT = 100

OUTPUT_MODES = ("files_with_matches", "content", "count")

# ``type`` filter: the names each type covers (ripgrep's type list, the common part).
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "go": ("*.go",),
    "html": ("*.html", "*.htm"),
    "java": ("*.java",),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs"),
    "json": ("*.json",),
    "kotlin": ("*.kt", "*.kts"),
    "md": ("*.md", "*.markdown"),
    "php": ("*.php",),
    "py": ("*.py", "*.pyi"),
    "rb": ("*.rb",),
    "rust": ("*.rs",),
    "sh": ("*.sh", "*.bash", "*.zsh"),
    "sql": ("*.sql",),
    "swift": ("*.swift",),
    "toml": ("*.toml",),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "txt": ("*.txt",),
    "xml": ("*.xml",),
    "yaml": ("*.yaml", "*.yml"),
}


def _compose(*hides: Hide | None) -> Hide | None:
    present = [h for h in hides if h is not None]
    if not present:
        return None
    return lambda entry: any(h(entry) for h in present)


@dataclass
class GlobResult:
    matches: list[Entry]
    more: int  # matches past ``max_results``
    stopped_early: bool  # the walk hit its own bound
    note: str = ""  # why the walk stopped, when it did


def glob(
    root: safefs.Root,
    pattern: str,
    path: str = ".",
    *,
    ignore: bool = True,
    skip_git: bool | None = None,
    hide: Hide | None = None,
    max_results: int = MAX_ENTRIES,
    deadline: float | None = None,
    cancel: threading.Event | None = None,
) -> GlobResult:
    """Entries under ``path`` whose path relative to ``path`` matches ``pattern``. The walk
    starts at the pattern's literal prefix (``src/`` for ``src/**/*.py``). ``.git`` is left
    out while the ignore rules apply; ``skip_git`` decides it otherwise (default: as ``ignore``)."""
    require_path(path)
    regex = compile_glob(pattern)
    # The walk starts at ``path`` (the rules and the .git skip apply to the prefix's own
    # directories, as to any other: ``build/*`` lists nothing when build/ is ignored) and goes
    # down the pattern's literal prefix alone (``src/`` for ``src/**/*.py``), never beside it.
    on_prefix = _on_prefix(literal_prefix(pattern))
    walk = Walk(
        root,
        path,
        max_depth=glob_depth(pattern),
        ignore=ignore,
        skip_git=ignore if skip_git is None else skip_git,
        hide=on_prefix if hide is None else lambda e: on_prefix(e) or hide(e),
        deadline=time.monotonic() + SEARCH_SECONDS if deadline is None else deadline,
        cancel=cancel,
    )
    found: list[Entry] = []
    more = 0
    for entry in walk:
        if matches(regex, entry.rel):
            if len(found) < max_results:
                found.append(entry)
            else:
                more += 1
    return GlobResult(found, more, walk.stopped_early, walk.note())


def _on_prefix(prefix: str) -> Hide:
    """A ``hide`` for a walk that only goes down ``prefix``: it leaves out every entry that is
    neither on the prefix (``src``, ``src/app`` for ``src/app``) nor below it."""
    if not prefix:
        return lambda entry: False
    below = prefix + "/"

    def off_prefix(entry: Entry) -> bool:
        rel = entry.rel
        return not (rel.startswith(below) or below.startswith(rel + "/"))

    return off_prefix


@dataclass
class GrepResult:
    mode: str = "files_with_matches"
    entries: list[str] = field(default_factory=list)  # lines of output, after offset/head_limit
    entries_total: int = 0  # output entries before paging
    lines_matched: int = 0
    files_searched: int = 0
    files_matched: int = 0
    binary_skipped: int = 0
    large_skipped: int = 0
    unreadable: int = 0
    stop: str | None = None
    walked: int = 0

    @property
    def stopped_early(self) -> bool:
        return self.stop is not None

    @property
    def lines(self) -> list[str]:
        return self.entries

    def note(self) -> str:
        return stop_note(self.stop, self.walked)


def compile_search(pattern: str, *, ignore_case: bool = False, literal: bool = False) -> Regex:
    """``pattern`` as grep matches it: RE2, line by line (``^``/``$`` at line ends)."""
    if not pattern:
        raise WorkspaceError("search pattern must not be empty")
    return compile_regex(pattern, ignore_case=ignore_case, literal=literal, lines=True)


@dataclass
class _Options:
    regex: Any
    mode: str
    before: int
    after: int
    deadline: float
    cancel: threading.Event | None
    needle: bytes | None = None  # bytes every match holds (see required_literal)
    per_line: bool = False  # matched one line at a time (see matches_per_line)


# ``\A``, ``\z`` or a flag group turning ``m`` off: where a block of lines starts or ends differs
# from where a line does. Written broadly: a pattern it wrongly names is only matched slower.
_TEXT_EDGES = re.compile(r"\\[Az]|\(\?[a-zA-Z]*-[a-zA-Z]*m")


def matches_per_line(pattern: str, *, literal: bool = False) -> bool:
    r"""Whether ``pattern`` must be matched a line at a time: it looks at the start or the end of
    the text it is matched against (``\A``, ``\z``, ``^``/``$`` with ``m`` turned off), which
    ripgrep takes to be each line, and a search of a block of lines would take to be the block."""
    return not literal and _TEXT_EDGES.search(pattern) is not None


def _end(block: bytes) -> int:
    """Where the search of a block stops: before the newline that ends it, so that the empty text
    after the file's last newline, which is no line, is never matched."""
    return len(block) - 1 if block.endswith(b"\n") else len(block)


# Characters with a meaning in RE2's syntax; any other character of a pattern matches itself.
_SYNTAX = frozenset("\\^$.|?*+()[]{}")


def required_literal(pattern: str, *, ignore_case: bool = False, literal: bool = False) -> bytes | None:
    """Bytes that every match of ``pattern`` holds (its literal start), or None when there is
    none to tell: a file without them has no match, found by one substring search instead of a
    regular expression. Only patterns without ``|`` (an alternative would not hold them), matched
    with case. A quantifier after the literal start may make its last character optional, so
    that one is left out."""
    if ignore_case or not pattern:
        return None
    if literal:
        return pattern.encode("utf-8")
    if "|" in pattern:
        return None
    end = 0
    while end < len(pattern) and pattern[end] not in _SYNTAX:
        end += 1
    if end < len(pattern) and pattern[end] in "?*{":
        end -= 1
    return pattern[:end].encode("utf-8") if end > 0 else None


class _Stopped(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _blocks(stream: IO[bytes], first: bytes, opts: _Options) -> Iterator[bytes]:
    """The stream in blocks of whole lines (the last one may lack its newline)."""
    carry = first
    while True:
        _check(opts)
        chunk = stream.read(BLOCK_BYTES)
        if not chunk:
            if carry:
                yield carry
            return
        data = carry + chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data  # one line longer than a block: keep reading it
            continue
        yield data[:cut]
        carry = data[cut:]


def _check(opts: _Options) -> None:
    if opts.cancel is not None and opts.cancel.is_set():
        raise _Stopped(STOP_CANCELLED)
    if time.monotonic() > opts.deadline:
        raise _Stopped(STOP_TIME)


def _show(line: bytes) -> str:
    return shorten_line(line.decode("utf-8", "replace").removesuffix("\r"))  # a CRLF line end


def _search_file(blocks: Iterable[bytes], shown: str, opts: _Options, out: list[str]) -> int:
    """Search one file, a block of whole lines at a time, appending its output entries to
    ``out``; returns matching lines."""
    regex = opts.regex
    matched = 0
    number = 1  # line number of the first line of the current block
    before: deque[tuple[int, bytes]] = deque(maxlen=opts.before)
    after_left = 0
    last_printed = 0
    by_line = opts.per_line or (opts.mode == "content" and (opts.before or opts.after))
    for block in blocks:
        end = _end(block)
        if not by_line:
            pos = 0
            counted = 0  # newlines in block[:pos]
            while pos <= end:
                found = regex.search(block, pos, end)
                if found is None:
                    break
                start = found.start()
                line_start = block.rfind(b"\n", 0, start) + 1
                line_end = block.find(b"\n", start)
                if line_end < 0:
                    line_end = len(block)
                matched += 1
                if opts.mode == "files_with_matches":
                    return matched
                if opts.mode == "content":
                    counted += block.count(b"\n", pos, line_start)
                    out.append(f"{shown}:{number + counted}:{_show(block[line_start:line_end])}")
                    counted += 1
                pos = line_end + 1
            number += block.count(b"\n")
            continue
        # Line by line: only a block holding a match (or owing context) is split, unless the
        # pattern is one that a search of the block cannot judge.
        lines = block.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if not opts.per_line and after_left == 0 and regex.search(block, 0, end) is None:
            for i in range(max(0, len(lines) - opts.before), len(lines)):
                before.append((number + i, lines[i]))
            number += len(lines)
            continue

        def emit(n: int, line: bytes, sep: str) -> None:
            nonlocal last_printed
            if last_printed and n > last_printed + 1:
                out.append("--")
            out.append(f"{shown}{sep}{n}{sep}{_show(line)}")
            last_printed = n

        for i, line in enumerate(lines):
            n = number + i
            if regex.search(line) is not None:
                matched += 1
                if opts.mode == "files_with_matches":
                    return matched
                if opts.mode != "content":
                    continue
                for bn, bl in before:
                    emit(bn, bl, "-")
                before.clear()
                emit(n, line, ":")
                after_left = opts.after
            elif after_left:
                emit(n, line, "-")
                after_left -= 1
            elif opts.before:
                before.append((n, line))
        number += len(lines)
    return matched


def _name_filter(file_glob: str | None, file_type: str | None) -> Callable[[Entry], bool] | None:
    tests: list[Callable[[Entry], bool]] = []
    if file_glob:
        regex = compile_glob(file_glob)
        tests.append(lambda e: matches(regex, e.rel) or matches(regex, e.name))
    if file_type:
        if file_type not in FILE_TYPES:
            raise WorkspaceError(
                f"unknown file type {file_type!r}; known types: {', '.join(sorted(FILE_TYPES))}"
            )
        names = [compile_glob(g) for g in FILE_TYPES[file_type]]
        tests.append(lambda e: any(matches(r, e.name) for r in names))
    if not tests:
        return None
    return lambda e: all(t(e) for t in tests)


def grep(
    root: safefs.Root,
    pattern: str,
    path: str = ".",
    *,
    mode: str = "content",
    file_glob: str | None = None,
    file_type: str | None = None,
    ignore_case: bool = False,
    literal: bool = False,
    before: int = 0,
    after: int = 0,
    head_limit: int | None = None,
    offset: int = 0,
    ignore: bool = True,
    hide: Hide | None = None,
    max_results: int = MAX_ENTRIES,
    seconds: float = SEARCH_SECONDS,
    cancel: threading.Event | None = None,
) -> GrepResult:
    """Search the text files under ``path`` for ``pattern``.

    ``mode``: ``files_with_matches`` (one path per matching file), ``content`` (``path:N:text``
    per matching line, ``path-N-text`` for ``before``/``after`` context, ``--`` between
    groups) or ``count`` (``path:N``). ``offset`` skips that many output entries and
    ``head_limit`` (default ``max_results``) keeps at most that many after it.
    """
    require_path(path)
    if mode not in OUTPUT_MODES:
        raise WorkspaceError(f"unknown output mode {mode!r}; use one of {', '.join(OUTPUT_MODES)}")
    for name, value in (("before", before), ("after", after)):
        if not 0 <= value <= MAX_CONTEXT:
            raise WorkspaceError(f"{name} context must be between 0 and {MAX_CONTEXT} lines, got {value}")
    if offset < 0:
        raise WorkspaceError(f"offset must not be negative, got {offset}")
    limit = max_results if head_limit is None else head_limit
    if not 1 <= limit <= max_results:
        raise WorkspaceError(f"head_limit must be between 1 and {max_results}, got {limit}")
    regex = compile_search(pattern, ignore_case=ignore_case, literal=literal)
    wanted = _name_filter(file_glob, file_type)
    needle = required_literal(pattern, ignore_case=ignore_case, literal=literal)
    per_line = matches_per_line(pattern, literal=literal)
    opts = _Options(regex, mode, before, after, time.monotonic() + seconds, cancel, needle, per_line)
    result = GrepResult(mode)
    try:
        single_file = root.is_file(path)
    except OSError as exc:
        raise os_failure(exc, path) from None
    walk: Walk | None = None
    if not single_file:
        walk = Walk(root, path, ignore=ignore, hide=hide, deadline=opts.deadline, cancel=cancel)
    collected: list[str] = []
    keep = offset + limit
    search, needle = regex.search, opts.needle
    files: Iterable[str] = (
        [path]
        if walk is None
        else (e.path for e in walk if e.kind == "file" and (wanted is None or wanted(e)))
    )
    reads = _read_ahead(root, files, BLOCK_BYTES + 1)
    try:
        for target, data in reads:
            out: list[str] = []
            # A file of up to a block is read whole by one bounded read (batched: see
            # _read_ahead); a longer one is streamed, a block at a time.
            if isinstance(data, OSError):
                result.unreadable += 1  # vanished, swapped for something else, or refused
                continue
            if len(data) > BLOCK_BYTES:
                found = _search_stream(root, target, opts, result, out)
            elif data.find(b"\0", 0, BINARY_SNIFF_BYTES) >= 0:
                result.binary_skipped += 1
                continue
            else:
                result.files_searched += 1
                if data.startswith(BOM):
                    data = data[3:]
                # One search of the whole file answers most files: no match (the common case),
                # or a match where a yes is all that is asked; only a file with a match to show
                # is gone through. Bytes that every match holds, when the pattern has them, are
                # looked for first: most files lack them, and a substring search costs less than
                # a call into RE2.
                if not data or (needle is not None and needle not in data):
                    continue  # an empty file has no line to match
                if per_line:
                    found = _search_file((data,), target, opts, out)
                elif search(data, 0, _end(data)) is None:
                    continue
                else:
                    found = 1 if mode == "files_with_matches" else _search_file((data,), target, opts, out)
            if not found:
                continue
            result.files_matched += 1
            result.lines_matched += found
            if mode == "files_with_matches":
                out = [target]
            elif mode == "count":
                out = [f"{target}:{found}"]
            elif (before or after) and result.entries_total:
                out.insert(0, "--")
            result.entries_total += len(out)
            room = keep - len(collected)
            if room > 0:
                collected.extend(out[:room])
    except _Stopped as stopped:
        result.stop = stopped.reason
    finally:
        reads.close()  # waits for a batch still being read: no thread outlives the search
    if walk is not None:
        result.walked = walk.visited
        if walk.stop is not None and result.stop is None:
            result.stop = walk.stop
    result.entries = collected[offset:]
    return result


def _read_ahead(
    root: safefs.Root, paths: Iterable[str], size: int
) -> Generator[tuple[str, bytes | OSError], None, None]:
    """Each of ``paths`` with its first ``size`` bytes (or the OSError reading it raised), in
    order. The files are read ``READ_BATCH`` at a time by ``Root.read_heads`` in a worker
    thread, which releases the GIL for a whole batch: the kernel's work (open, fstat, read,
    close) on the next batch overlaps the walk and the matching of this one here, where a second
    core is free. Two batches are held at once at most, the one searched here and the one being
    read: memory is ``2 * READ_BATCH * size`` at most (for files all over a block; ordinary
    source files take a few hundred KiB). A batch takes a millisecond or so on a local disk, so
    waiting for one delays a deadline or a cancel by about that. Only the paths handed over are
    read: whatever the walk hid is never opened. Closing the generator waits for the batch
    still being read, so no thread outlives it."""
    it = iter(paths)
    first = list(islice(it, READ_BATCH))
    if len(first) < READ_BATCH:  # a few files: no thread for them
        yield from zip(first, root.read_heads(first, size), strict=True)
        return
    with ThreadPoolExecutor(1, thread_name_prefix="safefs-grep-read") as pool:
        pending: deque[tuple[list[str], Future[list[bytes | OSError]]]] = deque()
        batch = first
        try:
            while batch or pending:
                if batch:
                    pending.append((batch, pool.submit(root.read_heads, batch, size)))
                    batch = list(islice(it, READ_BATCH))
                if len(pending) > 1 or not batch:
                    done, future = pending.popleft()
                    # Not started yet (no core was free for the worker): read here, not wait.
                    heads = root.read_heads(done, size) if future.cancel() else future.result()
                    yield from zip(done, heads, strict=True)
        finally:
            for _batch, future in pending:
                future.cancel()


def _search_stream(root: safefs.Root, path: str, opts: _Options, result: GrepResult, out: list[str]) -> int:
    try:
        stream = root.open(path, "rb")
    except OSError:
        result.unreadable += 1
        return 0
    with stream:
        if os.fstat(stream.fileno()).st_size > MAX_GREP_FILE_BYTES:
            result.large_skipped += 1
            return 0
        first = stream.read(BINARY_SNIFF_BYTES)
        if first.startswith(BOM):
            first = first[3:]
        if b"\0" in first:
            result.binary_skipped += 1
            return 0
        result.files_searched += 1
        return _search_file(_blocks(stream, first, opts), path, opts, out)
