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
Matching is git's, byte for byte: a pattern's bytes against a name's bytes (``?`` is one byte of
a multi-byte name, and a pattern's undecodable bytes match the same bytes in a name), a UTF-8
byte order mark before the first line is skipped, classes are read as ``wildmatch.c`` reads
them (``[a\\-c]`` is three bytes, ``[z-a]`` none). Each file's patterns are translated to
Latin-1 regular expressions and matched together by one RE2 set
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
from safefs.workspace.regex import MAX_PROGRAM_BYTES

MAX_GITIGNORE_BYTES = 1 << 20
MAX_PATTERNS = 10_000  # per file; git has no limit, a walk must


@dataclass(frozen=True)
class Pattern:
    regex: str  # matches the path relative to the rules' directory, whole, byte for byte
    negated: bool
    dir_only: bool
    name: bytes | None = None  # the pattern is this exact name, at any depth (``node_modules/``)
    suffix: bytes | None = None  # the pattern is ``*`` then this literal, at any depth (``*.pyc``)


BOM = b"\xef\xbb\xbf"  # git skips one at the start of an ignore file
_SLASH = ord("/")
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

# The POSIX classes of wildmatch, as git's own ctype defines them (ASCII only; git's isspace
# is tab, newline, CR and space), as byte ranges.
_POSIX_CLASSES: dict[bytes, tuple[tuple[int, int], ...]] = {
    b"alnum": ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)),
    b"alpha": ((0x41, 0x5A), (0x61, 0x7A)),
    b"blank": ((0x09, 0x09), (0x20, 0x20)),
    b"cntrl": ((0x00, 0x1F), (0x7F, 0x7F)),
    b"digit": ((0x30, 0x39),),
    b"graph": ((0x21, 0x7E),),
    b"lower": ((0x61, 0x7A),),
    b"print": ((0x20, 0x7E),),
    b"punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)),
    b"space": ((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)),
    b"upper": ((0x41, 0x5A),),
    b"xdigit": ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66)),
}


def _byte(b: int) -> str:
    """One byte as a Latin-1 RE2 pattern that matches exactly it."""
    return chr(b) if b in _WORD else f"\\x{b:02x}"


def _class(pattern: bytes, i: int) -> tuple[str | None, int] | None:
    """wildmatch's ``[...]`` at ``pattern[i] == '['``, read as git's ``wildmatch.c`` reads it:
    (regex, next index), the regex None for a class that matches no byte; None when the bracket
    never closes or names an unknown class (then git's pattern matches nothing)."""
    n = len(pattern)
    j = i + 1
    negated = j < n and pattern[j] in b"!^"
    if negated:
        j += 1
    ranges: list[tuple[int, int]] = []
    prev: int | None = None  # the byte a following "-" makes a range from
    while True:
        if j >= n:
            return None
        c = pattern[j]
        if c == 0x5C:  # backslash: the next byte, literally
            j += 1
            if j >= n:
                return None
            ranges.append((pattern[j], pattern[j]))
            prev = pattern[j]
        elif c == 0x2D and prev is not None and j + 1 < n and pattern[j + 1] != 0x5D:  # a range
            j += 1
            high = pattern[j]
            if high == 0x5C:
                j += 1
                if j >= n:
                    return None
                high = pattern[j]
            if prev <= high:
                ranges.append((prev, high))  # a reversed range holds no byte
            prev = None
        elif c == 0x5B and j + 1 < n and pattern[j + 1] == 0x3A:  # "[:name:]"
            k = pattern.find(b"]", j + 2)
            if k < 0:
                return None
            if k - 1 < j + 2 or pattern[k - 1] != 0x3A:
                ranges.append((c, c))  # no ":]": the "[" is a literal one
                prev = c
            else:
                found = _POSIX_CLASSES.get(pattern[j + 2 : k - 1])
                if found is None:
                    return None  # wildmatch: a malformed class matches nothing
                ranges.extend(found)
                prev = None
                j = k
        else:
            ranges.append((c, c))
            prev = c
        j += 1
        if j < n and pattern[j] == 0x5D:
            break
    # With WM_PATHNAME a class never matches "/": it is cut out of every range.
    if not negated:
        ranges = [
            part
            for lo, hi in ranges
            for part in ((lo, min(hi, _SLASH - 1)), (max(lo, _SLASH + 1), hi))
            if part[0] <= part[1]
        ]
        if not ranges:
            return None, j + 1
    body = "".join(_byte(lo) if lo == hi else f"{_byte(lo)}-{_byte(hi)}" for lo, hi in ranges)
    return ("[^/" + body + "]" if negated else "[" + body + "]"), j + 1


