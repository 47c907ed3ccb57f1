"""Each operation x strategy x path shape, one benchmark group per (operation, shape) so the
strategies sit side by side in the table. Correctness of every result is checked after timing."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from safefs_bench.strategies import STRATEGY_NAMES, Strategy
from safefs_bench.trees import FILE_CONTENT, READ_SIZE, SHAPES, WRITE_DATA, Shape, real_dir

by_shape = pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
by_strategy = pytest.mark.parametrize("name", STRATEGY_NAMES)
Opener = Callable[[str], Strategy]

MKDIR_ROUNDS = 300  # mkdir -p needs a fresh leaf each round, so it runs a fixed number of rounds


@by_shape
@by_strategy
def test_read(benchmark: BenchmarkFixture, open_on_tree: Opener, name: str, shape: Shape) -> None:
    s = open_on_tree(name)
    benchmark.group = f"read {shape.name}"
    assert benchmark(s.read, shape.file) == FILE_CONTENT


@by_shape
@by_strategy
def test_write(
    benchmark: BenchmarkFixture, open_on_tree: Opener, bench_tree: str, name: str, shape: Shape
) -> None:
    s = open_on_tree(name)
    benchmark.group = f"write-4KiB {shape.name}"
    benchmark(s.write, shape.write_target, WRITE_DATA)
    with open(os.path.join(real_dir(bench_tree, shape), "w"), "rb") as f:
        assert f.read() == WRITE_DATA


@by_shape
@by_strategy
def test_stat(benchmark: BenchmarkFixture, open_on_tree: Opener, name: str, shape: Shape) -> None:
    s = open_on_tree(name)
    benchmark.group = f"stat {shape.name}"
    assert benchmark(s.stat, shape.file).st_size == READ_SIZE


@by_shape
@by_strategy
def test_listdir(benchmark: BenchmarkFixture, open_on_tree: Opener, name: str, shape: Shape) -> None:
    s = open_on_tree(name)
    benchmark.group = f"listdir {shape.name}"
    assert {"f", "w"} <= set(benchmark(s.listdir, shape.listdir_target))


@by_shape
@by_strategy
def test_mkdir_p(
    benchmark: BenchmarkFixture, open_on_tree: Opener, bench_tree: str, name: str, shape: Shape
) -> None:
    s = open_on_tree(name)
    created = os.path.join(real_dir(bench_tree, shape), "new")

    def remove_leaf() -> None:
        try:
            os.rmdir(created)
        except FileNotFoundError:
            pass

    benchmark.group = f"mkdir-p {shape.name}"
    benchmark.pedantic(  # type: ignore[no-untyped-call]  # pytest-benchmark leaves it untyped
        s.makedirs, args=(shape.mkdir_target,), setup=remove_leaf, rounds=MKDIR_ROUNDS
    )
    assert os.path.isdir(created)
    remove_leaf()
