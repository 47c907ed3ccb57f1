"""``glob.glob`` (Python's, ``recursive=`` included) through a :class:`safefs.Root`: the same
names, spelled as the pattern spells its directories, every listing and type check beneath the
root. Names starting with a dot are matched only by a pattern starting with one, as glob's.
A glob lists at most 200,000 entries in at most 30 seconds (:mod:`._budget`)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator

import safefs
from safefs.integrations.strands._budget import Budget, Spent


def glob(root: safefs.Root, pathname: str, *, recursive: bool = False) -> list[str]:
    """The matches, as ``glob.glob`` lists them, found before the :class:`Budget` of the call is
    spent (a tree of links leading back up multiplies the paths ``**`` visits until the
    40-link budget of a path is spent, as the kernel's is for the original; a missing name
    under ``**`` lists the whole tree)."""
    found: list[str] = []
    try:
        for name in _iglob(root, pathname, recursive, False, Budget()):
            found.append(name)
    except Spent:
        pass
    return found


def has_magic(s: str) -> bool:
    return any(c in s for c in "*?[")


def _iglob(root: safefs.Root, pathname: str, recursive: bool, dironly: bool, budget: Budget) -> Iterator[str]:
    dirname, basename = os.path.split(pathname)
    if not has_magic(pathname):
        if basename:
            if _lexists(root, pathname):
                yield pathname
        elif _isdir(root, dirname):
            yield pathname  # a pattern ending with a separator names a directory
        return
    if not dirname:
        if recursive and basename == "**":
            yield from _glob2(root, dirname, basename, dironly, budget)
        else:
            yield from _glob1(root, dirname, basename, dironly, budget)
        return
    if dirname != pathname and has_magic(dirname):
        dirs: Iterator[str] | list[str] = _iglob(root, dirname, recursive, True, budget)
    else:
        dirs = [dirname]
    in_dir = (_glob2 if recursive and basename == "**" else _glob1) if has_magic(basename) else _glob0
    for d in dirs:
        for name in in_dir(root, d, basename, dironly, budget):
            yield os.path.join(d, name)


def _glob1(root: safefs.Root, dirname: str, pattern: str, dironly: bool, budget: Budget) -> list[str]:
    names = _listdir(root, dirname, dironly, budget)
    if not pattern.startswith("."):
        names = [x for x in names if not x.startswith(".")]
    return fnmatch.filter(names, pattern)


def _glob0(root: safefs.Root, dirname: str, basename: str, dironly: bool, budget: Budget) -> list[str]:
    if basename:
        if _lexists(root, os.path.join(dirname, basename)):
            return [basename]
    elif _isdir(root, dirname):
        return [basename]
    return []


def _glob2(root: safefs.Root, dirname: str, pattern: str, dironly: bool, budget: Budget) -> Iterator[str]:
    yield pattern[:0]
    yield from _rlistdir(root, dirname, dironly, budget)


def _rlistdir(root: safefs.Root, dirname: str, dironly: bool, budget: Budget) -> Iterator[str]:
    for x in _listdir(root, dirname, dironly, budget):
        if not x.startswith("."):
            yield x
            path = os.path.join(dirname, x) if dirname else x
            for y in _rlistdir(root, path, dironly, budget):
                yield os.path.join(x, y)


def _listdir(root: safefs.Root, dirname: str, dironly: bool, budget: Budget) -> list[str]:
    """The names in ``dirname`` (the directories alone with ``dironly``: a symlink counts when
    it leads to a directory beneath the root); nothing when it cannot be listed, as glob's."""
    try:
        entries = list(root.scandir(dirname or "."))
    except (OSError, ValueError):
        return []
    budget.charge(len(entries) + 1)
    names = []
    for entry in entries:
        try:
            if not dironly or entry.is_dir():
                names.append(entry.name)
        except OSError:
            continue
    return names


def _lexists(root: safefs.Root, path: str) -> bool:
    try:
        root.lstat(path)
    except (OSError, ValueError):
        return False
    return True


def _isdir(root: safefs.Root, path: str) -> bool:
    try:
        return root.is_dir(path)
    except (OSError, ValueError):
        return False
