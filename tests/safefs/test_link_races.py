"""The link guarantee against a real attacker: links judged where they are made.

While another process exchanges a directory the operation uses with a symlink to a deeper
directory (``renameat2(RENAME_EXCHANGE)``, ``safefs.testing.Swapper``), ``symlink``, ``link`` and
``rename`` (of a link, and of a directory holding one) make or move links whose targets climb just
far enough to stay inside when judged from the deeper directory, and escape from the real one.
Afterwards every symlink in the tree is followed with a plain ``os.open`` from outside: none may
land outside the root. The counts are printed (``pytest -s``).
"""

from __future__ import annotations

import errno
import os
import time
from collections import Counter
from pathlib import Path

import pytest

import safefs
from safefs import _sys
from safefs.testing import Swapper
from tests.race_window import RACE_SECONDS
from tests.safefs.conftest import Flavour, Workspace

pytestmark = pytest.mark.skipif(not _sys.have_renameat2(), reason="the attacker needs renameat2")

# Judged from ROOT/deep/p/q, "../../x" is ROOT/deep/x; made in ROOT/a it is the file beside ROOT.
LINK_TARGET = "../../x"
# Inside a moved directory ROOT/a/mN (or ROOT/deep/p/q/mN): one level deeper.
TREE_TARGET = "../../../x"
OUTSIDE_X = b"OUTSIDE x: a followed link must never reach this\n"


def make_tree(ws: Workspace) -> tuple[Path, Path, Path]:
    root = ws.root_path
    (ws.base / "x").write_bytes(OUTSIDE_X)
    a = root / "a"
    a.mkdir()
    q = root / "deep" / "p" / "q"
    q.mkdir(parents=True)
    (root / "deep" / "x").write_bytes(b"inside deep/x\n")
    evil = root / "a.x"
    evil.symlink_to("deep/p/q")
    return a, evil, q


def escapes(root: Path) -> tuple[int, int]:
    """Follow every symlink under ``root`` with a plain open: (how many, how many land outside)."""
    real_root = os.path.realpath(root)
    followed = outside = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                continue
            try:
                fd = os.open(p, os.O_RDONLY)
            except OSError:
                continue
            try:
                followed += 1
                where = os.readlink(f"/proc/self/fd/{fd}")
                if not (where == real_root or where.startswith(real_root + "/")):
                    outside += 1
            finally:
                os.close(fd)
    return followed, outside


FLAVOURS = [Flavour(b, m) for b in ("openat2", "walk", "walk-python") for m in ("beneath", "in_root")]


def _available(f: Flavour) -> Flavour:
    if f.backend == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("native extension not built")
    return f


@pytest.mark.parametrize("op", ["symlink", "link", "rename_link", "rename_dir"])
@pytest.mark.parametrize("flavour", FLAVOURS, ids=str)
def test_links_made_under_a_directory_swap_never_escape(
    flavour: Flavour, op: str, workspace: Workspace
) -> None:
    _available(flavour)
    a, evil, q = make_tree(workspace)
    root_path = workspace.root_path
    counts: Counter[str] = Counter()
    n = 0

    def attempt(root: safefs.Root) -> None:
        nonlocal n
        n += 1
        name = f"l{n}"
        try:
            if op == "symlink":
                root.symlink(LINK_TARGET, f"a/{name}")
            elif op == "link":
                os.symlink(LINK_TARGET, q / f"s{n}")
                root.link(f"deep/p/q/s{n}", f"a/{name}")
            elif op == "rename_link":
                os.symlink(LINK_TARGET, q / f"s{n}")
                root.rename(f"deep/p/q/s{n}", f"a/{name}")
            else:
                (q / f"m{n}").mkdir()
                os.symlink(TREE_TARGET, q / f"m{n}" / "t")
                root.rename(f"deep/p/q/m{n}", f"a/m{n}")
        except safefs.PathEscapeError:
            counts["refused"] += 1
        except OSError as exc:
            assert exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EAGAIN), exc
            counts[errno.errorcode[exc.errno or 0]] += 1
        else:
            counts["made"] += 1

    with flavour.open(root_path) as root, Swapper(str(a), str(evil)) as swapper:
        deadline = time.monotonic() + RACE_SECONDS
        while time.monotonic() < deadline:
            for _ in range(16):
                attempt(root)
    followed, outside = escapes(root_path)
    print(
        f"[link race] {op} {flavour}: {swapper.swaps} swaps, {n} attempts, {dict(counts)}, "
        f"{followed} links followed, {outside} outside"
    )
    assert (workspace.base / "x").read_bytes() == OUTSIDE_X
    assert counts["made"] > 0 and counts["refused"] > 0, counts
    assert outside == 0, f"{outside} links made or moved under the swap lead outside the root"


