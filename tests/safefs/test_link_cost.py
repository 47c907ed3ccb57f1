"""Judging costs what following costs: the link judge of one operation follows each link once.

A moved tree of many links that all pass through one long shared chain (each link of the chain
climbs to the root and comes back down) is judged with about as many lookups as the chain itself
plus a few per link, counted as the system calls the judge makes (a noise-free measure); a tree
whose links are each expensive in their own way runs out of the work budget and is refused.
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from safefs import _sys
from safefs._resolve import links
from tests.safefs.conftest import Flavour, Workspace

CHAIN = 18  # links in the shared chain, each with its way back down: 36 of the 40
CLIMB = 200  # levels each link of the chain climbs (and its way down descends)
TREE = 200  # links in the moved tree


def build_chain(root: Path, chain: int, climb: int) -> None:
    """``chain`` -> the first of ``chain`` links at the bottom of a well ``climb`` deep; each
    climbs to the root and goes back down through ``bottom`` (a link) to the next; the last
    leads to the directory ``t``, which holds ``f``."""
    well = root.joinpath("w", *["d"] * (climb - 1))
    well.mkdir(parents=True)
    (root / "t").mkdir()
    (root / "t" / "f").write_bytes(b"f\n")
    os.symlink("/".join(["w", *["d"] * (climb - 1)]), root / "bottom")
    up = "../" * climb
    for i in range(1, chain):
        os.symlink(f"{up}bottom/s{i + 1}", well / f"s{i}")
    os.symlink(f"{up}t", well / f"s{chain}")
    os.symlink("bottom/s1", root / "chain")


def build_tree(where: Path, n: int) -> None:
    where.mkdir(parents=True)
    for j in range(n):
        os.symlink("../chain/f" if j % 2 else "../chain", where / f"l{j}")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How many lookups (opens, stats, readlinks) the judge makes: the real calls, counted."""
    calls: Counter[str] = Counter()

    def counting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return call

    for name in ("open_component", "openat", "fstatat", "fstat", "readlinkat"):
        monkeypatch.setattr(_sys, name, counting(name, getattr(_sys, name)))
    yield calls


def test_a_tree_of_links_through_one_shared_chain_is_judged_once(
    flavour: Flavour, workspace: Workspace, counted: Counter[str]
) -> None:
    root_path = workspace.root_path
    build_chain(root_path, CHAIN, CLIMB)
    # What following the chain once costs the kernel: every component of every target.
    assert os.stat(root_path / "chain" / "f")
    chain_steps = CHAIN * (2 * CLIMB)
    build_tree(root_path / "src" / "m", TREE)
    with flavour.open(root_path) as root:
        root.rename("src/m", "m")
    assert sorted(os.listdir(root_path / "m")) == sorted(f"l{j}" for j in range(TREE))
    total = sum(counted.values())
    print(f"[link cost] {flavour}: {total} lookups for {TREE} links through a chain of {chain_steps}")
    # Judged afresh, each link would cost the whole chain again: TREE * chain_steps lookups.
    assert total <= 3 * chain_steps + 12 * TREE, counted


def test_a_tree_too_costly_to_judge_is_refused(flavour: Flavour, workspace: Workspace) -> None:
    """Each link costs about 2,000 steps of its own (no two share one): 600 of them are more
    than the work budget, and the rename is refused instead of holding the caller."""
    root_path = workspace.root_path
    tree = root_path / "src" / "m"
    tree.mkdir(parents=True)
    (root_path / "f").write_bytes(b"f\n")
    n = links.WORK_BUDGET // 2000 + 80
    for j in range(n):
        os.symlink("./" * 2000 + "../f", tree / f"l{j}")
    with flavour.open(root_path) as root, pytest.raises(OSError) as caught:
        root.rename("src/m", "m")
    assert caught.value.errno == errno.ELOOP
    assert "more work" in str(caught.value)
    assert tree.is_dir() and not (root_path / "m").exists()
