"""``Root``: a directory held open by fd, and every file operation resolved beneath it.

Threat model: docs/threat-model.md.

The layers: :mod:`safefs._paths` turns the caller's path into a root-relative one; a resolver
(:mod:`safefs._resolve`: openat2 or the portable walk) resolves it to a held directory fd and a
final name, with one link budget per operation, and stats and chmods what a path names without
opening it; :mod:`safefs._entries` acts on that name, emulating the kernel's rules for ``name/``,
``.`` and ``..``; :mod:`safefs._atomic` and :mod:`safefs._tree` write files and walk trees
through held fds; :mod:`safefs._sys` makes every system call, with the one flag policy. Each
method below is a short step through those layers.
"""

from __future__ import annotations

import errno
import functools
import io
import math
import operator
import os
import stat as stat_mod
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Concatenate, ParamSpec, TypeVar, overload

from safefs import _copy, _entries, _owner, _sys
from safefs._atomic import native_buffer, write_atomic, write_keeping_mode
from safefs._entries import open_mode_flags
from safefs._fastpath import require_regular
from safefs._path import Path
from safefs._paths import (
    SPECIAL_NAMES,
    PathArg,
    relative_to_root,
    split_parent,
    to_bytes,
)
from safefs._resolve import (
    PATH_MAX,
    BackendName,
    DirectoryPath,
    Resolved,
    Resolver,
    ResolverName,
    SymlinkMode,
    links,
    make_resolver,
)
from safefs._resolve.anchored import ABSOLUTE_LINKS, AbsoluteLinks, AnchoredResolver
from safefs._resolve.metadata import set_times
from safefs._tree import DirEntry, canonical, remove_tree_fd, scan_fd, walk_fd
from safefs.errors import PathEscapeError, error, reporting, with_filename
from safefs.replacing import PRIVILEGE_BITS

_FS_ENCODING = sys.getfilesystemencoding()
_FS_ERRORS = sys.getfilesystemencodeerrors()
_PRIVILEGE_BITS = PRIVILEGE_BITS  # never carried onto the new inode of an atomic write


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _operation(method: Callable[Concatenate[Root, _P], _R]) -> Callable[Concatenate[Root, _P], _R]:
    """Marks a method that uses the root fd: it runs only on an open Root, and close() from
    another thread waits for it (see Root.close) instead of freeing the fd under it."""

    @functools.wraps(method)
    def run(self: Root, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        self._enter()
        try:
            return method(self, *args, **kwargs)
        finally:
            self._leave()

    return run


def _like(path: PathArg, name: bytes) -> str | bytes:
    """``name`` in the type the caller used: bytes for bytes paths, str otherwise."""
    return name if isinstance(os.fspath(path), bytes) else os.fsdecode(name)


def _same_dir(path: bytes, held: os.stat_result) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)


def _file_object(
    raw: io.FileIO, mode: str, blksize: int, encoding: str | None, errors: str | None, newline: str | None
) -> IO[Any]:
    """The buffered (and, for text, decoding) layers ``open()`` would put over ``raw``."""
    size = blksize if blksize > 1 else io.DEFAULT_BUFFER_SIZE
    buffer: io.BufferedIOBase
    if "+" in mode:
        buffer = io.BufferedRandom(raw, size)
    elif "r" in mode:
        buffer = io.BufferedReader(raw, size)
    else:
        buffer = io.BufferedWriter(raw, size)
    if "b" in mode:
        return buffer
    text = io.TextIOWrapper(buffer, encoding or "utf-8", errors, newline)
    text.mode = mode  # type: ignore[misc]
    return text


