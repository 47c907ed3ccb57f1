"""``safefs.Path``: a path object beneath a Root, with pathlib's names and semantics.

A ``Path`` is a Root and a POSIX path string: immutable, hashable, ordered among the paths of
its Root. Its pure parts (joining, ``name``, ``parent``, ``with_suffix``, ``match`` ...) are
lexical, as ``PurePosixPath``'s; every call that touches the file system hands the string to
its Root, so each guarantee of the Root holds. It implements the protocols of pathlib-abc's
``ReadablePath`` and ``WritablePath`` (``parser``, ``with_segments``, ``__vfspath__``, ``info``,
``__open_reader__``, ``__open_writer__``, ``iterdir``, ``readlink``, ``mkdir``, ``symlink_to``)
without depending on pathlib-abc; ``safefs.upath`` (the ``upath`` extra) registers ``Path`` as a
virtual subclass of both.

It is not an ``os.PathLike``: ``__fspath__`` would hand a host-independent string to code that
then resolves it again, relative to the process's working directory and outside the Root.
"""

from __future__ import annotations

import io
import locale
import os
import posixpath
import stat as stat_mod
from collections.abc import Callable, Iterator, Sequence
from pathlib import PurePosixPath
from typing import IO, TYPE_CHECKING, Any, overload

from safefs import _copy, _glob
from safefs.errors import PathEscapeError

if TYPE_CHECKING:
    from safefs._root import Root


def _text(segment: object) -> str:
    if isinstance(segment, Path):
        return segment._str
    if isinstance(segment, str):
        return segment
    if isinstance(segment, os.PathLike):
        got = os.fspath(segment)
        if isinstance(got, str):
            return got
    raise TypeError(f"argument should be a str or a safefs.Path, not {type(segment).__name__!r}")


def _encoding(encoding: str | None) -> str:
    chosen = io.text_encoding(encoding)
    return locale.getencoding() if chosen == "locale" else chosen


class PathInfo:
    """pathlib's ``Path.info``: the type of what a path names, asked of its Root once and kept
    (as pathlib keeps it). A path that leads out of the root exists for none of these."""

    __slots__ = ("_lstat", "_path", "_stat")

    def __init__(self, path: Path) -> None:
        self._path = path
        self._stat: os.stat_result | bool | None = False  # False: not asked yet
        self._lstat: os.stat_result | bool | None = False

    def _mode(self, follow: bool) -> int | None:
        cached = self._stat if follow else self._lstat
        if cached is False:
            try:
                cached = self._path._root.stat(self._path._str, follow_symlinks=follow)
            except (OSError, ValueError):
                cached = None
            if follow:
                self._stat = cached
            else:
                self._lstat = cached
        return None if cached is None or cached is True else cached.st_mode

    def exists(self, *, follow_symlinks: bool = True) -> bool:
        return self._mode(follow_symlinks) is not None

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        mode = self._mode(follow_symlinks)
        return mode is not None and stat_mod.S_ISDIR(mode)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        mode = self._mode(follow_symlinks)
        return mode is not None and stat_mod.S_ISREG(mode)

    def is_symlink(self) -> bool:
        mode = self._mode(False)
        return mode is not None and stat_mod.S_ISLNK(mode)

    def __repr__(self) -> str:
        return f"<{type(self._path).__name__}.info>"


