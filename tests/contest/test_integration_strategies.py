"""Archive extraction and fsspec as contest strategies, the originals beside safefs's: each
reads and writes, safefs's refuse a path outside, and safefs's show no escape in a short race
(the originals' counts printed beside)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from safefs import capabilities
from safefs_bench.race import race_strategy
from safefs_bench.strategies import (
    CONTEST_STRATEGIES,
    DESCRIPTIONS,
    INTEGRATION_STRATEGIES,
    StrategyUnavailable,
    open_strategy,
)


@pytest.mark.parametrize("name", INTEGRATION_STRATEGIES)
def test_each_reads_writes_and_safefs_refuses_a_path_outside(name: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "d").mkdir(parents=True)
    (work / "d" / "f").write_bytes(b"inside\n")
    (tmp_path / "secret").write_bytes(b"outside\n")
    (work / "evil").symlink_to(tmp_path)
    assert name in CONTEST_STRATEGIES and DESCRIPTIONS[name]
    try:
        s = open_strategy(name, str(work))
    except StrategyUnavailable as exc:
        pytest.skip(str(exc))
    with s:
        assert s.read("d/f") == b"inside\n"
        s.write("d/new", b"written\n")
        s.write("d/new", b"written again\n")
        assert (work / "d" / "new").read_bytes() == b"written again\n"
        if name.startswith("safefs-"):
            with pytest.raises(OSError):
                s.read("evil/secret")
            with pytest.raises(OSError):
                s.write("evil/planted", b"x")
    if name.startswith("safefs-"):
        assert not (tmp_path / "planted").exists()


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not capabilities().renameat2, reason="the attack needs renameat2"
)
@pytest.mark.parametrize(
    ("theirs", "ours"), [("tarfile-data", "safefs-archive"), ("fsspec-dirfs", "safefs-fsspec")]
)
def test_safefs_does_not_escape_a_short_race(theirs: str, ours: str) -> None:
    pytest.importorskip("fsspec")
    for op in ("read", "write"):
        for name in theirs, ours:
            counts = race_strategy(name, op, 0.5, "dir")
            print(
                f"{name} {op}: {counts.escapes} escapes / {counts.attempts} attempts ({counts.swaps} swaps)"
            )
            assert counts.attempts > 0
            if name == ours:
                assert counts.escapes == 0
