"""``safefs-bench`` end to end: run as a user would, then read its JSON."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from safefs import capabilities
from safefs_bench import cli as contest
from safefs_bench.race import OPS, SWAPS
from safefs_bench.strategies import LANDLOCK, REALPATH, SAFEFS_STRATEGIES, UNCONFINED
from safefs_bench.trees import DEPTHS

needs_renameat2 = pytest.mark.skipif(not capabilities().renameat2, reason="the attack phase needs renameat2")


def bench_command() -> list[str]:
    script = Path(sys.executable).with_name("safefs-bench")
    return [str(script)] if script.exists() else [sys.executable, "-m", "safefs_bench.cli"]


@pytest.fixture(scope="module")
def contest_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path_factory.mktemp("contest") / "contest.json"
    proc = subprocess.run(
        [*bench_command(), "--seconds", "1", "--json", str(out)], capture_output=True, text=True, timeout=600
    )
    print(proc.stdout)
    print(proc.stderr, file=sys.stderr)
    data = json.loads(out.read_text()) if out.exists() else {}
    return proc, data


def runs_of(data: dict[str, Any], strategy: str) -> list[dict[str, Any]]:
    return [r for r in data["attack"]["runs"] if r["strategy"] == strategy]


@needs_renameat2
@pytest.mark.slow  # the whole contest, one second per attack
def test_contest_exits_zero_and_prints_one_table(contest_run: Any) -> None:
    proc, data = contest_run
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[0] == "strategy"
    available = [s for s, info in data["strategies"].items() if info["available"]]
    for name in available:
        assert any(line.split()[0] == name for line in lines[2:]), name
    assert "Traceback" not in proc.stderr
    assert "attack:" in proc.stderr  # the progress display


@needs_renameat2
@pytest.mark.slow  # the whole contest, one second per attack
def test_safefs_strategies_never_escape(contest_run: Any) -> None:
    _proc, data = contest_run
    for name in SAFEFS_STRATEGIES:
        if not data["strategies"][name]["available"]:
            continue
        runs = runs_of(data, name)
        assert {(r["op"], r["swap"]) for r in runs} == {(o, s) for o in OPS for s in SWAPS}
        for r in runs:
            assert r["escapes"] == 0, r
            assert r["attempts"] > 0 and r["swaps"] > 0, r
            assert r["attempts"] == r["inside"] + r["refused"], r
        assert all(r["inside"] > 0 for r in runs if r["op"] == "read"), runs
    assert data["safefs_escaped"] is False


@needs_renameat2
@pytest.mark.slow  # the whole contest, one second per attack
def test_realpath_guard_escapes_on_reads_and_writes(contest_run: Any) -> None:
    _proc, data = contest_run
    runs = runs_of(data, REALPATH)
    for op in OPS:
        escapes = sum(r["escapes"] for r in runs if r["op"] == op)
        assert escapes > 0, f"realpath {op}: {runs}"
    unconfined = runs_of(data, UNCONFINED)
    assert all(r["escapes"] > 0 for r in unconfined), unconfined  # the harness sees leaks


@needs_renameat2
@pytest.mark.slow  # the whole contest, one second per attack
def test_cost_table_and_machine_facts(contest_run: Any) -> None:
    _proc, data = contest_run
    for name, info in data["strategies"].items():
        if not info["available"]:
            assert info["note"], name
            assert name not in data["cost"]
            continue
        cost = data["cost"][name]
        assert set(cost["read_us"]) == {s.name for s in DEPTHS}
        assert all(v > 0 for v in cost["read_us"].values())
        assert cost["write_4KiB_us"] > 0
        assert cost["write_kind"] == ("atomic" if name in SAFEFS_STRATEGIES else "plain")
    assert all(v == pytest.approx(1.0) for v in data["cost"][UNCONFINED]["read_ratio_to_unconfined"].values())
    machine = data["machine"]
    assert machine["kernel"] == os.uname().release
    assert machine["cpu_count"] == os.cpu_count()
    assert machine["python"].endswith(".".join(map(str, sys.version_info[:3])))
    assert machine["openat2_used"] is capabilities().native_extension


@pytest.mark.slow  # a whole contest run of its own
def test_without_renameat2_the_attack_is_refused_and_the_cost_phase_runs(tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    stdout, stderr = io.StringIO(), io.StringIO()
    args = argparse.Namespace(seconds=1.0, json=str(out))
    assert contest.run(args, stdout=stdout, stderr=stderr, attack_possible=False) == 0
    data = json.loads(out.read_text())
    assert data["attack"] == {"ran": False, "note": data["attack"]["note"], "runs": []}
    assert "renameat2" in data["attack"]["note"]
    assert "renameat2" in stderr.getvalue()
    assert data["cost"][UNCONFINED]["read_us"]["depth-16"] > 0
    assert "attack phase: skipped" in stdout.getvalue()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--seconds", "-1"], "must be more than 0"),
        (["--seconds", "soon"], "not a number"),
        (["--json", "/nonexistent-dir/x.json"], "no such directory"),
    ],
)
def test_bad_arguments_are_a_clear_error(argv: list[str], message: str) -> None:
    proc = subprocess.run([*bench_command(), *argv], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


@needs_renameat2
@pytest.mark.slow  # the whole contest, one second per attack
def test_landlock_row_never_escapes_or_says_why_not(contest_run: Any) -> None:
    proc, data = contest_run
    info = data["strategies"][LANDLOCK]
    if not info["available"]:
        assert f"{LANDLOCK}: not run: " in proc.stdout
        return
    assert any(line.split()[0] == LANDLOCK for line in proc.stdout.splitlines()[2:])
    runs = runs_of(data, LANDLOCK)
    assert {(r["op"], r["swap"]) for r in runs} == {(o, s) for o in OPS for s in SWAPS}
    for r in runs:
        assert r["escapes"] == 0 and r["attempts"] == r["inside"] + r["refused"], r
        assert r["refused"] > 0 and r["swaps"] > 0, r  # the kernel did refuse swapped paths
    assert all(v > 0 for v in data["cost"][LANDLOCK]["read_us"].values())
