"""Atomic replacement of one file inside a directory we hold by fd.

Threat model: docs/threat-model.md.

Readers see the old content or the new one, never a torn mix: the data goes to a new inode that is
renamed over the target relative to the same directory fd (so a hard-linked target is replaced,
never modified in place). On Linux the new inode is an unnamed O_TMPFILE until the last moment, so
a process killed mid-write leaves nothing behind; it gets a name only in the microseconds between
``linkat`` and ``renameat``. Elsewhere a uniquely named ``O_EXCL|O_NOFOLLOW`` temp file is used and
removed on any failure.
"""

from __future__ import annotations

import errno
import itertools
import os
from collections.abc import Callable

from safefs import _sys
from safefs.errors import error

TEMP_SUFFIX = b".safefs-tmp"
_token = os.urandom(6).hex().encode()
_counter = itertools.count()
_tmpfile_works = bool(_sys.O_TMPFILE)  # Linux, with /proc to name the inode (see _linux)


def temp_name(name: bytes) -> bytes:
    """Unguessable, recognisable and short enough for NAME_MAX whatever the target's length."""
    return b".%s.%s%d%s" % (name[:120], _token, next(_counter), TEMP_SUFFIX)


def write_atomic(
    dirfd: int, name: bytes, data: bytes | bytearray | memoryview, perm: int | None, durable: bool
) -> None:
    """Replace ``name`` in ``dirfd`` with ``data``. ``perm`` keeps an existing file's mode bits."""
    global _tmpfile_works
    mode = 0o666 if perm is None else perm
    if _tmpfile_works:
        try:
            fd = _sys.openat(dirfd, b".", os.O_WRONLY | _sys.O_TMPFILE, mode)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
            _tmpfile_works = False  # a filesystem without O_TMPFILE: named temp files from now on
        else:
            try:
                _fill(fd, data, perm, durable)
                tmp = _with_unique_name(name, lambda tmp: _sys.link_unnamed(fd, dirfd, tmp))
            finally:
                os.close(fd)
            return _rename_into_place(dirfd, tmp, name, durable)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    fds: list[int] = []
    tmp = _with_unique_name(name, lambda tmp: fds.append(_sys.openat(dirfd, tmp, flags, mode)))
    try:
        try:
            _fill(fds[0], data, perm, durable)
        finally:
            os.close(fds[0])
    except BaseException:
        _unlink_quietly(dirfd, tmp)
        raise
    _rename_into_place(dirfd, tmp, name, durable)


def _with_unique_name(name: bytes, create: Callable[[bytes], object]) -> bytes:
    """Calls ``create(tmp)`` with fresh temp names until one does not exist yet; returns it."""
    for _ in range(100):
        tmp = temp_name(name)
        try:
            create(tmp)
            return tmp
        except FileExistsError:
            continue  # planted, or a leftover: never reuse, never follow
    raise error(errno.EEXIST, "could not create a unique temporary file")


def _fill(fd: int, data: bytes | bytearray | memoryview, perm: int | None, durable: bool) -> None:
    if perm is not None:
        os.fchmod(fd, perm)  # the umask must not narrow an existing file's mode
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view) :]
    if durable:
        os.fsync(fd)


def _rename_into_place(dirfd: int, tmp: bytes, name: bytes, durable: bool) -> None:
    try:
        _sys.renameat(dirfd, tmp, dirfd, name)
    except BaseException:
        _unlink_quietly(dirfd, tmp)
        raise
    if durable:
        _fsync_dir(dirfd)


def _fsync_dir(dirfd: int) -> None:
    fd = _sys.openat(dirfd, b".", os.O_RDONLY | _sys.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(dirfd: int, name: bytes) -> None:
    try:
        _sys.unlinkat(dirfd, name)
    except OSError:
        pass
