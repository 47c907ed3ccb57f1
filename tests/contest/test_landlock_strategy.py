"""The Landlock contestant: plain path strings in a worker Landlock confines to the workspace.
It does each operation right, the kernel refuses the static escapes the other confined
strategies refuse, and a short live race lets nothing out."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from safefs_bench.race import OPS, SWAPS, race_strategy
from safefs_bench.strategies import LANDLOCK, Strategy, StrategyUnavailable, open_strategy
from safefs_bench.trees import FILE_CONTENT, READ_SIZE, SHAPES, Shape, build_tree, real_dir

SECRET = b"outside secret\n"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("landlock")
    root = base / "ws"
    root.mkdir()
    build_tree(str(root))
    (base / "outside").mkdir()
    (base / "outside" / "secret").write_bytes(SECRET)
    os.symlink(base / "outside", root / "evil")
    os.symlink(base / "outside" / "secret", root / "leak")
    os.symlink("../../outside/secret", root / "a1" / "rel-leak")
    return root


@pytest.fixture(scope="module")
def confined(tree: Path) -> Iterator[Strategy]:
    try:
        s = open_strategy(LANDLOCK, str(tree))
    except StrategyUnavailable as exc:
        pytest.skip(str(exc))
    yield s
    s.close()


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_operations_inside_work(confined: Strategy, tree: Path, shape: Shape) -> None:
    assert confined.read(shape.file) == FILE_CONTENT
    assert confined.stat(shape.file).st_size == READ_SIZE
    confined.write(shape.write_target, b"replaced\n")
    assert (Path(real_dir(str(tree), shape)) / "w").read_bytes() == b"replaced\n"
    assert sorted(confined.listdir(shape.listdir_target)) == sorted(os.listdir(real_dir(str(tree), shape)))
    confined.makedirs(f"{shape.mkdir_target}/x")
    assert (Path(real_dir(str(tree), shape)) / "new" / "x").is_dir()


@pytest.mark.parametrize("path", ["../outside/secret", "evil/secret", "leak", "a1/rel-leak"])
def test_the_kernel_refuses_static_escapes(confined: Strategy, tree: Path, path: str) -> None:
    with pytest.raises(PermissionError):
        confined.read(path)
    with pytest.raises(PermissionError):
        confined.write(path, b"x")
    assert (tree.parent / "outside" / "secret").read_bytes() == SECRET


def test_missing_file_is_file_not_found(confined: Strategy) -> None:
    with pytest.raises(FileNotFoundError):
        confined.read("a1/nothing-here")


def test_timed_counts_the_calls_in_the_worker(confined: Strategy) -> None:
    assert confined.timed("read", 10, SHAPES[0].file) > 0


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("swap", SWAPS)
def test_no_escape_under_a_live_swap(op: str, swap: str) -> None:
    try:
        counts = race_strategy(LANDLOCK, op, 0.5, swap)
    except StrategyUnavailable as exc:
        pytest.skip(str(exc))
    print(counts)
    assert counts.escapes == 0, counts
    assert counts.attempts == counts.inside + counts.refused > 0
    assert counts.swaps > 0
