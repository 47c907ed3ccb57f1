"""``safefs-bench --plot`` and ``--markdown`` from a saved run, and the message without matplotlib."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from safefs_bench import cli as contest
from safefs_bench import plots, report

SAVED: dict[str, Any] = {
    "machine": {
        "system": "Linux",
        "kernel": "6.1.0-test",
        "machine": "x86_64",
        "cpu_model": "Test CPU 9000",
        "cpu_count": 2,
        "python": "CPython 3.11.7",
        "default_resolver": "openat2",
        "tempdir_filesystem": "ext4",
        "commit": "0123456789ab",
        "load_average": [0.5, 0.75, 1.25],
    },
    "attack_seconds_per_run": 3.0,
    "strategies": {
        "unconfined": {"available": True, "note": None},
        "safefs-openat2": {"available": True, "note": None},
        "pathrs": {"available": False, "note": "the bindings do not import here"},
    },
    "cost": {
        "unconfined": {
            "depth_us": {"1": 10.0, "4": 11.0, "16": 12.0, "64": 16.0},
            "size_us": {"4096": 10.0, "1048576": 100.0, "67108864": 9000.0},
        },
        "safefs-openat2": {
            "depth_us": {"1": 5.0, "4": 5.5, "16": 6.0, "64": 8.0},
            "size_us": {"4096": 5.0, "1048576": 95.0, "67108864": 8900.0},
        },
    },
    "attack": {
        "ran": True,
        "note": None,
        "runs": [
            {"strategy": "unconfined", "op": "read", "swap": "dir", "escapes": 900, "attempts": 2000},
            {"strategy": "unconfined", "op": "write", "swap": "dir", "escapes": 100, "attempts": 1000},
            {"strategy": "safefs-openat2", "op": "read", "swap": "dir", "escapes": 0, "attempts": 3000},
        ],
    },
}


def bench(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "safefs_bench.cli", *argv], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def saved_run(tmp_path: Path) -> Path:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(SAVED))
    return path


def test_markdown_is_stamped_and_keeps_the_prose_around_it(saved_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "docs" / "benchmarks.md"
    page.parent.mkdir()
    page.write_text(f"# Title\n\nprose before\n\n{report.BEGIN}\nold numbers\n{report.END}\n\nprose after\n")
    proc = bench("--from", str(saved_run), "--markdown", str(page))
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    assert text.startswith("# Title\n\nprose before\n\n" + report.BEGIN)
    assert text.rstrip().endswith(report.END + "\n\nprose after")
    assert "old numbers" not in text
    for fact in ("`0123456789ab`", "6.1.0-test", "Test CPU 9000", "0.50 / 0.75 / 1.25"):
        assert fact in text, fact
    assert "| safefs-openat2 | 5.0 (0.50x) | 5.5 (0.50x) | 6.0 (0.50x) | 8.0 (0.50x) |" in text
    assert "| unconfined | 1,000 / 3,000 |" in text
    assert "| safefs-openat2 | 0 / 3,000 |" in text
    assert "64 MiB" in text and "pathrs" in text
    assert "![" not in text  # no --plot: no images to point at


def test_a_page_without_markers_gets_the_generated_part_alone(tmp_path: Path) -> None:
    page = tmp_path / "new.md"
    report.write_markdown(SAVED, str(page), plot_dir=str(tmp_path / "pics"))
    text = page.read_text()
    assert text.startswith(report.BEGIN) and text.rstrip().endswith(report.END)
    assert "![cost against depth](pics/cost-vs-depth.png)" in text


def test_plots_are_svg_and_png(saved_run: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "plots"
    proc = bench("--from", str(saved_run), "--plot", str(out))
    assert proc.returncode == 0, proc.stderr
    for chart in plots.CHARTS:
        assert (out / f"{chart}.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), chart
        svg = (out / f"{chart}.svg").read_text()
        assert "<svg" in svg, chart
    assert "escapes.png" in proc.stdout


def test_without_matplotlib_the_command_names_the_extra(
    saved_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert contest.main(["--from", str(saved_run), "--plot", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "plot extra" in err and "safefs_bench[plot]" in err
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--from", "/nonexistent/run.json", "--markdown", "/tmp/x.md"], "cannot read"),
        (["--from", "RUN"], "needs --plot or --markdown"),
    ],
)
def test_bad_saved_runs_are_one_line(argv: list[str], message: str, saved_run: Path) -> None:
    proc = bench(*[str(saved_run) if a == "RUN" else a for a in argv])
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_a_json_that_is_not_a_run_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    proc = bench("--from", str(bad), "--markdown", str(tmp_path / "x.md"))
    assert proc.returncode == 2 and "not a run saved with --json" in proc.stderr
    assert not (tmp_path / "x.md").exists()
