"""Atomic replacement of one file inside a directory we hold by fd.

Threat model: docs/threat-model.md.

Readers see the old content or the new one, never a torn mix: the data goes to a new inode that is
renamed over the target relative to the same directory fd (so a hard-linked target is replaced,
never modified in place).

Where a killed writer could leave its temp file, and for how long:

- a small write (up to ``NATIVE_WRITE_MAX``) with the native extension is one C call: a uniquely
  named ``O_EXCL|O_NOFOLLOW`` temp file is created, written, closed and renamed over the target
  (``safefs/fastpath.c``). Its name exists only for the microseconds that call takes. This is the
  cheapest atomic write there is: on tmpfs, naming an ``O_TMPFILE`` inode through
  ``/proc/self/fd`` costs more than the whole plain write it stands beside;
- a larger write, on Linux, goes to an unnamed ``O_TMPFILE`` inode while the data is written, so
  a process killed mid-write leaves nothing behind; it gets a name only in the microseconds
  between ``linkat`` and ``renameat``;
- elsewhere (no extension, or no O_TMPFILE) a named temp file is used for the whole write and
  removed on any failure.

So a killed writer leaves at most the one temp file it had in flight.
"""

from __future__ import annotations

import errno
import itertools
import os
from collections.abc import Callable

from safefs import _fastpath, _sys
from safefs.errors import error

TEMP_SUFFIX = b".safefs-tmp"
_token = os.urandom(6).hex().encode()
_native_token = _token  # the C side numbers its own names: ".NAME.TOKENnN.safefs-tmp"
_counter = itertools.count()
_tmpfile_works = bool(_sys.O_TMPFILE)  # Linux, with /proc to name the inode (see _linux)
# Up to this size the named temp file exists only for the one native call that writes it; past
# it, writing takes long enough that the data goes to an unnamed O_TMPFILE inode first.
NATIVE_WRITE_MAX = 64 * 1024
_native_writes = _fastpath.AVAILABLE


def temp_name(name: bytes) -> bytes:
    """Unguessable, recognisable and short enough for NAME_MAX whatever the target's length."""
    return b".%s.%s%d%s" % (name[:120], _token, next(_counter), TEMP_SUFFIX)


def write_atomic(
    dirfd: int,
    name: bytes,
    data: bytes | bytearray | memoryview,
    perm: int | None,
    durable: bool,
    create_mode: int = 0o666,
) -> None:
    """Replace ``name`` in ``dirfd`` with ``data``. ``perm`` keeps an existing file's mode bits;
    with None the file is new, and born with ``create_mode`` (less the umask, as open(2) does)."""
    global _tmpfile_works
    mode = create_mode if perm is None else perm
    flat = native_buffer(data)
    if flat is not None:
        _fastpath.write_named(
            dirfd, name, _native_token, TEMP_SUFFIX, flat, -1 if perm is None else perm, mode, durable
        )
        return
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


def native_buffer(data: bytes | bytearray | memoryview) -> bytes | memoryview | None:
    """``data`` as the flat byte buffer a native write takes, or None when it takes the Python
    path (no extension, too large, or not contiguous)."""
    if not _native_writes:
        return None
    if type(data) is bytes:  # the common case, without a memoryview
        return data if len(data) <= NATIVE_WRITE_MAX else None
    view = memoryview(data)
    if view.nbytes > NATIVE_WRITE_MAX or not view.c_contiguous:
        return None
    return view if view.ndim == 1 and view.format == "B" else view.cast("B")


def write_keeping_mode(
    dirfd: int, name: bytes, flat: bytes | memoryview, durable: bool, create_mode: int = 0o666
) -> bool:
    """write_atomic of a native_buffer() to ``name``, whose mode (if it exists) is kept, or
    ``create_mode`` for a new file, without resolving it: False, having written nothing, if
    ``name`` is a symlink (the caller resolves it and calls write_atomic with what it leads to)."""
    try:
        _fastpath.write_named(
            dirfd, name, _native_token, TEMP_SUFFIX, flat, _fastpath.KEEP_MODE, create_mode, durable
        )
    except _fastpath.IsLink:
        return False
    return True


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
