"""Fixtures of the benchmark suite: one shared tree, and strategies opened on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from safefs_bench.strategies import Strategy, StrategyUnavailable, open_strategy
from safefs_bench.trees import build_tree


@pytest.fixture(scope="session")
def bench_tree(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("bench") / "ws"
    root.mkdir()
    build_tree(str(root))
    return str(root)


@pytest.fixture
def open_on_tree(bench_tree: str) -> Iterator[Callable[[str], Strategy]]:
    """``open_on_tree(name)``: the strategy on the bench tree, or a skip saying why it cannot
    run on this machine."""
    opened: list[Strategy] = []

    def open_one(name: str) -> Strategy:
        try:
            s = open_strategy(name, bench_tree)
        except StrategyUnavailable as exc:
            pytest.skip(f"{name}: {exc}")
        opened.append(s)
        return s

    yield open_one
    for s in opened:
        s.close()


@pytest.fixture
def tree_path(bench_tree: str) -> Callable[[str], str]:
    """The absolute host path of a tree-relative path (what the plain baselines open)."""
    return lambda rel: str(Path(bench_tree, rel))
