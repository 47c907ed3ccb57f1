"""stat and chmod of the node a path names, never opening it for reading or writing.

Threat model: docs/threat-model.md.

Two ways, and each resolver names the one it takes: *by handle*, an O_PATH fd on the node itself
(no permission needed, a FIFO never blocks), where the platform has O_PATH; *via parent*, a call
by name (``fstatat``, ``fchmodat(AT_SYMLINK_NOFOLLOW)``) on the held directory that a lookup
hands back, elsewhere. A path naming a directory as a whole (``d/``, ``d/..``) has no final name
to act on: that directory is opened as one and acted on through its fd.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from safefs import _sys
from safefs._paths import SPECIAL_NAMES, split_parent
from safefs._resolve.resolved import DirectoryPath, Resolved
from safefs.errors import error

if TYPE_CHECKING:
    from safefs._resolve.base import Resolver

_T = TypeVar("_T")


def stat_by_handle(r: Resolver, root_fd: int, rel: bytes, follow: bool) -> os.stat_result:
    fd = r.open(root_fd, rel, _sys.O_PATH, follow=follow)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def chmod_by_handle(r: Resolver, root_fd: int, rel: bytes, mode: int, follow: bool) -> None:
    fd = r.open(root_fd, rel, _sys.O_PATH, follow=follow)
    try:
        if stat.S_ISLNK(os.fstat(fd).st_mode):
            raise error(errno.EOPNOTSUPP)
        _sys.fchmod(fd, mode)
    finally:
        os.close(fd)


def stat_via_parent(r: Resolver, root_fd: int, rel: bytes, follow: bool) -> os.stat_result:
    try:
        found = _lookup_name(r, root_fd, rel, follow)
    except DirectoryPath as whole:
        return _through_directory(r, root_fd, whole.rel, os.fstat)
    with found:
        if found.st is None:
            raise error(errno.ENOENT)
        return found.st


def chmod_via_parent(r: Resolver, root_fd: int, rel: bytes, mode: int, follow: bool) -> None:
    try:
        found = _lookup_name(r, root_fd, rel, follow)
    except DirectoryPath as whole:
        _through_directory(r, root_fd, whole.rel, lambda fd: _sys.fchmod(fd, mode))
        return
    with found:
        if found.st is None:
            raise error(errno.ENOENT)
        _sys.fchmodat_nofollow(found.fd, found.name, mode)


def set_times(r: Resolver, root_fd: int, rel: bytes, ns: tuple[int, int] | None, follow: bool) -> None:
    """utimensat of what ``rel`` names (``ns``: atime and mtime in nanoseconds; None: now), by
    name on the held directory, never following it there (a link is reached by the lookup, or
    not at all); a path naming a directory as a whole (``d/``, ``.``), through an O_PATH fd on
    it where there is O_PATH (so it is never opened, and needs no read permission), else
    through the fd the walk looks through directories with."""
    try:
        found = _lookup_name(r, root_fd, rel, follow)
    except DirectoryPath as whole:
        _through_directory(r, root_fd, whole.rel, lambda fd: _sys.futimens(fd, ns))
        return
    with found:
        if found.st is None:
            raise error(errno.ENOENT)
        _sys.utimensat_nofollow(found.fd, found.name, ns)


def _lookup_name(r: Resolver, root_fd: int, rel: bytes, follow: bool) -> Resolved:
    """The directory and final name of ``rel``, with its lstat; DirectoryPath when there is no
    final name (the path, or the target of a link it ends in, names a directory as a whole)."""
    _parent, name, trailing = split_parent(rel)
    if name in SPECIAL_NAMES or trailing:
        raise DirectoryPath(rel)
    return r.lookup(root_fd, rel, follow=follow, lstat=True)


def _through_directory(
    r: Resolver, root_fd: int, rel: bytes, act: Callable[[int], _T], flags: int | None = None
) -> _T:
    """``act`` on the directory ``rel`` names (links followed), through a fd held meanwhile."""
    fd = r.open(root_fd, rel, r.dir_flags if flags is None else flags, follow=True)
    try:
        return act(fd)
    finally:
        os.close(fd)
