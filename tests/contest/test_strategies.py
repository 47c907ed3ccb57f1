"""Every contestant does each operation right on a plain tree; the baselines fail the way their
labels say (unconfined contains nothing; the realpath guard stops static escapes, only races get
through it) and the confined strategies refuse the same static escapes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from safefs.testing import GuardRefusal, is_inside, realpath_of_nearest_existing
from safefs_bench.strategies import (
    BASELINES,
    REALPATH,
    STRATEGY_NAMES,
    UNCONFINED,
    Strategy,
    StrategyUnavailable,
    open_strategy,
)
from safefs_bench.trees import FILE_CONTENT, READ_SIZE, SHAPES, Shape, build_tree, real_dir

CONFINED = [n for n in STRATEGY_NAMES if n not in BASELINES]
SECRET = b"outside secret\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A bench tree in ``ws/`` beside ``outside/`` (holding a secret), plus escaping links."""
    root = tmp_path / "ws"
    root.mkdir()
    build_tree(str(root))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(SECRET)
    os.symlink(outside, root / "evil")  # a directory link to the outside
    os.symlink(outside / "secret", root / "leak")  # a file link to the outside
    os.symlink("../../outside/secret", root / "a1" / "rel-leak")  # relative, climbs out
    return root


def opened(name: str, root: Path) -> Strategy:
    try:
        return open_strategy(name, str(root))
    except StrategyUnavailable as exc:
        pytest.skip(f"{name}: {exc}")


@pytest.fixture(params=STRATEGY_NAMES)
def strategy(request: pytest.FixtureRequest, ws: Path) -> Iterator[Strategy]:
    s = opened(request.param, ws)
    yield s
    s.close()


@pytest.fixture(params=CONFINED)
def confined(request: pytest.FixtureRequest, ws: Path) -> Iterator[Strategy]:
    s = opened(request.param, ws)
    yield s
    s.close()


by_shape = pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])


@by_shape
def test_read(strategy: Strategy, shape: Shape) -> None:
    assert strategy.read(shape.file) == FILE_CONTENT


@by_shape
def test_write_replaces_and_creates(strategy: Strategy, ws: Path, shape: Shape) -> None:
    where = Path(real_dir(str(ws), shape))
    strategy.write(shape.write_target, b"replaced\n")
    assert (where / "w").read_bytes() == b"replaced\n"
    new = f"{shape.dir}/fresh" if shape.dir else "fresh"
    strategy.write(new, b"created\n")
    assert (where / "fresh").read_bytes() == b"created\n"


@by_shape
def test_stat(strategy: Strategy, shape: Shape) -> None:
    st = strategy.stat(shape.file)
    assert st.st_size == READ_SIZE


@by_shape
def test_listdir(strategy: Strategy, ws: Path, shape: Shape) -> None:
    assert sorted(strategy.listdir(shape.listdir_target)) == sorted(os.listdir(real_dir(str(ws), shape)))


@by_shape
def test_makedirs_creates_parents_and_accepts_existing(strategy: Strategy, ws: Path, shape: Shape) -> None:
    rel = f"{shape.mkdir_target}/x/y"
    strategy.makedirs(rel)
    assert (Path(real_dir(str(ws), shape)) / "new" / "x" / "y").is_dir()
    strategy.makedirs(rel)  # mkdir -p: already there is fine


def test_missing_file_is_file_not_found(strategy: Strategy) -> None:
    with pytest.raises(FileNotFoundError):
        strategy.read("a1/nothing-here")


# -- static escapes ---------------------------------------------------------------------------

READ_ESCAPES = ["../outside/secret", "evil/secret", "leak", "a1/rel-leak", "a1/../../outside/secret"]
WRITE_ESCAPES = ["../outside/new", "evil/new", "evil/secret", "leak"]


