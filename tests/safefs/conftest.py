"""One fixture runs every safefs behaviour test against each backend and each symlinks= mode."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

import safefs
from safefs import _fastpath, _sys

# The resolvers, the walk as it runs where there is no O_PATH (macOS, the BSDs), and the walk in
# Python (the reference, and what runs without the native extension) where "walk" is the C walk.
Backend = Literal["openat2", "walk", "walk-no-o-path", "walk-python"]
BACKENDS: list[Backend] = ["openat2", "walk", "walk-no-o-path", "walk-python"]
MODES: list[safefs.SymlinkMode] = ["beneath", "none", "in_root"]


@dataclass(frozen=True)
class Flavour:
    backend: Backend
    symlinks: safefs.SymlinkMode

    def open(self, path: str | bytes | os.PathLike[str]) -> safefs.Root:
        if self.backend == "walk-no-o-path":
            return safefs.Root(path, resolver="walk", symlinks=self.symlinks, _use_o_path=False)
        if self.backend == "walk-python":
            return safefs.Root(path, resolver="walk", symlinks=self.symlinks, _native_walk=False)
        return safefs.Root(path, resolver=self.backend, symlinks=self.symlinks)

    def __str__(self) -> str:
        return f"{self.backend}-{self.symlinks}"


ALL_FLAVOURS = [Flavour(b, m) for b in BACKENDS for m in MODES]


@pytest.fixture(params=ALL_FLAVOURS, ids=str)
def flavour(request: pytest.FixtureRequest) -> Flavour:
    f: Flavour = request.param
    if f.backend == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("native extension not built")
    if f.backend == "walk-no-o-path" and not _sys.HAVE_O_PATH:
        pytest.skip("this platform has no O_PATH: plain walk already covers it")
    if f.backend == "walk-python" and not _fastpath.AVAILABLE:
        pytest.skip("native extension not built: plain walk is the Python walk already")
    return f


def build_tree(base: Path, spec: list[str]) -> None:
    """``"d/"`` a directory, ``"f"`` a file holding its own name, ``"l => t"`` a symlink.
    ``$ROOT`` in a link target is replaced by the root's absolute path."""
    for item in spec:
        if " => " in item:
            name, target = item.split(" => ", 1)
            p = base / name
            p.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target.replace("$ROOT", str(base)), p)
        elif item.endswith("/"):
            (base / item).mkdir(parents=True, exist_ok=True)
        else:
            p = base / item
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"content of {item}\n")


def tree_snapshot(
    top: str | Path, *, skip: Path | None = None, inodes: bool = False, spell_base: str | None = None
) -> dict[str, Any]:
    """What a caller can observe of everything under ``top``, by relative path: kind, mode bits,
    content (and link count) or link target; ``inodes`` adds each inode number last. ``skip``
    leaves one directory out; ``spell_base`` writes that absolute path as ``$BASE`` in names
    and link targets (so trees built under different bases compare equal)."""

    def entry(st: os.stat_result, *rest: Any) -> tuple[Any, ...]:
        return (*rest, st.st_ino) if inodes else rest

    def spelled(text: str) -> str:
        return (
            text
            if spell_base is None
            else text.replace(spell_base, "$BASE").replace(spell_base.lstrip("/"), "$BASE")
        )

    out: dict[str, Any] = {".": entry(os.stat(top), "dir", stat.S_IMODE(os.stat(top).st_mode))}
    for dirpath, dirnames, filenames in os.walk(top):
        if skip is not None:
            dirnames[:] = [d for d in dirnames if Path(dirpath, d) != skip]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = spelled(os.path.relpath(p, top))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = entry(st, "link", spelled(os.readlink(p)))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = entry(st, "dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    out[rel] = entry(st, "file", stat.S_IMODE(st.st_mode), f.read(), st.st_nlink)
            else:
                out[rel] = entry(st, "special", st.st_mode)
    return out


@dataclass
class Workspace:
    """A root directory ``ROOT`` beside an ``outside`` directory holding bait."""

    base: Path
    root_path: Path
    outside: Path

    def snapshot_outside(self) -> dict[str, Any]:
        return tree_snapshot(self.outside)


def make_workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ROOT"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("outside secret\n")
    (outside / "target").write_text("outside target\n")
    (outside / "dir").mkdir()
    (outside / "dir" / "target").write_text("outside dir target\n")
    return Workspace(tmp_path, root, outside)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


@pytest.fixture
def open_root(flavour: Flavour, workspace: Workspace) -> Iterator[Callable[..., safefs.Root]]:
    roots: list[safefs.Root] = []

    def make(spec: list[str] | None = None) -> safefs.Root:
        if spec:
            build_tree(workspace.root_path, spec)
        root = flavour.open(workspace.root_path)
        roots.append(root)
        return root

    yield make
    for r in roots:
        r.close()


def spec_name(item: str) -> str:
    """The root-relative name a ``build_tree`` spec item creates."""
    return item.split(" => ", 1)[0].rstrip("/")


def restore_tree(base: Path, spec: list[str], differs: Callable[[str], bool]) -> None:
    """Bring a tree built from ``spec`` back after a test changed it, touching only what changed.

    Every entry for which ``differs(rel)`` is true (changed, or not in the spec) is removed, then
    the spec items now missing are built again. Much cheaper than a new tree when one entry moved.
    """
    base.chmod(0o755)
    present = []
    for dirpath, dirnames, filenames in os.walk(base):
        present += [Path(dirpath, n) for n in dirnames + filenames]
    for p in sorted(present, key=lambda q: len(q.parts), reverse=True):
        if differs(str(p.relative_to(base))) and os.path.lexists(p):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
    build_tree(base, [item for item in spec if not os.path.lexists(base / spec_name(item))])
