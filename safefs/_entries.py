"""Operations on one name in a directory fd we hold: the final step of an entry operation.

Threat model: docs/threat-model.md.

The directory was resolved beneath the root already; nothing here follows the name itself. The
calls that act on a name without resolving anything are named ``*_unchecked`` (as cap-std names
them), so a call from outside the resolvers stands out. Where
Linux answers a call on ``name/``, ``.`` or ``..`` with a particular error before (or instead of)
touching the name, that rule is emulated here, next to the call it belongs to, so every backend
and platform answers alike.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod

from safefs import _sys
from safefs._fastpath import require_regular
from safefs._paths import SPECIAL_NAMES as _SPECIAL
from safefs.errors import error

_OPEN_MODES = {
    "r": os.O_RDONLY,
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
}
_DOT = b"."


def open_mode_flags(mode: str) -> int:
    """open(2) flags for a Python ``open()`` mode string (``r w a x``, ``b``/``t``, ``+``)."""
    kinds = [c for c in mode if c in _OPEN_MODES]
    if (
        len(kinds) != 1
        or len(set(mode)) != len(mode)
        or set(mode) - set("rwaxbt+")
        or ("b" in mode and "t" in mode)
    ):
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


def unlink_unchecked(fd: int, name: bytes, trailing: bool) -> None:
    """unlinkat(2). ``.``/``..`` and ``name/`` are never unlinked: EISDIR or ENOTDIR as Linux."""
    if name in _SPECIAL:
        raise error(errno.EISDIR)
    if trailing:
        st = _sys.fstatat(fd, name)
        raise error(errno.EISDIR if stat_mod.S_ISDIR(st.st_mode) else errno.ENOTDIR)
    _sys.unlinkat(fd, name)


def rmdir_unchecked(fd: int, name: bytes) -> None:
    """rmdirat: a final ``.`` is EINVAL and ``..`` ENOTEMPTY, as Linux answers."""
    if name in _SPECIAL:
        raise error(errno.EINVAL if name == _DOT else errno.ENOTEMPTY)
    _sys.rmdirat(fd, name)


def mkdir_unchecked(fd: int, name: bytes, mode: int) -> None:
    """mkdirat: ``.`` and ``..`` always exist."""
    if name in _SPECIAL:
        raise error(errno.EEXIST)
    _sys.mkdirat(fd, name, mode)


def symlink_unchecked(target: bytes, fd: int, name: bytes, trailing: bool) -> None:
    """symlinkat: an existing name is EEXIST; a new one cannot be ``name/`` (ENOENT)."""
    if not target:
        raise error(errno.ENOENT)
    if name in _SPECIAL:
        raise error(errno.EEXIST)
    if trailing:
        raise error(errno.EEXIST if lexists(fd, name) else errno.ENOENT)
    _sys.symlinkat(target, fd, name)


def readlink_unchecked(fd: int, name: bytes) -> bytes:
    """readlinkat: ``.`` and ``..`` are directories, not links (EINVAL)."""
    if name in _SPECIAL:
        raise error(errno.EINVAL)
    return _sys.readlinkat(fd, name)


def check_rename(sfd: int, sname: bytes, strailing: bool, dname: bytes, dtrailing: bool) -> None:
    """renameat's rules before the call: ``.``/``..`` are never moved (EBUSY); a trailing slash
    on either name is allowed only for a directory source (ENOTDIR)."""
    if sname in _SPECIAL or dname in _SPECIAL:
        raise error(errno.EBUSY)
    if (strailing or dtrailing) and not stat_mod.S_ISDIR(_sys.fstatat(sfd, sname).st_mode):
        raise error(errno.ENOTDIR)


def rename_unchecked(sfd: int, sname: bytes, dfd: int, dname: bytes, replace: bool) -> None:
    if replace:
        _sys.renameat(sfd, sname, dfd, dname)
        return
    try:
        _sys.renameat2(sfd, sname, dfd, dname, _sys.RENAME_NOREPLACE)
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise
    # No renameat2 (or the filesystem lacks NOREPLACE): link+unlink is atomic no-clobber too,
    # for anything but a directory.
    if stat_mod.S_ISDIR(_sys.fstatat(sfd, sname).st_mode):
        raise error(errno.EOPNOTSUPP, "no-clobber rename of a directory needs renameat2")
    _sys.linkat(sfd, sname, dfd, dname)
    _sys.unlinkat(sfd, sname)


def exchange_unchecked(
    afd: int, aname: bytes, atrailing: bool, bfd: int, bname: bytes, btrailing: bool
) -> None:
    """renameat2(RENAME_EXCHANGE) of two regular files of one directory: ``.``/``..`` are never
    moved (EBUSY); two directories are EXDEV; anything but a regular file is refused as a read
    refuses it, a trailing slash on a file is ENOTDIR. Moving nothing else, it changes where no
    symlink leads."""
    if aname in _SPECIAL or bname in _SPECIAL:
        raise error(errno.EBUSY)
    if not os.path.samestat(_sys.fstat(afd), _sys.fstat(bfd)):
        raise error(errno.EXDEV, "only two names of one directory are exchanged")
    for fd, name, trailing in ((afd, aname, atrailing), (bfd, bname, btrailing)):
        st = _sys.fstatat(fd, name)
        if trailing and not stat_mod.S_ISDIR(st.st_mode):
            raise error(errno.ENOTDIR)
        require_regular(st)
    _sys.renameat2(afd, aname, bfd, bname, _sys.RENAME_EXCHANGE)


def check_link(sfd: int, sname: bytes, src_is_dir: bool, dfd: int, dname: bytes, dtrailing: bool) -> None:
    """linkat's rules before the call (and before a symlink source is judged: the call's own
    error comes first). The source is looked up first (a missing one is ENOENT whatever the
    destination); then an existing destination is EEXIST, a new ``name/`` ENOENT, and a
    directory source EPERM."""
    if not (src_is_dir or dtrailing or dname in _SPECIAL):
        if lexists(dfd, dname):
            _sys.fstatat(sfd, sname)
            raise error(errno.EEXIST)
        return
    if not src_is_dir:
        _sys.fstatat(sfd, sname)  # ENOENT for a missing source, as Linux and Go report
    if dname in _SPECIAL or lexists(dfd, dname):
        raise error(errno.EEXIST)
    raise error(errno.ENOENT if dtrailing else errno.EPERM)


def link_unchecked(sfd: int, sname: bytes, dfd: int, dname: bytes) -> None:
    _sys.linkat(sfd, sname, dfd, dname)


def touch_unchecked(fd: int, name: bytes) -> None:
    """Both times of an existing ``name`` set to now, as ``pathlib.Path.touch``: utimensat
    through the directory fd, so no open and no write access is needed."""
    _sys.utimensat_nofollow(fd, name)


def chmod_unchecked(fd: int, name: bytes, mode: int) -> None:
    """fchmodat(AT_SYMLINK_NOFOLLOW): the node is never opened (a socket, a FIFO, a device or a
    write-only file are changed like any other), and a link swapped in is never followed."""
    _sys.fchmodat_nofollow(fd, name, mode)
