"""Glob patterns (``*``, ``?``, ``[...]``, ``{a,b}`` and ``**``) matched against relative paths.

Matching is on strings only: a pattern never reaches the file system. ``*`` and ``?`` stay
within one path component; ``**`` as a whole component matches any number of them, including
none. Names starting with a dot are matched like any other (minimatch's ``dot: true``, which is
what the MCP filesystem server uses).
"""

from __future__ import annotations

import re
from functools import lru_cache

from safefs.workspace.errors import WorkspaceError


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
        return re.escape("["), i + 1  # no closing bracket: a literal "["
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


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        at_start = i == 0 or pattern[i - 1] == "/"
        if c == "*" and pattern.startswith("**", i) and at_start and (i + 2 == n or pattern[i + 2] == "/"):
            if i + 2 == n:
                out.append(".*")  # trailing "**": everything below
                i += 2
            else:
                out.append("(?:[^/]*/)*")  # "**/": zero or more whole components
                i += 3
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
            out.append("(?:" + "|".join(_translate(p) for p in parts) + ")")
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    if not pattern:
        raise WorkspaceError("glob pattern must not be empty")
    try:
        return re.compile(_translate(pattern.removeprefix("./")) + r"\Z", re.DOTALL)
    except re.error as exc:
        raise WorkspaceError(f"invalid glob pattern {pattern!r}: {exc}") from None


def glob_match(pattern: str, path: str) -> bool:
    return compile_glob(pattern).match(path) is not None


def glob_depth(pattern: str) -> int | None:
    """How many components a matching path has at most; None when ``**`` makes it unbounded."""
    parts = pattern.removeprefix("./").split("/")
    if any("**" in part for part in parts) or "{" in pattern:
        return None
    return len(parts)
