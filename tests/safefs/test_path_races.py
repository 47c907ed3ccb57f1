"""The directory-swap race of test_races.py, through ``safefs.Path``: reads, copies (within a
Root, between two Roots, of whole trees with links kept) and moves, while a real attacker
process exchanges ``ROOT/d`` with ``ROOT/evil -> ../outside`` as fast as it can.

Every result is sorted as in test_races.py: the inside content or a clean error is allowed;
outside content, anything changed or created outside, and any symlink a copy or move planted
that leads out of the root are failures.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

import safefs
from safefs import _sys
from tests.race_window import RACE_SECONDS
from tests.safefs.conftest import Flavour, Workspace
from tests.safefs.test_races import (
    CLAMPED_F,
    FLAVOURS_BENEATH,
    FLAVOURS_IN_ROOT,
    INSIDE_F,
    Tally,
    attacked,
    available,
    cycle_for,
    make_dir_swap_tree,
)

pytestmark = pytest.mark.skipif(not _sys.have_renameat2(), reason="the attacker needs renameat2")

SRC_DATA = b"copied in from ROOT/src\n"
# A copy looks at its source's kind, then copies it as that kind: when the attacker changes the
# kind in between, the copy meets the other kind and says so (EISDIR: a file turned into a
# directory; EINVAL: a link that is none any more). Clean refusals too: nothing is read outside.
COPY_CLEAN_ERRORS = {errno.EISDIR, errno.EINVAL}


class CopyTally(Tally):
    def run(self, op: str, attempt: Callable[[], str]) -> None:
        def cleaned() -> str:
            try:
                return attempt()
            except safefs.PathEscapeError:
                raise
            except OSError as exc:
                if exc.errno in COPY_CLEAN_ERRORS:
                    return errno.errorcode[exc.errno]
                raise

        super().run(op, cleaned)


PATH_OPS = ["read_bytes", "copy_out", "copy_in", "copy_to_other_root", "copytree_links_kept", "move"]


def planted_links(top: Path, allowed: set[Path]) -> list[str]:
    """Symlinks under ``top`` that lead out of it (the attacker's own ``evil`` excepted)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink() and p not in allowed:
                target = os.path.normpath(os.path.join(dirpath, os.readlink(p)))
                if not target.startswith(str(top) + os.sep):
                    found.append(f"{p} -> {os.readlink(p)}")
    return found


def run_path_swap(flavour: Flavour, ws: Workspace) -> None:
    d, evil = make_dir_swap_tree(ws)
    clamped = ws.root_path / "outside"
    (ws.root_path / "src").write_bytes(SRC_DATA)
    (ws.root_path / "other").mkdir()
    before = ws.snapshot_outside()
    beside = sorted(os.listdir(ws.base))
    homes = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in (d, clamped)]
    reads = {INSIDE_F: "ok"}
    if flavour.symlinks == "in_root":
        reads[CLAMPED_F] = "ok:clamped"
    tally = CopyTally(f"Path under dir swap, {flavour}")
    n = 0

    def landed(name: str, data: bytes) -> bool:
        for fd in homes:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISREG(st.st_mode):
                with open(os.open(name, os.O_RDONLY, dir_fd=fd), "rb") as f:
                    if f.read() == data:
                        return True
        return False

    with flavour.open(ws.root_path) as root, flavour.open(ws.root_path / "other") as other:

        def read() -> str:
            return reads.get((root / "d" / "f").read_bytes(), "ESCAPE")

        def copy_out() -> str:
            target = root / "copied"
            (root / "d/f").copy(target)
            return reads.get((ws.root_path / "copied").read_bytes(), "ESCAPE")

        def copy_in() -> str:
            nonlocal n
            n += 1
            name = f"c{n % 20}"
            for fd in homes:
                try:
                    os.unlink(name, dir_fd=fd)
                except FileNotFoundError:
                    pass
            (root / "src").copy(root / "d" / name)
            return "ok" if landed(name, SRC_DATA) else "ESCAPE"

        def copy_to_other_root() -> str:
            (root / "d" / "f").copy(other / "x")
            return reads.get((ws.root_path / "other" / "x").read_bytes(), "ESCAPE")

        def copytree_links_kept() -> str:
            nonlocal n
            n += 1
            tree = ws.root_path / f"tree{n % 4}"
            shutil.rmtree(tree, ignore_errors=True)  # inside the root: the test's own cleanup
            if tree.is_symlink():
                tree.unlink()
            (root / "d").copy(root / tree.name, follow_symlinks=False)
            if tree.is_symlink():
                return "ESCAPE"  # a link was planted where the tree should be
            names = set(os.listdir(tree))
            content = (tree / "f").read_bytes()
            return "ok" if "OUTSIDE_ONLY" not in names and content in reads else "ESCAPE"

        def move() -> str:
            nonlocal n
            n += 1
            src, dst = ("r0", "r1") if n % 2 else ("r1", "r0")
            (root / "d" / src).move(root / "d" / dst)
            for fd in homes:
                try:
                    if stat.S_ISREG(os.stat(dst, dir_fd=fd, follow_symlinks=False).st_mode):
                        return "ok"
                except FileNotFoundError:
                    pass
            return "ESCAPE"

        attempts = dict(
            zip(
                PATH_OPS,
                [read, copy_out, copy_in, copy_to_other_root, copytree_links_kept, move],
                strict=True,
            )
        )
        # A tree copy takes many steps on ``d``, each of which the attacker may turn into a
        # refusal: under a fast attacker it may never win a whole copy. It must work unattacked.
        assert copytree_links_kept() == "ok"
        with attacked(d, evil) as swapper:
            cycle_for(RACE_SECONDS, tally, attempts)
    for fd in homes:
        os.close(fd)
    tally.report(swapper.swaps)
    assert swapper.swaps > 1000, "the attacker hardly ran: the test proves nothing"
    assert ws.snapshot_outside() == before, "something outside the root changed"
    assert sorted(os.listdir(ws.base)) == beside, "something appeared beside the root"
    root_now = ws.root_path
    assert planted_links(root_now, {root_now / "evil", root_now / "d"}) == [], (
        "a copy or move planted a link out"
    )
    tally.assert_safe([op for op in PATH_OPS if op != "copytree_links_kept"])


@pytest.mark.parametrize("flavour", FLAVOURS_BENEATH + FLAVOURS_IN_ROOT, ids=str)
def test_path_copy_move_under_dir_swap(flavour: Flavour, workspace: Workspace) -> None:
    run_path_swap(available(flavour), workspace)


def test_copy_never_plants_a_link_out(workspace: Workspace) -> None:
    """A link whose target leads out is never copied as a link (nor followed): refused."""
    (workspace.root_path / "up").symlink_to("../outside/secret")
    (workspace.root_path / "t").mkdir()
    (workspace.root_path / "t" / "in").symlink_to("../../outside")
    with safefs.Root(workspace.root_path) as root:
        for follow in (True, False):
            with pytest.raises(safefs.PathEscapeError):
                (root / "up").copy(root / f"up2{follow}", follow_symlinks=follow)
            with pytest.raises(safefs.PathEscapeError):
                (root / "t").copy(root / f"t2{follow}", follow_symlinks=follow)
        with safefs.Root(workspace.root_path / "t") as sub:
            # Inside ROOT "t/in -> ../../outside" escapes; moved into a Root of ROOT/t, refused too.
            with pytest.raises(safefs.PathEscapeError):
                (root / "up").move(sub / "up")
        assert (workspace.root_path / "up").is_symlink()
    assert (
        planted_links(workspace.root_path, {workspace.root_path / "up", workspace.root_path / "t" / "in"})
        == []
    )
