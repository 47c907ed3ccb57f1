"""fsspec's own test suite for implementers (``fsspec.tests.abstract``), unchanged, run on
``SafeFileSystem``: every suite the installed fsspec ships (copy, get, put, and open and pipe in
newer releases), each test on a fresh root. The suite takes its
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


# One test class per suite the installed fsspec ships (older releases have no open and pipe
# suites): the suite is taken from fsspec as it is, never copied.
SUITES = [name for name in dir(abstract) if name.startswith("Abstract") and name.endswith("Tests")]
for _suite in SUITES:
    _name = "TestSafeFileSystem" + _suite.removeprefix("Abstract").removesuffix("Tests")
    globals()[_name] = type(_name, (getattr(abstract, _suite), SafeFixtures), {})


def test_the_suites_were_found() -> None:
    assert {"AbstractCopyTests", "AbstractGetTests", "AbstractPutTests"} <= set(SUITES)
