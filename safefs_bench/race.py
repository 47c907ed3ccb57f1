"""Escapes under attack: one strategy reads or writes while a separate process swaps names.

The harness (workspace, attacker, classification of every attempt) is
:func:`safefs.testing.race`; here it attacks the benchmark strategies by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from safefs.testing import (
    INSIDE_CONTENT,
    OPS,
    OUTSIDE_CONTENT,
    OUTSIDE_TARGET,
    SWAPS,
    RaceCounts,
    race,
)
from safefs_bench.strategies import open_strategy

__all__ = [
    "INSIDE_CONTENT",
    "OPS",
    "OUTSIDE_CONTENT",
    "OUTSIDE_TARGET",
    "SWAPS",
    "RaceCounts",
    "race_strategy",
    "race_victim",
]


def race_strategy(strategy: str, op: str, seconds: float, swap: str = "dir") -> RaceCounts:
    """Attack ``strategy`` doing ``op`` ("read" or "write") for ``seconds`` with the ``swap``
    attack ("dir" or "final"); returns the counts. Needs renameat2 (Linux)."""
    return race(lambda ws: open_strategy(strategy, ws), op, seconds, swap, name=strategy)


def race_victim(
    label: str, open_victim: Callable[[str], Any], op: str, seconds: float, swap: str = "dir"
) -> RaceCounts:
    """As :func:`race_strategy`, for any victim: ``open_victim(workspace)`` is a context manager
    whose value has ``read(path) -> bytes`` and ``write(path, data)`` failing with OSError (such
    as an MCP server behind a client session)."""
    return race(open_victim, op, seconds, swap, name=label)
