"""The attacker process, from safefs's public attack harness (:mod:`safefs.testing`)."""

from safefs.testing import Swapper, run_for

__all__ = ["Swapper", "run_for"]
