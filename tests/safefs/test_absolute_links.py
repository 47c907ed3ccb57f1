"""``Root(absolute_links="anchored")``: an absolute link target under the root's own absolute
path is followed from the root, on every backend; every other absolute target stays an escape,
and no race takes a lookup outside.

Judged three ways: scenarios (each backend), a hypothesis property against the kernel's own
``realpath`` on random trees of such links (same place whenever realpath stays inside, an escape
whenever it leaves), and a race where an attacker swaps the anchored link's directory with one
leading out while reads run.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import safefs
from safefs import _sys
from safefs.testing import Swapper
from tests.race_window import RACE_SECONDS
from tests.safefs.conftest import BACKENDS, Backend


def anchored(path: str | Path, backend: Backend) -> safefs.Root:
    if backend == "walk-no-o-path":
        return safefs.Root(path, resolver="walk", absolute_links="anchored", _use_o_path=False)
    if backend == "walk-python":
        return safefs.Root(path, resolver="walk", absolute_links="anchored", _native_walk=False)
    return safefs.Root(path, resolver=backend, absolute_links="anchored")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    b: Backend = request.param
    if b == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("native extension not built")
    return b


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "legit").mkdir(parents=True)
    (ws / "legit" / "file.txt").write_text("inside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "file.txt").write_text("OUTSIDE")
    os.symlink(ws / "legit", ws / "abs")  # absolute, inside
    os.symlink(str(ws / "legit") + "/", ws / "abs_slash")
    os.symlink(ws, ws / "self")  # the root itself
    os.symlink(tmp_path / "outside", ws / "out")  # absolute, outside
    os.symlink(str(ws) + "/../outside", ws / "dotdot")  # under the anchor, then above it
    os.symlink(str(ws) + "/legit/../../outside", ws / "deep_dotdot")
    os.symlink(str(ws) + "x/legit", ws / "prefix")  # a name that merely starts like the root
    os.symlink("abs/file.txt", ws / "chain")  # relative, then absolute
    return ws


def test_absolute_link_inside_is_followed(tree: Path, backend: Backend) -> None:
    with anchored(tree, backend) as root:
        assert root.absolute_links == "anchored"
        assert root.read_text("abs/file.txt") == "inside"
        assert root.read_text("abs_slash/file.txt") == "inside"
        assert root.read_text("self/legit/file.txt") == "inside"
        assert root.read_text("chain") == "inside"
        assert root.resolve("abs/file.txt") == "legit/file.txt"
        assert root.resolve("self") == "."
        assert root.is_dir("abs") and root.exists("abs/file.txt")
        assert root.stat("chain").st_size == len("inside")
        root.write_text("abs/new.txt", "made")
        assert (tree / "legit" / "new.txt").read_text() == "made"
        with root.open("chain", "a") as f:
            f.write("+")
        assert (tree / "legit" / "file.txt").read_text() == "inside+"
        assert sorted(root.listdir("abs")) == ["file.txt", "new.txt"]
        root.chmod("chain", 0o600)
        assert (tree / "legit" / "file.txt").stat().st_mode & 0o777 == 0o600
        # A sub-root anchors at its own path: the parent's anchor is outside it.
        with root.opendir("legit") as sub:
            os.symlink(tree / "legit" / "file.txt", tree / "legit" / "mine")
            assert sub.read_text("mine") == "inside+"
            with pytest.raises(safefs.PathEscapeError):
                sub.read_text("../abs/file.txt")


@pytest.mark.parametrize("link", ["out", "dotdot", "deep_dotdot", "prefix"])
def test_every_other_absolute_target_is_an_escape(tree: Path, backend: Backend, link: str) -> None:
    with anchored(tree, backend) as root:
        with pytest.raises(safefs.PathEscapeError):
            root.read_text(f"{link}/file.txt")
        with pytest.raises(safefs.PathEscapeError):
            root.write_text(f"{link}/made.txt", "x")
        with pytest.raises(safefs.PathEscapeError):
            root.resolve(f"{link}/file.txt")
    assert (tree.parent / "outside" / "file.txt").read_text() == "OUTSIDE"
    assert not (tree.parent / "outside" / "made.txt").exists()


def test_refused_is_the_default(tree: Path, backend: Backend) -> None:
    with safefs.Root(tree) as root:
        assert root.absolute_links == "refused"
        with pytest.raises(safefs.PathEscapeError):
            root.read_text("abs/file.txt")


def test_root_given_through_a_symlink_anchors_both_spellings(tmp_path: Path, backend: Backend) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "f").write_text("x")
    os.symlink(real, tmp_path / "via")
    os.symlink(tmp_path / "via" / "f", real / "by_link")
    os.symlink(real / "f", real / "by_real")
    with anchored(tmp_path / "via", backend) as root:
        assert root.read_text("by_link") == "x"
        assert root.read_text("by_real") == "x"


def test_only_with_beneath(tmp_path: Path) -> None:
    modes: list[safefs.SymlinkMode] = ["none", "in_root"]
    for mode in modes:
        with pytest.raises(ValueError, match="absolute_links"):
            safefs.Root(tmp_path, symlinks=mode, absolute_links="anchored")
    with pytest.raises(ValueError, match="absolute_links"):
        safefs.Root(tmp_path, absolute_links="followed")  # type: ignore[arg-type]


def test_creating_an_absolute_link_is_still_refused(tree: Path, backend: Backend) -> None:
    # The link guarantee is about what any program following the link reaches: not safefs's rule.
    with anchored(tree, backend) as root:
        with pytest.raises(safefs.PathEscapeError):
            root.symlink(str(tree / "legit"), "made")


# -- property: the kernel's realpath is the judge ------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c"])
# A link target: absolute under the root, absolute through the root's symlink spelling, absolute
# outside, relative; with a tail that may climb.
TARGETS = st.tuples(
    st.sampled_from(["ROOT", "VIA", "OUT", "REL"]),
    st.lists(st.sampled_from(["a", "b", "c", "..", "."]), max_size=3),
)
ENTRIES = st.lists(
    st.tuples(st.lists(NAMES, min_size=1, max_size=3), st.sampled_from(["dir", "file", "link"]), TARGETS),
    max_size=10,
)


def _make(base: Path, ws: Path, entries: list[tuple[list[str], str, tuple[str, list[str]]]]) -> None:
    heads = {"ROOT": str(ws), "VIA": str(base / "via"), "OUT": str(base / "out")}
    for parts, kind, (head, tail) in entries:
        path = ws.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "dir":
                path.mkdir()
            elif kind == "file":
                path.write_text("/".join(parts))
            else:
                rest = "/".join(tail)
                target = rest if head == "REL" else heads[head] + ("/" + rest if rest else "")
                os.symlink(target or ".", path)
        except OSError:
            continue  # a name already taken, a parent that is a file or a link: skip it


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=ENTRIES, probe=st.lists(st.sampled_from(["a", "b", "c", ".."]), min_size=1, max_size=4))
def test_anchored_agrees_with_realpath(backend: Backend, entries: list, probe: list[str]) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(os.path.realpath(tmp))
        ws = base / "ws"
        ws.mkdir()
        (base / "out").mkdir()
        (base / "out" / "a").write_text("OUTSIDE")
        os.symlink(ws, base / "via")
        _make(base, ws, entries)
        rel = "/".join(probe)
        real = os.path.realpath(ws / rel)
        inside = real == str(ws) or real.startswith(str(ws) + "/")
        with anchored(base / "via", backend) as root:
            try:
                got = root.resolve(rel)
            except safefs.PathEscapeError:
                # Leaving the root anywhere on the way (even to come back) is an escape for
                # "beneath"; the kernel's answer then may lie inside or out.
                return
            except OSError as exc:
                assert exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT), exc
                return
            assert inside, f"{rel!r} resolved to {got!r} inside, realpath says {real!r}"
            want = os.path.relpath(real, ws)
            assert got == want
            if os.path.isfile(real):
                # Read by the resolved name: "b/../a" with b missing resolves (realpath and
                # resolve take the name back) but cannot be opened as spelled.
                assert root.read_text(got) == Path(real).read_text()


# -- race: the anchored link's directory swapped for one leading out -----------------------------


@pytest.mark.skipif(not _sys.have_renameat2(), reason="the attacker needs renameat2")
def test_race_anchored_link_never_leads_out(tmp_path: Path, backend: Backend) -> None:
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "f").write_text("inside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f").write_text("OUTSIDE")
    os.symlink(ws / "d", ws / "abs")  # the anchored link, followed from the root
    os.symlink(tmp_path / "outside", ws / "bad")  # swapped with d: abs/f then names bad/f
    counts: Counter[str] = Counter()
    with anchored(ws, backend) as root, Swapper(str(ws / "d"), str(ws / "bad")):
        deadline = time.monotonic() + RACE_SECONDS
        while time.monotonic() < deadline:
            for path in ("abs/f", "abs/../abs/f"):
                try:
                    got = root.read_text(path)
                except safefs.PathEscapeError:
                    counts["refused"] += 1
                except OSError as exc:
                    assert exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EAGAIN), exc
                    counts[errno.errorcode[exc.errno or 0]] += 1
                else:
                    assert got == "inside", f"read {got!r} through an anchored link"
                    counts["inside"] += 1
    print(f"anchored race ({backend}): {dict(counts)}")
    assert counts["inside"] > 0
    assert (tmp_path / "outside" / "f").read_text() == "OUTSIDE"
    shutil.rmtree(tmp_path / "outside")
