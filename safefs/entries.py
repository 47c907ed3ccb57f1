"""Operations on one name in a directory fd we hold: the final step of an entry operation.

The directory was resolved beneath the root already; nothing here follows the name itself.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod

from safefs import _sys

_OPEN_MODES = {
    "r": os.O_RDONLY,
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
}


def open_mode_flags(mode: str) -> int:
    """open(2) flags for a Python ``open()`` mode string (``r w a x``, ``b``/``t``, ``+``)."""
    kinds = [c for c in mode if c in _OPEN_MODES]
    if (len(kinds) != 1 or len(set(mode)) != len(mode) or set(mode) - set("rwaxbt+")
            or ("b" in mode and "t" in mode)):
        raise ValueError(f"invalid mode: {mode!r}")
    flags = _OPEN_MODES[kinds[0]]
    if "+" in mode:
        flags = (flags & ~(os.O_WRONLY | os.O_RDONLY)) | os.O_RDWR
    return flags


def lexists(fd: int, name: bytes) -> bool:
    try:
        _sys.fstatat(fd, name)
    except FileNotFoundError:
        return False
    return True


def unlink_entry(fd: int, name: bytes, trailing: bool) -> None:
    if trailing:
        st = _sys.fstatat(fd, name)
        code = errno.EISDIR if stat_mod.S_ISDIR(st.st_mode) else errno.ENOTDIR
        raise OSError(code, os.strerror(code))
    _sys.unlinkat(fd, name)


def rmdir_entry(fd: int, name: bytes, trailing: bool) -> None:
    _sys.rmdirat(fd, name)


def rename_replace(sfd: int, sname: bytes, dfd: int, dname: bytes) -> None:
    _sys.renameat(sfd, sname, dfd, dname)


def rename_noreplace(sfd: int, sname: bytes, dfd: int, dname: bytes) -> None:
    try:
        _sys.renameat2(sfd, sname, dfd, dname, _sys.RENAME_NOREPLACE)
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise
    # No renameat2 (or the filesystem lacks NOREPLACE): link+unlink is atomic no-clobber too,
    # for anything but a directory.
    if stat_mod.S_ISDIR(_sys.fstatat(sfd, sname).st_mode):
        raise OSError(errno.EOPNOTSUPP, "no-clobber rename of a directory needs renameat2")
    _sys.linkat(sfd, sname, dfd, dname)
    _sys.unlinkat(sfd, sname)


def link_entry(sfd: int, sname: bytes, dfd: int, dname: bytes) -> None:
    _sys.linkat(sfd, sname, dfd, dname)
