"""Linux-only system calls: openat2 and renameat2 (through the cffi extension, or ctypes for
renameat2), O_TMPFILE, and the ``/proc/self/fd`` entries that act on an O_PATH descriptor.

Threat model: docs/threat-model.md.

Nothing here adds flags or judges paths: :mod:`safefs._sys` does that, and imports this module
only on Linux. What safefs needs from ``/proc``: ``/proc/self/fd/N`` to give an O_TMPFILE inode a
name and to chmod through an O_PATH descriptor. Without ``/proc`` atomic writes fall back to named
temporary files; chmod then fails with the kernel's error rather than taking another route.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from typing import Any, Final

from safefs._extension import native
from safefs.errors import error

# openat2(2) resolve flags (linux/openat2.h).
RESOLVE_NO_XDEV: Final = 0x01
RESOLVE_NO_MAGICLINKS: Final = 0x02
RESOLVE_NO_SYMLINKS: Final = 0x04
RESOLVE_BENEATH: Final = 0x08
RESOLVE_IN_ROOT: Final = 0x10

# renameat2(2) flags (linux/fs.h).
RENAME_NOREPLACE: Final = 1 << 0
RENAME_EXCHANGE: Final = 1 << 1

O_TMPFILE: Final[int] = getattr(os, "O_TMPFILE", 0)  # includes the O_DIRECTORY bit
HAVE_PROC_FD: Final[bool] = os.path.isdir("/proc/self/fd")

_native: Any = native

HAVE_NATIVE: Final[bool] = _native is not None
raw_openat2: Any = _native.lib.safefs_openat2 if _native is not None else None
"""``raw_openat2(dirfd, path, flags, mode, resolve)``: the fd, or ``-errno``. No flag policy."""

_libc_renameat2: Any = None


def _load_libc_renameat2() -> Any:
    """ctypes fallback for renameat2 when the extension was not built (glibc >= 2.28)."""
    global _libc_renameat2
    if _libc_renameat2 is None:
        _libc_renameat2 = False
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            fn = libc.renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
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
            raise error(-r)
        return
    fn = _load_libc_renameat2()
    if not fn:
        raise error(errno.ENOSYS, "renameat2 is not available on this platform")
    if fn(olddirfd, old, newdirfd, new, flags) != 0:
        err = ctypes.get_errno()
        raise error(err)


def have_renameat2() -> bool:
    return _native is not None or bool(_load_libc_renameat2())


def link_unnamed(fd: int, dirfd: int, name: bytes) -> None:
    """Give an O_TMPFILE inode a name. Going through /proc needs no privilege; AT_EMPTY_PATH does."""
    os.link(b"/proc/self/fd/%d" % fd, name, dst_dir_fd=dirfd, follow_symlinks=True)


def chmod_o_path(fd: int, mode: int) -> None:
    """chmod the inode an O_PATH fd holds (fchmod refuses O_PATH with EBADF). The /proc entry is
    a magic link to that very inode: no name is looked up, so no swap can redirect it."""
    os.chmod(f"/proc/self/fd/{fd}", mode)


def utime_o_path(fd: int, ns: tuple[int, int] | None) -> None:
    """Set the times of the inode an O_PATH fd holds (futimens refuses O_PATH with EBADF),
    through its /proc entry, as chmod_o_path: the node itself is never opened."""
    if ns is None:
        os.utime(f"/proc/self/fd/{fd}")
    else:
        os.utime(f"/proc/self/fd/{fd}", ns=ns)


# FICLONE (linux/fs.h): share the source's extents (a reflink) where the file system can.
FICLONE: Final = 0x40049409


def ficlone(src_fd: int, dst_fd: int) -> None:
    """ioctl(FICLONE): ``dst_fd`` becomes a reflinked copy of ``src_fd`` (btrfs, XFS, ...)."""
    import fcntl

    fcntl.ioctl(dst_fd, FICLONE, src_fd)