class Root:
    """A workspace directory, held by fd; every path is resolved beneath it.

    Whatever others do inside the root meanwhile (swap a directory for a symlink, plant links to
    the outside, rename), an operation reaches only inodes beneath the directory the fd holds, or
    fails cleanly; a symlink that safefs creates or moves (each one inside a moved directory
    included) is judged as ``resolve(strict=False)`` follows it at that moment, on the tree as the
    operation leaves it, from the directory fd it is made in (checked again right before and
    after the call: EAGAIN, the change taken back, if that directory moved), and any error
    while judging refuses the operation
    (:mod:`safefs._resolve.links`); an atomic write never carries setuid/setgid bits onto the new
    inode. Not covered: a hard link or a bind mount inside the root to something outside, a
    directory moved out of the root by someone who can also write outside, a later change that
    alters what some other link means, and the root itself being moved (the directory the fd
    holds is kept). From ``/proc`` only ``/proc/self/fd/N`` is used (to name an O_TMPFILE
    inode, to chmod through O_PATH); magic links met inside the root are refused. The full
    threat model: docs/threat-model.md.

    ``resolver``: ``"auto"`` (openat2 where the kernel allows it, else the walk), ``"openat2"``
    or ``"walk"``. ``symlinks``: ``"beneath"`` (follow links that stay inside; any step above the
    root is a :class:`PathEscapeError`), ``"none"`` (refuse every symlink) or ``"in_root"``
    (chroot-like: ``..`` stops at the root, absolute links start from it). ``absolute_links``
    (with ``"beneath"``): ``"refused"`` (an absolute link target is an escape) or ``"anchored"``
    (a target under one of :attr:`anchors`, as tools writing absolute paths leave them, is
    followed from the root's fd, never from the host's ``/``; any other is an escape).

    Paths are relative to the root; an absolute path is accepted when it lies under the root's
    own absolute path (as opened, or its realpath) and that spelling denotes the directory the
    fd holds. Errors carry the caller's path, never the host path of the root.
    """

    def __init__(
        self,
        path: PathArg,
        *,
        resolver: ResolverName = "auto",
        symlinks: SymlinkMode = "beneath",
        absolute_links: AbsoluteLinks = "refused",
        _use_o_path: bool = True,
        _native_walk: bool = True,
    ) -> None:
        raw = to_bytes(path)
        use_o_path = _use_o_path and _sys.HAVE_O_PATH
        if absolute_links not in ABSOLUTE_LINKS or (absolute_links == "anchored" and symlinks != "beneath"):
            raise ValueError(
                f'absolute_links must be one of {ABSOLUTE_LINKS} ("anchored" with symlinks="beneath")'
            )
        # The root's own path is trusted: it is the one path we let the kernel follow.
        try:
            fd = _sys.openat(_sys.AT_FDCWD, raw, _sys.dir_flags(use_o_path), follow=True)
        except OSError as exc:
            raise with_filename(exc, path) from None
        try:
            chosen = make_resolver(resolver, symlinks, fd, use_o_path=use_o_path, native_walk=_native_walk)
            held = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        # Only spellings that denote the directory the fd holds become accepted prefixes:
        # "base/lnk/../ROOT" names, lexically, a directory other than the one opened.
        spellings = dict.fromkeys((os.path.abspath(raw), os.path.realpath(raw)))
        anchors = tuple(s for s in spellings if _same_dir(s, held))
        if absolute_links == "anchored":
            chosen = AnchoredResolver(chosen, anchors, use_o_path=use_o_path)
        self._init(fd, chosen, anchors[0] if anchors else os.path.realpath(raw), anchors)

    def _init(self, fd: int, resolver: Resolver, display: bytes, anchors: tuple[bytes, ...]) -> None:
        self._fd = fd
        if isinstance(resolver, AnchoredResolver):
            resolver = resolver.rebound(anchors)  # a sub-root's anchors are its own
        self._resolver = resolver
        self._display = display
        self._anchors = anchors
        self._lock = threading.Lock()
        self._closed = False
        # One entry per operation in flight (see _operation); the fd is closed only when none is
        # left. A deque: its append and pop are atomic under the GIL as a list's are, and going
        # from empty to one entry and back allocates nothing (a list reallocates each time).
        self._users: deque[None] = deque()

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def resolver(self) -> BackendName:
        """``"openat2"`` or ``"walk"``: the backend in use."""
        return self._resolver.name

    @property
    def symlinks(self) -> SymlinkMode:
        """The ``symlinks=`` mode: ``"beneath"``, ``"none"`` or ``"in_root"``."""
        return self._resolver.mode

    @property
    def absolute_links(self) -> AbsoluteLinks:
        """The ``absolute_links=`` mode: ``"refused"`` or ``"anchored"``."""
        return "anchored" if isinstance(self._resolver, AnchoredResolver) else "refused"

    @property
    def path(self) -> str:
        """The root's absolute host path (one that denotes the directory the fd holds), for the
        program, not for a model."""
        return os.fsdecode(self._display)

    @property
    def closed(self) -> bool:
        """Whether close() was called."""
        return self._closed

    def fileno(self) -> int:
        """The root's directory fd (still owned by the Root: do not close it)."""
        if self._closed:
            raise ValueError("operation on a closed Root")
        return self._fd

    def close(self) -> None:
        """Close the root. Operations already running in other threads finish first: the fd is
        released when the last one returns, so its number cannot be reused under them."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._close_if_idle()

    def _close_if_idle(self) -> None:
        """Close the fd once closed and no operation is left in flight (exactly once: whoever
        takes it under the lock)."""
        with self._lock:
            if self._users or self._fd < 0:
                return
            fd, self._fd = self._fd, -1
        os.close(fd)

    # The one lifecycle guard (Go's incref/decref): every method that uses the fd enters before
    # and leaves after. No lock on this path: deque.append and deque.pop are atomic under the
    # GIL, and the order makes it safe. An operation registers, then checks _closed; close() sets
    # _closed, then checks for operations in flight. So either close() sees this one and leaves
    # the fd to the last operation out, or this one sees _closed. Who closes the fd is settled
    # under the lock, in the rare closing path only. (@_operation wraps a method in it; the hot
    # paths call it directly, without the wrapper's generic call.)

    def _enter(self) -> None:
        self._users.append(None)
        if self._closed:
            self._leave()
            raise ValueError("operation on a closed Root")

    def _leave(self) -> None:
        self._users.pop()
        if self._closed:
            self._close_if_idle()

    def __enter__(self) -> Root:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            self.close()

    def __reduce_ex__(self, protocol: object) -> Any:
        # One owner per fd: a copy would close the fd its original still uses (copy, deepcopy
        # and pickle all ask this first), as socket and FileIO refuse to be copied.
        raise TypeError(f"cannot copy or pickle {type(self).__name__!r} object: it owns a directory fd")

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"resolver={self.resolver!r}"
        return f"<safefs.Root {self.path!r} {state} symlinks={self.symlinks!r}>"

    # -- the steps every method is made of -------------------------------------------------------

    def _rel(self, path: PathArg) -> bytes:
        # The common case (a relative str) without the general machinery: this is a hot path.
        data = path.encode(_FS_ENCODING, _FS_ERRORS) if type(path) is str else to_bytes(path)
        if 0 in data:  # a NUL byte: ``b"\0" in data`` would first raise and clear a TypeError
            raise ValueError("embedded null byte in path")
        if len(data) >= PATH_MAX:  # refused whole, as the kernel does, whatever the operation
            raise with_filename(error(errno.ENAMETOOLONG), path)
        if data and data[0] != 0x2F:  # not absolute
            return data
        with reporting(path):
            return relative_to_root(data, self._anchors)

    def _open(self, rel: bytes, flags: int, mode: int = 0o666, *, follow: bool = True) -> int:
        return self._resolver.open(self._fd, rel, flags, mode, follow=follow)

    def _open_dir(self, rel: bytes) -> int:
        return self._open(rel, self._resolver.dir_flags)

    def _judge_dir(self, rel: bytes) -> None:
        """Resolve ``rel`` as a directory and let go: its errors (an escape first) are raised."""
        os.close(self._open_dir(rel))

    def _lookup(self, rel: bytes, *, follow: bool, parents: bool = False, lstat: bool = False) -> Resolved:
        return self._resolver.lookup(self._fd, rel, follow=follow, parents=parents, lstat=lstat)

    def _lookup_file(self, rel: bytes, *, parents: bool = False) -> Resolved:
        """The entry a write to ``rel`` replaces (trailing links followed). A path naming a
        directory as a whole is refused as Linux open(O_CREAT) refuses it."""
        self._refuse_create_with_slash(rel, os.O_CREAT)
        try:
            return self._lookup(rel, follow=True, parents=parents)
        except DirectoryPath as directory:
            self._refuse_create_with_slash(directory.rel, os.O_CREAT)
            raise error(errno.EISDIR) from None

    def _refuse_create_with_slash(self, rel: bytes, flags: int) -> None:
        """Creating ``name/`` as Linux open(O_CREAT) does: the parent is resolved (an escape is
        still an escape), then EISDIR without looking at the name itself; ``.`` and ``..`` are
        resolved in full and, with O_EXCL, found to exist."""
        parent, name, trailing = split_parent(rel)
        if name in SPECIAL_NAMES:
            self._judge_dir(rel)
            raise error(errno.EEXIST if flags & os.O_EXCL else errno.EISDIR)
        if trailing:
            if parent != b".":
                self._judge_dir(parent)
            raise error(errno.EISDIR)

    def _is_dir_or_escape(self, rel: bytes) -> bool:
        """Whether ``rel`` is a directory; an escape is still reported as one."""
        try:
            return stat_mod.S_ISDIR(self._resolver.stat(self._fd, rel, follow=True).st_mode)
        except PathEscapeError:
            raise
        except OSError:
            return False

    def _open_regular(self, rel: bytes, flags: int, mode: int = 0o666) -> tuple[int, os.stat_result]:
        if flags & os.O_CREAT:
            self._refuse_create_with_slash(rel, flags)
        # O_NONBLOCK: a FIFO must not hang the open; fstat then refuses anything not regular.
        fd = self._resolver.open(self._fd, rel, flags | _sys.O_NONBLOCK, mode, follow=True)
        try:
            st = os.fstat(fd)
            require_regular(st)
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    def _canonical(self, fd: int) -> bytes:
        return canonical(self._fd, fd)

    # -- reading ---------------------------------------------------------------------------------

    @_operation
    def open(
        self,
        path: PathArg,
        mode: str = "r",
        *,
        encoding: str | None = None,
        errors: str | None = None,
        newline: str | None = None,
        perm: int = 0o666,
    ) -> IO[Any]:
        """Open a regular file beneath the root; returns an ordinary file object (``mode`` as
        for ``open()``: ``r w a x``, ``b``/``t``, ``+``; text defaults to UTF-8). A file it
        creates is born with ``perm`` less the umask (Go's ``OpenFile`` perm). ``"w"`` truncates
        the file in place, as ``open()`` does: only ``write_bytes`` and ``write_text`` are
        atomic."""
        flags = open_mode_flags(mode)
        _check_mode(perm, path)
        rel = self._rel(path)
        with reporting(path):
            fd, st = self._open_regular(rel, flags, perm)
        try:
            os.set_blocking(fd, True)
            raw = io.FileIO(fd, _raw_mode(mode), closefd=True)
        except BaseException:
            os.close(fd)  # FileIO given a number never closes it when it fails
            raise
        # From here the FileIO owns the fd: any failure (a bad encoding or newline) closes it
        # through the FileIO, exactly once.
        try:
            return _file_object(raw, mode, st.st_blksize, encoding, errors, newline)
        except BaseException:
            raw.close()
            raise

    def read_bytes(self, path: PathArg) -> bytes:
        """The whole content of a regular file (``pathlib.Path.read_bytes``)."""
        self._enter()  # the guard without @_operation's generic call: this is the hottest path
        try:
            rel = self._rel(path)
            try:  # not ``with reporting(...)``, for the same reason
                return self._resolver.read_bytes(self._fd, rel)
            except OSError as exc:
                raise with_filename(exc, path) from None
        finally:
            self._leave()

    def read_head(self, path: PathArg, size: int) -> bytes:
        """The first ``size`` bytes of a regular file, or all of it when it is shorter: a bounded
        read (memory is ``size`` at most, whatever the file's size), one native call for a file
        shorter than ``size`` and 64 KiB. A result shorter than ``size`` is the whole file.
        Refuses what ``read_bytes`` refuses (EISDIR for a directory, NotRegularFileError for
        anything else that is not a regular file)."""
        if size < 0:
            raise ValueError(f"size must not be negative, got {size}")
        self._enter()  # as in read_bytes: a hot path
        try:
            rel = self._rel(path)
            try:
                return self._resolver.read_head(self._fd, rel, size)
            except OSError as exc:
                raise with_filename(exc, path) from None
        finally:
            self._leave()

    def read_heads(self, paths: Iterable[PathArg], size: int) -> list[bytes | OSError]:
        """``read_head(path, size)`` of each of ``paths``, in order: for each, its bytes, or the
        OSError that ``read_head`` would raise (naming that path), returned in its place rather
        than raised. Each file is resolved, checked and read as ``read_head`` does; where the
        extension is built, a batch of files is one native call that releases the GIL for all of
        them (a worker thread reading a batch leaves the interpreter to the others). The result
        holds every head at once: pass batches, not a whole tree. A path that is not a path at
        all (a NUL byte, a wrong type) raises, as for ``read_head``."""
        if size < 0:
            raise ValueError(f"size must not be negative, got {size}")
        if isinstance(paths, str | bytes | os.PathLike):  # iterating one would read one file per character
            raise TypeError(f"read_heads takes an iterable of paths, not one path ({type(paths).__name__})")
        names = list(paths)
        self._enter()
        try:
            results: list[bytes | OSError] = [b""] * len(names)
            rels: list[bytes] = []
            where: list[int] = []
            for i, path in enumerate(names):
                try:
                    rels.append(self._rel(path))
                    where.append(i)
                except OSError as exc:
                    results[i] = exc
            for i, got in zip(where, self._resolver.read_heads(self._fd, rels, size), strict=True):
                results[i] = with_filename(got, names[i]) if isinstance(got, OSError) else got
            return results
        finally:
            self._leave()

    def read_text(self, path: PathArg, encoding: str = "utf-8", errors: str = "strict") -> str:
        """The content of a regular file, decoded (``pathlib.Path.read_text``)."""
        return self.read_bytes(path).decode(encoding, errors)

    # -- writing ---------------------------------------------------------------------------------

    def write_bytes(
        self,
        path: PathArg,
        data: bytes | bytearray | memoryview,
        *,
        parents: bool = False,
        durable: bool = False,
        mode: int = 0o666,
    ) -> int:
        """Atomically replace (or create) the file; returns the number of bytes written.

        A final symlink that resolves beneath the root is written through: its target is
        replaced. ``parents`` creates missing directories; ``durable`` fsyncs file and directory.
        The replaced file's mode bits are kept, except setuid and setgid, which are dropped; a
        new file is born with ``mode`` less the umask (Go's ``WriteFile`` perm: ``0o600`` makes
        a secret file that was never readable by others, not even for a moment).
        """
        size = len(data) if type(data) is bytes else memoryview(data).nbytes  # TypeError first
        if mode & ~0o777:
            _check_mode(mode, path)
        self._enter()  # as in read_bytes: a hot path
        try:
            rel = self._rel(path)
            try:  # not ``with reporting(...)``: this is a hot path
                flat = None if parents else native_buffer(data)
                if flat is not None and self._write_small(rel, flat, durable, mode):
                    return size
                found = self._lookup_file(rel, parents=parents)
                try:
                    write_atomic(found.fd, found.name, data, _kept_mode(found.st), durable, mode)
                finally:
                    found.release()
            except OSError as exc:
                raise with_filename(exc, path) from None
            return size
        finally:
            self._leave()

    def _write_small(self, rel: bytes, flat: bytes | memoryview, durable: bool, mode: int) -> bool:
        """write_bytes in one native call that looks at the name and writes (see
        _atomic.write_keeping_mode). False, having written nothing, when the full lookup must
        handle it: the name is a symlink (to follow), or ``name/``, ``.`` or ``..`` (to refuse)."""
        if b"/" not in rel and rel not in SPECIAL_NAMES:
            # A name in the root itself: every resolver would hand back the root's own fd.
            return write_keeping_mode(self._fd, rel, flat, durable, mode)
        with self._lookup(rel, follow=False) as found:
            if found.trailing or found.name in SPECIAL_NAMES:
                return False
            return write_keeping_mode(found.fd, found.name, flat, durable, mode)

    def write_text(
        self,
        path: PathArg,
        data: str,
        encoding: str = "utf-8",
        errors: str = "strict",
        *,
        parents: bool = False,
        durable: bool = False,
        mode: int = 0o666,
    ) -> int:
        """write_bytes of the encoded text; returns the number of characters written."""
        if not isinstance(data, str):
            raise TypeError(f"data must be str, not {type(data).__name__}")
        encoded = data.encode(encoding, errors)
        self.write_bytes(path, encoded, parents=parents, durable=durable, mode=mode)
        return len(data)

    @_operation
    def touch(self, path: PathArg, mode: int = 0o666, exist_ok: bool = True) -> None:
        """Create an empty file with ``mode`` (less the umask), or set an existing file's times
        to now without opening it (``pathlib.Path.touch``, its mode left alone); with
        ``exist_ok=False`` an existing file is FileExistsError."""
        flags = os.O_WRONLY | os.O_CREAT | (0 if exist_ok else os.O_EXCL)
        _check_mode(mode, path)
        rel = self._rel(path)
        with reporting(path):
            if exist_ok:
                with self._lookup_file(rel) as found:
                    if found.st is not None:
                        _kept_mode(found.st)  # a directory or a FIFO is refused, as before
                        _entries.touch_unchecked(found.fd, found.name)
                        return
            os.close(self._open_regular(rel, flags, mode)[0])

    # -- directories -----------------------------------------------------------------------------

    @_operation
    def mkdir(
        self, path: PathArg, mode: int = 0o777, *, parents: bool = False, exist_ok: bool = False
    ) -> None:
        """Create a directory (``pathlib.Path.mkdir``). ``parents`` creates the missing ones
        above it, one ``mkdirat`` per level; ``exist_ok`` accepts an existing directory.
        ``mode`` is permission bits only (EINVAL otherwise, as Go's ``os.Root``)."""
        _check_mode(mode, path)
        rel = self._rel(path)
        with reporting(path), self._lookup(rel, follow=False, parents=parents) as found:
            try:
                _entries.mkdir_unchecked(found.fd, found.name, mode)
            except FileExistsError:
                if not exist_ok or not self._is_dir_or_escape(rel):
                    raise

    @overload
    def listdir(self, /, path: str | os.PathLike[str] = ".") -> list[str]: ...
    @overload
    def listdir(self, /, path: bytes | os.PathLike[bytes]) -> list[bytes]: ...
    @_operation
    def listdir(self, path: PathArg = ".") -> list[str] | list[bytes]:
        """Names in the directory (str, or bytes for a bytes path), like ``os.listdir``."""
        rel = self._rel(path)
        with reporting(path):
            fd = self._open(rel, os.O_RDONLY | _sys.O_DIRECTORY)
        try:
            # Names only: no DirEntry is built, so this costs what os.listdir costs.
            names = os.listdir(fd)
        finally:
            os.close(fd)
        return [os.fsencode(n) for n in names] if isinstance(os.fspath(path), bytes) else names

    def iterdir(self, path: PathArg = ".") -> Iterator[Any]:
        """Root-relative paths of the directory's entries, like ``pathlib.Path.iterdir``."""
        return (entry.path for entry in self.scandir(path))

    @_operation
    def scandir(self, path: PathArg = ".", *, lstat: bool = False) -> Iterator[DirEntry]:
        """The directory's entries; type checks never follow a link out of the root. With
        ``lstat``, each entry's lstat is taken while the directory is held (one ``fstatat`` per
        entry, as ``os.DirEntry.stat`` costs), and its ``stat()`` answers from it, except
        following a symlink, which still goes through the root."""
        rel = self._rel(path)
        with reporting(path):
            fd = self._open(rel, os.O_RDONLY | _sys.O_DIRECTORY)
        try:
            found = scan_fd(fd, self, path, lstat)
        finally:
            os.close(fd)
        return iter(found)

    @_operation
    def walk(self, top: PathArg = ".", *, topdown: bool = True) -> Iterator[tuple[Any, list[Any], list[Any]]]:
        """Like ``os.walk`` through held fds; symlinks are listed with the files, never entered.
        With ``topdown``, ``dirs`` may be pruned or reordered; an entry added to it must be a
        single name in that directory (ValueError otherwise)."""
        rel = self._rel(top)
        with reporting(top):
            fd = self._open(rel, os.O_RDONLY | _sys.O_DIRECTORY)
        return walk_fd(fd, os.fspath(top), topdown)

    @_operation
    def rmtree(self, path: PathArg) -> None:
        """Remove a directory tree through fds; never follows a symlink, even if swapped in."""
        rel = self._rel(path)
        with reporting(path), self._lookup(rel, follow=False, lstat=True) as found:
            if found.name in SPECIAL_NAMES:
                raise error(errno.EINVAL, "cannot remove the root or a '.'/'..' path")
            st = found.st
            if st is None:
                raise error(errno.ENOENT)
            if stat_mod.S_ISLNK(st.st_mode):
                raise error(errno.ENOTDIR, "cannot call rmtree on a symbolic link")
            if not stat_mod.S_ISDIR(st.st_mode):
                raise error(errno.ENOTDIR)
            remove_tree_fd(found.fd, found.name, st)

    @_operation
    def remove_all(self, path: PathArg) -> None:
        """Remove ``path`` and everything in it, as Go's ``RemoveAll``: a directory tree through
        fds (as ``rmtree``), a file or a symlink (the link itself), or nothing at all for a path
        that does not exist (a missing parent included). ``.``, ``..`` and the root are
        refused (EINVAL). As Go: ``""`` removes nothing, trailing slashes are dropped (so
        ``"file/"`` removes the file and ``"link/"`` the link itself), and an entry another
        process removes meanwhile counts as removed, at every level."""
        if not os.fspath(path):
            return
        rel = self._rel(path)
        rel = rel.rstrip(b"/") or rel
        with reporting(path):
            try:
                found = self._lookup(rel, follow=False, lstat=True)
            except FileNotFoundError:
                return
            with found:
                if found.name in SPECIAL_NAMES:
                    raise error(errno.EINVAL, "cannot remove the root or a '.'/'..' path")
                if found.st is None:
                    return
                try:
                    if stat_mod.S_ISDIR(found.st.st_mode):
                        remove_tree_fd(found.fd, found.name, found.st, missing_ok=True)
                    else:
                        _entries.unlink_unchecked(found.fd, found.name, False)
                except FileNotFoundError:
                    return

    @_operation
    def opendir(self, path: PathArg) -> Root:
        """A new ``Root`` for a subdirectory (same resolver and symlink mode)."""
        rel = self._rel(path)
        with reporting(path):
            fd = self._open_dir(rel)
            try:
                sub_rel = self._canonical(fd)
            except BaseException:
                os.close(fd)
                raise
        sub = object.__new__(Root)
        display = os.path.join(self._display, sub_rel) if sub_rel != b"." else self._display
        anchors = tuple(
            dict.fromkeys(os.path.join(a, sub_rel) if sub_rel != b"." else a for a in self._anchors)
        )
        sub._init(fd, self._resolver, display, anchors)
        return sub

    # -- metadata --------------------------------------------------------------------------------

    @_operation
    def stat(self, path: PathArg, *, follow_symlinks: bool = True) -> os.stat_result:
        """``os.stat`` of the entry (``follow_symlinks=False``: of a final link itself)."""
        rel = self._rel(path)
        with reporting(path):
            return self._resolver.stat(self._fd, rel, follow=follow_symlinks)

    def lstat(self, path: PathArg) -> os.stat_result:
        """``os.lstat``: a final symlink is described itself."""
        return self.stat(path, follow_symlinks=False)

    def _kind(self, path: PathArg, follow: bool) -> int | None:
        try:
            return self.stat(path, follow_symlinks=follow).st_mode
        except PathEscapeError:
            raise
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None
            raise

    def exists(self, path: PathArg, *, follow_symlinks: bool = True) -> bool:
        """False for a missing path; a path that escapes still raises PathEscapeError."""
        return self._kind(path, follow_symlinks) is not None

    def is_file(self, path: PathArg) -> bool:
        """Whether the path (links followed) is a regular file."""
        mode = self._kind(path, True)
        return mode is not None and stat_mod.S_ISREG(mode)

    def is_dir(self, path: PathArg) -> bool:
        """Whether the path (links followed) is a directory."""
        mode = self._kind(path, True)
        return mode is not None and stat_mod.S_ISDIR(mode)

    def is_symlink(self, path: PathArg) -> bool:
        """Whether the final component is a symlink."""
        mode = self._kind(path, False)
        return mode is not None and stat_mod.S_ISLNK(mode)

    @_operation
    def chmod(self, path: PathArg, mode: int, *, follow_symlinks: bool = True) -> None:
        """Change mode bits. The node is never opened for reading or writing: through an O_PATH
        fd on Linux, by ``fchmodat(AT_SYMLINK_NOFOLLOW)`` on its directory elsewhere. A link
        itself cannot be chmodded (EOPNOTSUPP, as Linux answers)."""
        rel = self._rel(path)
        with reporting(path):
            self._resolver.chmod(self._fd, rel, mode, follow=follow_symlinks)

    @_operation
    def utime(
        self,
        path: PathArg,
        times: tuple[float, float] | None = None,
        *,
        ns: tuple[int, int] | None = None,
        follow_symlinks: bool = True,
    ) -> None:
        """Set the access and modification times (``os.utime``: ``times`` in seconds or ``ns``
        in nanoseconds; neither: now), never opening the node. ``follow_symlinks=False`` sets
        a final symlink's own times (Go's ``Chtimes``, cap-std's ``set_times``)."""
        if times is not None and ns is not None:
            raise ValueError("utime: you may specify either 'times' or 'ns' but not both")
        if times is not None:
            ns = (_seconds_to_ns(times[0]), _seconds_to_ns(times[1]))
        rel = self._rel(path)
        with reporting(path):
            set_times(self._resolver, self._fd, rel, ns, follow_symlinks)

    @overload
    def readlink(self, /, path: str | os.PathLike[str]) -> str: ...
    @overload
    def readlink(self, /, path: bytes | os.PathLike[bytes]) -> bytes: ...
    @_operation
    def readlink(self, path: PathArg) -> str | bytes:
        """The target of a symlink, as stored (str, or bytes for a bytes path)."""
        rel = self._rel(path)
        with reporting(path):
            if split_parent(rel)[2]:
                # The slash makes the lookup follow the link: whatever it reaches is not a link.
                self._judge_dir(rel)
                raise error(errno.EINVAL)
            with self._lookup(rel, follow=False) as found:
                return _like(path, _entries.readlink_unchecked(found.fd, found.name))

    @overload
    def resolve(self, /, path: str | os.PathLike[str] = ".", *, strict: bool = False) -> str: ...
    @overload
    def resolve(self, /, path: bytes | os.PathLike[bytes], *, strict: bool = False) -> bytes: ...
    @_operation
    def resolve(self, path: PathArg = ".", *, strict: bool = False) -> str | bytes:
        """The canonical root-relative path that ``path`` designates (``"."`` for the root), in
        the caller's type (str, or bytes for a bytes path).

        Symlinks are followed as an operation follows them, with the same link budget, and
        ``..`` is physical. A tail that does not exist yet is appended as a write with
        ``parents=True`` would create it; with ``strict``, a missing component is
        FileNotFoundError. A path that leaves the root is a PathEscapeError. Use it to judge or
        show what an operation will really touch (the tree may change before it runs)."""
        rel = self._rel(path)
        with reporting(path):
            return _like(path, self._resolver.canonical(self._fd, rel, strict=strict))

    @overload
    def relative(self, path: str | os.PathLike[str]) -> str: ...
    @overload
    def relative(self, path: bytes | os.PathLike[bytes]) -> bytes: ...
    def relative(self, path: PathArg) -> str | bytes:
        """``path`` spelled relative to the root, by the same rule every operation applies: a
        relative path as it is; an absolute one with one of :attr:`anchors` stripped, compared by
        whole components (PathEscapeError when it lies under none). Nothing is resolved: ``..``
        and links are left for the operation to judge physically."""
        if self._closed:
            raise ValueError("operation on a closed Root")
        rel = self._rel(path)
        return _like(path, rel)

    @property
    def anchors(self) -> tuple[str, ...]:
        """The absolute spellings of the root that an absolute path may start with: the path it
        was opened by and its realpath, each kept only if it denotes the directory the fd holds."""
        return tuple(os.fsdecode(a) for a in self._anchors)

    # -- changing entries ------------------------------------------------------------------------

    @_operation
    def remove(self, path: PathArg) -> None:
        """Remove a file or symlink (the link itself, never its target)."""
        rel = self._rel(path)
        with reporting(path), self._lookup(rel, follow=False) as found:
            _entries.unlink_unchecked(found.fd, found.name, found.trailing)

    unlink = remove

    @_operation
    def rmdir(self, path: PathArg) -> None:
        """Remove an empty directory."""
        rel = self._rel(path)
        with reporting(path), self._lookup(rel, follow=False) as found:
            _entries.rmdir_unchecked(found.fd, found.name)

    @_operation
    def rename(self, src: PathArg, dst: PathArg, *, replace: bool = True) -> None:
        """Rename ``src`` to ``dst`` (links are moved, not followed). ``replace=False`` is an
        atomic no-clobber rename: FileExistsError if ``dst`` exists. A moved symlink, and every
        symlink inside a moved directory, must lead beneath the root from the new place (see the
        class docstring: judged on the tree as the rename leaves it, failing closed)."""
        srel, drel = self._rel(src), self._rel(dst)
        with reporting(src, dst), self._lookup(srel, follow=False) as source:
            with self._lookup(drel, follow=False) as dest:
                _entries.check_rename(source.fd, source.name, source.trailing, dest.name, dest.trailing)
                with links.Judge(self._fd, dest.fd, dest.name) as judge:
                    judge.move(source.fd, source.name, keeps_source=False)
                    judge.carry_out(
                        lambda: _entries.rename_unchecked(
                            source.fd, source.name, dest.fd, dest.name, replace
                        ),
                        lambda: _entries.rename_unchecked(dest.fd, dest.name, source.fd, source.name, False),
                    )

    def replace(self, src: PathArg, dst: PathArg) -> None:
        """``rename(src, dst)``, replacing ``dst`` (``pathlib.Path.replace``)."""
        self.rename(src, dst, replace=True)

    @_operation
    def exchange(self, a: PathArg, b: PathArg) -> None:
        """Swap two regular files of one directory atomically (``renameat2(RENAME_EXCHANGE)``):
        each name then names the other's file, and no moment sees either name missing. Anything
        but a regular file is refused as a read refuses it (a moved link or directory could
        change where other links lead), as are names in two directories (EXDEV). Where the
        platform or the file system cannot exchange, OSError ENOSYS, EINVAL or EOPNOTSUPP, and
        nothing changed."""
        arel, brel = self._rel(a), self._rel(b)
        with reporting(a, b), self._lookup(arel, follow=False) as first:
            with self._lookup(brel, follow=False) as second:
                _entries.exchange_unchecked(
                    first.fd, first.name, first.trailing, second.fd, second.name, second.trailing
                )

    @_operation
    def link(self, src: PathArg, dst: PathArg) -> None:
        """Hard link ``dst`` to ``src`` (a symlink ``src`` is linked itself, not followed, and
        must resolve beneath the root from its new directory too)."""
        srel, drel = self._rel(src), self._rel(dst)
        with reporting(src, dst), self._lookup(srel, follow=False) as source:
            # linkat follows a source ending in "/", "." or "..": a directory, which cannot
            # be linked (EPERM), though the destination is judged first, as Linux does.
            src_is_dir = source.trailing or source.name in SPECIAL_NAMES
            if source.trailing:
                self._judge_dir(srel)  # ENOENT, ENOTDIR, ELOOP or an escape
            with self._lookup(drel, follow=False) as dest:
                _entries.check_link(source.fd, source.name, src_is_dir, dest.fd, dest.name, dest.trailing)
                with links.Judge(self._fd, dest.fd, dest.name) as judge:
                    judge.move(source.fd, source.name, keeps_source=True)
                    judge.carry_out(
                        lambda: _entries.link_unchecked(source.fd, source.name, dest.fd, dest.name),
                        lambda: _sys.unlinkat(dest.fd, dest.name),
                    )

    @_operation
    def symlink(self, target: PathArg, path: PathArg) -> None:
        """Create symlink ``path`` -> ``target``. Refused (PathEscapeError) unless the target,
        resolved from the link's own directory as ``resolve(strict=False)`` would follow it,
        stays beneath the root (an absolute target never does); an error while judging it (a
        loop, a directory that cannot be searched) refuses it too."""
        raw_target = to_bytes(target)
        rel = self._rel(path)
        with reporting(path, target), self._lookup(rel, follow=False) as found:
            if not raw_target or found.name in SPECIAL_NAMES or found.trailing:
                _entries.symlink_unchecked(raw_target, found.fd, found.name, found.trailing)
                return
            if _entries.lexists(found.fd, found.name):
                raise error(errno.EEXIST)  # the call's own error before any judgement
            with links.Judge(self._fd, found.fd, found.name) as judge:
                judge.symlink(raw_target)
                judge.carry_out(
                    lambda: _entries.symlink_unchecked(raw_target, found.fd, found.name, False),
                    lambda: _sys.unlinkat(found.fd, found.name),
                )

    # -- paths, copy, move, owner, glob (safefs._path, _copy, _owner, _glob) ---------------------

    def __truediv__(self, key: str | os.PathLike[str]) -> Path:
        """``root / "a"``: a :class:`safefs.Path` beneath this root."""
        return Path(self, key)

    def path_of(self, *segments: str | os.PathLike[str]) -> Path:
        """A :class:`safefs.Path` of this root (``root.path_of("a/b")``; none: the root)."""
        return Path(self, *segments)

    def copy(
        self,
        src: PathArg,
        dst: PathArg | Path,
        *,
        follow_symlinks: bool = True,
        preserve_metadata: bool = False,
    ) -> None:
        """Copy a file (or, without ``follow_symlinks``, a symlink itself) to ``dst``, a path of
        this root or a :class:`safefs.Path` of another, through held fds (reflink or
        copy_file_range where the kernel has it); the target is replaced atomically."""
        _copy.copy_file(
            self,
            src,
            *_copy.destination(self, dst),
            follow_symlinks=follow_symlinks,
            preserve_metadata=preserve_metadata,
        )

    def copytree(
        self,
        src: PathArg,
        dst: PathArg | Path,
        *,
        follow_symlinks: bool = True,
        preserve_metadata: bool = False,
        dirs_exist_ok: bool = False,
    ) -> None:
        """Copy a directory tree to ``dst`` (this root or a :class:`safefs.Path` of another);
        links are followed beneath the root with ``follow_symlinks``, else copied as links."""
        _copy.copy_tree(
            self,
            os.fsdecode(src),
            *_copy.destination(self, dst),
            follow_symlinks=follow_symlinks,
            preserve_metadata=preserve_metadata,
            dirs_exist_ok=dirs_exist_ok,
        )

    def move(self, src: PathArg, dst: PathArg | Path) -> None:
        """Move a file or tree as 3.14's ``Path.move``: a rename within one root and device,
        else a copy (links as links, metadata kept) and the removal of ``src``."""
        _copy.move(self, os.fsdecode(src), *_copy.destination(self, dst))

    def chown(self, path: PathArg, uid: int, gid: int) -> None:
        """Set owner and group (-1 keeps one), a final link followed beneath the root (Go's
        ``Chown``); the node is never opened."""
        _owner.chown(self, path, uid, gid, follow=True)

    def lchown(self, path: PathArg, uid: int, gid: int) -> None:
        """``chown`` of a final symlink itself (Go's ``Lchown``)."""
        _owner.chown(self, path, uid, gid, follow=False)

    def glob(self, pattern: str, *, recurse_symlinks: bool = False) -> Iterator[str]:
        """Root-relative paths matching ``pattern`` (pathlib's language, linear time)."""
        return (str(p) for p in Path(self).glob(pattern, recurse_symlinks=recurse_symlinks))

    def rglob(self, pattern: str, *, recurse_symlinks: bool = False) -> Iterator[str]:
        """``glob("**/" + pattern)``."""
        return (str(p) for p in Path(self).rglob(pattern, recurse_symlinks=recurse_symlinks))

    def open_root(self, path: PathArg) -> Root:
        """Go's ``OpenRoot``: ``opendir`` under Go's name (a Root for a subdirectory)."""
        return self.opendir(path)


def _seconds_to_ns(seconds: float) -> int:
    """Seconds as ``os.utime`` takes them: an int exactly; a float split by ``modf``, its
    fraction scaled to nanoseconds and rounded toward minus infinity (CPython's pytime)."""
    if not isinstance(seconds, float):
        return operator.index(seconds) * 1_000_000_000
    if math.isnan(seconds):
        raise ValueError("Invalid value NaN (not a number)")
    fraction, whole = math.modf(seconds)
    nanos = math.floor(fraction * 1e9)
    if nanos >= 1_000_000_000:
        nanos -= 1_000_000_000
        whole += 1.0
    elif nanos < 0:
        nanos += 1_000_000_000
        whole -= 1.0
    return int(whole) * 1_000_000_000 + nanos


def _check_mode(mode: int, path: PathArg) -> None:
    """The mode of a new file or directory: permission bits only, refused the same way on
    every backend (the kernel would ignore file-type bits or take setuid, setgid and sticky;
    Go's ``os.Root`` refuses them: "unsupported file mode")."""
    if mode & ~0o777:
        raise with_filename(
            error(errno.EINVAL, f"unsupported file mode {mode:#o} (permission bits only)"), path
        )


def _raw_mode(mode: str) -> str:
    """The FileIO mode for an ``open()`` mode: its kind and ``+`` (the fd is already open)."""
    kind = next(c for c in mode if c in "rwax")
    return kind + ("+" if "+" in mode else "")


def _kept_mode(st: os.stat_result | None) -> int | None:
    """The mode bits a replacement of ``st`` keeps (None: nothing to replace). A directory or
    anything but a regular file is refused."""
    if st is None:
        return None
    require_regular(st)
    return stat_mod.S_IMODE(st.st_mode) & ~_PRIVILEGE_BITS


__all__ = ["DirEntry", "Root"]