@pytest.mark.parametrize("made", [False, True], ids=["before", "after"])
def test_a_move_around_the_system_call_is_taken_back(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, made: bool
) -> None:
    """The directory the link is made in moves shallower right before (or right after) the
    symlinkat: the check there sees another chain of directories, the link is not left behind,
    and the operation answers EAGAIN. (The move is made at that exact point, deterministically;
    the attacker process above makes it at random points.)"""
    from safefs._resolve import links

    root_path = workspace.root_path
    (root_path / "p" / "q").mkdir(parents=True)
    real = links.Judge._verify
    moves = [lambda: os.rename(root_path / "p" / "q", root_path / "q")]

    def verify(self: links.Judge, *, made: bool) -> None:
        if made == made_at and moves:
            moves.pop()()
        real(self, made=made)

    made_at = made
    monkeypatch.setattr(links.Judge, "_verify", verify)
    with safefs.Root(root_path) as root, pytest.raises(OSError) as caught:
        root.symlink("../../x", "p/q/l")
    assert caught.value.errno == errno.EAGAIN
    assert not moves
    assert os.listdir(root_path / "q") == []


@pytest.mark.parametrize("op", ["link"])
@pytest.mark.parametrize("flavour", FLAVOURS, ids=str)
def test_a_source_that_turns_into_a_symlink_is_never_moved_unjudged(
    flavour: Flavour, op: str, workspace: Workspace
) -> None:
    """The source's own name flips between a directory (nothing to judge: no link) and a symlink
    that leads out from the destination: ``e/x`` exchanged with ``e/x.x -> ../a`` (``ROOT/a``
    from ``e/``, the file beside the root from the top) by the attacker. The entry looked at
    is the entry linked or renamed, or the operation is taken back."""
    _available(flavour)
    root_path = workspace.root_path
    (workspace.base / "a").write_bytes(OUTSIDE_X)
    (root_path / "e" / "x").mkdir(parents=True)
    (root_path / "e" / "x.x").symlink_to("../a")
    landed, real_root = root_path / "y", os.path.realpath(root_path)
    counts: Counter[str] = Counter()
    with (
        flavour.open(root_path) as root,
        Swapper(str(root_path / "e" / "x"), str(root_path / "e" / "x.x")) as swapper,
    ):
        deadline = time.monotonic() + RACE_SECONDS
        while time.monotonic() < deadline:
            try:
                getattr(root, op)("e/x", "y")
            except safefs.PathEscapeError:
                counts["refused"] += 1
            except OSError as exc:
                counts[errno.errorcode.get(exc.errno or 0, str(exc.errno))] += 1
            else:
                counts["made"] += 1
                if landed.is_symlink() and not os.path.realpath(landed).startswith(real_root + "/"):
                    counts["escaped"] += 1
                if op == "rename":
                    os.rename(landed, root_path / "e" / "x")  # the attacker's pair whole again
                elif landed.is_symlink() or not landed.is_dir():
                    os.unlink(landed)
    print(f"[source flip] {op} {flavour}: {swapper.swaps} swaps, {dict(counts)}")
    assert counts["refused"] > 0, counts  # the symlink was met as such, and refused
    assert counts["escaped"] == 0, counts
