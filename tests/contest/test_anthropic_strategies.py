"""The Anthropic SDK's file tools and safefs's drop-ins as contest strategies: each reads and
writes through real tool calls, refuses a path outside, and is raced like any other."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from safefs import capabilities
from safefs_bench.race import race_strategy
from safefs_bench.strategies import (
    ANTHROPIC_STRATEGIES,
    CONTEST_STRATEGIES,
    DESCRIPTIONS,
    open_strategy,
)


@pytest.mark.parametrize("name", ANTHROPIC_STRATEGIES)
def test_each_reads_writes_and_refuses_a_path_outside(name: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "d").mkdir(parents=True)
    (work / "d" / "f").write_bytes(b"inside\nsecond line\n")
    (tmp_path / "secret").write_bytes(b"outside\n")
    assert name in CONTEST_STRATEGIES and DESCRIPTIONS[name]
    with open_strategy(name, str(work)) as s:
        assert s.read("d/f") == b"inside\nsecond line\n"
        s.write("d/new", b"written\n")
        s.write("d/new", b"written again\n")  # replacing a file works too
        assert (work / "d" / "new").read_bytes() == b"written again\n"
        assert s.read("d/new") == b"written again\n"
        with pytest.raises(PermissionError):
            s.read("../secret")
        with pytest.raises(PermissionError):
            s.write("../planted", b"x")
        with pytest.raises(OSError):
            s.listdir("d")
    assert not (tmp_path / "planted").exists()


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not capabilities().renameat2, reason="the attack needs renameat2"
)
@pytest.mark.parametrize("name", ["safefs-anthropic-toolset", "safefs-anthropic-memory"])
def test_the_drop_ins_do_not_escape_a_short_race(name: str) -> None:
    for op in ("read", "write"):
        counts = race_strategy(name, op, 0.5, "dir")
        print(f"{name} {op}: {counts.escapes} escapes / {counts.attempts} attempts ({counts.swaps} swaps)")
        assert counts.escapes == 0
        assert counts.attempts > 0
