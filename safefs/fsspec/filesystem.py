"""``SafeFileSystem``: an fsspec filesystem whose every path is resolved beneath one directory
by a :class:`safefs.Root`.

Paths are spelled from the root, with or without a leading ``/`` (``"/data/x.csv"`` and
``"data/x.csv"`` are the same file), as a chroot would see them; names fsspec gets back start
with ``/``. ``..``, absolute symlinks and symlinks that lead out are judged by the Root and
refused (``PathEscapeError``, a ``PermissionError``), however the tree changes meanwhile.
"""

from __future__ import annotations

import datetime
import os
import shutil
import stat
from typing import Any, ClassVar

from fsspec.spec import AbstractFileSystem
from fsspec.utils import read_block

from safefs import PathEscapeError, Root

from .files import AtomicWriteFile

LOCAL_PROTOCOLS = (None, "file", "local")


class SafeFileSystem(AbstractFileSystem):  # type: ignore[misc]  # fsspec is untyped
    """fsspec filesystem confined to ``root`` (a directory path, or an open :class:`safefs.Root`,
    which stays the caller's to close).

    As a URL: ``safefs://data/x.csv::file:///srv/ws`` (fsspec chains from the outside in: the
    path inside the root first, then the directory it lives in), or ``safefs://data/x.csv`` with
    ``root="/srv/ws"`` given as a storage option. ``auto_mkdir`` as in fsspec's local
    filesystem: writes create missing parent directories.
    """

    protocol: ClassVar[tuple[str, ...]] = ("safefs",)
    root_marker = "/"
    cachable = False  # each instance holds a directory fd of its own

    def __init__(
        self,
        root: str | os.PathLike[str] | Root | None = None,
        *,
        auto_mkdir: bool = False,
        fo: str | None = None,
        target_protocol: str | None = None,
        target_options: dict[str, Any] | None = None,
        **storage_options: Any,
    ) -> None:
        super().__init__(**storage_options)
        if root is None:
            root = fo  # chained: safefs://PATH::file:///ROOT hands the root over as ``fo``
        if root is None:
            raise ValueError("SafeFileSystem needs a root directory: root=... or safefs://PATH::ROOT")
        if target_protocol not in LOCAL_PROTOCOLS or target_options:
            raise ValueError(f"the root of a SafeFileSystem is a local directory, not {target_protocol}://")
        chained = root is fo
        if isinstance(root, Root):
            self.root, self._owns_root = root, False
        else:
            try:
                self.root, self._owns_root = Root(root), True
            except (NotADirectoryError, FileNotFoundError) as exc:
                if isinstance(exc, FileNotFoundError) and not chained:
                    raise
                raise NotADirectoryError(
                    f"SafeFileSystem root {os.fspath(root)!r} is not a directory "
                    "(a chained URL reads safefs://PATH::ROOT: the path first, then the root)"
                ) from None
        self.auto_mkdir = auto_mkdir

    def close(self) -> None:
        """Close the root's fd (when this filesystem opened it)."""
        if self._owns_root:
            self.root.close()

    # -- paths ------------------------------------------------------------------------------------

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        text = os.fspath(path) if not isinstance(path, str) else path
        for protocol in cls.protocol:
            for prefix in (protocol + "://", protocol + "::"):
                if text.startswith(prefix):
                    text = text[len(prefix) :]
        return "/" + text.strip("/") if text.strip("/") else "/"

    @staticmethod
    def _rel(path: str) -> str:
        """The Root's spelling of a stripped path: relative, ``.`` for the root."""
        return path.lstrip("/") or "."

    def _path(self, path: Any) -> str:
        return str(self._rel(self._strip_protocol(path)))

    # -- metadata ---------------------------------------------------------------------------------

    def info(self, path: Any, **kwargs: Any) -> dict[str, Any]:
        name = self._strip_protocol(path)
        return self._info(name, self._rel(name))

    def _info(self, name: str, rel: str) -> dict[str, Any]:
        """As LocalFileSystem's ``info`` of a path: a link is described by its target (a
        dangling one is FileNotFoundError); one that leads out is described as the link itself."""
        st = self.root.lstat(rel)
        link = stat.S_ISLNK(st.st_mode)
        destination = None
        if link:
            destination = self.root.readlink(rel)
            try:
                st = self.root.stat(rel)
            except PathEscapeError:
                pass  # described as the link itself
            except NotADirectoryError:
                raise FileNotFoundError(2, "No such file or directory", name) from None
        return self._describe(name, st, st.st_size, link, destination)

    def _entry_info(self, name: str, rel: str) -> dict[str, Any]:
        """As LocalFileSystem's ``ls`` describes an entry: typed without following a link (a
        link to a directory is ``other``, so walk, find and glob never enter it), its size the
        target's (0 when dangling or leading out)."""
        st = self.root.lstat(rel)
        link = stat.S_ISLNK(st.st_mode)
        size, destination = st.st_size, None
        if link:
            destination = self.root.readlink(rel)
            try:
                size = self.root.stat(rel).st_size
            except (OSError, PathEscapeError):
                size = 0
        return self._describe(name, st, size, link, destination)

    @staticmethod
    def _describe(name: str, st: os.stat_result, size: int, link: bool, destination: Any) -> dict[str, Any]:
        kind = "directory" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"
        out: dict[str, Any] = {
            "name": name,
            "size": size,
            "type": kind,
            "created": st.st_ctime,
            "islink": link,
            "mode": st.st_mode,
            "uid": st.st_uid,
            "gid": st.st_gid,
            "mtime": st.st_mtime,
            "ino": st.st_ino,
            "nlink": st.st_nlink,
        }
        if link:
            out["destination"] = destination
        return out

    def ls(self, path: Any, detail: bool = False, **kwargs: Any) -> list[Any]:
        name = self._strip_protocol(path)
        rel = self._rel(name)
        top = self._info(name, rel)
        if top["type"] != "directory":
            return [top] if detail else [name]
        prefix = "" if name == "/" else name
        found: list[Any] = []
        for entry in self.root.scandir(rel):
            child = f"{prefix}/{entry.name}"
            if not detail:
                found.append(child)
                continue
            try:
                found.append(self._entry_info(child, self._rel(child)))
            except FileNotFoundError:
                pass  # removed meanwhile
        return found

    def exists(self, path: Any, **kwargs: Any) -> bool:
        """As LocalFileSystem: whether ``info`` answers (a dangling link does not exist)."""
        try:
            self.info(path)
        except (FileNotFoundError, NotADirectoryError):
            return False
        return True

    def lexists(self, path: Any, **kwargs: Any) -> bool:
        """Whether the entry exists, a link counted whether it leads anywhere or not."""
        try:
            self.root.lstat(self._path(path))
        except (FileNotFoundError, NotADirectoryError):
            return False
        return True

    def isdir(self, path: Any) -> bool:
        return self.root.is_dir(self._path(path))

    def isfile(self, path: Any) -> bool:
        return self.root.is_file(self._path(path))

    def islink(self, path: Any) -> bool:
        return self.root.is_symlink(self._path(path))

    def created(self, path: Any) -> datetime.datetime:
        """When the file's inode last changed (st_ctime), as fsspec's local filesystem answers
        where there is no birth time."""
        return datetime.datetime.fromtimestamp(self.info(path)["created"], tz=datetime.UTC)

    def modified(self, path: Any) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.info(path)["mtime"], tz=datetime.UTC)

    # -- reading and writing ----------------------------------------------------------------------

    def cat_file(self, path: Any, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        rel = self._path(path)
        if start is None and end is None:
            return self.root.read_bytes(rel)
        with self.root.open(rel, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            first = 0 if start is None else start if start >= 0 else max(0, size + start)
            last = size if end is None else end if end >= 0 else size + end
            f.seek(first)
            data: bytes = f.read(max(0, last - first))
            return data

    def pipe_file(self, path: Any, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        """Write ``value`` atomically; ``mode="create"``: FileExistsError if the file exists."""
        rel = self._path(path)
        if self.auto_mkdir:
            self._make_parent(rel)
        if mode == "create":
            with self._open(path, "xb") as f:
                f.write(value)
        else:
            self.root.write_bytes(rel, value)

    def _open(
        self,
        path: Any,
        mode: str = "rb",
        block_size: int | None = None,
        autocommit: bool = True,
        cache_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """``rb``: the file, read from a descriptor resolved once; ``wb``/``xb``: an atomic
        replace on close (or on commit in a transaction); ``ab``: appended in place."""
        name = self._strip_protocol(path)
        rel = self._rel(name)
        if mode in ("rb", "r+b", "rb+"):
            return self.root.open(rel, mode)
        if mode not in ("wb", "xb", "ab"):
            raise ValueError(f"unsupported mode {mode!r}: use rb, r+b, wb, xb or ab")
        if self.auto_mkdir:
            self._make_parent(rel)
        if mode == "ab":
            return self.root.open(rel, "ab")
        if mode == "xb":
            if self.root.exists(rel, follow_symlinks=False):
                raise FileExistsError(17, "File exists", name)
        elif self.root.is_dir(rel):
            raise IsADirectoryError(21, "Is a directory", name)
        elif self.root.is_symlink(rel):
            # Written through the link, as LocalFileSystem (and pipe_file) write: the file it
            # leads to is replaced, the link stays. A link that leads out is refused.
            rel = self.root.resolve(rel)
        return AtomicWriteFile(self.root, rel, exclusive=mode == "xb", autocommit=autocommit, path=name)

    def read_block(self, fn: Any, offset: int, length: int, delimiter: bytes | None = None) -> bytes:
        """``length`` bytes from ``offset`` (both moved to the next ``delimiter`` when given), as
        fsspec's ``read_block``."""
        with self.root.open(self._path(fn), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if length is None:
                length = size
            if size and offset + length > size:
                length = size - offset
            block: bytes = read_block(f, offset, length, delimiter)
            return block

    def touch(self, path: Any, truncate: bool = True, **kwargs: Any) -> None:
        rel = self._path(path)
        if self.auto_mkdir:
            self._make_parent(rel)
        if truncate:
            self.root.write_bytes(rel, b"")
        else:
            self.root.touch(rel)

    # -- directories and entries ------------------------------------------------------------------

    def _make_parent(self, rel: str) -> None:
        parent = rel.rpartition("/")[0]
        if parent:
            self.root.mkdir(parent, parents=True, exist_ok=True)

    def mkdir(self, path: Any, create_parents: bool = True, **kwargs: Any) -> None:
        rel = self._path(path)
        if self.exists(path):
            raise FileExistsError(self._strip_protocol(path))
        self.root.mkdir(rel, parents=create_parents)

    def makedirs(self, path: Any, exist_ok: bool = False) -> None:
        self.root.mkdir(self._path(path), parents=True, exist_ok=exist_ok)

    def rmdir(self, path: Any) -> None:
        self.root.rmdir(self._path(path))

    def rm_file(self, path: Any) -> None:
        self.root.remove(self._path(path))

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        paths = path if isinstance(path, list) else [path]
        for one in paths:
            rel = self._path(one)
            if rel == ".":
                raise ValueError("cannot remove the root of a SafeFileSystem")
            if self.root.is_dir(rel) and not self.root.is_symlink(rel):
                if not recursive:
                    raise ValueError("Cannot delete directory, set recursive=True")
                self.root.rmtree(rel)
            else:
                self.root.remove(rel)

    def cp_file(self, path1: Any, path2: Any, **kwargs: Any) -> None:
        """Copy a file (atomically, through the Root on both sides), or make the directory."""
        src, dst = self._path(path1), self._path(path2)
        if self.auto_mkdir:
            self._make_parent(dst)
        if self.root.is_file(src):
            if self._same_file(src, dst):
                raise shutil.SameFileError(
                    f"{self._strip_protocol(path1)!r} and {self._strip_protocol(path2)!r} are the same file"
                )
            with self.root.open(src, "rb") as source, self._open(path2, "wb") as target:
                while chunk := source.read(1 << 20):
                    target.write(chunk)
        elif self.root.is_dir(src):
            self.root.mkdir(dst, parents=True, exist_ok=True)
        else:
            raise FileNotFoundError(self._strip_protocol(path1))

    def _same_file(self, a: str, b: str) -> bool:
        try:
            one, two = self.root.stat(a), self.root.stat(b)
        except (OSError, PathEscapeError):
            return False
        return (one.st_dev, one.st_ino) == (two.st_dev, two.st_ino)

    def mv(
        self, path1: Any, path2: Any, recursive: bool = True, maxdepth: int | None = None, **kwargs: Any
    ) -> None:
        """Rename within the root (a directory moves whole; a moved symlink must still lead
        beneath the root from its new place)."""
        src, dst = self._path(path1), self._path(path2)
        if self.auto_mkdir:
            self._make_parent(dst)
        if self.root.is_dir(dst) and src != dst and not self._same_file(src, dst):
            # Into an existing directory, as shutil.move (LocalFileSystem's mv) moves; never over
            # an existing entry of that name (a dangling link there is replaced, as shutil does).
            inside = f"{dst.rstrip('/')}/{src.rpartition('/')[2]}" if dst != "." else src.rpartition("/")[2]
            if self.exists(inside):  # followed, as shutil.move asks os.path.exists
                raise shutil.Error(f"Destination path '/{inside}' already exists")
            self.root.rename(src, inside)
            return
        if (
            self.root.is_dir(src)
            and not self.root.is_symlink(src)
            and self.root.exists(dst, follow_symlinks=False)
            and not self._same_file(src, dst)
        ):
            # shutil.move's copytree fallback when rename fails onto a file: FileExistsError
            raise FileExistsError(17, "File exists", self._strip_protocol(path2))
        self.root.rename(src, dst)

    def get_file(
        self, rpath: Any, lpath: Any, callback: Any = None, outfile: Any = None, **kwargs: Any
    ) -> None:
        """Copy a file out of the root to the local ``lpath`` (which is the caller's to choose)."""
        rel = self._path(rpath)
        if self.root.is_dir(rel):
            os.makedirs(lpath, exist_ok=True)
            return
        with self.root.open(rel, "rb") as source:
            if outfile is not None:
                _copy(source, outfile)
                return
            local = os.fspath(lpath)
            if os.path.dirname(local):
                os.makedirs(os.path.dirname(local), exist_ok=True)  # as fsspec's own get_file
            with open(local, "wb") as target:
                _copy(source, target)

    def put_file(
        self, lpath: Any, rpath: Any, callback: Any = None, mode: str = "overwrite", **kwargs: Any
    ) -> None:
        """Copy the local file ``lpath`` into the root at ``rpath``, atomically."""
        if os.path.isdir(lpath):
            self.makedirs(rpath, exist_ok=True)
            return
        self._make_parent(self._path(rpath))
        with open(lpath, "rb") as source, self._open(rpath, "xb" if mode == "create" else "wb") as target:
            _copy(source, target)


def _copy(source: Any, target: Any) -> None:
    while chunk := source.read(1 << 20):
        target.write(chunk)
