"""Every raw system call safefs makes on a path component, and the one policy for its flags.

Threat model: docs/threat-model.md.

Invariant: every open goes through :func:`open_flags`, which adds ``O_CLOEXEC | O_NOCTTY`` and
``O_NOFOLLOW`` itself. Following a trailing symlink is an explicit ``follow=True`` from the caller,
never a default, so no descriptor leaks into a child and no path is followed by accident. The two
calls that take flags already worked out by :func:`open_flags` or :func:`open_how` for a hot loop
(:func:`open_component`, :func:`openat2`) say so. Calls by name (``fstatat``, ``unlinkat``,
``fchmodat_nofollow``, ``utimensat_nofollow`` ...) never follow the final name either.

Portable: only POSIX ``*at`` calls. Linux-only calls live in :mod:`safefs._linux`; what this module
takes from it is named below, with a portable stand-in where there is none.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import Final

from safefs.errors import error

AT_FDCWD: Final[int] = -100  # only ever used to open the trusted root itself
O_PATH: Final[int] = getattr(os, "O_PATH", 0)
HAVE_O_PATH: Final[bool] = O_PATH != 0
O_NOCTTY: Final[int] = getattr(os, "O_NOCTTY", 0)
O_NOFOLLOW: Final[int] = os.O_NOFOLLOW
O_CLOEXEC: Final[int] = getattr(os, "O_CLOEXEC", 0)
O_DIRECTORY: Final[int] = getattr(os, "O_DIRECTORY", 0)
O_NONBLOCK: Final[int] = getattr(os, "O_NONBLOCK", 0)

# O_SEARCH (open a directory for lookups only: needs search, not read, permission) where the
# platform has it and Python does not name it. macOS: O_EXEC | O_DIRECTORY; FreeBSD: O_EXEC.
_SEARCH_BY_PLATFORM: Final = {"darwin": 0x40000000 | 0x00100000, "freebsd": 0x00040000}


def search_flag(platform: str = sys.platform) -> int:
    """The open flag for a directory that is only looked through, or 0 if there is none."""
    named = getattr(os, "O_SEARCH", 0) or getattr(os, "O_EXEC", 0)
    if named and platform == sys.platform:
        return int(named)
    for prefix, flag in _SEARCH_BY_PLATFORM.items():
        if platform.startswith(prefix):
            return flag
    return 0


def dir_flags(use_o_path: bool, platform: str = sys.platform) -> int:
    """How a directory we only look through is opened: O_PATH where there is one (no permission
    needed at all), else O_SEARCH (search permission, as path lookup itself needs), else O_RDONLY
    (which also needs read permission: a ``--x`` directory then cannot be traversed)."""
    if use_o_path and HAVE_O_PATH:
        return O_PATH | O_DIRECTORY
    return (search_flag(platform) or os.O_RDONLY) | O_DIRECTORY


if sys.platform.startswith("linux"):
    from safefs import _linux
    from safefs._linux import RENAME_EXCHANGE as RENAME_EXCHANGE
    from safefs._linux import RENAME_NOREPLACE as RENAME_NOREPLACE
    from safefs._linux import RESOLVE_BENEATH as RESOLVE_BENEATH
    from safefs._linux import RESOLVE_IN_ROOT as RESOLVE_IN_ROOT
    from safefs._linux import RESOLVE_NO_MAGICLINKS as RESOLVE_NO_MAGICLINKS
    from safefs._linux import RESOLVE_NO_SYMLINKS as RESOLVE_NO_SYMLINKS
    from safefs._linux import have_renameat2 as have_renameat2
    from safefs._linux import renameat2 as renameat2

    HAVE_NATIVE: bool = _linux.HAVE_NATIVE
    O_TMPFILE: int = _linux.O_TMPFILE if _linux.HAVE_PROC_FD else 0
    link_unnamed = _linux.link_unnamed
else:  # pragma: no cover - exercised on macOS / BSD only
    RESOLVE_BENEATH = RESOLVE_IN_ROOT = RESOLVE_NO_MAGICLINKS = RESOLVE_NO_SYMLINKS = 0
    RENAME_NOREPLACE = RENAME_EXCHANGE = 0
    HAVE_NATIVE = False
    O_TMPFILE = 0

    def renameat2(olddirfd: int, old: bytes, newdirfd: int, new: bytes, flags: int) -> None:
        raise error(errno.ENOSYS, "renameat2 is not available on this platform")

    def have_renameat2() -> bool:
        return False

    def link_unnamed(fd: int, dirfd: int, name: bytes) -> None:
        raise error(errno.ENOSYS, "unnamed files need Linux")


def _no_openat2(dirfd: int, path: bytes, flags: int, mode: int, resolve: int) -> int:
    return -errno.ENOSYS


openat2: Callable[[int, bytes, int, int, int], int] = _linux.raw_openat2 if HAVE_NATIVE else _no_openat2
"""``openat2(dirfd, path, flags, mode, resolve)``: the fd, or ``-errno`` (-ENOSYS without the
extension); never raises, so a retry costs no exception. ``flags, mode`` come from open_how():
this is the extension's own entry point, with no Python frame on the hottest path."""