def wildmatch_regex(pattern: bytes) -> str | None:
    """git's wildmatch (``WM_PATHNAME``) as a Latin-1 regex on the whole path, a byte for each
    character as git matches bytes (``?`` is one byte of a multi-byte name); None: matches
    nothing."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == 0x2A:  # "*"
            j = i
            while j < n and pattern[j] == 0x2A:
                j += 1
            at_start = i == 0 or pattern[i - 1] == _SLASH
            if j - i >= 2 and at_start and (j == n or pattern[j] == _SLASH):
                if j == n:
                    out.append(".*")  # "**" at the end: everything, at any depth
                    i = j
                else:
                    out.append("(?:.*/)?")  # "**/": any number of directories, none included
                    i = j + 1
            else:
                out.append("[^/]*")  # "*", or a "**" not standing alone: within one name
                i = j
        elif c == 0x3F:  # "?"
            out.append("[^/]")
            i += 1
        elif c == 0x5B:  # "["
            translated = _class(pattern, i)
            if translated is None or translated[0] is None:
                return None
            out.append(translated[0])
            i = translated[1]
        elif c == 0x5C:  # backslash
            if i + 1 >= n:
                return None  # a trailing backslash matches nothing (wildmatch)
            out.append(_byte(pattern[i + 1]))
            i += 2
        else:
            out.append(_byte(c))
            i += 1
    return "".join(out)


def _trim_trailing_spaces(line: bytes) -> bytes:
    """git's ``trim_trailing_spaces``: the spaces after the last byte that is not an unescaped
    space go."""
    last_space: int | None = None
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == 0x20:
            if last_space is None:
                last_space = i
        elif c == 0x5C:
            i += 1
            if i >= n:
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def parse_line(line: bytes) -> Pattern | None:
    """One ``.gitignore`` line (bytes, as git reads them) as a pattern, or None for a blank
    line, a comment, or a pattern that can match nothing."""
    if not line or line.startswith(b"#"):
        return None
    line = line.split(b"\0", 1)[0].removesuffix(b"\r")  # git holds a line as a C string
    line = _trim_trailing_spaces(line)
    negated = line.startswith(b"!")
    if negated:
        line = line[1:]
    dir_only = line.endswith(b"/")
    if dir_only:
        line = line[:-1]  # one slash: "foo//" is "foo/", a path pattern no directory matches
    if not line:
        return None
    anchored = b"/" in line
    line = line.removeprefix(b"/")
    if not line:
        return None
    body = wildmatch_regex(line)
    if body is None:
        return None
    name = suffix = None
    special = b"*?[\\"
    if not anchored and not any(c in special for c in line):
        name = line
    elif not anchored and line.startswith(b"*") and not any(c in special for c in line[1:]):
        suffix = line[1:]
    return Pattern(body if anchored else "(?:.*/)?" + body, negated, dir_only, name, suffix)


def _latin1_options() -> Any:
    """RE2 matching bytes, one character each (Latin-1): git matches a path byte for byte."""
    options = re2.Options()
    options.log_errors = False
    options.max_mem = MAX_PROGRAM_BYTES * 8
    options.encoding = re2.Options.Encoding.LATIN1
    return options


def name_bytes(path: str) -> bytes:
    """A walk's path (as ``os`` spells it) as the bytes git matches: the name's own bytes."""
    return path.encode("utf-8", "surrogateescape")


class RuleFile:
    """The patterns of one source, for paths relative to ``base`` ("" for the top)."""

    def __init__(self, base: str, lines: Sequence[bytes]) -> None:
        self.base = base
        self.patterns: list[Pattern] = []
        self._set: Any = None
        # Most lines are a plain name or ``*.ext``: those are judged by a dict and a few
        # ``endswith``, the rest by one RE2 set. The last matching index still wins.
        self._names: dict[bytes, list[int]] = {}
        self._suffixes: list[tuple[bytes, int]] = []
        self._general: list[int] = []  # pattern index of each RE2 set member
        options = _latin1_options()
        matcher = re2.Set.FullMatchSet(options)
        for line in lines[:MAX_PATTERNS]:
            pattern = parse_line(line)
            if pattern is None:
                continue
            index = len(self.patterns)
            if pattern.name is not None:
                self._names.setdefault(pattern.name, []).append(index)
            elif pattern.suffix is not None:
                self._suffixes.append((pattern.suffix, index))
            else:
                regex = ("(?s)" + pattern.regex).encode("latin-1")
                try:
                    re2.compile(regex, options)
                except re2.error:
                    continue  # a line git could match is never refused by RE2; this is defence
                matcher.Add(regex)
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
        Compared as text, without encoding each name, when every pattern is valid UTF-8: then
        a name is a pattern's, or ends with one, exactly when its bytes do (a valid UTF-8
        ending starts where a character does, and a name's undecodable bytes become
        surrogates, which no such pattern holds)."""
        texts = self._texts
        if texts is None:
            return any(self.may_match(name_bytes(name)) for name in names)
        whole, endings = texts
        if not whole.isdisjoint(names):
            return True
        return bool(endings) and any(name.endswith(endings) for name in names)

    @functools.cached_property
    def _texts(self) -> tuple[frozenset[str], tuple[str, ...]] | None:
        try:
            whole = frozenset(name.decode("utf-8") for name in self.names)
            endings = tuple(suffix.decode("utf-8") for suffix in self.suffixes)
        except UnicodeDecodeError:
            return None
        return whole, endings


def parse_rules(base: str, data: bytes) -> RuleFile:
    """The rules of one ignore file. git reads its bytes, after a UTF-8 byte order mark, and
    matches them against a name's bytes: nothing is decoded."""
    data = data[:MAX_GITIGNORE_BYTES].removeprefix(BOM)
    return RuleFile(base, data.split(b"\n"))


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
        the names and the name endings (as bytes) of all patterns, negated or not. An
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
        data = name_bytes(path)
        for rules in (*reversed(self.dirs), *self.files):
            base = name_bytes(rules.base)
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
