"""Agent frameworks' file tools and safefs's drop-ins as contest strategies: each reads, writes
and lists through real calls of the framework's API, and is raced like any other. A strategy
whose framework is not installed is not available, and says which extra brings it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("safefs_bench")

from safefs import capabilities
from safefs_bench.race import race_strategy
from safefs_bench.strategies import (
    CONTEST_STRATEGIES,
    DESCRIPTIONS,
    FRAMEWORK_STRATEGIES,
    Strategy,
    StrategyUnavailable,
    open_strategy,
)

# The originals that refuse a path outside at all (pydantic-ai's backend and strands' tools
# confine nothing, nor do Claude Code's tools allowed by bare name).
UNCONFINED = {"pydantic-ai-workspace", "claude-agent-sdk-tools", "strands-file-tools"}
REFUSES_OUTSIDE = {name for name in FRAMEWORK_STRATEGIES if name not in UNCONFINED}
DROP_INS = [name for name in FRAMEWORK_STRATEGIES if name.startswith("safefs-")]


def _opened(name: str, work: Path) -> Strategy:
    try:
        return open_strategy(name, str(work))
    except StrategyUnavailable as exc:
        assert "safefs[" in str(exc)
        pytest.skip(str(exc))


@pytest.mark.parametrize("name", FRAMEWORK_STRATEGIES)
def test_each_reads_writes_lists_and_refuses_as_its_framework_does(name: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "d").mkdir(parents=True)
    (work / "d" / "f").write_bytes(b"inside\nsecond line\n")
    (tmp_path / "secret").write_bytes(b"outside\n")
    assert name in CONTEST_STRATEGIES and DESCRIPTIONS[name]
    with _opened(name, work) as s:
        assert s.read("d/f") == b"inside\nsecond line\n"
        s.write("d/new", b"written\n")
        s.write("d/new", b"written again\n")
        assert (work / "d" / "new").read_bytes() == b"written again\n"
        assert sorted(s.listdir("d")) == ["f", "new"]
        if name in REFUSES_OUTSIDE:
            with pytest.raises(PermissionError):
                s.read("../secret")
            with pytest.raises(PermissionError):
                s.write("../planted", b"x")
    if name in REFUSES_OUTSIDE:
        assert not (tmp_path / "planted").exists()


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not capabilities().renameat2, reason="the attack needs renameat2"
)
@pytest.mark.parametrize("name", DROP_INS)
def test_the_drop_ins_do_not_escape_a_short_race(name: str, tmp_path: Path) -> None:
    _opened(name, tmp_path).close()
    for op in ("read", "write"):
        counts = race_strategy(name, op, 0.5, "dir")
        print(f"{name} {op}: {counts.escapes} escapes / {counts.attempts} attempts ({counts.swaps} swaps)")
        assert counts.escapes == 0
        assert counts.attempts > 0
