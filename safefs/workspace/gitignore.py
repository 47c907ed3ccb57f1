"""Ignore rules evaluated as git evaluates them: per directory, last match wins, and nothing
below an excluded directory can be re-included.

Sources, from the strongest (git's order, ``dir.c``):

1. each ``.gitignore`` from the path's own directory up to the top of the workspace;
2. ``.git/info/exclude`` of the workspace's repository;
3. the user's ``core.excludesFile`` (read from the user's global git configuration, never from
   the workspace's ``.git/config``, which whoever writes the workspace controls), by default
   ``$XDG_CONFIG_HOME/git/ignore``.

Within one file the last pattern that matches decides, ``!`` re-including; the first source with
a matching pattern decides. A walk never enters an ignored directory, so a path below one is
ignored whatever a deeper rule says.

Patterns follow ``gitignore(5)``: ``#`` comments, ``\\`` escapes, trailing spaces trimmed unless
escaped, a trailing ``/`` matches directories only, a pattern without an inner or leading ``/``
matches a name at any depth, ``**`` spans directories where it stands as a whole component.
Each file's patterns are translated to regular expressions and matched together by one RE2 set
(:mod:`safefs.workspace.regex`), in time linear in the path whatever the patterns say.

Workspace files are read through safefs, at most ``MAX_GITIGNORE_BYTES`` of each.
"""

from __future__ import annotations

import configparser
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

import safefs
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.patterns import matchable, path_bytes
from safefs.workspace.regex import MAX_PROGRAM_BYTES, compile_regex, escape

MAX_GITIGNORE_BYTES = 1 << 20
MAX_PATTERNS = 10_000  # per file; git has no limit, a walk must


@dataclass(frozen=True)
class Pattern:
    regex: str  # matches the path relative to the rules' directory, whole
    negated: bool
    dir_only: bool
    name: str | None = None  # the pattern is this exact name, at any depth (``node_modules/``)
    suffix: str | None = None  # the pattern is ``*`` then this literal, at any depth (``*.pyc``)


def _class(pattern: str, i: int) -> tuple[str, int] | None:
    """wildmatch's ``[...]`` at ``pattern[i] == '['``: (regex, next index), or None when the
    bracket never closes (then git's pattern can match nothing there)."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    out: list[str] = []
    first = True
    while j < len(pattern):
        c = pattern[j]
        if c == "]" and not first:
            body = "".join(out)
            return ("[^/" + body + "]" if negate else "[" + body + "]"), j + 1
        first = False
        if c == "[" and pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            if end < 0:
                return None
            name = pattern[j + 2 : end]
            if name not in _POSIX_CLASSES:
                return None  # wildmatch: a malformed class matches nothing
            out.append(f"[:{name}:]")
            j = end + 2
            continue
        if c == "\\":
            j += 1
            if j >= len(pattern):
                return None
            c = pattern[j]
        if c == "/":
            j += 1
            continue  # wildmatch with WM_PATHNAME: a class never matches "/"
        if c == "-" and out and j + 1 < len(pattern) and pattern[j + 1] != "]":
            out.append("-")
            j += 1
            continue
        out.append(escape(c))
        j += 1
    return None


_POSIX_CLASSES = frozenset(
    [
        "alnum",
        "alpha",
        "blank",
        "cntrl",
        "digit",
        "graph",
        "lower",
        "print",
        "punct",
        "space",
        "upper",
        "xdigit",
    ]
)


def wildmatch_regex(pattern: str) -> str | None:
    """git's wildmatch (``WM_PATHNAME``) as a regex on the whole path; None: matches nothing."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            at_start = i == 0 or pattern[i - 1] == "/"
            if j - i >= 2 and at_start and (j == n or pattern[j] == "/"):
                if j == n:
                    out.append(".*")  # "**" at the end: everything, at any depth
                    i = j
                else:
                    out.append("(?:.*/)?")  # "**/": any number of directories, none included
                    i = j + 1
            else:
                out.append("[^/]*")  # "*", or a "**" not standing alone: within one name
                i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            translated = _class(pattern, i)
            if translated is None:
                return None
            regex, i = translated
            out.append(regex)
        elif c == "\\":
            if i + 1 >= n:
                return None  # a trailing backslash matches nothing (wildmatch)
            out.append(escape(pattern[i + 1]))
            i += 2
        else:
            out.append(escape(c))
            i += 1
    return "".join(out)


