"""Glob patterns (``*``, ``?``, ``[...]``, ``{a,b}`` and ``**``) matched against relative paths.

Matching is on strings only: a pattern never reaches the file system. ``*`` and ``?`` stay
within one path component; ``**`` as a whole component matches any number of them, including
none. Names starting with a dot are matched like any other (minimatch's ``dot: true``, which is
what the MCP filesystem server uses); ``compile_glob(pattern, dot=False)`` hides them as a shell
does: a component starting with a dot is matched only by a pattern component that starts with a
literal dot, and ``**`` never enters one.

A glob is translated to a regular expression and matched by RE2 (:mod:`safefs.workspace.regex`),
in time linear in the path whatever the pattern: ten nested ``**`` or eight ``*a`` cost no more
than one. Brace nesting is bounded (``MAX_BRACE_DEPTH``), so the translation never recurses deep.
"""

from __future__ import annotations

import re
from functools import lru_cache

from safefs.workspace.errors import WorkspaceError
from safefs.workspace.regex import Regex, compile_regex, escape

MAX_BRACE_DEPTH = 10
SPECIAL = frozenset("*?[{\\")


def _class(pattern: str, i: int) -> tuple[str, int]:
    """Translate ``[...]`` starting at ``pattern[i] == '['``; returns (regex, next index)."""
    j = i + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return escape("["), i + 1  # no closing bracket: a literal "["
    body = pattern[i + 1 : j]
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    body = body.replace("\\", "\\\\")
    return ("[^/" if negate else "[") + body.replace("/", "") + "]", j + 1


def _braces(pattern: str, i: int) -> tuple[list[str], int] | None:
    """The alternatives of ``{a,b,...}`` at ``pattern[i] == '{'`` (nesting allowed), or None."""
    depth = 0
    start = i + 1
    parts: list[str] = []
    for j in range(i, len(pattern)):
        c = pattern[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                parts.append(pattern[start:j])
                return (parts, j + 1) if len(parts) > 1 else None
        elif c == "," and depth == 1:
            parts.append(pattern[start:j])
            start = j + 1
    return None


_NAME = "[^/.][^/]*"  # a component that does not start with a dot


def _segment_end(pattern: str, i: int) -> int:
    """Where the component starting at ``i`` ends (the next ``/``, or the end)."""
    end = pattern.find("/", i)
    return len(pattern) if end < 0 else end


def _hidden_start(segment: str, depth: int) -> str | None:
    """The regex for ``segment`` (a component, or its tail after a leading ``*`` matched
    nothing) restricted to text that does not start with a dot; None when it cannot match."""
    if not segment:
        return ""
    c = segment[0]
    if c == ".":
        return None
    if c == "*":
        rest = segment.lstrip("*")
        first = _NAME + _translate(rest, depth, dot=False, mid=True)  # the star takes a character
        empty = _hidden_start(rest, depth)  # the star matches nothing
        return first if empty is None else f"(?:{first}|{empty})"
    if c == "?":
        return "[^/.]" + _translate(segment[1:], depth, dot=False, mid=True)
    if c == "[":
        regex, end = _class(segment, 0)
        if regex.startswith("[^/"):
            regex = "[^/." + regex[3:]  # a negated set: the dot joins it
        return regex + _translate(segment[end:], depth, dot=False, mid=True)
    return _translate(segment, depth, dot=False, mid=True)


def _translate(pattern: str, depth: int = 0, *, dot: bool = True, mid: bool = False) -> str:
    """``mid``: ``pattern`` continues a component (its start is no component's start)."""
    if depth > MAX_BRACE_DEPTH:
        raise WorkspaceError(f"glob pattern nests braces deeper than {MAX_BRACE_DEPTH} levels")
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        at_start = (i == 0 and not mid) or (i > 0 and pattern[i - 1] == "/")
        if c == "*" and pattern.startswith("**", i) and at_start and (i + 2 == n or pattern[i + 2] == "/"):
            if i + 2 == n:
                # trailing "**": everything below (no component hidden by a dot, unless dot)
                out.append(".*" if dot else f"(?:{_NAME}(?:/{_NAME})*)?")
                i += 2
            else:
                # "**/": zero or more whole components
                out.append("(?:[^/]*/)*" if dot else f"(?:{_NAME}/)*")
                i += 3
        elif not dot and at_start and c in "*?[":
            end = _segment_end(pattern, i)
            start = _hidden_start(pattern[i:end], depth + 1)
            out.append("[^\\x00-\\x{10FFFF}]" if start is None else start)  # None: matches nothing
            i = end
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            regex, i = _class(pattern, i)
            out.append(regex)
        elif c == "{" and (alternatives := _braces(pattern, i)) is not None:
            parts, i = alternatives
            out.append("(?:" + "|".join(_translate(p, depth + 1, dot=dot) for p in parts) + ")")
        elif c == "\\" and i + 1 < n:
            out.append(escape(pattern[i + 1]))
            i += 2
        else:
            out.append(escape(c))
            i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str, *, dot: bool = True) -> Regex:
    """The glob as an RE2 pattern anchored at both ends, for ``/``-separated relative paths;
    ``dot=False`` hides names starting with a dot from wildcards (see the module's text)."""
    if not pattern:
        raise WorkspaceError("glob pattern must not be empty")
    if len(pattern) > 4096:
        raise WorkspaceError(f"glob pattern too long: {len(pattern)} characters, at most 4096")
    regex = "(?s)" + _translate(matchable(pattern).removeprefix("./"), dot=dot) + r"\z"
    return compile_regex(regex, what="glob pattern")


_SURROGATES = re.compile("[\ud800-\udfff]")


def matchable(text: str) -> str:
    """``text`` with each undecodable byte (a surrogate, as ``os`` spells one) as U+FFFD: RE2
    matches UTF-8 text, and ``*`` must match a name that is not valid UTF-8 too."""
    return _SURROGATES.sub("\ufffd", text)


def path_bytes(path: str) -> bytes:
    """A walk's path as the UTF-8 bytes its patterns are matched against."""
    try:
        return path.encode("utf-8")
    except UnicodeEncodeError:
        return matchable(path).encode("utf-8")


def matches(regex: Regex, path: str) -> bool:
    return regex.match(path_bytes(path)) is not None


def glob_match(pattern: str, path: str) -> bool:
    return matches(compile_glob(pattern), path)


def literal_prefix(pattern: str) -> str:
    """The leading whole components of ``pattern`` that hold no glob syntax ("" when none):
    a walk for it can start there."""
    parts = pattern.removeprefix("./").split("/")
    fixed: list[str] = []
    for part in parts[:-1]:
        if not part or part in (".", "..") or any(c in SPECIAL for c in part):
            break
        fixed.append(part)
    return "/".join(fixed)


def glob_depth(pattern: str) -> int | None:
    """How many components a matching path has at most; None when ``**`` makes it unbounded."""
    parts = pattern.removeprefix("./").split("/")
    if any("**" in part for part in parts) or "{" in pattern:
        return None
    return len(parts)
