"""Finding files by name (glob) and by content (grep) in a workspace directory tree.

Both walk with :class:`safefs.workspace.walk.Walk`: ``.git`` is skipped, symlinks are listed by
name and never followed, special files are never opened. grep reads regular files through
safefs in bounded pieces, skips binary files (a NUL byte in the first 8 KiB), shows undecodable
bytes as U+FFFD, and skips files over ``MAX_GREP_FILE_BYTES``; it counts what it skipped.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import safefs
from safefs.workspace.errors import WorkspaceError, os_failure, require_path
from safefs.workspace.limits import MAX_ENTRIES, MAX_GREP_FILE_BYTES, shorten_line
from safefs.workspace.patterns import compile_glob, glob_depth
from safefs.workspace.text import ReadCancelled, decoded_chunks
from safefs.workspace.walk import Entry, Walk

BINARY_SNIFF_BYTES = 8192


@dataclass
class GlobResult:
    matches: list[Entry]
    more: int  # matches past ``max_results``
    stopped_early: bool  # the walk hit its own bound


def glob(
    root: safefs.Root,
    pattern: str,
    path: str = ".",
    *,
    gitignore: bool = False,
    skip_git: bool = True,
    exclude: Callable[[Entry], bool] | None = None,
    max_results: int = MAX_ENTRIES,
    cancel: threading.Event | None = None,
) -> GlobResult:
    """Entries under ``path`` whose path relative to ``path`` matches ``pattern``."""
    regex = compile_glob(pattern)
    walk = Walk(
        root,
        path,
        max_depth=glob_depth(pattern),
        skip_git=skip_git,
        gitignore=gitignore,
        descend=None if exclude is None else (lambda e: not exclude(e)),
        cancel=cancel,
    )
    matches: list[Entry] = []
    more = 0
    for entry in walk:
        if exclude is not None and exclude(entry):
            continue
        if regex.match(entry.rel):
            if len(matches) < max_results:
                matches.append(entry)
            else:
                more += 1
    return GlobResult(matches, more, walk.stopped_early)


@dataclass
class GrepResult:
    lines: list[str] = field(default_factory=list)  # "path:line:text"
    more: int = 0  # matching lines past ``max_results``
    files_searched: int = 0
    files_matched: int = 0
    binary_skipped: int = 0
    large_skipped: int = 0
    unreadable: int = 0
    stopped_early: bool = False


def compile_regex(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    if not pattern:
        raise WorkspaceError("search pattern must not be empty")
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise WorkspaceError(f"invalid regular expression {pattern!r}: {exc}") from None


def _lines(
    root: safefs.Root, path: str, result: GrepResult, cancel: threading.Event | None
) -> Iterator[tuple[int, str]] | None:
    """Numbered lines of a text file, or None (counted in ``result``) when it is skipped."""
    try:
        stream = root.open(path, "rb")
    except OSError:
        result.unreadable += 1  # vanished, swapped for something else, or refused
        return None
    size = os.fstat(stream.fileno()).st_size
    if size > MAX_GREP_FILE_BYTES:
        stream.close()
        result.large_skipped += 1
        return None
    first = stream.read(BINARY_SNIFF_BYTES)
    if b"\0" in first:
        stream.close()
        result.binary_skipped += 1
        return None

    def numbered() -> Iterator[tuple[int, str]]:
        with stream:
            number = 1
            partial = ""
            for text in decoded_chunks(stream, errors="replace", first=first, cancel=cancel):
                pieces = text.split("\n")
                pieces[0] = partial + pieces[0]
                partial = pieces.pop()
                for piece in pieces:
                    yield number, piece
                    number += 1
            if partial:
                yield number, partial

    return numbered()


def grep(
    root: safefs.Root,
    pattern: str,
    path: str = ".",
    *,
    file_glob: str | None = None,
    ignore_case: bool = False,
    gitignore: bool = True,
    max_results: int = MAX_ENTRIES,
    cancel: threading.Event | None = None,
) -> GrepResult:
    """``path:line:text`` for every line under ``path`` that ``pattern`` (a regex) matches."""
    require_path(path)
    regex = compile_regex(pattern, ignore_case)
    name_filter = compile_glob(file_glob) if file_glob else None
    result = GrepResult()
    try:
        single_file = root.is_file(path)
    except OSError as exc:
        raise os_failure(exc, path) from None
    if single_file:
        targets: Iterator[str] = iter([path])
        walk = None
    else:
        walk = Walk(root, path, skip_git=True, gitignore=gitignore, cancel=cancel)
        targets = (
            e.path
            for e in walk
            if e.kind == "file"
            and (name_filter is None or name_filter.match(e.rel) or name_filter.match(e.name))
        )
    try:
        for target in targets:
            numbered = _lines(root, target, result, cancel)
            if numbered is None:
                continue
            result.files_searched += 1
            matched = False
            for number, line in numbered:
                if regex.search(line):
                    matched = True
                    if len(result.lines) < max_results:
                        result.lines.append(f"{target}:{number}:{shorten_line(line.rstrip(chr(13)))}")
                    else:
                        result.more += 1
            result.files_matched += matched
    except ReadCancelled:
        result.stopped_early = True
    if walk is not None and walk.stopped_early:
        result.stopped_early = True
    return result
