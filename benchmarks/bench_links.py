"""Judging a move costs what following costs: a rename of a tree of 3,000 links that all pass
through one long shared chain (18 links, each climbing 100 levels to the root and coming back
down), beside the kernel following each of those links once (``os.stat``).

Judged afresh, each link would cost the whole chain again; the judge follows each link of the
chain once per operation, so the rename stays a small multiple of following the links (the
criterion ``rename-links-vs-kernel-follow`` in ``benchmarks/criteria.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

import safefs
from benchmarks.criteria import BY_KEY
from tests.safefs.test_link_cost import build_chain

LINKS = 3000
CHAIN = 18
CLIMB = 100
KEY = "rename-links-vs-kernel-follow"


@pytest.fixture(scope="module")
def chained_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``a/m`` holds the links (``../chain`` and ``../chain/f``); ``a/chain`` and ``b/chain``
    lead to the shared chain, so ``a/m`` and ``b/m`` judge the same way."""
    root = tmp_path_factory.mktemp("links") / "ws"
    root.mkdir()
    build_chain(root, CHAIN, CLIMB)
    for side in ("a", "b"):
        (root / side).mkdir()
        os.symlink("../chain", root / side / "chain")
    tree = root / "a" / "m"
    tree.mkdir()
    for j in range(LINKS):
        os.symlink("../chain/f" if j % 2 else "../chain", tree / f"l{j}")
    yield root


def tag(benchmark: BenchmarkFixture, role: str) -> None:
    assert KEY in BY_KEY
    benchmark.group = f"criterion {KEY}"
    benchmark.extra_info.update(criterion=KEY, role=role)


@pytest.mark.parametrize("role", ["subject", "reference"])
def test_rename_of_a_chained_tree(benchmark: BenchmarkFixture, chained_tree: Path, role: str) -> None:
    tag(benchmark, role)
    root = chained_tree
    where = ["a", "b"] if (root / "a" / "m").exists() else ["b", "a"]  # where the tree is now

    def rename() -> None:
        with safefs.Root(root) as r:
            r.rename(f"{where[0]}/m", f"{where[1]}/m")
        where.reverse()

    def follow_each() -> None:
        tree = root / where[0] / "m"
        for j in range(LINKS):
            os.stat(tree / f"l{j}")

    benchmark.pedantic(rename if role == "subject" else follow_each, rounds=3, iterations=1)  # type: ignore[no-untyped-call]
    assert len(os.listdir(root / where[0] / "m")) == LINKS
