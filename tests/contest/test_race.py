"""``race_strategy`` itself: it sees leaks where there are leaks, holds safefs to zero, and leaves
nothing behind (no temp tree, no fd)."""

from __future__ import annotations

import gc
import os
import tempfile
from pathlib import Path

import pytest

from safefs import capabilities
from safefs_bench.race import race_strategy
from safefs_bench.strategies import SAFEFS_OPENAT2, SAFEFS_WALK, UNCONFINED

pytestmark = pytest.mark.skipif(not capabilities().renameat2, reason="the attacker needs renameat2")


@pytest.fixture
def own_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Races build their arenas here, so the test can see that they are cleaned up."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def open_fds() -> dict[str, str]:
    gc.collect()  # a Process object in a cycle would hold its sentinel pipe until collected
    out = {}
    for n in os.listdir("/proc/self/fd"):
        try:
            out[n] = os.readlink(f"/proc/self/fd/{n}")
        except OSError:
            pass
    return out


@pytest.mark.parametrize(
    "op, swap", [("read", "dir"), ("write", "dir"), ("read", "final"), ("write", "final")]
)
def test_unconfined_leaks_and_the_harness_counts_it(own_tempdir: Path, op: str, swap: str) -> None:
    counts = race_strategy(UNCONFINED, op, 0.5, swap)
    print(counts)
    assert counts.escapes > 0
    assert counts.attempts == counts.inside + counts.refused + counts.escapes
    assert os.listdir(own_tempdir) == []


def test_no_descriptor_left_behind(own_tempdir: Path) -> None:
    race_strategy(SAFEFS_WALK, "read", 0.1, "dir")  # multiprocessing sets up its helpers once
    fds = open_fds()
    race_strategy(SAFEFS_WALK, "write", 0.2, "final")
    race_strategy(UNCONFINED, "write", 0.2, "dir")
    assert open_fds() == fds


@pytest.mark.parametrize("strategy", [SAFEFS_WALK, SAFEFS_OPENAT2])
@pytest.mark.parametrize("op, swap", [("read", "dir"), ("write", "dir"), ("write", "final")])
def test_safefs_holds(own_tempdir: Path, strategy: str, op: str, swap: str) -> None:
    if strategy == SAFEFS_OPENAT2 and not capabilities().native_extension:
        pytest.skip("native extension not built")
    counts = race_strategy(strategy, op, 0.5, swap)
    print(counts)
    assert counts.escapes == 0
    assert counts.refused > 0  # it was really attacked
    assert counts.inside + counts.refused == counts.attempts
    if swap == "dir":  # overwriting the swapped file itself succeeds far more rarely
        assert counts.inside > 0
    assert os.listdir(own_tempdir) == []


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"op": "delete"}, "op must be one of"),
        ({"swap": "root"}, "swap must be one of"),
        ({"seconds": 0}, "seconds must be positive"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"strategy": UNCONFINED, "op": "read", "seconds": 0.1, "swap": "dir"}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        race_strategy(**args)  # type: ignore[arg-type]