@pytest.mark.parametrize("path", READ_ESCAPES)
def test_realpath_guard_refuses_static_read_escape(ws: Path, path: str) -> None:
    guard = opened(REALPATH, ws)
    with pytest.raises(GuardRefusal) as info:
        guard.read(path)
    assert isinstance(info.value, PermissionError)


@pytest.mark.parametrize("path", WRITE_ESCAPES)
def test_realpath_guard_refuses_static_write_escape(ws: Path, path: str) -> None:
    guard = opened(REALPATH, ws)
    with pytest.raises(GuardRefusal):
        guard.write(path, b"x")
    assert (ws.parent / "outside" / "secret").read_bytes() == SECRET
    assert not (ws.parent / "outside" / "new").exists()


@pytest.mark.parametrize("path", ["../outside", "evil"])
def test_realpath_guard_refuses_static_escape_for_every_operation(ws: Path, path: str) -> None:
    guard = opened(REALPATH, ws)
    for op in (guard.stat, guard.listdir, guard.makedirs):
        with pytest.raises(GuardRefusal):
            op(path)
    with pytest.raises(GuardRefusal):
        guard.makedirs(f"{path}/sub")
    assert not (ws.parent / "outside" / "sub").exists()


@pytest.mark.parametrize("path", READ_ESCAPES)
def test_confined_strategies_refuse_static_read_escape(confined: Strategy, path: str) -> None:
    with pytest.raises(PermissionError):
        confined.read(path)


@pytest.mark.parametrize("path", WRITE_ESCAPES)
def test_confined_strategies_refuse_static_write_escape(confined: Strategy, ws: Path, path: str) -> None:
    with pytest.raises(PermissionError):
        confined.write(path, b"x")
    assert (ws.parent / "outside" / "secret").read_bytes() == SECRET
    assert not (ws.parent / "outside" / "new").exists()


def test_unconfined_contains_nothing(ws: Path) -> None:
    """The floor is labelled honestly: it reads straight through an escaping link."""
    s = opened(UNCONFINED, ws)
    assert s.read("leak") == SECRET
    assert s.read("../outside/secret") == SECRET


def test_containment_check_is_not_a_string_prefix(tmp_path: Path) -> None:
    assert is_inside("/srv/ws", "/srv/ws/a/b")
    assert is_inside("/srv/ws", "/srv/ws")
    assert not is_inside("/srv/ws", "/srv/ws-evil/f")
    assert not is_inside("/srv/ws", "/srv")
    assert not is_inside("/srv/ws", "/etc/passwd")


def test_nearest_existing_ancestor_is_what_gets_checked(ws: Path) -> None:
    real_ws = os.path.realpath(ws)
    assert realpath_of_nearest_existing(os.path.join(real_ws, "a1", "new", "deeper")) == os.path.join(
        real_ws, "a1"
    )
    assert realpath_of_nearest_existing(os.path.join(real_ws, "evil", "new")) == os.path.realpath(
        ws.parent / "outside"
    )


def test_unknown_strategy_is_a_clear_error(ws: Path) -> None:
    with pytest.raises(ValueError, match="unknown strategy 'chroot'"):
        open_strategy("chroot", str(ws))


def test_realpath_guard_writes_through_a_dangling_link(ws: Path) -> None:
    """A hole of the pattern itself, kept in the port on purpose: ``realpath`` of a dangling link
    fails, the guard falls back to the link's parent (inside), and the write then follows the
    link out. No race is needed; the contest's counts do not rely on it."""
    outside_new = ws.parent / "outside" / "planted"
    os.symlink(outside_new, ws / "dangling")
    opened(REALPATH, ws).write("dangling", b"x")
    assert outside_new.read_bytes() == b"x"


def test_confined_strategies_refuse_a_dangling_link_out(confined: Strategy, ws: Path) -> None:
    outside_new = ws.parent / "outside" / "planted"
    os.symlink(outside_new, ws / "dangling")
    with pytest.raises(PermissionError):
        confined.write("dangling", b"x")
    assert not outside_new.exists()
