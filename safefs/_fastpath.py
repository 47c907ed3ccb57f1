"""The core's native fast paths (safefs/fastpath.c, built as ``safefs._native``): one C call per
resolution, per whole-file read and per small atomic write, each releasing the GIL.

Threat model: docs/threat-model.md.

The flag policy stays in :func:`safefs._sys.open_flags`: the C code adds no open flag, it opens only
with flags worked out there and handed in (a resolver's parameters, the read flags, the temp
file's flags), and refuses flags without ``O_CLOEXEC`` (or ``O_NOFOLLOW`` where nothing may be
followed) with EINVAL. Without the extension (no compiler, Windows) ``AVAILABLE`` is False and
every caller takes the Python code it always had.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable
from typing import Any, Final

from safefs import _sys
from safefs._extension import native, native_read
from safefs.errors import NotRegularFileError, PathEscapeError, error

_native: Any = native
# The same C read (safefs/fastpath.c's safefs_read_file) as a plain CPython function: no cffi
# argument conversion and no buffer to cut the bytes from (safefs/fastread.c). Optional
# like _native; without it reader() calls safefs_read_file through cffi.
_native_read: Any = native_read

AVAILABLE: Final[bool] = _native is not None and hasattr(_native.lib, "safefs_read_file")
ffi: Any = _native.ffi if AVAILABLE else None
lib: Any = _native.lib if AVAILABLE else None


def is_magic_link(dirfd: int, target: bytes) -> bool:
    """Whether the link ``target`` read from ``dirfd`` is a magic link (see safefs_magic_link in
    safefs/fastpath.c: on procfs, and absolute or an anonymous inode's name). Without the
    extension no link is taken for one."""
    if not AVAILABLE:
        return False
    r: int = lib.safefs_magic_link(dirfd, target, len(target))
    if r < 0:
        raise error(-r)
    return r == 1


# A file smaller than this is read into a per-thread buffer and copied out once; a larger one
# into a bytes object of its size, allocated once.
SCRATCH_SIZE: Final = 64 * 1024
# The limits both walks keep, declared once, in safefs/fastpath.c (Linux's own numbers, which
# are the values here only where the extension is not built).
MAX_SYMLINKS: Final[int] = lib.SAFEFS_MAX_SYMLINKS if AVAILABLE else 40
"""Links followed per operation at most (the kernel's MAXSYMLINKS)."""
PATH_MAX: Final[int] = lib.SAFEFS_PATH_MAX if AVAILABLE else 4096
"""A path of this many bytes or more is refused whole (the kernel's PATH_MAX)."""
MAX_EAGAIN: Final[int] = lib.SAFEFS_MAX_EAGAIN if AVAILABLE else 128
"""openat2's EAGAIN (a rename raced a ``..`` step) is retried this many times."""
EAGAIN_MESSAGE: Final = f"path resolution raced with concurrent renames {MAX_EAGAIN} times"
_SYMLINK_CODES: Final = {"beneath": 0, "none": 1, "in_root": 2}
_local = threading.local()
# Not zeroed: the buffer is written before it is read.
_new_raw: Any = ffi.new_allocator(should_clear_after_alloc=False) if AVAILABLE else None


def require_regular(st: os.stat_result) -> None:
    """What every read and write of a file refuses, in one place: a directory is EISDIR,
    anything else but a regular file (a FIFO, a socket, a device) NotRegularFileError."""
    if not stat.S_ISREG(st.st_mode):
        raise error(errno.EISDIR) if stat.S_ISDIR(st.st_mode) else NotRegularFileError()


def readers(
    params: Any,
    flags: int,
    read_bytes: Callable[[int, bytes], bytes],
    read_head: Callable[[int, bytes, int], bytes],
    read_heads: Callable[[int, list[bytes], int], list[bytes | OSError]],
) -> tuple[
    Callable[[int, bytes], bytes],
    Callable[[int, bytes, int], bytes],
    Callable[[int, list[bytes], int], list[bytes | OSError]],
]:
    """A resolver's read_bytes, read_head and read_heads: the native ones for ``params``
    (opening with ``flags``) where the extension is built (``params`` not None), else the
    Python ones given. The one place that decides which reads a resolver uses."""
    if params is None:
        return read_bytes, read_head, read_heads
    return reader(params, flags), head_reader(params, flags), heads_reader(params, flags)


def openat2_params(resolve: int, name_resolve: int = 0) -> Any:
    """The C resolver for openat2 with these RESOLVE_* flags (kept alive by its resolver).
    ``name_resolve``, if given (it must hold RESOLVE_NO_SYMLINKS), resolves a read of a single
    name first, cheaper than the scoped lookup; a link there (ELOOP) still goes to ``resolve``."""
    return ffi.new(
        "struct safefs_resolver *",
        {"kind": lib.SAFEFS_KIND_OPENAT2, "resolve": resolve, "name_resolve": name_resolve},
    )


def walk_params(symlinks: str, component_flags: int) -> Any:
    """The C walk: ``symlinks=`` mode, and how a directory on the way is opened (open_flags())."""
    return ffi.new(
        "struct safefs_resolver *",
        {
            "kind": lib.SAFEFS_KIND_WALK,
            "symlinks": _SYMLINK_CODES[symlinks],
            "component_flags": component_flags,
        },
    )


def failure(code: int) -> OSError:
    """The exception for a negative return of the C code."""
    if code == lib.SAFEFS_EESCAPE:
        return PathEscapeError()
    if code == lib.SAFEFS_ENOTREGULAR:
        return NotRegularFileError()
    if code == lib.SAFEFS_EPOLICY:
        return error(errno.EINVAL, "open flags that did not come from the flag policy")
    if code == -errno.EAGAIN:
        return error(errno.EAGAIN, EAGAIN_MESSAGE)
    return error(-code)


def open_path(params: Any, root_fd: int, rel: bytes, flags: int, mode: int, follow: bool) -> int:
    """One resolution of ``rel`` beneath ``root_fd``, opened with ``flags`` from open_flags()."""
    fd: int = lib.safefs_open(params, root_fd, rel, flags, mode, follow)
    if fd < 0:
        raise failure(fd)
    return fd


def _scratch() -> tuple[Any, Any, Any]:
    """This thread's scratch buffer, its read_out, and a cffi buffer over it: a slice of that
    is the bytes read, made in one step (cheaper than ffi.unpack, which parses its arguments)."""
    try:
        return _local.scratch  # type: ignore[no-any-return]
    except AttributeError:
        buf = _new_raw("char[]", SCRATCH_SIZE)
        _local.scratch = (buf, ffi.new("struct safefs_read_out *"), ffi.buffer(buf))
        return _local.scratch  # type: ignore[no-any-return]


def reader(params: Any, flags: int) -> Callable[[int, bytes], bytes]:
    """``read(root_fd, rel)``: the whole content of the regular file ``rel``, resolved by
    ``params`` and opened with ``flags`` (from open_flags()). One C call for a file that fits the
    scratch buffer; for a larger one, that call opens and measures it, and one read(2) of the
    size it saw fills a bytes object allocated once (_read_more).

    The one place that decides which native function reads: the method of a
    ``_native_read.Reader`` (a copy of ``params``; no Python frame between Root.read_bytes and
    the C) where that module is built, else a closure over the cffi call."""
    if _native_read is not None:
        return _native_read.Reader(  # type: ignore[no-any-return]
            params.kind,
            params.symlinks,
            params.resolve,
            params.component_flags,
            params.name_resolve,
            flags,
            failure,
            _read_more,
        ).read
    read_file = lib.safefs_read_file
    local = _local

    def read(root_fd: int, rel: bytes) -> bytes:
        try:
            buf, out, view = local.scratch
        except AttributeError:
            buf, out, view = _scratch()
        n: int = read_file(params, root_fd, rel, flags, buf, SCRATCH_SIZE, out)
        if n >= 0:
            return view[:n]  # type: ignore[no-any-return]
        return _read_on(n, buf, out)

    return read


def _read_on(n: int, buf: Any, out: Any) -> bytes:
    """The C read did not finish: an error, or a file larger than the scratch buffer."""
    if n != lib.SAFEFS_EMORE:
        raise failure(n)
    return _read_more(int(out.fd), int(out.size), ffi.unpack(buf, out.got) if out.got else None)


def _read_more(fd: int, size: int, prefix: bytes | None) -> bytes:
    """A file that did not fit the scratch buffer: ``fd`` (open, and from here ours to close,
    exactly once) of the ``size`` fstat saw; ``prefix``, if it grew past the buffer while being
    read, the bytes already read."""
    try:
        if prefix is not None:
            return _read_rest(fd, [prefix], SCRATCH_SIZE)
        return _read_large(fd, size)
    finally:
        os.close(fd)


def _read_large(fd: int, size: int) -> bytes:
    # os.read allocates the bytes uninitialised and shrinks them in place to what was read, as
    # open().read() does: the content is allocated and copied once, and never zeroed first (a
    # bytes(size) to read into would be memset by calloc once glibc serves it from the heap).
    # One byte more than fstat saw notices a file that grew meanwhile.
    data = os.read(fd, size + 1)
    if len(data) == size:
        return data
    return _read_rest(fd, [data], size)


def _read_rest(fd: int, chunks: list[bytes], size: int) -> bytes:
    while chunks[-1]:
        chunks.append(os.read(fd, max(size, 65536)))
    return b"".join(chunks)


def _head_scratch() -> tuple[Any, Any]:
    """This thread's buffer and read_out for read_head (its own, apart from read_bytes')."""
    try:
        return _local.head_scratch  # type: ignore[no-any-return]
    except AttributeError:
        _local.head_scratch = (_new_raw("char[]", SCRATCH_SIZE), ffi.new("struct safefs_read_out *"))
        return _local.head_scratch  # type: ignore[no-any-return]


def head_reader(params: Any, flags: int) -> Callable[[int, bytes, int], bytes]:
    """``read_head(root_fd, rel, size)``: at most the first ``size`` bytes of the regular file
    ``rel``, resolved and opened as :func:`reader` does. A file shorter than both ``size`` and the
    scratch buffer is one C call; for any other, that call hands back the fd and the size it saw,
    and at most ``size`` bytes are read here: memory is bounded by ``size``, never by the file."""
    read_file = lib.safefs_read_file
    unpack = ffi.unpack
    local = _local

    def read_head(root_fd: int, rel: bytes, size: int) -> bytes:
        try:
            buf, out = local.head_scratch
        except AttributeError:
            buf, out = _head_scratch()
        n: int = read_file(params, root_fd, rel, flags, buf, min(size, SCRATCH_SIZE), out)
        if n >= 0:
            return unpack(buf, n)  # type: ignore[no-any-return]
        return _head_on(n, buf, out, size)

    return read_head


def read_up_to(fd: int, size: int, seen: int, first: bytes = b"") -> bytes:
    """``first`` (what was read of ``fd`` already) and what follows it, up to ``size`` bytes in
    all, whatever the file holds. ``seen`` is the size fstat saw: the first read asks for that
    and one byte more (to notice a file that grew), and a file that ends there takes one read.
    Without the extension too (see :mod:`safefs._resolve.reading`)."""
    chunks = [first] if first else []
    got = len(first)
    want = min(size, seen + 1) - got
    if want <= 0:
        want = min(size - got, 1 << 20)
    while want > 0:
        data = os.read(fd, want)
        if not data:
            break
        chunks.append(data)
        got += len(data)
        if got == seen:
            break  # exactly the size fstat saw: the end, as read_bytes takes it
        want = min(size - got, 1 << 20)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _head_on(n: int, buf: Any, out: Any, size: int) -> bytes:
    """The C read did not finish: an error, or a file not shorter than the bound it was given."""
    if n != lib.SAFEFS_EMORE:
        raise failure(n)
    fd = int(out.fd)  # from here this fd is ours to close, exactly once
    try:
        first = ffi.unpack(buf, out.got) if out.got else b""
        return read_up_to(fd, size, int(out.size), first)
    finally:
        os.close(fd)


# read_heads packs a batch's contents into one buffer of this size per thread (a larger ``size``
# gets one of its own for the call): memory is bounded by it, whatever the files hold.
HEADS_BUFFER: Final = 1 << 20


def _heads_scratch() -> tuple[Any, Any]:
    """This thread's buffer for read_heads, and a cffi buffer over it."""
    try:
        return _local.heads_scratch  # type: ignore[no-any-return]
    except AttributeError:
        buf = _new_raw("char[]", HEADS_BUFFER)
        _local.heads_scratch = (buf, ffi.buffer(buf))
        return _local.heads_scratch  # type: ignore[no-any-return]


def heads_reader(params: Any, flags: int) -> Callable[[int, list[bytes], int], list[bytes | OSError]]:
    """``read_heads(root_fd, rels, size)``: for each of ``rels``, what ``read_head`` returns (its
    first ``size`` bytes, or all of it) or the OSError it raises, in order. The files are read
    by as few C calls as the buffer allows (one for a batch of small files), each releasing the
    GIL for all the files it reads."""
    read_heads = lib.safefs_read_heads
    new = ffi.new

    def read(root_fd: int, rels: list[bytes], size: int) -> list[bytes | OSError]:
        if size <= HEADS_BUFFER:
            buf, view = _heads_scratch()
            buflen = HEADS_BUFFER
        else:
            buf = _new_raw("char[]", size)
            view, buflen = ffi.buffer(buf), size
        results: list[bytes | OSError] = []
        left = len(rels)
        if not left:
            return results
        keep = [new("char[]", rel) for rel in rels]  # alive until the calls are done
        paths = new("char *[]", keep)
        lens = new("int64_t[]", left)
        offs = new("int64_t[]", left)
        start = 0
        while start < len(rels):
            done: int = read_heads(
                params, root_fd, paths + start, len(rels) - start, flags, size, buf, buflen, lens, offs
            )
            if done < 0:
                raise failure(done)
            for i in range(done):
                n = lens[i]
                if n >= 0:
                    off = offs[i]
                    results.append(view[off : off + n])
                else:
                    results.append(failure(n))
            start += done
        return results

    return read


# The temp file of a small atomic write, and the directory opened to fsync it: both by the policy.
_CREATE_FLAGS: Final = _sys.open_flags(os.O_WRONLY | os.O_CREAT | os.O_EXCL)
_DIR_SYNC_FLAGS: Final = _sys.open_flags(os.O_RDONLY | _sys.O_DIRECTORY)


KEEP_MODE: Final = lib.SAFEFS_KEEP_MODE if AVAILABLE else -2
"""``perm`` for write_named: keep the replaced file's mode bits (see safefs/fastpath.c)."""


class IsLink(Exception):
    """write_named with KEEP_MODE met a symlink: nothing was written; resolve it and retry."""


def write_named(
    dirfd: int, name: bytes, token: bytes, suffix: bytes, data: Any, perm: int, mode: int, durable: bool
) -> None:
    """One whole atomic write of ``data`` (bytes, or a flat byte memoryview) to ``name``, through
    a temp name made of ``token`` and ``suffix`` (see safefs/fastpath.c). ``perm``: -1 (none),
    mode bits, or KEEP_MODE (then IsLink if ``name`` is a symlink: nothing is written)."""
    r: int = lib.safefs_write_named(
        dirfd,
        name,
        token,
        suffix,
        data if type(data) is bytes else ffi.from_buffer(data),
        len(data),
        perm,
        mode,
        durable,
        _CREATE_FLAGS,
        _DIR_SYNC_FLAGS,
    )
    if r == 0:
        return
    if r == lib.SAFEFS_ELINK:
        raise IsLink()
    if r == lib.SAFEFS_ETEMPEXISTS:
        raise error(errno.EEXIST, "could not create a unique temporary file")
    raise failure(r)
