"""Archive extraction and fsspec as contestants: the standard library's and fsspec's own beside
safefs's.

- ``tarfile-data`` and ``safefs-archive``: each operation extracts a one-member tar into the
  workspace, with ``tarfile.extractall(filter="data")`` or ``safefs.archive.extractall``. A write
  is a regular member at the path; a read is a hard-link member to the path, extracted under a
  fresh name and then read without following it: what a hostile archive does to copy a file into
  a place it can read (a hard link to a symlink another writer swapped in copies no file: it is
  one more name for that writer's own link).
- ``fsspec-dirfs`` and ``safefs-fsspec``: fsspec's rooted ``DirFileSystem`` over the local
  filesystem, and ``safefs.fsspec.SafeFileSystem``; a read is ``cat_file``, a write
  ``pipe_file``.

A refusal (tarfile's ``FilterError``, any ``OSError``) is raised as ``PermissionError`` or as the
``OSError`` it is.
"""

from __future__ import annotations

import contextlib
import errno
import io
import itertools
import os
import tarfile
from typing import Any

from safefs_bench.strategies import Strategy, StrategyUnavailable


def _one_member_tar(info: tarfile.TarInfo, data: bytes | None) -> tarfile.TarFile:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(info, io.BytesIO(data) if data is not None else None)
    buffer.seek(0)
    return tarfile.open(fileobj=buffer)


class TarExtraction(Strategy):
    """One tar extraction per operation, by tarfile (``"tarfile"``) or safefs (``"safefs"``)."""

    def __init__(self, root: str, implementation: str) -> None:
        self.name = "safefs-archive" if implementation == "safefs" else "tarfile-data"
        self._root_path = root
        self._root: Any = None
        if implementation == "safefs":
            from safefs import Root

            self._root = Root(root)
        self._serial = itertools.count()

    def _extract(self, info: tarfile.TarInfo, data: bytes | None) -> None:
        with _one_member_tar(info, data) as tar:
            try:
                if self._root is not None:
                    from safefs.archive import extractall

                    extractall(tar, self._root)
                else:
                    tar.extractall(self._root_path, filter="data")
            except tarfile.TarError as exc:
                raise PermissionError(str(exc)) from exc

    def write(self, rel: str, data: bytes) -> None:
        info = tarfile.TarInfo(rel)
        info.size = len(data)
        self._extract(info, data)

    def read(self, rel: str) -> bytes:
        name = f".got-{os.getpid()}-{next(self._serial)}"
        info = tarfile.TarInfo(name)
        info.type, info.linkname = tarfile.LNKTYPE, rel
        self._extract(info, None)
        got = os.path.join(self._root_path, name)  # in the workspace's top, which is no link
        try:
            # Read as the copy it is, never following it: a hard link to an outside inode is a
            # copy of an outside file (an escape); a hard link to a symlink the attacker planted
            # is only a second name for the attacker's own link (ELOOP: refused).
            fd = os.open(got, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with open(fd, "rb") as f:
                return f.read()
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PermissionError(f"{rel}: the extraction made a link to a symlink") from None
            raise
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(got)

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("an extraction has no stat")

    def listdir(self, rel: str) -> list[str]:
        raise OSError("an extraction has no directory listing")

    def makedirs(self, rel: str) -> None:
        info = tarfile.TarInfo(rel)
        info.type = tarfile.DIRTYPE
        self._extract(info, None)

    def close(self) -> None:
        if self._root is not None:
            self._root.close()


class FsspecFileSystem(Strategy):
    """fsspec's DirFileSystem (``"dirfs"``) or safefs's SafeFileSystem (``"safefs"``)."""

    def __init__(self, root: str, implementation: str) -> None:
        try:
            from fsspec.implementations.dirfs import DirFileSystem
            from fsspec.implementations.local import LocalFileSystem
        except ImportError as exc:
            raise StrategyUnavailable(f"fsspec is not installed ({exc})") from None
        self.name = "safefs-fsspec" if implementation == "safefs" else "fsspec-dirfs"
        if implementation == "safefs":
            from safefs.fsspec import SafeFileSystem

            self._fs: Any = SafeFileSystem(root)
        else:
            self._fs = DirFileSystem(path=root, fs=LocalFileSystem())

    def read(self, rel: str) -> bytes:
        data: bytes = self._fs.cat_file(rel)
        return data

    def write(self, rel: str, data: bytes) -> None:
        self._fs.pipe_file(rel, data)

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("fsspec describes files with info(), not os.stat_result")

    def listdir(self, rel: str) -> list[str]:
        return [os.path.basename(name) for name in self._fs.ls(rel, detail=False)]

    def makedirs(self, rel: str) -> None:
        self._fs.makedirs(rel, exist_ok=True)

    def close(self) -> None:
        close = getattr(self._fs, "close", None)
        if close is not None:
            close()
