"""fsspec's own test suite for implementers (``fsspec.tests.abstract``), unchanged, run on
``SafeFileSystem``: copy, get, put, open and pipe, each on a fresh root. The suite takes its
filesystem and paths from fixtures; ours give it a SafeFileSystem on a temporary directory and
``/`` as the path to work under (the root, seen chroot-style)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fsspec")

import fsspec.tests.abstract as abstract

from safefs.fsspec import SafeFileSystem


class SafeFixtures(abstract.AbstractFixtures):  # type: ignore[misc]  # fsspec is untyped
    @pytest.fixture
    def fs(self, tmp_path: Path) -> Iterator[SafeFileSystem]:
        root = tmp_path / "root"
        root.mkdir()
        fs = SafeFileSystem(str(root), auto_mkdir=True)  # as the suite sets up its local_fs
        yield fs
        fs.close()

    @pytest.fixture
    def fs_path(self) -> str:
        return "/"

    @pytest.fixture
    def fs_join(self) -> Any:
        return lambda *parts: "/".join(p.rstrip("/") for p in parts[:1]) + "/" + "/".join(parts[1:])


class TestSafeFileSystemCopy(abstract.AbstractCopyTests, SafeFixtures):  # type: ignore[misc]
    pass


class TestSafeFileSystemGet(abstract.AbstractGetTests, SafeFixtures):  # type: ignore[misc]
    pass


class TestSafeFileSystemPut(abstract.AbstractPutTests, SafeFixtures):  # type: ignore[misc]
    pass


class TestSafeFileSystemOpen(abstract.AbstractOpenTests, SafeFixtures):  # type: ignore[misc]
    pass


class TestSafeFileSystemPipe(abstract.AbstractPipeTests, SafeFixtures):  # type: ignore[misc]
    pass
