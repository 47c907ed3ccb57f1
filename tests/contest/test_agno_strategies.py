"""agno's ``FileTools`` and safefs's drop-in as contest strategies: both refuse a path outside
as agno does (the short race of every drop-in is tests/contest/test_framework_strategies.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("safefs_bench")

from safefs_bench.strategies import (
    AGNO_FILE_TOOLS,
    CONTEST_STRATEGIES,
    DESCRIPTIONS,
    FRAMEWORK_STRATEGIES,
    SAFEFS_AGNO_FILE_TOOLS,
    Strategy,
    StrategyUnavailable,
    open_strategy,
)

AGNO = [AGNO_FILE_TOOLS, SAFEFS_AGNO_FILE_TOOLS]


def _opened(name: str, work: Path) -> Strategy:
    try:
        return open_strategy(name, str(work))
    except StrategyUnavailable as exc:
        assert "safefs[agno]" in str(exc)
        pytest.skip(str(exc))


@pytest.mark.parametrize("name", AGNO)
def test_each_refuses_outside_in_agnos_words(name: str, tmp_path: Path) -> None:
    """Reading, writing and listing inside are tests/contest/test_framework_strategies.py's;
    here both refuse a path outside with agno's own texts, and nothing is planted."""
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "secret").write_bytes(b"outside\n")
    assert name in FRAMEWORK_STRATEGIES and name in CONTEST_STRATEGIES and DESCRIPTIONS[name]
    with _opened(name, work) as s:
        with pytest.raises(PermissionError, match=r"^Error reading file$"):
            s.read("../secret")
        with pytest.raises(PermissionError, match=r"^Error saving file$"):
            s.write("../planted", b"x")
        with pytest.raises(PermissionError, match=r"^\{\}$"):
            s.listdir("..")
    assert not (tmp_path / "planted").exists()
