"""``safefs-bench --only`` (a run of some strategies alone) and ``--from`` given more than once (runs
of several environments merged into one set of numbers for ``--plot`` and ``--markdown``).

The runs are real, with a tiny attack time: each agent framework is installed only in an
environment of its own, so the whole contest is one run per environment, merged.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from safefs import capabilities
from safefs_bench import merge, plots
from safefs_bench.strategies import CONTEST_STRATEGIES, FRAMEWORK_STRATEGIES
from tests import compat_envs
from tests.contest.test_contest import bench_command

pytestmark = pytest.mark.slow  # several contest runs

SECONDS = "0.05"
Runs = dict[str, tuple[Path, dict[str, Any]]]  # name -> (its JSON file, its numbers)
needs_renameat2 = pytest.mark.skipif(not capabilities().renameat2, reason="the attack phase needs renameat2")


def bench(*argv: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*bench_command(), *argv], capture_output=True, text=True, timeout=600)
    print(proc.stdout)
    print(proc.stderr)
    return proc


def saved_run(directory: Path, name: str, only: str, seconds: str = SECONDS) -> tuple[Path, dict[str, Any]]:
    out = directory / f"{name}.json"
    proc = bench("--seconds", seconds, "--only", only, "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(out.read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Two runs as two environments would make them, sharing one strategy (realpath)."""
    directory = tmp_path_factory.mktemp("runs")
    return {
        # pathrs and agno's tools run only where their packages are installed (not in .venv):
        # where they do not, the run keeps the reason.
        "first": saved_run(directory, "first", "unconfined,realpath,pathrs,agno-file-tools"),
        "second": saved_run(directory, "second", "realpath,safefs-w*"),
    }


def ran(run: dict[str, Any]) -> set[str]:
    return {s for s, info in run["strategies"].items() if info["available"]}


def raced(run: dict[str, Any]) -> set[str]:
    return {r["strategy"] for r in run["attack"]["runs"]}


@needs_renameat2
def test_only_runs_the_strategies_it_names_in_both_phases(
    runs: Runs,
) -> None:
    _, second = runs["second"]
    assert ran(second) == {"realpath", "safefs-walk"}  # a pattern picks every match
    assert set(second["cost"]) == {"realpath", "safefs-walk"}
    assert raced(second) == {"realpath", "safefs-walk"}
    assert set(second["strategies"]) == set(CONTEST_STRATEGIES)  # the format keeps every row
    left_out = {s: info for s, info in second["strategies"].items() if s not in ran(second)}
    assert all(info["selected"] is False and info["note"] == merge.NOT_SELECTED for info in left_out.values())
    # Without unconfined in the run, no ratio to it is made up.
    assert second["cost"]["safefs-walk"]["read_ratio_to_unconfined"] == {}


@pytest.mark.parametrize(
    ("only", "message"),
    [
        ("nope", "no strategy 'nope'; the strategies are: unconfined, realpath"),
        ("unconfined,safefs-nothing-*", "no strategy 'safefs-nothing-*'"),
        (",", "names no strategy"),
    ],
)
def test_only_refuses_a_name_that_matches_no_strategy(only: str, message: str) -> None:
    proc = bench("--only", only)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "safefs-bench: error: argument --only" in proc.stderr
    assert ", ".join(CONTEST_STRATEGIES) in proc.stderr or "names no strategy" in message


def test_only_is_refused_with_from(tmp_path: Path) -> None:
    proc = bench("--from", str(tmp_path / "x.json"), "--only", "unconfined", "--plot", str(tmp_path))
    assert proc.returncode == 2 and "--from and --only" in proc.stderr


