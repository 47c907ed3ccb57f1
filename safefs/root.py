"""``Root``: a directory held open by fd, and every file operation resolved beneath it.

Threat model. Anyone may write inside the root while we work (swap a directory for a symlink,
plant links to the outside, rename things). Whatever they do, an operation reaches only inodes
beneath the root's directory fd, or fails cleanly. Not covered: a hard link inside the root to an
outside inode, a bind mount inside the root, a directory moved out of the root by someone who can
also write outside it while we are inside it, and the root itself being moved (we keep working on
the directory the fd holds).
"""

from __future__ import annotations

import errno
import functools
import os
import stat as stat_mod
import sys
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any, Concatenate, ParamSpec, TypeVar

from safefs import _sys
from safefs._paths import (
    SPECIAL_NAMES,
    PathArg,
    components,
    join,
    relative_to_root,
    split_parent,
    to_bytes,
)
from safefs.atomic import write_atomic
from safefs.entries import (
    lexists,
    link_entry,
    open_mode_flags,
    rename_noreplace,
    rename_replace,
    rmdir_entry,
    unlink_entry,
)
from safefs.errors import NotRegularFileError, PathEscapeError, with_filename
from safefs.resolve_walk import MAX_SYMLINKS, PATH_MAX
from safefs.resolvers import Resolver, make_resolver
from safefs.tree import DirEntry, remove_tree_fd, scan_fd, walk_fd

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_FS_ENCODING = sys.getfilesystemencoding()
_FS_ERRORS = sys.getfilesystemencodeerrors()


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _operation(method: Callable[Concatenate[Root, _P], _R]) -> Callable[Concatenate[Root, _P], _R]:
    """Marks a method that uses the root fd: it runs only on an open Root, and close() from
    another thread waits for it (see Root.close) instead of freeing the fd under it."""

    @functools.wraps(method)
    def run(self: Root, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        # Root._enter and Root._leave, inlined: this wraps every call on the hot path.
        lock = self._lock
        with lock:
            if self._closed:
                raise ValueError("operation on a closed Root")
            self._users += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            with lock:
                self._users -= 1
                fd = self._take_fd_if_idle() if self._closed else -1
            if fd >= 0:
                os.close(fd)

    return run


class _DirectoryPath(Exception):
    """Internal: the path names a directory as a whole (ends in ``/``, ``.`` or ``..``)."""

    def __init__(self, rel: bytes) -> None:
        super().__init__()
        self.rel = rel


def _like(path: Any, name: bytes) -> Any:
    """``name`` in the type the caller used: bytes for bytes paths, str otherwise."""
    return name if isinstance(os.fspath(path), bytes) else os.fsdecode(name)


class Root:
    """A workspace directory, held by fd; every path is resolved beneath it.

    ``resolver``: ``"auto"`` (openat2 where the kernel allows it, else the walk), ``"openat2"``
    or ``"walk"``. ``symlinks``: ``"beneath"`` (follow links that stay inside; any step above the
    root is a :class:`PathEscapeError`), ``"none"`` (refuse every symlink) or ``"in_root"``
    (chroot-like: ``..`` stops at the root, absolute links start from it).
    """

    def __init__(self, path: PathArg, *, resolver: str = "auto", symlinks: str = "beneath",
                 _use_o_path: bool = True) -> None:
        raw = to_bytes(path)
        use_o_path = _use_o_path and _sys.HAVE_O_PATH
        flags = (_sys.O_PATH if use_o_path else os.O_RDONLY) | _sys.O_DIRECTORY
        # The root's own path is trusted: it is the one path we let the kernel follow.
        try:
            fd = _sys.openat(_sys.AT_FDCWD, raw, flags, follow=True)
        except OSError as exc:
            raise with_filename(exc, path) from None
        try:
            self._resolver: Resolver = make_resolver(resolver, symlinks, fd,
                                                     use_o_path=use_o_path)
        except BaseException:
            os.close(fd)
            raise
        absolute = os.path.abspath(raw)
        real = os.path.realpath(raw)
        self._init(fd, self._resolver, absolute, (absolute, real) if real != absolute
                   else (absolute,))

    def _init(self, fd: int, resolver: Resolver, display: bytes,
              anchors: tuple[bytes, ...]) -> None:
        self._fd = fd
        self._resolver = resolver
        self._display = display
        self._anchors = anchors
        self._lock = threading.Lock()
        self._closed = False
        self._users = 0  # operations in flight; the fd is closed only when none is left

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def resolver(self) -> str:
        """``"openat2"`` or ``"walk"``: the backend in use."""
        return self._resolver.name

    @property
    def symlinks(self) -> str:
        return self._resolver.mode

    @property
    def path(self) -> str:
        """The root's absolute host path as it was opened (for the program, not for a model)."""
        return os.fsdecode(self._display)

    @property
    def closed(self) -> bool:
        return self._closed

    def fileno(self) -> int:
        self._check_open()
        return self._fd

    def close(self) -> None:
        """Close the root. Operations already running in other threads finish first: the fd is
        released when the last one returns, so its number cannot be reused under them."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            fd = self._take_fd_if_idle()
        if fd >= 0:
            os.close(fd)

    def _take_fd_if_idle(self) -> int:
        if self._users or self._fd < 0:
            return -1
        fd, self._fd = self._fd, -1
        return fd

    def __enter__(self) -> Root:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"resolver={self.resolver!r}"
        return f"<safefs.Root {self.path!r} {state} symlinks={self.symlinks!r}>"

    # -- internals -------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("operation on a closed Root")

    def _rel(self, path: PathArg) -> bytes:
        # The common case (a relative str) without the general machinery: this is a hot path.
        data = path.encode(_FS_ENCODING, _FS_ERRORS) if type(path) is str else to_bytes(path)
        if b"\0" in data:
            raise ValueError("embedded null byte in path")
        if len(data) >= PATH_MAX:  # refused whole, as the kernel does, whatever the operation
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), path)
        if data and data[0] != 0x2F:  # not absolute
            return data
        try:
            return relative_to_root(data, self._anchors)
        except OSError as exc:
            raise with_filename(exc, path) from None

    def _open(self, rel: bytes, flags: int, mode: int = 0o666, *, follow: bool = True) -> int:
        return self._resolver.open(self._fd, rel, flags, mode, follow=follow)

    def _open_dir(self, rel: bytes) -> int:
        return self._open(rel, self._resolver.dir_flags)

    def _release(self, fd: int) -> None:
        if fd != self._fd:
            os.close(fd)

    def _parent(self, rel: bytes) -> tuple[int, bytes, bytes, bool]:
        """(parent fd, final name, parent path, trailing slash). Release the fd with _release."""
        parent, name, trailing = split_parent(rel)
        if name in SPECIAL_NAMES:
            # "a/.." names no entry of its own, but where it leads is still judged: a path
            # climbing out of the root is reported as an escape, not as EEXIST or EINVAL.
            os.close(self._open_dir(rel))
        fd = self._fd if parent == b"." else self._open_dir(parent)
        return fd, name, parent, trailing

    def _refuse_create_with_slash(self, rel: bytes, flags: int) -> None:
        """Creating ``name/`` as Linux open(O_CREAT) does: the parent is resolved (an escape is
        still an escape), then EISDIR without looking at the name itself; ``.`` and ``..`` are
        resolved in full and, with O_EXCL, found to exist."""
        parent, name, trailing = split_parent(rel)
        if name in SPECIAL_NAMES:
            os.close(self._open_dir(rel))
            code = errno.EEXIST if flags & os.O_EXCL else errno.EISDIR
            raise OSError(code, os.strerror(code))
        if trailing:
            if parent != b".":
                os.close(self._open_dir(parent))
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))

    def _link_rel(self, parent: bytes, target: bytes) -> bytes:
        """Where a symlink found in directory ``parent`` leads, as a root-relative path."""
        if self._resolver.mode == "none":
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        if target.startswith(b"/"):
            if self._resolver.mode != "in_root":
                raise PathEscapeError()
            return target.lstrip(b"/") or b"."
        return join(parent, target)

    def _entry(self, rel: bytes, *, follow: bool,
               parents: bool = False) -> tuple[int, bytes, os.stat_result | None]:
        """The directory fd and name of the entry ``rel`` designates, plus its lstat (None when
        it does not exist). With ``follow``, trailing symlinks are chased (each target judged by
        the resolver like any path), so the entry returned is never a symlink.

        Raises _DirectoryPath when the path (or a link's target) ends in ``/``, ``.`` or ``..``:
        such a path names a directory as a whole and is resolved with the resolver instead."""
        for _ in range(MAX_SYMLINKS + 1):
            try:
                fd, name, parent, _trailing = self._parent(rel)
            except FileNotFoundError:
                if not parents:
                    raise
                self._mkdir_parents(split_parent(rel)[0])
                fd, name, parent, _trailing = self._parent(rel)
            if name in SPECIAL_NAMES or _trailing:
                self._release(fd)
                raise _DirectoryPath(rel)
            try:
                st = _sys.fstatat(fd, name)
            except FileNotFoundError:
                return fd, name, None
            except BaseException:
                self._release(fd)
                raise
            if not (follow and stat_mod.S_ISLNK(st.st_mode)):
                return fd, name, st
            try:
                target = _sys.readlinkat(fd, name)
            except OSError as exc:
                if exc.errno != errno.EINVAL:  # EINVAL: no longer a link; look again
                    raise
                continue
            finally:
                self._release(fd)
            rel = self._link_rel(parent, target)
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))

    def _mkdir_parents(self, rel: bytes) -> None:
        if rel in (b"", b"."):
            return
        try:
            try:
                self._mkdir(rel, 0o777, exist_ok=True)
            except FileNotFoundError:
                self._mkdir_parents(split_parent(rel)[0])
                self._mkdir(rel, 0o777, exist_ok=True)
        except FileExistsError:
            pass  # as os.makedirs: the next step down reports what is wrong with this one

    def _mkdir(self, rel: bytes, mode: int, *, exist_ok: bool) -> None:
        fd, name, _parent, _trailing = self._parent(rel)
        try:
            if name in SPECIAL_NAMES:
                raise OSError(errno.EEXIST, os.strerror(errno.EEXIST))
            _sys.mkdirat(fd, name, mode)
        except FileExistsError:
            if not exist_ok or not self._is_dir_or_escape(rel):
                raise
        finally:
            self._release(fd)

    def _is_dir_or_escape(self, rel: bytes) -> bool:
        """Whether ``rel`` is a directory; an escape is still reported as one."""
        try:
            return stat_mod.S_ISDIR(self._stat_rel(rel, follow=True).st_mode)
        except PathEscapeError:
            raise
        except OSError:
            return False

    def _stat_rel(self, rel: bytes, *, follow: bool) -> os.stat_result:
        if self._resolver.use_o_path:
            fd = self._open(rel, _sys.O_PATH, follow=follow)
            try:
                return os.fstat(fd)
            finally:
                os.close(fd)
        # Without O_PATH (macOS) opening could block or need read access: stat via the parent.
        try:
            fd, _name, st = self._entry(rel, follow=follow)
        except _DirectoryPath as directory:  # ends in "/", "." or "..": a directory as a whole
            fd = self._open_dir(directory.rel)
            try:
                return os.fstat(fd)
            finally:
                os.close(fd)
        self._release(fd)
        if st is None:
            raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
        return st

    def _open_regular(self, rel: bytes, flags: int, mode: int = 0o666
                      ) -> tuple[int, os.stat_result]:
        if flags & os.O_CREAT:
            self._refuse_create_with_slash(rel, flags)
        # O_NONBLOCK: a FIFO must not hang the open; fstat then refuses anything not regular.
        fd = self._resolver.open(self._fd, rel, flags | _O_NONBLOCK, mode, follow=True)
        try:
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode):
                if stat_mod.S_ISDIR(st.st_mode):
                    raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))
                raise NotRegularFileError()
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    # -- reading ---------------------------------------------------------------------------------

    @_operation
    def open(self, path: PathArg, mode: str = "r", *, encoding: str | None = None,
             errors: str | None = None, newline: str | None = None) -> IO[Any]:
        """Open a regular file beneath the root; returns an ordinary file object."""
        flags = open_mode_flags(mode)
        rel = self._rel(path)
        try:
            fd, _st = self._open_regular(rel, flags)
        except OSError as exc:
            raise with_filename(exc, path) from None
        try:
            os.set_blocking(fd, True)
            if "b" in mode:
                return open(fd, mode, closefd=True)
            return open(fd, mode, encoding=encoding or "utf-8", errors=errors,
                           newline=newline, closefd=True)
        except BaseException:
            os.close(fd)
            raise

    @_operation
    def read_bytes(self, path: PathArg) -> bytes:
        rel = self._rel(path)
        try:
            fd, st = self._open_regular(rel, os.O_RDONLY)
        except OSError as exc:
            raise with_filename(exc, path) from None
        try:
            size = st.st_size
            data = os.read(fd, size + 1)  # one byte more notices a file that grew meanwhile
            if len(data) == size:
                return data  # exactly the size fstat saw: end of file
            chunks = [data]
            while chunks[-1]:
                chunks.append(os.read(fd, max(size, 65536)))
            return b"".join(chunks)
        finally:
            os.close(fd)

    def read_text(self, path: PathArg, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self.read_bytes(path).decode(encoding, errors)

    # -- writing ---------------------------------------------------------------------------------

    @_operation
    def write_bytes(self, path: PathArg, data: bytes | bytearray | memoryview, *,
                    parents: bool = False, durable: bool = False) -> int:
        """Atomically replace (or create) the file; returns the number of bytes written.

        A final symlink that resolves beneath the root is written through: its target is
        replaced. ``parents`` creates missing directories; ``durable`` fsyncs file and directory.
        """
        rel = self._rel(path)
        try:
            self._refuse_create_with_slash(rel, os.O_CREAT)
            try:
                fd, name, st = self._entry(rel, follow=True, parents=parents)
            except _DirectoryPath as directory:
                # A link whose target ends in "/", "." or "..": refused as open(O_CREAT) would.
                self._refuse_create_with_slash(directory.rel, os.O_CREAT)
                raise OSError(errno.EISDIR, os.strerror(errno.EISDIR)) from None
            try:
                perm = None
                if st is not None:
                    if stat_mod.S_ISDIR(st.st_mode):
                        raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))
                    if not stat_mod.S_ISREG(st.st_mode):
                        raise NotRegularFileError()
                    perm = stat_mod.S_IMODE(st.st_mode)
                write_atomic(fd, name, data, perm, durable)
            finally:
                self._release(fd)
        except OSError as exc:
            raise with_filename(exc, path) from None
        return memoryview(data).nbytes

    def write_text(self, path: PathArg, data: str, encoding: str = "utf-8",
                   errors: str = "strict", *, parents: bool = False,
                   durable: bool = False) -> int:
        self.write_bytes(path, data.encode(encoding, errors), parents=parents, durable=durable)
        return len(data)

    @_operation
    def touch(self, path: PathArg, *, exist_ok: bool = True) -> None:
        """Create an empty file (without truncating an existing one)."""
        flags = os.O_WRONLY | os.O_CREAT | (0 if exist_ok else os.O_EXCL)
        rel = self._rel(path)
        try:
            os.close(self._open_regular(rel, flags)[0])
        except OSError as exc:
            raise with_filename(exc, path) from None

    # -- directories -----------------------------------------------------------------------------

    @_operation
    def mkdir(self, path: PathArg, mode: int = 0o777, *, parents: bool = False,
              exist_ok: bool = False) -> None:
        rel = self._rel(path)
        try:
            if parents:
                try:
                    self._mkdir(rel, mode, exist_ok=exist_ok)
                except FileNotFoundError:
                    self._mkdir_parents(split_parent(rel)[0])
                    self._mkdir(rel, mode, exist_ok=exist_ok)
            else:
                self._mkdir(rel, mode, exist_ok=exist_ok)
        except OSError as exc:
            raise with_filename(exc, path) from None

    def listdir(self, path: PathArg = ".") -> list[Any]:
        """Names in the directory (str, or bytes for a bytes path), like ``os.listdir``."""
        return [entry.name for entry in self.scandir(path)]

    def iterdir(self, path: PathArg = ".") -> Iterator[Any]:
        """Root-relative paths of the directory's entries, like ``pathlib.Path.iterdir``."""
        return (entry.path for entry in self.scandir(path))

    @_operation
    def scandir(self, path: PathArg = ".") -> Iterator[DirEntry]:
        """The directory's entries; type checks never follow a link out of the root."""
        rel = self._rel(path)
        try:
            fd = self._open(rel, os.O_RDONLY | _sys.O_DIRECTORY)
        except OSError as exc:
            raise with_filename(exc, path) from None
        try:
            entries = scan_fd(fd, self, path)
        finally:
            os.close(fd)
        return iter(entries)

    @_operation
    def walk(self, top: PathArg = ".", *, topdown: bool = True
             ) -> Iterator[tuple[Any, list[Any], list[Any]]]:
        """Like ``os.walk`` through held fds; symlinks are listed with the files, never entered."""
        rel = self._rel(top)
        try:
            fd = self._open(rel, os.O_RDONLY | _sys.O_DIRECTORY)
        except OSError as exc:
            raise with_filename(exc, top) from None
        return walk_fd(fd, os.fspath(top), topdown)

    @_operation
    def rmtree(self, path: PathArg) -> None:
        """Remove a directory tree through fds; never follows a symlink, even if swapped in."""
        rel = self._rel(path)
        try:
            fd, name, _parent, _trailing = self._parent(rel)
            try:
                if name in SPECIAL_NAMES:
                    raise OSError(errno.EINVAL, "cannot remove the root or a '.'/'..' path")
                st = _sys.fstatat(fd, name)
                if stat_mod.S_ISLNK(st.st_mode):
                    raise OSError(errno.ENOTDIR, "cannot call rmtree on a symbolic link")
                if not stat_mod.S_ISDIR(st.st_mode):
                    raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
                remove_tree_fd(fd, name, st)
            finally:
                self._release(fd)
        except OSError as exc:
            raise with_filename(exc, path) from None

    @_operation
    def opendir(self, path: PathArg) -> Root:
        """A new ``Root`` for a subdirectory (same resolver and symlink mode)."""
        rel = self._rel(path)
        try:
            fd = self._open_dir(rel)
            try:
                canonical = self._canonical(fd)
            except BaseException:
                os.close(fd)
                raise
        except OSError as exc:
            raise with_filename(exc, path) from None
        sub = object.__new__(Root)
        display = os.path.join(self._display, canonical) if canonical != b"." else self._display
        anchors = tuple(dict.fromkeys(
            os.path.join(a, canonical) if canonical != b"." else a for a in self._anchors))
        sub._init(fd, self._resolver, display, anchors)
        return sub

    # -- metadata --------------------------------------------------------------------------------

    @_operation
    def stat(self, path: PathArg, *, follow_symlinks: bool = True) -> os.stat_result:
        rel = self._rel(path)
        try:
            return self._stat_rel(rel, follow=follow_symlinks)
        except OSError as exc:
            raise with_filename(exc, path) from None

    def lstat(self, path: PathArg) -> os.stat_result:
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
        mode = self._kind(path, True)
        return mode is not None and stat_mod.S_ISREG(mode)

    def is_dir(self, path: PathArg) -> bool:
        mode = self._kind(path, True)
        return mode is not None and stat_mod.S_ISDIR(mode)

    def is_symlink(self, path: PathArg) -> bool:
        mode = self._kind(path, False)
        return mode is not None and stat_mod.S_ISLNK(mode)

    @_operation
    def chmod(self, path: PathArg, mode: int, *, follow_symlinks: bool = True) -> None:
        rel = self._rel(path)
        try:
            flags = _sys.O_PATH if self._resolver.use_o_path else os.O_RDONLY | _O_NONBLOCK
            try:
                fd = self._open(rel, flags, follow=follow_symlinks)
            except OSError as exc:
                # Without O_PATH a link cannot be opened itself (ELOOP); Linux refuses to chmod
                # a symlink anyway, so answer as it does on every backend.
                if (exc.errno == errno.ELOOP and not follow_symlinks
                        and stat_mod.S_ISLNK(self._stat_rel(rel, follow=False).st_mode)):
                    raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP)) from None
                raise
            try:
                _sys.fchmod_via_fd(fd, mode)
            finally:
                os.close(fd)
        except OSError as exc:
            raise with_filename(exc, path) from None

    @_operation
    def readlink(self, path: PathArg) -> Any:
        rel = self._rel(path)
        try:
            if split_parent(rel)[2]:
                # The slash makes the lookup follow the link: whatever it reaches is not a link.
                os.close(self._open_dir(rel))
                raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
            fd, name, _parent, _trailing = self._parent(rel)
            try:
                if name in SPECIAL_NAMES:
                    raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
                return _like(path, _sys.readlinkat(fd, name))
            finally:
                self._release(fd)
        except OSError as exc:
            raise with_filename(exc, path) from None

    @_operation
    def resolve(self, path: PathArg = ".") -> Any:
        """The canonical root-relative path that ``path`` designates (``"."`` for the root).

        Symlinks are followed as an operation would follow them; the final component need not
        exist. Use it to show a person what an operation will really touch.
        """
        rel = self._rel(path)
        try:
            _parent, name, trailing = split_parent(rel)
            if name in SPECIAL_NAMES or trailing:
                fd = self._open_dir(rel)
                try:
                    result = self._canonical(fd)
                finally:
                    os.close(fd)
            else:
                try:
                    fd, name, _st = self._entry(rel, follow=True)
                except _DirectoryPath as directory:
                    return _like(path, self.resolve(directory.rel))
                try:
                    result = join(self._canonical(fd), name)
                finally:
                    self._release(fd)
        except OSError as exc:
            raise with_filename(exc, path) from None
        return _like(path, result)

    def _canonical(self, fd: int) -> bytes:
        """Path of directory ``fd`` relative to the root, found by climbing ``..`` through fds
        and matching inode numbers (portable: needs no /proc)."""
        root = os.fstat(self._fd)
        here = os.fstat(fd)
        names: list[bytes] = []
        cur = os.dup(fd)
        try:
            while (here.st_dev, here.st_ino) != (root.st_dev, root.st_ino):
                up = _sys.openat(cur, b"..", os.O_RDONLY | _sys.O_DIRECTORY)
                os.close(cur)
                cur = up
                above = os.fstat(cur)
                if (above.st_dev, above.st_ino) == (here.st_dev, here.st_ino):
                    raise PathEscapeError()  # reached "/" without meeting the root
                for entry in os.scandir(cur):
                    if entry.inode() == here.st_ino and entry.is_dir(follow_symlinks=False):
                        names.append(os.fsencode(entry.name))
                        break
                else:
                    raise OSError(errno.ENOENT, "directory no longer linked beneath the root")
                here = above
        finally:
            os.close(cur)
        return b"/".join(reversed(names)) or b"."

    # -- changing entries ------------------------------------------------------------------------

    def remove(self, path: PathArg) -> None:
        """Remove a file or symlink (the link itself, never its target)."""
        self._entry_op(path, unlink_entry)

    unlink = remove

    def rmdir(self, path: PathArg) -> None:
        self._entry_op(path, rmdir_entry)

    @_operation
    def _entry_op(self, path: PathArg, op: Any) -> None:
        rel = self._rel(path)
        try:
            fd, name, _parent, trailing = self._parent(rel)
            try:
                if name in SPECIAL_NAMES:
                    # A final "." or ".." is never removed; answer as Linux does.
                    code = (errno.EISDIR if op is unlink_entry
                            else errno.EINVAL if name == b"." else errno.ENOTEMPTY)
                    raise OSError(code, os.strerror(code))
                op(fd, name, trailing)
            finally:
                self._release(fd)
        except OSError as exc:
            raise with_filename(exc, path) from None

    def rename(self, src: PathArg, dst: PathArg, *, replace: bool = True) -> None:
        """Rename ``src`` to ``dst`` (links are moved, not followed). ``replace=False`` is an
        atomic no-clobber rename: FileExistsError if ``dst`` exists."""
        self._two_path_op(src, dst, rename_replace if replace else rename_noreplace)

    def replace(self, src: PathArg, dst: PathArg) -> None:
        self.rename(src, dst, replace=True)

    def link(self, src: PathArg, dst: PathArg) -> None:
        """Hard link ``dst`` to ``src`` (a symlink ``src`` is linked itself, not followed)."""
        self._two_path_op(src, dst, link_entry)

    @_operation
    def _two_path_op(self, src: PathArg, dst: PathArg, op: Any) -> None:
        srel = self._rel(src)
        drel = self._rel(dst)
        try:
            sfd, sname, _sp, strailing = self._parent(srel)
            try:
                # linkat follows a source ending in "/", "." or "..": a directory, which cannot
                # be linked (EPERM), though the destination is judged first, as Linux does.
                src_is_dir = op is link_entry and (strailing or sname in SPECIAL_NAMES)
                if src_is_dir and strailing:
                    os.close(self._open_dir(srel))  # ENOENT, ENOTDIR, ELOOP or an escape
                dfd, dname, _dp, dtrailing = self._parent(drel)
                try:
                    if op is link_entry and (src_is_dir or dtrailing or dname in SPECIAL_NAMES):
                        if dname in SPECIAL_NAMES or lexists(dfd, dname):
                            code = errno.EEXIST
                        else:  # ENOENT: a new name cannot end in "/"; EPERM: a directory
                            code = errno.ENOENT if dtrailing else errno.EPERM
                        raise OSError(code, os.strerror(code))
                    if sname in SPECIAL_NAMES or dname in SPECIAL_NAMES:
                        # "." and ".." are never moved: the error Linux gives.
                        raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
                    # A trailing slash on either name is allowed only for a directory source.
                    if (strailing or dtrailing) and not stat_mod.S_ISDIR(_sys.fstatat(sfd, sname).st_mode):
                        raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
                    op(sfd, sname, dfd, dname)
                finally:
                    self._release(dfd)
            finally:
                self._release(sfd)
        except OSError as exc:
            raise with_filename(exc, src, dst) from None

    @_operation
    def symlink(self, target: PathArg, path: PathArg) -> None:
        """Create symlink ``path`` -> ``target``. Absolute targets, and targets whose ``..``
        climbs above the root (judged from the link's own directory), are refused."""
        raw_target = to_bytes(target)
        rel = self._rel(path)
        try:
            if not raw_target:
                raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
            fd, name, _parent, trailing = self._parent(rel)
            try:
                if name in SPECIAL_NAMES:
                    raise OSError(errno.EEXIST, os.strerror(errno.EEXIST))
                if trailing:
                    # As symlinkat: an existing name is EEXIST, a new one cannot be "name/".
                    code = errno.EEXIST if lexists(fd, name) else errno.ENOENT
                    raise OSError(code, os.strerror(code))
                if raw_target.startswith(b"/"):
                    raise PathEscapeError()
                depth = len(components(self._canonical(fd)))
                for part in raw_target.split(b"/"):
                    if part == b"..":
                        depth -= 1
                        if depth < 0:
                            raise PathEscapeError()
                    elif part not in (b"", b"."):
                        depth += 1
                _sys.symlinkat(raw_target, fd, name)
            finally:
                self._release(fd)
        except OSError as exc:
            raise with_filename(exc, path, target) from None


__all__ = ["DirEntry", "Root"]
