"""``UPath("safefs://...")`` on :class:`safefs.Path`: universal-pathlib's path for the ``safefs``
protocol, whose every call goes through a :class:`safefs.Root`, not through fsspec's file layer.

``pip install 'safefs[upath]'`` registers :class:`SafeUPath` for the protocol ``safefs`` (the
``universal_pathlib.implementations`` entry point)::

    from upath import UPath
    p = UPath("safefs://data/x.csv", root="/srv/ws")   # or root=a_safefs_Root
    p.write_text("a,b\\n"); p.read_text(); list(p.parent.glob("*.csv"))

Paths are spelled from the root, with or without a leading ``/`` (as ``safefs.fsspec`` spells
them). ``root`` is a directory path or a :class:`safefs.Root`; a path's Root is opened once per
directory and process and kept open (as fsspec keeps its filesystem instances), a Root passed
in stays its caller's. ``p.fs`` still builds the fsspec filesystem when asked for; nothing here
asks for it.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterator
from typing import IO, Any

import pathlib_abc
from fsspec import get_filesystem_class
from upath import UPath
from upath.registry import register_implementation

from safefs import Path, PathInfo, Root

PROTOCOL = "safefs"

_roots: dict[str, Root] = {}
_roots_lock = threading.Lock()


def root_of(storage_options: Any) -> Root:
    """The Root a ``safefs://`` path's ``root`` storage option names."""
    given = storage_options.get("root")
    if isinstance(given, Root):
        return given
    if not given:
        raise ValueError('a safefs:// path needs its root: UPath("safefs://rel", root="/srv/ws")')
    key = os.path.abspath(os.fspath(given))
    with _roots_lock:
        root = _roots.get(key)
        if root is None or root.closed:
            root = _roots[key] = Root(key)
        return root


