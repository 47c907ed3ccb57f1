"""One race of an original and its drop-in, side by side: the skip mark for platforms without
the attacker, and the run that prints both counts (the race tests of each framework share it)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from functools import partial

import pytest

from safefs import capabilities
from safefs.testing import RaceCounts, Victim, race

NEEDS_ATTACKER = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not capabilities().renameat2,
    reason="the attacker swaps names with renameat2 (Linux)",
)


def race_each(
    victim: Callable[..., Victim], implementations: Iterable[str], op: str, swap: str, seconds: float
) -> dict[str, RaceCounts]:
    """``race`` of ``victim(workspace, implementation=name)`` for each name; prints each count."""
    counts = {
        name: race(partial(victim, implementation=name), op, seconds, swap, name=name)
        for name in implementations
    }
    for name, c in counts.items():
        print(
            f"{op}/{swap}: {name}: {c.escapes} escapes / {c.attempts} attempts "
            f"({c.inside} inside, {c.refused} refused, {c.swaps} swaps)"
        )
    return counts
