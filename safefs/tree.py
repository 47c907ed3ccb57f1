"""Directory listing, walking and removal through held fds: no step ever follows a symlink."""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

from safefs import _sys
from safefs.errors import PathEscapeError

if TYPE_CHECKING:
    from safefs.root import Root

_DIR_FLAGS = os.O_RDONLY | _sys.O_DIRECTORY


class DirEntry:
    """One entry of :meth:`Root.scandir`. Type checks without following use what the directory
    listing said; following a symlink goes back through the root, so it never leaves it."""

    __slots__ = ("_is_dir", "_is_file", "_is_symlink", "_root", "inode_number", "name", "path")

    def __init__(self, root: Root, name: Any, path: Any, is_dir: bool, is_file: bool,
                 is_symlink: bool, inode: int) -> None:
        self._root = root
        self.name = name
        self.path = path
        self._is_dir = is_dir
        self._is_file = is_file
        self._is_symlink = is_symlink
        self.inode_number = inode

    def inode(self) -> int:
        return self.inode_number

    def is_symlink(self) -> bool:
        return self._is_symlink

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        if self._is_symlink and follow_symlinks:
            return self._follow(stat_mod.S_ISDIR)
        return self._is_dir

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        if self._is_symlink and follow_symlinks:
            return self._follow(stat_mod.S_ISREG)
        return self._is_file

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return self._root.stat(self.path, follow_symlinks=follow_symlinks)

    def _follow(self, check: Any) -> bool:
        try:
            return bool(check(self._root.stat(self.path).st_mode))
        except (PathEscapeError, FileNotFoundError, NotADirectoryError):
            return False
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return False
            raise

    def __fspath__(self) -> Any:
        return self.path

    def __repr__(self) -> str:
        return f"<safefs.DirEntry {self.name!r}>"


def _names(fd: int, as_bytes: bool) -> Iterator[tuple[Any, os.DirEntry[str]]]:
    with os.scandir(fd) as it:
        for entry in it:
            yield (os.fsencode(entry.name) if as_bytes else entry.name), entry


def scan_fd(fd: int, root: Root, top: Any) -> list[DirEntry]:
    top = os.fspath(top)
    as_bytes = isinstance(top, bytes)
    prefix_free = top in (".", b".")
    out = []
    for name, entry in _names(fd, as_bytes):
        path = name if prefix_free else os.path.join(top, name)
        out.append(DirEntry(root, name, path, entry.is_dir(follow_symlinks=False),
                            entry.is_file(follow_symlinks=False), entry.is_symlink(),
                            entry.inode()))
    return out


WalkStep = tuple[Any, list[Any], list[Any]]


class _OwnedWalk(Iterator[WalkStep]):
    """The walk, owning ``fd`` from the start: a generator's ``finally`` never runs when it is
    dropped before its first ``next()``, which would leak the fd."""

    def __init__(self, fd: int, top: Any, topdown: bool) -> None:
        self._fd = fd
        self._gen = _walk_fd(fd, top, topdown)

    def __next__(self) -> WalkStep:
        self._fd = -1  # once started, the generator's finally closes it
        return next(self._gen)

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)
        self._gen.close()

    def __del__(self) -> None:
        self.close()


def walk_fd(fd: int, top: Any, topdown: bool) -> Iterator[WalkStep]:
    """Takes ownership of ``fd``. Subdirectories are opened O_NOFOLLOW relative to their parent's
    fd, so one swapped for a symlink mid-walk is skipped, not followed."""
    return _OwnedWalk(fd, top, topdown)


def _walk_fd(fd: int, top: Any, topdown: bool) -> Generator[WalkStep, None, None]:
    try:
        as_bytes = isinstance(top, bytes)
        dirs: list[Any] = []
        files: list[Any] = []
        for name, entry in _names(fd, as_bytes):
            (dirs if entry.is_dir(follow_symlinks=False) else files).append(name)
        if topdown:
            yield top, dirs, files
        for name in dirs:
            try:
                child = _sys.openat(fd, os.fsencode(name), _DIR_FLAGS)
            except OSError:
                continue  # vanished or replaced since the listing
            yield from _walk_fd(child, os.path.join(top, name), topdown)
        if not topdown:
            yield top, dirs, files
    finally:
        os.close(fd)


def remove_tree_fd(parent_fd: int, name: bytes, expected: os.stat_result) -> None:
    """Remove directory ``name`` of ``parent_fd`` and everything in it."""
    fd = _sys.openat(parent_fd, name, _DIR_FLAGS)
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (expected.st_dev, expected.st_ino):
            raise OSError(errno.EBUSY, "directory changed while being removed")
        with os.scandir(fd) as it:
            entries = [(os.fsencode(e.name), e.is_dir(follow_symlinks=False)) for e in it]
        for child, is_dir in entries:
            if is_dir:
                remove_tree_fd(fd, child, _sys.fstatat(fd, child))
            else:
                _sys.unlinkat(fd, child)
    finally:
        os.close(fd)
    _sys.rmdirat(parent_fd, name)
