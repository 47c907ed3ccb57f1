"""A contestant that refuses a read the cost phase asks for (agno's ``FileTools`` will not read a
64 MiB file whole) is left out of that reading, with its error in the run, instead of ending it."""

from __future__ import annotations

from pathlib import Path

import pytest

from safefs_bench import cli as contest
from safefs_bench import report
from safefs_bench.strategies import Strategy, Unconfined


class SizeLimited(Unconfined):
    """Unconfined, refusing files over a limit as a tool with a size cap does."""

    name = "size-limited"
    LIMIT = 1024

    def read(self, rel: str) -> bytes:
        data = super().read(rel)
        if len(data) > self.LIMIT:
            raise PermissionError("Error reading file: file too long")
        return data


def test_a_refused_read_is_left_out_and_said(tmp_path: Path) -> None:
    (tmp_path / "small").write_bytes(b"x" * 10)
    (tmp_path / "big").write_bytes(b"x" * 4096)
    results = contest.Results(machine={}, seconds=1.0, notes={})
    opened: dict[str, Strategy] = {
        "unconfined": Unconfined(str(tmp_path)),
        "size-limited": SizeLimited(str(tmp_path)),
    }
    for name in opened:
        results.cost[name] = contest.Cost()
    assert set(contest.readers_of(opened, "small", 10, results)) == {"unconfined", "size-limited"}
    assert set(contest.readers_of(opened, "big", 4096, results)) == {"unconfined"}
    assert results.cost["size-limited"].refused == {"read 4 KiB at big": "Error reading file: file too long"}
    assert results.cost["unconfined"].refused == {}
    saved = results.as_json()
    assert saved["cost"]["size-limited"]["refused"] == {
        "read 4 KiB at big": "Error reading file: file too long"
    }
    page = report.markdown(saved, None)
    assert (
        "Not measured: `size-limited` refused to read 4 KiB at big (Error reading file: file too long)."
        in page
    )


def test_a_wrong_content_still_fails_the_contest(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"short")
    results = contest.Results(machine={}, seconds=1.0, notes={})
    results.cost["unconfined"] = contest.Cost()
    with pytest.raises(RuntimeError, match="read the wrong content of f"):
        contest.readers_of({"unconfined": Unconfined(str(tmp_path))}, "f", 6, results)