@needs_renameat2
def test_merging_takes_each_strategy_from_the_last_run_that_ran_it(
    runs: Runs,
) -> None:
    (first_path, first), (second_path, second) = runs["first"], runs["second"]
    merged = merge.merge_runs([(str(first_path), first), (str(second_path), second)])
    assert ran(merged) == ran(first) | ran(second)
    assert {"unconfined", "realpath", "safefs-walk"} <= ran(merged)
    assert merged["cost"]["unconfined"] == first["cost"]["unconfined"]
    assert merged["cost"]["realpath"] == second["cost"]["realpath"]  # the later run wins
    assert merged["cost"]["safefs-walk"] == second["cost"]["safefs-walk"]
    for name, source in (("unconfined", first), ("realpath", second), ("safefs-walk", second)):
        expected = [r for r in source["attack"]["runs"] if r["strategy"] == name]
        assert [r for r in merged["attack"]["runs"] if r["strategy"] == name] == expected
    assert merged["machine"] == first["machine"]
    assert merged["merged_from"][1]["strategies"] == ["realpath", "safefs-walk"]
    assert "unconfined" in merged["merged_from"][0]["strategies"]
    # A strategy that ran nowhere keeps the reason of a run that tried it, not "not selected".
    for name in set(CONTEST_STRATEGIES) - ran(merged):
        info = merged["strategies"][name]
        assert info["available"] is False
        if first["strategies"][name]["selected"]:
            assert info == first["strategies"][name] and info["note"] != merge.NOT_SELECTED
        else:
            assert info["note"] == merge.NOT_SELECTED
    # Merged the other way round, realpath comes from the first run.
    reverse = merge.merge_runs([(str(second_path), second), (str(first_path), first)])
    assert reverse["cost"]["realpath"] == first["cost"]["realpath"]


@needs_renameat2
def test_merged_runs_make_one_picture_and_one_page(runs: Runs, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    (first_path, first), (second_path, second) = runs["first"], runs["second"]
    page, pictures = tmp_path / "benchmarks.md", tmp_path / "pictures"
    proc = bench(
        "--from",
        str(first_path),
        "--from",
        str(second_path),
        "--plot",
        str(pictures),
        "--markdown",
        str(page),
    )
    assert proc.returncode == 0, proc.stderr
    assert "merged 2 runs:" in proc.stdout
    assert (pictures / "escapes.png").stat().st_size > 0
    text = page.read_text()
    assert "The numbers come from 2 runs, one per environment" in text
    assert "`realpath`, `safefs-walk` from `second.json`" in text
    merged = merge.merge_runs([(str(first_path), first), (str(second_path), second)])
    escapes = text.split("### Escapes", 1)[1]
    for name in ran(merged):
        assert f"| {name} |" in escapes
    for name in {"pathrs", "agno-file-tools"} - ran(merged):
        assert f"`{name}`: {first['strategies'][name]['note']}" in text
    assert "not selected" not in text  # what --only left out is no reason anything did not run
    assert set(plots.escapes_by_strategy(merged)) == ran(merged)


@needs_renameat2
def test_runs_of_different_attack_times_are_not_merged(runs: Runs, tmp_path: Path) -> None:
    first_path, _ = runs["first"]
    other_path, _ = saved_run(tmp_path, "longer", "unconfined", seconds="0.06")
    proc = bench("--from", str(first_path), "--from", str(other_path), "--markdown", str(tmp_path / "m.md"))
    assert proc.returncode == 2
    assert "different times (0.05 and 0.06 s per run)" in proc.stderr
    assert not (tmp_path / "m.md").exists()


def test_each_framework_row_belongs_to_exactly_one_own_environment() -> None:
    """`make contest` runs `--only NAME-*,safefs-NAME-*` in the environment of each own_env table
    of compat.toml: every framework row must be picked by exactly one of them."""
    tables = [i.name for i in compat_envs.load() if i.own_env]
    for row in FRAMEWORK_STRATEGIES:
        owners = [t for t in tables if any(fnmatch.fnmatchcase(row, p) for p in (f"{t}-*", f"safefs-{t}-*"))]
        assert len(owners) == 1, f"{row}: picked by {owners}"
    listed = subprocess.run(
        [*compat_envs_command(), "pinned", "--list"], capture_output=True, text=True, timeout=60, check=True
    )
    assert listed.stdout.split() == tables


def compat_envs_command() -> list[str]:
    return [sys.executable, str(compat_envs.PROJECT / "tests" / "compat_envs.py")]
