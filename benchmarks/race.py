"""Escapes under attack: one strategy reads or writes while a separate process swaps names.

The harness (workspace, attacker, classification of every attempt) is
:func:`safefs.testing.race`; here it attacks the benchmark strategies by name.
"""

from __future__ import annotations

from benchmarks.strategies import open_strategy
from safefs.testing import (
    INSIDE_CONTENT,
    OPS,
    OUTSIDE_CONTENT,
    OUTSIDE_TARGET,
    SWAPS,
    RaceCounts,
    race,
)

__all__ = ["INSIDE_CONTENT", "OPS", "OUTSIDE_CONTENT", "OUTSIDE_TARGET", "SWAPS", "RaceCounts",
           "race_strategy"]


def race_strategy(strategy: str, op: str, seconds: float, swap: str = "dir") -> RaceCounts:
    """Attack ``strategy`` doing ``op`` ("read" or "write") for ``seconds`` with the ``swap``
    attack ("dir" or "final"); returns the counts. Needs renameat2 (Linux)."""
    return race(lambda ws: open_strategy(strategy, ws), op, seconds, swap, name=strategy)
