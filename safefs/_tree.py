"""Directory listing, walking and removal through held fds: no step ever follows a symlink.

Threat model: docs/threat-model.md.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

from safefs import _sys
from safefs.errors import PathEscapeError, error

if TYPE_CHECKING:
    from safefs._root import Root

_DIR_FLAGS = os.O_RDONLY | _sys.O_DIRECTORY


class DirEntry:
    """One entry of :meth:`Root.scandir`, which alone makes them (as ``os.scandir`` makes
    ``os.DirEntry``). Type checks without following use what the directory listing said;
    following a symlink goes back through the root, so it never leaves it. An entry listed with
    ``lstat`` keeps the lstat taken while its directory was held, as ``os.DirEntry`` keeps its
    own."""

    __slots__ = ("_is_dir", "_is_file", "_is_symlink", "_lstat", "_root", "inode_number", "name", "path")

    _root: Root
    name: Any
    path: Any
    _is_dir: bool
    _is_file: bool
    _is_symlink: bool
    inode_number: int
    _lstat: os.stat_result | None

    def __init__(self) -> None:
        raise TypeError("safefs.DirEntry objects are made by Root.scandir")

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
        # Not a link (or not following): what the listing saw, when it looked. A link is
        # followed through the root, never from the cache.
        if self._lstat is not None and not (follow_symlinks and self._is_symlink):
            return self._lstat
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


def scan_fd(fd: int, root: Root, top: Any, lstat: bool = False) -> list[DirEntry]:
    """The entries of directory ``fd`` (listed as ``top``); with ``lstat``, each with its lstat
    taken now, while ``fd`` is held."""
    top = os.fspath(top)
    as_bytes = isinstance(top, bytes)
    # os.path.join(top, name) for a name without "/", worked out once per directory.
    sep = b"/" if as_bytes else "/"
    prefix = top[:0] if top in (".", b".", "", b"") else top if top.endswith(sep) else top + sep
    out = []
    new = object.__new__
    with os.scandir(fd) as it:
        for entry in it:
            name = os.fsencode(entry.name) if as_bytes else entry.name
            # DirEntry.__init__'s work, inline: this runs once per entry of every listing.
            found = new(DirEntry)
            found._root = root
            found.name = name
            found.path = prefix + name
            found._is_dir = entry.is_dir(follow_symlinks=False)
            found._is_file = entry.is_file(follow_symlinks=False)
            found._is_symlink = entry.is_symlink()
            found.inode_number = entry.inode()
            found._lstat = None
            if lstat:
                # fstatat(fd, name, AT_SYMLINK_NOFOLLOW) on the fd being listed: one name in a
                # directory we hold, never followed. An entry gone since is left without: its
                # stat() then asks the root, which says why.
                try:
                    found._lstat = entry.stat(follow_symlinks=False)
                except OSError:
                    pass
            out.append(found)
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


def _single_name(name: Any) -> bytes:
    """An entry a caller left in ``dirs``: a single name of that directory, nothing else (no
    ``/``, ``.`` or ``..``), or the walk would list directories it never found."""
    raw = os.fsencode(name) if isinstance(name, str) else name
    # Byte values, not b"/" and b"\0": those would first raise and clear a TypeError each.
    if not isinstance(raw, bytes) or not raw or 0x2F in raw or raw in (b".", b"..") or 0 in raw:
        raise ValueError(f"walk: {name!r} in dirs is not a name in that directory")
    return raw


class _Level:
    """One directory of the walk: its fd, its path as shown, and its listing."""

    __slots__ = ("dirs", "fd", "files", "next", "top")

    def __init__(self, fd: int, top: Any, as_bytes: bool) -> None:
        self.fd = fd
        self.top = top
        self.dirs: list[Any] = []
        self.files: list[Any] = []
        self.next = 0
        for name, entry in _names(fd, as_bytes):
            (self.dirs if entry.is_dir(follow_symlinks=False) else self.files).append(name)


def _walk_fd(fd: int, top: Any, topdown: bool) -> Generator[WalkStep, None, None]:
    """Iterative (a tree deeper than the recursion limit is walked like any other): one held fd
    per level being walked, each child opened O_NOFOLLOW relative to its parent's fd."""
    as_bytes = isinstance(top, bytes)
    levels: list[_Level] = []
    try:
        try:
            levels.append(_Level(fd, top, as_bytes))
        except BaseException:
            os.close(fd)
            raise
        if topdown:
            yield top, levels[0].dirs, levels[0].files
        while levels:
            level = levels[-1]
            if level.next >= len(level.dirs):
                levels.pop()
                os.close(level.fd)
                if not topdown:
                    yield level.top, level.dirs, level.files
                continue
            name = level.dirs[level.next]
            level.next += 1
            raw = _single_name(name)
            try:
                child = _sys.openat(level.fd, raw, _DIR_FLAGS)
            except OSError:
                continue  # vanished or replaced since the listing
            path = os.path.join(level.top, name)
            try:
                levels.append(_Level(child, path, as_bytes))
            except BaseException:
                os.close(child)
                raise
            if topdown:
                yield path, levels[-1].dirs, levels[-1].files
    finally:
        _sys.close_all([level.fd for level in levels])


