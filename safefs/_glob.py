"""pathlib's pattern language, matched in linear time, and ``glob`` over a Root.

A pattern is split at ``/`` into segments. Within a segment ``*`` matches any run of characters,
``?`` one character and ``[...]`` one of a set (``[!...]`` one outside it); ``**`` alone in a
segment matches any number of whole segments (zero included). Nothing here builds a regular
expression: a segment is matched against a name by simulating its automaton with a set of
states (Thompson's construction), so a name of length n against a segment of m tokens costs
O(n * m) whatever the pattern; whole paths are matched segment-wise in the same way, with ``**``
as the star. ``glob`` walks the tree once, carrying the set of pattern positions each directory
is reached in, so no entry is listed twice and no pattern makes the walk backtrack.
"""

from __future__ import annotations

import stat as stat_mod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from safefs.errors import PathEscapeError

if TYPE_CHECKING:
    from safefs._root import Root

# How many times links may lead the walk into one directory (see safefs._copy).
MAX_ENTRIES_PER_DIRECTORY = 8

_STAR = 0
_ANY = 1
_CHAR = 2
_SET = 3
_NOT_SET = 4

Token = tuple[int, str | frozenset[str] | tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class Segment:
    """One segment of a pattern, compiled: a literal name, ``**``, or tokens to simulate."""

    text: str
    tokens: tuple[tuple[int, object], ...]
    literal: bool
    recursive: bool

    def matches(self, name: str) -> bool:
        if self.literal:
            return name == self.text
        if self.recursive:
            return True
        return _simulate(self.tokens, name)


def _parse_set(segment: str, i: int) -> tuple[tuple[int, object], int] | None:
    """The bracket expression starting at ``segment[i] == "["``: its token and the index after
    it, or None when it is not closed (then ``[`` is a literal, as fnmatch takes it)."""
    j = i + 1
    negate = j < len(segment) and segment[j] in "!^"
    if negate:
        j += 1
    start = j
    if j < len(segment) and segment[j] == "]":
        j += 1  # a leading ] is a member
    while j < len(segment) and segment[j] != "]":
        j += 1
    if j >= len(segment):
        return None
    body = segment[start:j]
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            lo, hi = body[k], body[k + 2]
            if lo <= hi:
                ranges.append((lo, hi))
            k += 3
        else:
            ranges.append((body[k], body[k]))
            k += 1
    return (_NOT_SET if negate else _SET, tuple(ranges)), j + 1


def compile_segment(segment: str) -> Segment:
    if segment == "**":
        return Segment(segment, (), literal=False, recursive=True)
    if not any(c in segment for c in "*?["):
        return Segment(segment, (), literal=True, recursive=False)
    tokens: list[tuple[int, object]] = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "*":
            if not tokens or tokens[-1][0] != _STAR:  # ** inside a segment is one *
                tokens.append((_STAR, ""))
            i += 1
        elif c == "?":
            tokens.append((_ANY, ""))
            i += 1
        elif c == "[" and (parsed := _parse_set(segment, i)) is not None:
            tokens.append(parsed[0])
            i = parsed[1]
        else:
            tokens.append((_CHAR, c))
            i += 1
    return Segment(segment, tuple(tokens), literal=False, recursive=False)


def _in_set(ranges: object, c: str) -> bool:
    return any(lo <= c <= hi for lo, hi in ranges)  # type: ignore[attr-defined]


def _closure(tokens: tuple[tuple[int, object], ...], states: set[int]) -> set[int]:
    """A star may match nothing: a state before a star also stands after it."""
    out = set(states)
    for i in sorted(states):
        while i < len(tokens) and tokens[i][0] == _STAR:
            i += 1
            out.add(i)
    return out


def _simulate(tokens: tuple[tuple[int, object], ...], name: str) -> bool:
    """Whether ``name`` is matched by the tokens: the set of automaton states after each
    character, at most len(tokens)+1 of them, so O(len(name) * len(tokens))."""
    end = len(tokens)
    states = _closure(tokens, {0})
    for c in name:
        nxt: set[int] = set()
        for i in states:
            if i == end:
                continue
            kind, value = tokens[i]
            if kind == _STAR:
                nxt.add(i)
            elif (
                kind == _ANY
                or (kind == _CHAR and value == c)
                or (kind == _SET and _in_set(value, c))
                or (kind == _NOT_SET and not _in_set(value, c))
            ):
                nxt.add(i + 1)
        if not nxt:
            return False
        states = _closure(tokens, nxt)
    return end in states


def split_pattern(pattern: str) -> tuple[bool, list[str]]:
    """Whether the pattern is absolute, and its segments (empty ones and ``.`` dropped, as
    pathlib drops them; a trailing ``/`` kept as a final empty segment: directories only)."""
    absolute = pattern.startswith("/")
    parts = pattern.split("/")
    trailing = len(parts) > 1 and parts[-1] == "" and pattern.strip("/") != ""
    segments = [p for p in parts if p not in ("", ".")]
    if trailing:
        segments.append("")
    return absolute, segments


# The anchor of an absolute path or pattern, as a part of its own (no name holds a NUL): only a
# literal anchor or ``**`` consumes it.
ANCHOR = "\0/"


def full_match(parts: list[str], pattern_parts: list[str]) -> bool:
    """Whether the whole sequence of path parts matches the pattern's segments, as pathlib's
    ``full_match``: ``**`` stands for any number of parts, except that a final ``**`` after a
    segment stands for one or more (``a/**`` is not ``a``), and a ``**`` followed by more of the
    pattern takes the anchor only together with a part after it (``**/b`` is not ``/b``). The
    segment-level automaton, O(len(parts) * len(pattern)). An absolute path or pattern starts
    with :data:`ANCHOR`."""
    collapsed: list[str] = []
    for p in pattern_parts:
        if not (p == "**" and collapsed and collapsed[-1] == "**"):
            collapsed.append(p)
    if len(collapsed) > 1 and collapsed[-1] == "**" and collapsed[-2] != ANCHOR:
        collapsed[-1:] = ["*", "**"]
    segs = [compile_segment(p) for p in collapsed]
    end = len(segs)
    # A state: (pattern position, whether a ** that took the anchor still owes a part).
    State = tuple[int, bool]

    def close(states: set[State]) -> set[State]:
        out = set(states)
        for i, owing in sorted(states):
            while i < end and segs[i].recursive and not owing:
                i += 1
                out.add((i, False))
        return out

    states = close({(0, False)})
    for part in parts:
        nxt: set[State] = set()
        for i, owing in states:
            if i == end:
                continue
            if segs[i].recursive:
                nxt.add((i, part == ANCHOR and i < end - 1))
            elif not owing and (part != ANCHOR or segs[i].literal) and segs[i].matches(part):
                nxt.add((i + 1, False))
        if not nxt:
            return False
        states = close(nxt)
    return (end, False) in states


def match_from_right(parts: list[str], pattern_parts: list[str]) -> bool:
    """``PurePath.match`` of a relative pattern: the last parts match it, one segment each
    (``**`` acting as ``*``)."""
    if not pattern_parts or len(pattern_parts) > len(parts):
        return False
    tail = parts[len(parts) - len(pattern_parts) :]
    for part, pat in zip(tail, pattern_parts, strict=True):
        seg = compile_segment("*" if pat == "**" else pat)
        if not seg.matches(part):
            return False
    return True


def glob(
    root: Root,
    top: str,
    pattern: str,
    *,
    recurse_symlinks: bool = False,
    join: Callable[[str, str], str],
    fold: bool = False,
) -> Iterator[str]:
    """Root-relative paths under ``top`` matching ``pattern`` (relative, pathlib's language),
    each once; ``fold``: names and pattern compared case-folded. A directory is entered for a
    wildcard or literal segment when it is one, links followed through the root; for ``**`` a
    symlink is entered only with ``recurse_symlinks``, and never into a directory already on the
    way down (a loop ends there). A link leading out of the root is not entered (listed, when it
    matches, as what it is). Directories that cannot be listed are passed over, as pathlib
    passes them over."""
    absolute, segments = split_pattern(pattern)
    if absolute:
        raise NotImplementedError("Non-relative patterns are unsupported")
    if not segments:
        raise ValueError(f"Unacceptable pattern: {pattern!r}")
    dirs_only = segments[-1] == ""
    if dirs_only:
        segments = segments[:-1]
    # A literal prefix (".." included) is joined, not searched for (``fold``: matched without
    # regard to case, so searched for, but "..").
    while (
        segments
        and len(segments) > 1
        and not any(c in segments[0] for c in "*?[")
        and (not fold or segments[0] == "..")
    ):
        top = join(top, segments.pop(0))
    segs = [compile_segment(s.casefold() if fold and s != ".." else s) for s in segments]
    end = len(segs)

    def close(states: frozenset[int]) -> frozenset[int]:
        out = set(states)
        for i in sorted(states):
            while i < end and segs[i].recursive:
                i += 1
                out.add(i)
        return frozenset(out)

    def is_dir(path: str, follow: bool) -> bool:
        try:
            mode = root.stat(path, follow_symlinks=follow).st_mode
        except (PathEscapeError, OSError):
            return False
        return stat_mod.S_ISDIR(mode)

    visits: dict[tuple[int, int], int] = {}
    start = close(frozenset({0}))
    if end in start:  # "**": the top itself
        yield top
    todo: list[tuple[str, frozenset[int], tuple[tuple[int, int], ...]]] = []
    try:
        top_st = root.stat(top)
    except PathEscapeError:
        raise  # the pattern's own ".." climbed out (ESCAPE_DOTDOT)
    except OSError:
        return
    todo.append((top, start, ((top_st.st_dev, top_st.st_ino),)))
    while todo:
        where, states, above = todo.pop()
        for i in sorted(states):
            if i < end and segs[i].text == "..":  # the parent, by name: never listed
                up = join(where, "..")
                after_up = close(frozenset({i + 1}))
                if end in after_up:
                    yield up
                if any(j < end for j in after_up):
                    todo.append((up, after_up, above[:-1]))
        if all(i == end or segs[i].text == ".." for i in states):
            continue
        try:
            entries = sorted(root.scandir(where), key=lambda e: str(e.name))
        except PathEscapeError:
            raise  # only a ".." of the pattern leads a listing out: links out are never entered
        except OSError:
            continue
        later: list[tuple[str, frozenset[int], tuple[tuple[int, int], ...]]] = []
        for entry in entries:
            name = str(entry.name)
            folded = name.casefold() if fold else name
            literal_next: set[int] = set()
            deep_next: set[int] = set()
            for i in states:
                if i == end:
                    continue
                seg = segs[i]
                if seg.recursive:
                    deep_next.add(i)
                elif seg.matches(folded):
                    literal_next.add(i + 1)
            if not literal_next and not deep_next:
                continue
            path = join(where, name)
            entry_is_link = entry.is_symlink()
            # Which states the entry can be entered in: ** enters a link only with recurse_symlinks.
            enter = set(literal_next)
            if deep_next and (recurse_symlinks or not entry_is_link):
                enter |= deep_next
            after = close(frozenset(enter))
            # Matched: by its last segment, or by a final ** that took it in; a ** matching
            # nothing more stands only after a directory (pathlib's "a/**" lists "a/", never "f/").
            directory = entry.is_dir(follow_symlinks=True)
            matched = (
                end in literal_next
                or any(end in close(frozenset({j})) for j in deep_next)
                or (directory and end in after)
            )
            if matched and (not dirs_only or directory):
                yield path
            if not directory or not any(i < end for i in after):
                continue
            if entry_is_link and not is_dir(path, True):
                continue
            try:
                st = root.stat(path)
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if key in above:
                continue  # a loop of links: the directory is already on the way down
            visits[key] = visits.get(key, 0) + 1
            if visits[key] > MAX_ENTRIES_PER_DIRECTORY:
                continue  # links arranged as a lattice: the work stays linear in the tree
            entered = after if not entry_is_link or recurse_symlinks else close(frozenset(literal_next))
            if any(i < end for i in entered):
                later.append((path, entered, (*above, key)))
        todo.extend(reversed(later))
