"""The "ground" the ported pathlib tests (``test_path_upstream_*.py``) stand on, for safefs.Path.

Upstream's tests take a ground object: it sets up an empty directory as a path, builds the
standard hierarchy, and inspects the tree (``isfile``, ``readbytes`` ...) by another route than
the path under test. Ours builds in a temp directory with plain ``os`` (the ground truth, always
inside that temp tree), opens a ``safefs.Root`` on it and hands the tests ``root / "TESTFN"``.
One class per resolver and per ``symlinks=`` mode that follows links (``beneath``, ``in_root``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from typing import Any

import safefs
from safefs import _fastpath, _sys
from tests.safefs.conftest import BACKENDS, Flavour

TESTFN = "TESTFN"
LINK_MODES: tuple[safefs.SymlinkMode, ...] = ("beneath", "in_root")


def flavours() -> list[Flavour]:
    out: list[Flavour] = []
    for backend in BACKENDS:
        if backend == "openat2" and not _sys.HAVE_NATIVE:
            continue
        if backend == "walk-no-o-path" and not _sys.HAVE_O_PATH:
            continue
        if backend == "walk-python" and not _fastpath.AVAILABLE:
            continue
        out.extend(Flavour(backend, mode) for mode in LINK_MODES)
    return out


class WritableZipPath:
    """Upstream's zip path, which these tests never build: its isinstance checks are False."""


class SafefsGround:
    """Builds and inspects trees for the ported tests. ``shared``: every setup() of one test
    is a directory of one Root (a copy within a Root), else each its own Root (between Roots)."""

    can_symlink = True

    def __init__(self, flavour: Flavour, shared: bool = False) -> None:
        self.flavour = flavour
        self.shared = shared
        self._roots: list[tuple[safefs.Root, str]] = []

    def setup(self, local_suffix: str = "") -> safefs.Path:
        if not (self.shared and self._roots):
            host = tempfile.mkdtemp(prefix="safefs-pathlib-")
            self._roots.append((self.flavour.open(host), host))
        root, host = self._roots[-1]
        os.mkdir(os.path.join(host, TESTFN + local_suffix))
        return root / (TESTFN + local_suffix)

    def teardown(self, path: safefs.Path) -> None:
        for root, host in self._roots:
            if root is path.root_object:
                self._roots.remove((root, host))
                root.close()
                shutil.rmtree(host)
                return

    def host(self, path: safefs.Path) -> str:
        """Where ``path`` lies on the host: inside the temp tree, never elsewhere."""
        root = path.root_object
        rel = str(path)
        assert not rel.startswith("/") and ".." not in rel.split("/"), rel
        return os.path.join(root.path, rel)

    def create_file(self, p: safefs.Path, data: bytes = b"") -> None:
        with open(self.host(p), "wb") as f:
            f.write(data)

    def create_dir(self, p: safefs.Path) -> None:
        os.mkdir(self.host(p))

    def create_symlink(self, p: safefs.Path, target: str) -> None:
        os.symlink(target, self.host(p))

    def create_hierarchy(self, p: safefs.Path) -> None:
        """Upstream's tree (support/local_path.py's LocalPathGround.create_hierarchy)."""
        top = self.host(p)
        os.mkdir(os.path.join(top, "dirA"))
        os.mkdir(os.path.join(top, "dirB"))
        os.mkdir(os.path.join(top, "dirC"))
        os.mkdir(os.path.join(top, "dirC", "dirD"))
        for rel, text in [
            ("fileA", b"this is file A\n"),
            ("dirB/fileB", b"this is file B\n"),
            ("dirC/fileC", b"this is file C\n"),
            ("dirC/novel.txt", b"this is a novel\n"),
            ("dirC/dirD/fileD", b"this is file D\n"),
        ]:
            with open(os.path.join(top, rel), "wb") as f:
                f.write(text)
        os.symlink("fileA", os.path.join(top, "linkA"))
        os.symlink("non-existing", os.path.join(top, "brokenLink"))
        os.symlink("dirB", os.path.join(top, "linkB"), target_is_directory=True)
        os.symlink(os.path.join("..", "dirB"), os.path.join(top, "dirA", "linkC"), target_is_directory=True)
        os.symlink("brokenLinkLoop", os.path.join(top, "brokenLinkLoop"))

    def isdir(self, p: safefs.Path) -> bool:
        return os.path.isdir(self.host(p))

    def isfile(self, p: safefs.Path) -> bool:
        return os.path.isfile(self.host(p))

    def islink(self, p: safefs.Path) -> bool:
        return os.path.islink(self.host(p))

    def readlink(self, p: safefs.Path) -> str:
        return os.readlink(self.host(p))

    def readtext(self, p: safefs.Path) -> str:
        with open(self.host(p), encoding="utf-8") as f:
            return f.read()

    def readbytes(self, p: safefs.Path) -> bytes:
        with open(self.host(p), "rb") as f:
            return f.read()


def ground_classes(base: type, label: str) -> dict[str, type]:
    """One unittest class per flavour: ``base`` with a SafefsGround of that flavour."""
    out: dict[str, type] = {}
    for flavour in flavours():
        name = f"Safefs{label}Test_{str(flavour).replace('-', '_')}"
        out[name] = type(name, (base, unittest.TestCase), {"ground": SafefsGround(flavour)})
    return out


def copy_classes(base: type) -> dict[str, type]:
    """Copies within one Root and from one Root to another, per flavour."""
    out: dict[str, type] = {}
    for flavour in flavours():
        tag = str(flavour).replace("-", "_")
        shared = SafefsGround(flavour, shared=True)
        out[f"SafefsOneRootCopyTest_{tag}"] = type(
            f"SafefsOneRootCopyTest_{tag}",
            (base, unittest.TestCase),
            {"source_ground": shared, "target_ground": shared},
        )
        out[f"SafefsTwoRootsCopyTest_{tag}"] = type(
            f"SafefsTwoRootsCopyTest_{tag}",
            (base, unittest.TestCase),
            {"source_ground": SafefsGround(flavour), "target_ground": SafefsGround(flavour)},
        )
    return out


class _JoinRoot:
    """The one Root the pure (joinable) tests' paths belong to: they never touch it."""

    root: safefs.Root | None = None

    @classmethod
    def get(cls) -> safefs.Root:
        if cls.root is None:
            # Held by its fd alone: the directory is removed at once, so nothing is left behind.
            directory = tempfile.mkdtemp(prefix="safefs-pathlib-join-")
            cls.root = safefs.Root(directory)
            os.rmdir(directory)
        return cls.root


class JoinPath(safefs.Path):
    """``safefs.Path`` built from segments alone, as upstream's join tests build their class."""

    def __init__(self, *segments: Any) -> None:
        super().__init__(_JoinRoot.get(), *segments)

    def with_segments(self, *segments: Any) -> JoinPath:
        return type(self)(*segments)


def join_classes(base: type, label: str) -> dict[str, type]:
    name = f"Safefs{label}Test"
    return {name: type(name, (base, unittest.TestCase), {"cls": JoinPath})}
