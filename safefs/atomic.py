"""Atomic replacement of one file inside a directory we hold by fd.

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

from safefs import _sys

TEMP_SUFFIX = b".safefs-tmp"
_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_PROC_FD = os.path.isdir("/proc/self/fd")
_token = os.urandom(6).hex().encode()
_counter = itertools.count()
_tmpfile_works = bool(_O_TMPFILE) and _PROC_FD


def temp_name(name: bytes) -> bytes:
    """Unguessable, recognisable and short enough for NAME_MAX whatever the target's length."""
    return b".%s.%s%d%s" % (name[:120], _token, next(_counter), TEMP_SUFFIX)


def write_atomic(dirfd: int, name: bytes, data: bytes | bytearray | memoryview,
                 perm: int | None, durable: bool) -> None:
    """Replace ``name`` in ``dirfd`` with ``data``. ``perm`` keeps an existing file's mode bits."""
    global _tmpfile_works
    if _tmpfile_works:
        try:
            fd = _sys.openat(dirfd, b".", os.O_WRONLY | _O_TMPFILE,
                             0o666 if perm is None else perm)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
            _tmpfile_works = False  # this filesystem has no O_TMPFILE
        else:
            _fill(fd, data, perm, durable)
            return _publish_unnamed(fd, dirfd, name, durable)
    for _ in range(100):
        tmp = temp_name(name)
        try:
            fd = _sys.openat(dirfd, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                             0o666 if perm is None else perm)
            break
        except FileExistsError:
            continue
    else:
        raise OSError(errno.EEXIST, "could not create a unique temporary file")
    try:
        try:
            _fill(fd, data, perm, durable, close_on_error=False)
        finally:
            os.close(fd)
        _sys.renameat(dirfd, tmp, dirfd, name)
    except BaseException:
        _unlink_quietly(dirfd, tmp)
        raise
    if durable:
        _fsync_dir(dirfd)


def _fill(fd: int, data: bytes | bytearray | memoryview, perm: int | None, durable: bool,
          close_on_error: bool = True) -> None:
    try:
        if perm is not None:
            os.fchmod(fd, perm)  # the umask must not narrow an existing file's mode
        view = memoryview(data).cast("B")
        while view:
            view = view[os.write(fd, view):]
        if durable:
            os.fsync(fd)
    except BaseException:
        if close_on_error:
            os.close(fd)
        raise


def _publish_unnamed(fd: int, dirfd: int, name: bytes, durable: bool) -> None:
    try:
        for _ in range(100):
            tmp = temp_name(name)
            try:
                _sys.link_unnamed(fd, dirfd, tmp)
                break
            except FileExistsError:
                continue
        else:
            raise OSError(errno.EEXIST, "could not create a unique temporary file")
    finally:
        os.close(fd)
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