def remove_tree_fd(
    parent_fd: int, name: bytes, expected: os.stat_result, *, missing_ok: bool = False
) -> None:
    """Remove directory ``name`` of ``parent_fd`` and everything in it, iteratively: one held fd
    per level, each opened O_NOFOLLOW from the level above and checked to be the directory
    that was listed (device and inode) before anything in it is removed. ``missing_ok``: an
    entry another process removed meanwhile is done, at every level (Go's ``RemoveAll``)."""
    stack: list[tuple[int, bytes, list[tuple[bytes, bool]]]] = []  # (fd, its name, to remove)

    def enter(dirfd: int, child: bytes, want: os.stat_result) -> None:
        fd = _sys.openat(dirfd, child, _DIR_FLAGS)
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (want.st_dev, want.st_ino):
                raise error(errno.EBUSY, "directory changed while being removed")
            with os.scandir(fd) as it:
                entries = [(os.fsencode(e.name), e.is_dir(follow_symlinks=False)) for e in it]
        except BaseException:
            os.close(fd)
            raise
        stack.append((fd, child, entries))

    try:
        try:
            enter(parent_fd, name, expected)
        except FileNotFoundError:
            if not missing_ok:
                raise
            return
        while stack:
            fd, own, entries = stack[-1]
            try:
                if not entries:
                    stack.pop()
                    os.close(fd)
                    _sys.rmdirat(stack[-1][0] if stack else parent_fd, own)
                    continue
                child, is_dir = entries.pop()
                if is_dir:
                    enter(fd, child, _sys.fstatat(fd, child))
                else:
                    _sys.unlinkat(fd, child)
            except FileNotFoundError:
                if not missing_ok:
                    raise
    finally:
        _sys.close_all([fd for fd, _n, _e in stack])


def canonical(root_fd: int, fd: int) -> bytes:
    """Path of directory ``fd`` relative to the root, found by climbing ``..`` through fds and
    matching inode numbers (portable: needs no /proc)."""
    root = os.fstat(root_fd)
    here = os.fstat(fd)
    names: list[bytes] = []
    cur = os.dup(fd)
    try:
        while (here.st_dev, here.st_ino) != (root.st_dev, root.st_ino):
            up = _sys.openat(cur, b"..", os.O_RDONLY | _sys.O_DIRECTORY)
            os.close(cur)
            cur = up
            above = os.fstat(cur)
            if (above.st_dev, above.st_ino) == (here.st_dev, here.st_ino):
                raise PathEscapeError()  # reached "/" without meeting the root
            with os.scandir(cur) as it:
                for entry in it:
                    if entry.inode() == here.st_ino and entry.is_dir(follow_symlinks=False):
                        names.append(os.fsencode(entry.name))
                        break
                else:
                    raise error(errno.ENOENT, "directory no longer linked beneath the root")
            here = above
    finally:
        os.close(cur)
    return b"/".join(reversed(names)) or b"."