# With O_PATH the kernel accepts only these flags; openat2 rejects anything else with EINVAL.
_O_PATH_ALLOWED: Final = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
_O_BASE: Final[int] = O_CLOEXEC | O_NOCTTY


def open_flags(flags: int, *, follow: bool = False) -> int:
    """The flags the kernel is given for an open with ``flags``: the one flag policy.

    ``O_CLOEXEC | O_NOCTTY`` always, and ``O_NOFOLLOW`` unless ``follow``; with O_PATH only the
    flags O_PATH accepts (openat2 rejects any other)."""
    if flags & O_PATH:
        flags = (flags & _O_PATH_ALLOWED) | O_CLOEXEC
    else:
        flags |= _O_BASE
    if not follow:
        flags |= O_NOFOLLOW
    return flags


def open_how(flags: int, mode: int = 0, *, follow: bool = False) -> tuple[int, int]:
    """The flags and the mode the kernel is given: open_flags(), and a mode of 0 unless the open
    may create (O_CREAT, O_TMPFILE), since openat2 rejects any other. A caller that opens the
    same way in a hot loop works it out once."""
    flags = open_flags(flags, follow=follow)
    if not (flags & os.O_CREAT or (O_TMPFILE and flags & O_TMPFILE == O_TMPFILE)):
        mode = 0
    return flags, mode


def openat(dirfd: int, name: bytes, flags: int, mode: int = 0o666, *, follow: bool = False) -> int:
    """openat(2) of one name relative to ``dirfd``; never follows a trailing symlink unless asked.
    (openat ignores a mode it does not need, so open_flags() is all it takes.)"""
    return os.open(name, open_flags(flags, follow=follow), mode, dir_fd=dirfd)


def open_component(dirfd: int, name: bytes, flags: int) -> int:
    """openat(2) of one directory on a walk, ``flags`` from open_flags() (so: never follows)."""
    return os.open(name, flags, 0, dir_fd=dirfd)


def renameat(olddirfd: int, old: bytes, newdirfd: int, new: bytes) -> None:
    os.rename(old, new, src_dir_fd=olddirfd, dst_dir_fd=newdirfd)


def fstatat(dirfd: int, name: bytes) -> os.stat_result:
    """lstat of one name relative to ``dirfd`` (never follows)."""
    return os.stat(name, dir_fd=dirfd, follow_symlinks=False)


def fstat(fd: int) -> os.stat_result:
    return os.fstat(fd)


def readlinkat(dirfd: int, name: bytes) -> bytes:
    return os.readlink(name, dir_fd=dirfd)


def unlinkat(dirfd: int, name: bytes) -> None:
    os.unlink(name, dir_fd=dirfd)


def rmdirat(dirfd: int, name: bytes) -> None:
    os.rmdir(name, dir_fd=dirfd)


def mkdirat(dirfd: int, name: bytes, mode: int) -> None:
    os.mkdir(name, mode, dir_fd=dirfd)


def symlinkat(target: bytes, dirfd: int, name: bytes) -> None:
    os.symlink(target, name, dir_fd=dirfd)


def linkat(olddirfd: int, old: bytes, newdirfd: int, new: bytes) -> None:
    os.link(old, new, src_dir_fd=olddirfd, dst_dir_fd=newdirfd, follow_symlinks=False)


def utimensat_nofollow(dirfd: int, name: bytes, ns: tuple[int, int] | None = None) -> None:
    """Set both times of ``name`` (``ns``: atime and mtime in nanoseconds; None: now):
    utimensat(AT_SYMLINK_NOFOLLOW). Needs no open, so no write access, and a FIFO or device is
    never opened."""
    if ns is None:
        os.utime(name, dir_fd=dirfd, follow_symlinks=False)
    else:
        os.utime(name, ns=ns, dir_fd=dirfd, follow_symlinks=False)