class _Parents(Sequence["Path"]):
    __slots__ = ("_path",)

    def __init__(self, path: Path) -> None:
        self._path = path

    def __len__(self) -> int:
        return len(self._path._pure.parents)

    @overload
    def __getitem__(self, index: int) -> Path: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Path, ...]: ...
    def __getitem__(self, index: int | slice) -> Path | tuple[Path, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        pure = self._path._pure.parents[index]
        return self._path.with_segments(str(pure))

    def __repr__(self) -> str:
        return f"<{type(self._path).__name__}.parents>"


class Path:
    """A path beneath a :class:`~safefs.Root`: ``root / "a" / "b"`` or ``root.path_of("a/b")``.

    pathlib's names and semantics (3.14), each call through the Root: a relative path is taken
    from the root; an absolute one must lie under one of the Root's anchors, and ``..`` above
    the root or a link leading out is a :class:`~safefs.PathEscapeError`. Not ``os.PathLike``."""

    __slots__ = ("_hash", "_info", "_pure", "_root", "_str")

    parser = posixpath

    _root: Root
    _pure: PurePosixPath
    _str: str

    def __init__(self, root: Root, *segments: str | Path | os.PathLike[str]) -> None:
        from safefs._root import Root

        if not isinstance(root, Root):
            raise TypeError(f"a safefs.Path needs a safefs.Root, not {type(root).__name__!r}")
        self._root = root
        self._pure = PurePosixPath(*(_text(s) for s in segments))
        self._str = str(self._pure)
        self._hash: int | None = None
        self._info: PathInfo | None = None

    # -- the pure parts ----------------------------------------------------------------------

    def with_segments(self, *segments: str | Path | os.PathLike[str]) -> Path:
        """A new path of the same Root (pathlib-abc's hook: subclasses override it)."""
        return type(self)(self._root, *segments)

    def __vfspath__(self) -> str:
        return self._str

    def __str__(self) -> str:
        return self._str

    def as_posix(self) -> str:
        return self._str

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._str!r})"

    @property
    def root_object(self) -> Root:
        """The Root every call of this path goes through."""
        return self._root

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((id(self._root), self._str))
        return self._hash

    def _same_root(self, other: object) -> bool:
        return isinstance(other, Path) and other._root is self._root

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Path):
            return NotImplemented
        return other._root is self._root and other._str == self._str

    def __lt__(self, other: Path) -> bool:
        if not self._same_root(other):
            return NotImplemented
        return self._pure < other._pure

    def __le__(self, other: Path) -> bool:
        if not self._same_root(other):
            return NotImplemented
        return self._pure <= other._pure

    def __gt__(self, other: Path) -> bool:
        if not self._same_root(other):
            return NotImplemented
        return self._pure > other._pure

    def __ge__(self, other: Path) -> bool:
        if not self._same_root(other):
            return NotImplemented
        return self._pure >= other._pure

    def __reduce__(self) -> Any:
        raise TypeError("cannot pickle a safefs.Path: its Root owns a directory fd")

    def joinpath(self, *segments: str | Path | os.PathLike[str]) -> Path:
        return self.with_segments(self._str, *segments)

    def __truediv__(self, key: str | Path | os.PathLike[str]) -> Path:
        try:
            return self.with_segments(self._str, _text(key))
        except TypeError:
            return NotImplemented

    def __rtruediv__(self, key: str | os.PathLike[str]) -> Path:
        try:
            return self.with_segments(_text(key), self._str)
        except TypeError:
            return NotImplemented

    @property
    def anchor(self) -> str:
        return self._pure.anchor

    @property
    def drive(self) -> str:
        return ""

    @property
    def root(self) -> str:
        return self._pure.root

    @property
    def parts(self) -> tuple[str, ...]:
        return self._pure.parts

    @property
    def name(self) -> str:
        return self._pure.name

    @property
    def stem(self) -> str:
        return posixpath.splitext(self.name)[0]

    @property
    def suffix(self) -> str:
        return posixpath.splitext(self.name)[1]

    @property
    def suffixes(self) -> list[str]:
        found: list[str] = []
        stem, suffix = posixpath.splitext(self.name)
        while suffix:
            found.append(suffix)
            stem, suffix = posixpath.splitext(stem)
        return found[::-1]

    @property
    def parent(self) -> Path:
        parent = self._pure.parent
        return self if parent == self._pure else self.with_segments(str(parent))

    @property
    def parents(self) -> Sequence[Path]:
        return _Parents(self)

    def with_name(self, name: str) -> Path:
        """This path with its last component replaced (3.14's rules: a name of one component)."""
        if not self.name:
            raise ValueError(f"{self!r} has an empty name")
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"Invalid name {name!r}")
        return self.with_segments(str(self._pure.parent), name)

    def with_stem(self, stem: str) -> Path:
        suffix = self.suffix
        if not suffix:
            return self.with_name(stem)
        if not stem:
            raise ValueError(f"{self!r} has a non-empty suffix")
        return self.with_name(stem + suffix)

    def with_suffix(self, suffix: str) -> Path:
        if not isinstance(suffix, str):
            raise TypeError(f"suffix must be str, not {type(suffix).__name__}")
        stem = self.stem
        if not stem:
            raise ValueError(f"{self!r} has an empty name")
        if suffix and (not suffix.startswith(".") or "/" in suffix):
            raise ValueError(f"Invalid suffix {suffix!r}")
        return self.with_name(stem + suffix)

    def is_absolute(self) -> bool:
        return self._pure.is_absolute()

    def relative_to(self, other: str | Path | os.PathLike[str], *, walk_up: bool = False) -> Path:
        base = PurePosixPath(_text(other))
        if walk_up:
            if self._pure.is_absolute() != base.is_absolute():
                raise ValueError(f"{self._str!r} and {str(base)!r} have different anchors")
            mine, theirs = self._pure.parts, base.parts
            common = 0
            while common < min(len(mine), len(theirs)) and mine[common] == theirs[common]:
                common += 1
            if ".." in theirs[common:]:
                raise ValueError(f"'..' segment in {str(base)!r} cannot be walked")
            up = [".."] * (len(theirs) - common)
            return self.with_segments(*up, *mine[common:]) if up or mine[common:] else self.with_segments()
        return self.with_segments(str(self._pure.relative_to(base)))

    def is_relative_to(self, other: str | Path | os.PathLike[str]) -> bool:
        return self._pure.is_relative_to(PurePosixPath(_text(other)))

    def full_match(self, pattern: str | Path, *, case_sensitive: bool | None = None) -> bool:
        """Whether the whole path matches ``pattern`` (pathlib's language; ``**`` any number of
        segments), in linear time."""
        absolute, segments = _glob.split_pattern(_text(pattern))
        if segments and segments[-1] == "":
            segments = segments[:-1]
        parts = list(self._pure.parts[1:] if self._pure.is_absolute() else self._pure.parts)
        if case_sensitive is False:
            parts, segments = [p.lower() for p in parts], [s.lower() for s in segments]
        if self._pure.is_absolute():
            parts.insert(0, _glob.ANCHOR)
        if absolute:
            segments.insert(0, _glob.ANCHOR)
        return _glob.full_match(parts, segments)

    def match(self, pattern: str | Path, *, case_sensitive: bool | None = None) -> bool:
        """pathlib's ``match``: a relative pattern matches from the right, an absolute one the
        whole path; ``**`` is ``*`` here, as in pathlib."""
        text = _text(pattern)
        absolute, segments = _glob.split_pattern(text)
        segments = [s for s in segments if s]
        if not segments:
            raise ValueError("empty pattern")
        parts = list(self._pure.parts)
        if case_sensitive is False:
            parts, segments = [p.lower() for p in parts], [s.lower() for s in segments]
        if absolute:
            if not self._pure.is_absolute():
                return False
            parts = parts[1:]
            if len(parts) != len(segments):
                return False
        elif self._pure.is_absolute():
            parts = parts[1:]
        return _glob.match_from_right(parts, segments)

    # -- reading -------------------------------------------------------------------------------

    def open(
        self,
        mode: str = "r",
        buffering: int = -1,
        encoding: str | None = None,
        errors: str | None = None,
        newline: str | None = None,
    ) -> IO[Any]:
        """``Root.open`` of this path (a regular file beneath the root)."""
        if buffering != -1:
            raise ValueError("buffer size can't be customized")
        if "b" not in mode:
            encoding = _encoding(encoding)
        return self._root.open(self._str, mode, encoding=encoding, errors=errors, newline=newline)

    def __open_reader__(self) -> IO[bytes]:
        return self._root.open(self._str, "rb")

    def __open_writer__(self, mode: str) -> IO[bytes]:
        return self._root.open(self._str, mode + "b")

    def __open_updater__(self, mode: str) -> IO[bytes]:
        return self._root.open(self._str, mode + "+b")

    def read_bytes(self) -> bytes:
        return self._root.read_bytes(self._str)

    def read_text(
        self, encoding: str | None = None, errors: str | None = None, newline: str | None = None
    ) -> str:
        """The decoded content; newlines translated as ``open()`` translates them."""
        data = self._root.read_bytes(self._str)
        text = data.decode(_encoding(encoding), errors or "strict")
        if newline is None:
            return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
        if newline == "":
            return text
        return io.TextIOWrapper(io.BytesIO(data), _encoding(encoding), errors, newline).read()

    # -- writing -------------------------------------------------------------------------------

    def write_bytes(self, data: bytes | bytearray | memoryview) -> int:
        """``Root.write_bytes``: an atomic replace (readers never see a torn file)."""
        return self._root.write_bytes(self._str, data)

    def write_text(
        self, data: str, encoding: str | None = None, errors: str | None = None, newline: str | None = None
    ) -> int:
        """The encoded text, written atomically; ``\\n`` becomes ``newline`` when one is given."""
        if not isinstance(data, str):
            raise TypeError(f"data must be str, not {type(data).__name__}")
        if newline not in (None, "", "\n"):
            data = data.replace("\n", newline)
        self._root.write_bytes(self._str, data.encode(_encoding(encoding), errors or "strict"))
        return len(data)

    # -- listing -------------------------------------------------------------------------------

    def iterdir(self) -> Iterator[Path]:
        """The directory's entries, as paths (listed at the call, as pathlib lists them)."""
        names = self._root.listdir(self._str)
        return (self.with_segments(self._str, name) for name in names)

    def _joined(self, where: str, name: str) -> str:
        return name if where == "." else f"{where}/{name}" if where != "/" else "/" + name

    def glob(
        self, pattern: str | Path, *, case_sensitive: bool | None = None, recurse_symlinks: bool = False
    ) -> Iterator[Path]:
        """Entries under this directory matching ``pattern`` (pathlib's language), through the
        Root, linear in the tree and the pattern (``case_sensitive=False``: case-folded)."""
        found = _glob.glob(
            self._root,
            self._str,
            _text(pattern),
            recurse_symlinks=recurse_symlinks,
            join=self._joined,
            fold=case_sensitive is False,
        )
        return (self.with_segments(p) for p in found)

    def rglob(
        self, pattern: str | Path, *, case_sensitive: bool | None = None, recurse_symlinks: bool = False
    ) -> Iterator[Path]:
        """``glob("**/" + pattern)``."""
        return self.glob(
            "**/" + _text(pattern), case_sensitive=case_sensitive, recurse_symlinks=recurse_symlinks
        )

    def walk(
        self,
        top_down: bool = True,
        on_error: Callable[[OSError], object] | None = None,
        follow_symlinks: bool = False,
    ) -> Iterator[tuple[Path, list[str], list[str]]]:
        """pathlib's ``walk`` through the Root. ``follow_symlinks`` follows links only where
        they stay beneath the root; a directory met twice on the way down is not entered again."""
        stack: list[Any] = [(self, ())]
        entered: dict[tuple[int, int], int] = {}
        while stack:
            item = stack.pop()
            if isinstance(item, tuple) and len(item) == 3:
                yield item
                continue
            path, above = item
            dirnames: list[str] = []
            filenames: list[str] = []
            try:
                entries = list(self._root.scandir(path._str))
            except OSError as exc:
                if on_error is not None:
                    on_error(exc)
                continue
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=follow_symlinks)
                except OSError:
                    is_dir = False
                (dirnames if is_dir else filenames).append(str(entry.name))
            if top_down:
                yield path, dirnames, filenames
            else:
                stack.append((path, dirnames, filenames))
            for name in reversed(dirnames):
                child = path / name
                key: tuple[int, int] | None = None
                if follow_symlinks:
                    try:
                        st = self._root.stat(child._str)
                        key = (st.st_dev, st.st_ino)
                    except OSError:
                        key = None
                    if key in above:
                        continue  # LOOP_GUARD: already on the way down
                    if key is not None:
                        entered[key] = entered.get(key, 0) + 1
                        if entered[key] > _glob.MAX_ENTRIES_PER_DIRECTORY:
                            continue  # links arranged as a lattice: bounded work
                stack.append((child, (*above, key) if key else above))

    # -- metadata ------------------------------------------------------------------------------

    @property
    def info(self) -> PathInfo:
        if self._info is None:
            self._info = PathInfo(self)
        return self._info

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return self._root.stat(self._str, follow_symlinks=follow_symlinks)

    def lstat(self) -> os.stat_result:
        return self._root.stat(self._str, follow_symlinks=False)

    def exists(self, *, follow_symlinks: bool = True) -> bool:
        """False for a missing path; a path that escapes raises PathEscapeError."""
        return self._root.exists(self._str, follow_symlinks=follow_symlinks)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        if follow_symlinks:
            return self._root.is_file(self._str)
        return not self._root.is_symlink(self._str) and self._root.is_file(self._str)

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        if follow_symlinks:
            return self._root.is_dir(self._str)
        return not self._root.is_symlink(self._str) and self._root.is_dir(self._str)

    def is_symlink(self) -> bool:
        return self._root.is_symlink(self._str)

    def readlink(self) -> Path:
        return self.with_segments(self._root.readlink(self._str))

    def resolve(self, strict: bool = False) -> Path:
        """The canonical root-relative path (``Root.resolve``)."""
        return self.with_segments(self._root.resolve(self._str, strict=strict))

    def samefile(self, other: str | Path) -> bool:
        mine = self.stat()
        theirs = other.stat() if isinstance(other, Path) else self._root.stat(_text(other))
        return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)

    # -- changes -------------------------------------------------------------------------------

    def mkdir(self, mode: int = 0o777, parents: bool = False, exist_ok: bool = False) -> None:
        """pathlib's ``mkdir``, each level through the Root: with ``parents`` the missing
        directories above are made (``exist_ok`` for them), climbing while a level is missing."""
        missing = [self]
        while True:
            try:
                self._mkdir_one(missing[-1], mode, exist_ok)
                break
            except FileNotFoundError:
                up = missing[-1].parent
                if not parents or up == missing[-1]:
                    raise
                missing.append(up)
        for path in reversed(missing[:-1]):
            self._mkdir_one(path, mode, exist_ok)

    def _mkdir_one(self, path: Path, mode: int, exist_ok: bool) -> None:
        """One level: this path with ``mode``/``exist_ok``, a parent with 0o777, existing ok."""
        mine = path is self
        try:
            self._root.mkdir(path._str, mode if mine else 0o777)
        except FileNotFoundError:
            raise
        except OSError:
            if (mine and not exist_ok) or not path.is_dir():
                raise

    def touch(self, mode: int = 0o666, exist_ok: bool = True) -> None:
        """pathlib's ``touch``: an existing entry of any kind gets its times set to now (never
        opened), a missing one is created as a regular file."""
        if exist_ok:
            try:
                self._root.utime(self._str)
                return
            except PathEscapeError:
                raise
            except OSError:
                pass
        self._root.touch(self._str, mode, exist_ok)

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self._root.remove(self._str)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def rmdir(self) -> None:
        self._root.rmdir(self._str)

    def _target(self, target: str | Path | os.PathLike[str]) -> Path:
        if isinstance(target, Path):
            return target
        return self.with_segments(_text(target))

    def rename(self, target: str | Path | os.PathLike[str]) -> Path:
        """Rename to ``target`` (a path of the same Root; a string is taken from the root)."""
        dest = self._same(self._target(target))
        self._root.rename(self._str, dest._str, replace=True)
        return dest

    def replace(self, target: str | Path | os.PathLike[str]) -> Path:
        return self.rename(target)

    def _same(self, dest: Path) -> Path:
        if dest._root is not self._root:
            raise OSError(18, "cannot rename to another Root (use move)", self._str)
        return dest

    def symlink_to(self, target: str | Path | os.PathLike[str], target_is_directory: bool = False) -> None:
        """Make this path a link to ``target`` (which must lead beneath the root from here)."""
        self._root.symlink(_text(target), self._str)

    def hardlink_to(self, target: str | Path | os.PathLike[str]) -> None:
        dest = self._same(self._target(target))
        self._root.link(dest._str, self._str)

    def chmod(self, mode: int, *, follow_symlinks: bool = True) -> None:
        self._root.chmod(self._str, mode, follow_symlinks=follow_symlinks)

    def lchmod(self, mode: int) -> None:
        self._root.chmod(self._str, mode, follow_symlinks=False)

    def chown(self, uid: int, gid: int, *, follow_symlinks: bool = True) -> None:
        """``Root.chown`` (Go's ``Root.Chown``/``Lchown``)."""
        if follow_symlinks:
            self._root.chown(self._str, uid, gid)
        else:
            self._root.lchown(self._str, uid, gid)

    # -- 3.14's copy and move ------------------------------------------------------------------

    def copy(
        self,
        target: str | Path | os.PathLike[str],
        *,
        follow_symlinks: bool = True,
        preserve_metadata: bool = False,
    ) -> Path:
        """Copy this file or directory tree to ``target`` (a path of this Root or of another),
        as 3.14's ``Path.copy``; returns the target."""
        dest = self._target(target)
        _copy.ensure_distinct(self, dest)
        _copy.copy_any(
            self._root,
            self._str,
            dest._root,
            dest._str,
            follow_symlinks=follow_symlinks,
            preserve_metadata=preserve_metadata,
        )
        return dest.joinpath()

    def copy_into(
        self,
        target_dir: str | Path | os.PathLike[str],
        *,
        follow_symlinks: bool = True,
        preserve_metadata: bool = False,
    ) -> Path:
        name = self.name
        if not name:
            raise ValueError(f"{self!r} has an empty name")
        return self.copy(
            self._target(target_dir) / name,
            follow_symlinks=follow_symlinks,
            preserve_metadata=preserve_metadata,
        )

    def move(self, target: str | Path | os.PathLike[str]) -> Path:
        """Move this file or tree to ``target`` (this Root or another), as 3.14's ``Path.move``:
        a rename where one can do it, else a copy (links copied as links) and a removal."""
        dest = self._target(target)
        _copy.ensure_distinct(self, dest)
        _copy.move(self._root, self._str, dest._root, dest._str)
        return dest.joinpath()

    def move_into(self, target_dir: str | Path | os.PathLike[str]) -> Path:
        name = self.name
        if not name:
            raise ValueError(f"{self!r} has an empty name")
        return self.move(self._target(target_dir) / name)


__all__ = ["Path", "PathInfo"]