class SafeUPath(UPath):
    """A universal-pathlib path beneath a safefs Root; each call delegates to :class:`safefs.Path`."""

    __slots__ = ()

    def confined(self) -> Path:
        """The :class:`safefs.Path` this path stands for."""
        return root_of(self.storage_options).path_of(self.path.lstrip("/") or ".")

    def _child(self, confined: Path) -> SafeUPath:
        base = self.confined()
        rel = str(confined.relative_to(base))
        return self if rel == "." else self.joinpath(rel)

    def _peer(self, target: Any) -> SafeUPath | None:
        """``target`` as a path of this protocol (a str is a path from the same root)."""
        if isinstance(target, SafeUPath):
            return target
        if isinstance(target, str) and "://" not in target:
            return type(self)(target, protocol=PROTOCOL, **dict(self.storage_options))
        return None

    # -- reading and writing ---------------------------------------------------------------------

    def open(  # type: ignore[override]
        self,
        mode: str = "r",
        buffering: int = -1,
        encoding: str | None = None,
        errors: str | None = None,
        newline: str | None = None,
        **fsspec_kwargs: Any,
    ) -> IO[Any]:
        return self.confined().open(mode, buffering, encoding, errors, newline)

    def __open_reader__(self) -> Any:
        return self.confined().__open_reader__()

    def __open_writer__(self, mode: Any) -> Any:
        return self.confined().__open_writer__(mode)

    def read_bytes(self) -> bytes:
        return self.confined().read_bytes()

    def read_text(
        self, encoding: str | None = None, errors: str | None = None, newline: str | None = None
    ) -> str:
        return self.confined().read_text(encoding, errors, newline)

    def write_bytes(self, data: Any) -> int:
        return self.confined().write_bytes(data)

    def write_text(
        self, data: str, encoding: str | None = None, errors: str | None = None, newline: str | None = None
    ) -> int:
        return self.confined().write_text(data, encoding, errors, newline)

    # -- listing ---------------------------------------------------------------------------------

    def iterdir(self) -> Iterator[SafeUPath]:
        for child in self.confined().iterdir():
            yield self.joinpath(child.name)

    def glob(
        self, pattern: str, *, case_sensitive: bool | None = None, recurse_symlinks: bool = False
    ) -> Iterator[SafeUPath]:
        for found in self.confined().glob(
            pattern, case_sensitive=case_sensitive, recurse_symlinks=recurse_symlinks
        ):
            yield self._child(found)

    def rglob(
        self, pattern: str, *, case_sensitive: bool | None = None, recurse_symlinks: bool = False
    ) -> Iterator[SafeUPath]:
        return self.glob("**/" + pattern, case_sensitive=case_sensitive, recurse_symlinks=recurse_symlinks)

    # -- metadata --------------------------------------------------------------------------------

    @property
    def info(self) -> PathInfo:
        return self.confined().info

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return self.confined().stat(follow_symlinks=follow_symlinks)

    def lstat(self) -> os.stat_result:
        return self.confined().lstat()

    def exists(self, *, follow_symlinks: bool = True) -> bool:
        return self.confined().exists(follow_symlinks=follow_symlinks)

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self.confined().is_dir(follow_symlinks=follow_symlinks)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return self.confined().is_file(follow_symlinks=follow_symlinks)

    def is_symlink(self) -> bool:
        return self.confined().is_symlink()

    def readlink(self) -> SafeUPath:
        return type(self)(str(self.confined().readlink()), protocol=PROTOCOL, **dict(self.storage_options))

    def chmod(self, mode: int, *, follow_symlinks: bool = True) -> None:
        self.confined().chmod(mode, follow_symlinks=follow_symlinks)

    # -- changes ---------------------------------------------------------------------------------

    def mkdir(
        self,
        mode: int = 0o777,
        parents: bool = False,
        exist_ok: bool = False,
        *,
        parent_mode: int | None = None,
    ) -> None:
        # universal-pathlib 0.3.11 added ``parent_mode``, which its own UPath ignores with a warning.
        if parent_mode is not None:
            warnings.warn(f"{type(self).__name__}.mkdir(): parent_mode is ignored", UserWarning, stacklevel=2)
        self.confined().mkdir(mode, parents, exist_ok)

    def touch(self, mode: int = 0o666, exist_ok: bool = True) -> None:
        self.confined().touch(mode, exist_ok)

    def unlink(self, missing_ok: bool = False) -> None:
        self.confined().unlink(missing_ok)

    def rmdir(self, recursive: bool = False) -> None:
        if recursive:
            self.confined().root_object.rmtree(str(self.confined()))
        else:
            self.confined().rmdir()

    def symlink_to(self, target: Any, target_is_directory: bool = False) -> None:
        self.confined().symlink_to(str(target), target_is_directory)

    def rename(self, target: Any, **kwargs: Any) -> SafeUPath:
        peer = self._peer(target)
        if peer is None:
            raise ValueError(f"cannot rename a safefs:// path to {target!r}")
        self.confined().rename(peer.confined())
        return peer

    def replace(self, target: Any) -> SafeUPath:
        return self.rename(target)

    def copy(self, target: Any, **kwargs: Any) -> Any:
        """3.14's ``copy``: to a path of this protocol through the Roots (held fds), else
        through upath's own copy, reading from this Root."""
        peer = self._peer(target)
        if peer is None:
            return super().copy(target, **kwargs)
        self.confined().copy(peer.confined(), **kwargs)
        return peer

    def move(self, target: Any, **kwargs: Any) -> Any:
        peer = self._peer(target)
        if peer is None:
            return super().move(target, **kwargs)
        self.confined().move(peer.confined())
        return peer


def register() -> None:
    """Register :class:`SafeUPath` for ``safefs://`` (the entry point does it on install). The
    fsspec class is looked up (not instantiated) so that upath spells ``safefs://`` paths as
    ``safefs.fsspec`` does."""
    get_filesystem_class(PROTOCOL)
    register_implementation(PROTOCOL, SafeUPath, clobber=True)


register()

__all__ = ["PROTOCOL", "SafeUPath", "register", "root_of"]


# safefs.Path implements pathlib-abc's protocols without the core depending on pathlib-abc; with
# the upath extra installed it is also their registered virtual subclass.
pathlib_abc.ReadablePath.register(Path)
pathlib_abc.WritablePath.register(Path)
pathlib_abc.JoinablePath.register(Path)