def futimens(fd: int, ns: tuple[int, int] | None = None) -> None:
    """Set both times of what ``fd`` holds (``ns`` as for utimensat_nofollow); an O_PATH fd
    goes through its /proc/self/fd entry (Linux), so the node is never opened for it."""
    try:
        if ns is None:
            os.utime(fd)
        else:
            os.utime(fd, ns=ns)
    except OSError as exc:
        if exc.errno != errno.EBADF or not HAVE_O_PATH:
            raise
        _linux.utime_o_path(fd, ns)


def fchmodat_nofollow(dirfd: int, name: bytes, mode: int) -> None:
    """chmod ``name`` without opening it, through fchmodat(AT_SYMLINK_NOFOLLOW): a name swapped
    for a link between a check and this call is never followed. Where the platform cannot chmod
    a link itself, that is EOPNOTSUPP, as Linux answers."""
    try:
        os.chmod(name, mode, dir_fd=dirfd, follow_symlinks=False)
    except (NotImplementedError, ValueError):
        # Python's answer when the C library cannot chmod a link itself (glibc: EOPNOTSUPP).
        raise error(errno.EOPNOTSUPP) from None


def fchmod(fd: int, mode: int) -> None:
    """chmod the inode an fd holds; an O_PATH fd goes through its /proc/self/fd entry (Linux)."""
    try:
        os.fchmod(fd, mode)
    except OSError as exc:
        if exc.errno != errno.EBADF or not HAVE_O_PATH:
            raise
        _linux.chmod_o_path(fd, mode)


def close(fd: int) -> None:
    os.close(fd)


def close_all(fds: list[int]) -> None:
    """Close fds we own. A walk's fds are usually consecutive numbers: then one close_range(2)
    does it. That is safe only because every number in the range is one of ours, still open,
    so no other thread can hold one of them."""
    if not fds:
        return
    low, high = min(fds), max(fds)
    if high - low + 1 == len(fds):
        os.closerange(low, high + 1)
    else:
        for fd in fds:
            os.close(fd)


def list_dir(fd: int) -> list[tuple[bytes, bool, bool]]:
    """The entries of the directory ``fd`` holds, listed at once: (name, is a directory, is a
    symlink), neither answer following a link. ``fd`` stays open; scandir reads a copy of it."""
    with os.scandir(fd) as it:
        return [(os.fsencode(e.name), e.is_dir(follow_symlinks=False), e.is_symlink()) for e in it]


def fchownat_nofollow(dirfd: int, name: bytes, uid: int, gid: int) -> None:
    """chown ``name`` without opening it, through fchownat(AT_SYMLINK_NOFOLLOW): a name swapped
    for a link between a check and this call is changed itself, never followed."""
    os.chown(name, uid, gid, dir_fd=dirfd, follow_symlinks=False)


def clone_file(src_fd: int, dst_fd: int) -> bool:
    """A reflink of the whole of ``src_fd`` into the empty ``dst_fd`` where the file system can
    (Linux FICLONE); False, having done nothing, where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        _linux.ficlone(src_fd, dst_fd)
    except OSError as exc:
        if exc.errno in _CANNOT_CLONE:
            return False
        raise
    return True


# What FICLONE answers where a reflink cannot be made (another file system, none that shares
# extents, a file that is not regular, no such ioctl): the bytes are then copied.
_CANNOT_CLONE = frozenset(
    (
        errno.EXDEV,
        errno.EOPNOTSUPP,
        errno.EINVAL,
        errno.ENOTTY,
        errno.EBADF,
        errno.EPERM,
        errno.ENOSYS,
        errno.ETXTBSY,
    )
)


def copy_range(src_fd: int, dst_fd: int, count: int) -> int:
    """Up to ``count`` bytes from ``src_fd`` to ``dst_fd`` at their offsets, in the kernel:
    copy_file_range(2) where there is one, else sendfile(2); 0 at the end of the source. An
    OSError with EXDEV, ENOSYS, EINVAL or EOPNOTSUPP means this pair cannot be copied so (the
    caller then reads and writes)."""
    copy_file_range = getattr(os, "copy_file_range", None)
    if copy_file_range is not None:
        return int(copy_file_range(src_fd, dst_fd, count))
    return os.sendfile(dst_fd, src_fd, None, count)
