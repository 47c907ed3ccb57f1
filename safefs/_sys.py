"""Every raw system call safefs makes on a path component lives here.

Invariant: every open adds ``O_CLOEXEC | O_NOCTTY`` and ``O_NOFOLLOW`` itself. Following a trailing
symlink is an explicit ``follow=True`` from the caller, never a default, so no descriptor leaks into
a child and no path is followed by accident.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import importlib
import os
import sys
from typing import Any, Final

AT_FDCWD: Final[int] = -100  # only ever used to open the trusted root itself
O_PATH: Final[int] = getattr(os, "O_PATH", 0)
HAVE_O_PATH: Final[bool] = O_PATH != 0
O_NOCTTY: Final[int] = getattr(os, "O_NOCTTY", 0)
O_NOFOLLOW: Final[int] = os.O_NOFOLLOW
O_CLOEXEC: Final[int] = getattr(os, "O_CLOEXEC", 0)
O_DIRECTORY: Final[int] = getattr(os, "O_DIRECTORY", 0)

_O_TMPFILE: Final[int] = getattr(os, "O_TMPFILE", 0)  # includes the O_DIRECTORY bit

# openat2(2) resolve flags (linux/openat2.h).
RESOLVE_NO_XDEV: Final = 0x01
RESOLVE_NO_MAGICLINKS: Final = 0x02
RESOLVE_NO_SYMLINKS: Final = 0x04
RESOLVE_BENEATH: Final = 0x08
RESOLVE_IN_ROOT: Final = 0x10

# renameat2(2) flags (linux/fs.h).
RENAME_NOREPLACE: Final = 1 << 0
RENAME_EXCHANGE: Final = 1 << 1

# With O_PATH the kernel accepts only these flags; openat2 rejects anything else with EINVAL.
_O_PATH_ALLOWED: Final = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC

_native: Any
try:
    _native = importlib.import_module("safefs._native")
except ImportError:
    _native = None

HAVE_NATIVE: Final[bool] = _native is not None
_openat2: Any = _native.lib.safefs_openat2 if _native is not None else None
_O_BASE: Final[int] = O_CLOEXEC | O_NOCTTY


def _open_flags(flags: int, follow: bool) -> int:
    if flags & O_PATH:
        flags = (flags & _O_PATH_ALLOWED) | O_CLOEXEC
    else:
        flags |= O_CLOEXEC | O_NOCTTY
    if not follow:
        flags |= O_NOFOLLOW
    return flags


def openat(dirfd: int, name: bytes, flags: int, mode: int = 0o666, *, follow: bool = False) -> int:
    """openat(2) of one name relative to ``dirfd``; never follows a trailing symlink unless asked."""
    return os.open(name, _open_flags(flags, follow), mode, dir_fd=dirfd)


def component_flags(flags: int) -> int:
    """Flags for open_component: the same policy as openat(), worked out once for a hot loop."""
    return _open_flags(flags, False)


def open_component(dirfd: int, name: bytes, flags: int) -> int:
    """openat(2) with flags from component_flags() (never follows; close-on-exec)."""
    return os.open(name, flags, 0, dir_fd=dirfd)


def openat2(dirfd: int, path: bytes, flags: int, mode: int, resolve: int, *, follow: bool) -> int:
    """openat2(2). Raises OSError with the kernel's errno (EAGAIN is the caller's to retry)."""
    if _openat2 is None:
        raise OSError(errno.ENOSYS, "openat2 needs the safefs native extension")
    # Same flag policy as _open_flags, inlined: this is the hottest call in the library.
    if flags & O_PATH:
        flags = (flags & _O_PATH_ALLOWED) | O_CLOEXEC
    else:
        flags |= _O_BASE
    if not follow:
        flags |= O_NOFOLLOW
    if not (flags & os.O_CREAT or (_O_TMPFILE and flags & _O_TMPFILE == _O_TMPFILE)):
        mode = 0  # openat2 rejects a mode without O_CREAT/O_TMPFILE
    fd: int = _openat2(dirfd, path, flags, mode, resolve)
    if fd < 0:
        raise OSError(-fd, os.strerror(-fd))
    return fd


_libc_renameat2: Any = None


def _load_libc_renameat2() -> Any:
    """ctypes fallback for renameat2 when the extension was not built (glibc >= 2.28)."""
    global _libc_renameat2
    if _libc_renameat2 is None:
        _libc_renameat2 = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
                fn = libc.renameat2
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                               ctypes.c_uint]
                fn.restype = ctypes.c_int
                _libc_renameat2 = fn
            except (OSError, AttributeError):
                pass
    return _libc_renameat2


def renameat2(olddirfd: int, old: bytes, newdirfd: int, new: bytes, flags: int) -> None:
    """renameat2(2): RENAME_NOREPLACE / RENAME_EXCHANGE. Neither name is ever followed."""
    if _native is not None:
        r = _native.lib.safefs_renameat2(olddirfd, old, newdirfd, new, flags)
        if r < 0:
            raise OSError(-r, os.strerror(-r))
        return
    fn = _load_libc_renameat2()
    if not fn:
        raise OSError(errno.ENOSYS, "renameat2 is not available on this platform")
    if fn(olddirfd, old, newdirfd, new, flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def have_renameat2() -> bool:
    return _native is not None or bool(_load_libc_renameat2())


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


def link_unnamed(fd: int, dirfd: int, name: bytes) -> None:
    """Give an O_TMPFILE inode a name. Going through /proc needs no privilege; AT_EMPTY_PATH does."""
    os.link(b"/proc/self/fd/%d" % fd, name, dst_dir_fd=dirfd, follow_symlinks=True)


def fchmod_via_fd(fd: int, mode: int) -> None:
    """chmod the inode an fd holds; an O_PATH fd goes through its /proc/self/fd entry."""
    try:
        os.fchmod(fd, mode)
    except OSError as exc:
        if exc.errno != errno.EBADF or not HAVE_O_PATH:
            raise
        os.chmod(f"/proc/self/fd/{fd}", mode)


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
