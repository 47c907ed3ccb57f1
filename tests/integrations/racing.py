"""The skip mark for platforms without the attacker, beside the race of an original and its
drop-in that prints both counts (``support.race_each``, re-exported here)."""

from __future__ import annotations

import sys

import pytest

from safefs import capabilities
from tests.integrations.support import race_each

__all__ = ["NEEDS_ATTACKER", "race_each"]

NEEDS_ATTACKER = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not capabilities().renameat2,
    reason="the attacker swaps names with renameat2 (Linux)",
)