def _trim_trailing_spaces(line: str) -> str:
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        # A space escaped by a backslash stays (and so do the ones after it).
        backslashes = 0
        k = end - 2
        while k >= 0 and line[k] == "\\":
            backslashes += 1
            k -= 1
        if backslashes % 2:
            break
        end -= 1
    return line[:end]


def parse_line(line: str) -> Pattern | None:
    """One ``.gitignore`` line as a pattern, or None for a blank line, a comment, or a pattern
    that can match nothing."""
    line = line.removesuffix("\r")
    if not line or line.startswith("#"):
        return None
    line = _trim_trailing_spaces(line)
    negated = line.startswith("!")
    if negated or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/") if dir_only else line
    if not line:
        return None
    anchored = "/" in line
    line = line.removeprefix("/")
    if not line:
        return None
    body = wildmatch_regex(line)
    if body is None:
        return None
    name = suffix = None
    if not anchored and not any(c in line for c in "*?[\\"):
        name = line
    elif not anchored and line.startswith("*") and not any(c in line[1:] for c in "*?[\\"):
        suffix = line[1:]
    return Pattern(body if anchored else "(?:.*/)?" + body, negated, dir_only, name, suffix)


class RuleFile:
    """The patterns of one source, for paths relative to ``base`` ("" for the top)."""

    def __init__(self, base: str, lines: Sequence[str]) -> None:
        self.base = base
        self.patterns: list[Pattern] = []
        self._set: Any = None
        # Most lines are a plain name or ``*.ext``: those are judged by a dict and a few
        # ``endswith``, the rest by one RE2 set. The last matching index still wins.
        self._names: dict[bytes, list[int]] = {}
        self._suffixes: list[tuple[bytes, int]] = []
        self._general: list[int] = []  # pattern index of each RE2 set member
        options = re2.Options()
        options.log_errors = False
        options.max_mem = MAX_PROGRAM_BYTES * 8
        matcher = re2.Set.FullMatchSet(options)
        for line in lines[:MAX_PATTERNS]:
            pattern = parse_line(line)
            if pattern is None:
                continue
            index = len(self.patterns)
            if pattern.name is not None:
                self._names.setdefault(path_bytes(pattern.name), []).append(index)
            elif pattern.suffix is not None:
                self._suffixes.append((path_bytes(pattern.suffix), index))
            else:
                try:
                    compile_regex(matchable("(?s)" + pattern.regex), what="ignore pattern")
                except WorkspaceError:
                    continue  # a line git could match is never refused by RE2; this is defence
                matcher.Add(path_bytes("(?s)" + pattern.regex))
                self._general.append(index)
            self.patterns.append(pattern)
        if self._general:
            try:
                matcher.Compile()
                self._set = matcher
            except re2.error:
                self._general = []  # too large a program: these rules are not applied

    @property
    def by_name(self) -> bool:
        """Whether every pattern here is judged by the entry's name alone (a plain name or
        ``*.ext``), with no pattern on the whole path."""
        return self._set is None

    def names(self) -> list[bytes]:
        return list(self._names)

    def suffixes(self) -> list[bytes]:
        return [suffix for suffix, _ in self._suffixes]

    def decide(self, rel: bytes, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included, None: no pattern here matches ``rel``."""
        if not self.patterns:
            return None
        name = rel[rel.rfind(b"/") + 1 :]
        found = list(self._names.get(name, ()))
        found.extend(index for suffix, index in self._suffixes if name.endswith(suffix))
        if self._set is not None:
            found.extend(self._general[i] for i in self._set.Match(rel) or ())
        if not found:
            return None
        for index in sorted(found, reverse=True):  # the last matching pattern wins
            pattern = self.patterns[index]
            if pattern.dir_only and not is_dir:
                continue
            return not pattern.negated
        return None


@dataclass(frozen=True)
class NameFilter:
    names: frozenset[bytes]
    suffixes: tuple[bytes, ...]

    def may_match(self, name: bytes) -> bool:
        return name in self.names or (bool(self.suffixes) and name.endswith(self.suffixes))

    def may_match_any(self, names: list[str]) -> bool:
        """Whether a rule could match any of ``names`` (a walk's names, as ``os`` spells them).
        Compared as text, without encoding each name, when no pattern holds U+FFFD: then a
        name is a pattern's, or ends with one, exactly when its ``path_bytes`` does (UTF-8
        keeps character boundaries, and a name's undecodable bytes become U+FFFD, which no
        pattern then holds)."""
        texts = self._texts
        if texts is None:
            return any(self.may_match(path_bytes(name)) for name in names)
        whole, endings = texts
        if not whole.isdisjoint(names):
            return True
        return bool(endings) and any(name.endswith(endings) for name in names)

    @functools.cached_property
    def _texts(self) -> tuple[frozenset[str], tuple[str, ...]] | None:
        whole = frozenset(name.decode("utf-8") for name in self.names)
        endings = tuple(suffix.decode("utf-8") for suffix in self.suffixes)
        if any("\ufffd" in text for text in (*whole, *endings)):
            return None
        return whole, endings


def parse_rules(base: str, data: bytes) -> RuleFile:
    # git reads the bytes; a name is matched byte for byte, so undecodable bytes round-trip.
    return RuleFile(base, data[:MAX_GITIGNORE_BYTES].decode("utf-8", "surrogateescape").split("\n"))


class GitIgnore:
    """The rules in force in one directory: the ``.gitignore`` files from it up to the top
    (``dirs``, shallow first) and the repository-wide sources (``files``, strongest first)."""

    def __init__(self, dirs: tuple[RuleFile, ...] = (), files: tuple[RuleFile, ...] = ()) -> None:
        self.dirs = dirs
        self.files = files
        self._filter: NameFilter | None = None
        self._filter_known = False

    def name_filter(self) -> NameFilter | None:
        """What can make an entry ignored when every rule in force is judged by name alone:
        the names and the name endings (as ``path_bytes``) of all patterns, negated or not. An
        entry whose name is neither is not ignored, and :meth:`ignored` need not be asked.
        None: some rule looks at the whole path, so every entry must be asked about."""
        if not self._filter_known:
            self._filter_known = True
            sources = (*self.dirs, *self.files)
            if all(rules.by_name for rules in sources):
                names: set[bytes] = set()
                suffixes: list[bytes] = []
                for rules in sources:
                    names.update(rules.names())
                    suffixes.extend(rules.suffixes())
                self._filter = NameFilter(frozenset(names), tuple(suffixes))
        return self._filter

    def enter(self, root: safefs.Root, directory: str, has_gitignore: bool) -> GitIgnore:
        """The rules for ``directory`` (root-relative, "/"-separated), reading its ``.gitignore``
        when it has one."""
        if not has_gitignore:
            return self
        base = "" if directory in ("", ".", "./") else directory.strip("/") + "/"
        data = read_workspace_file(root, base + ".gitignore")
        if data is None:
            return self  # missing or unreadable rules are no rules; the walk goes on
        return GitIgnore((*self.dirs, parse_rules(base, data)), self.files)

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Is ``path`` (root-relative, "/"-separated, its parent not ignored) ignored?"""
        data = path_bytes(path)
        for rules in (*reversed(self.dirs), *self.files):
            base = path_bytes(rules.base)
            if not data.startswith(base):
                continue
            decision = rules.decide(data[len(base) :], is_dir)
            if decision is not None:
                return decision
        return False


def read_workspace_file(root: safefs.Root, path: str) -> bytes | None:
    try:
        with root.open(path, "rb") as stream:
            data: bytes = stream.read(MAX_GITIGNORE_BYTES)
            return data
    except (OSError, ValueError):
        return None


def _user_excludes_file() -> str | None:
    """The user's ``core.excludesFile``: the global git configuration's, else git's default."""
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    configs = [os.path.join(xdg, "git", "config")] if xdg else []
    if home:
        configs.append(os.path.join(home, ".gitconfig"))  # read last: it wins, as in git
    found: str | None = None
    for config in configs:
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        try:
            parser.read(config, encoding="utf-8")
            value = parser.get("core", "excludesfile", fallback=None)
        except (configparser.Error, UnicodeDecodeError, OSError):
            continue
        if value:
            found = os.path.expanduser(value.strip().strip('"'))
    if found is None and xdg:
        found = os.path.join(xdg, "git", "ignore")
    return found


def _read_host_file(path: str) -> bytes | None:
    # The user's own configuration, outside the workspace: a plain read of a trusted path.
    try:
        with open(path, "rb") as stream:
            return stream.read(MAX_GITIGNORE_BYTES)
    except OSError:
        return None


def repository_rules(root: safefs.Root, *, user_excludes: bool = True) -> GitIgnore:
    """The rules no directory holds: ``.git/info/exclude`` and the user's excludes file."""
    files: list[RuleFile] = []
    exclude = read_workspace_file(root, ".git/info/exclude")
    if exclude is not None:
        files.append(parse_rules("", exclude))
    if user_excludes:
        path = _user_excludes_file()
        data = None if path is None else _read_host_file(path)
        if data is not None:
            files.append(parse_rules("", data))
    return GitIgnore((), tuple(files))
