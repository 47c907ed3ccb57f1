"""Reading the criteria's ratios back from a saved pytest-benchmark run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import criteria


def bench(key: str, role: str, median: float, minimum: float) -> dict[str, Any]:
    return {
        "name": f"{key}-{role}",
        "extra_info": {"criterion": key, "role": role},
        "stats": {"median": median, "min": minimum},
    }


def test_pairs_subject_with_reference_and_divides_medians() -> None:
    run = {
        "benchmarks": [
            bench("read-walk-vs-realpath-depth-16", "subject", 30e-6, 28e-6),
            bench("read-walk-vs-realpath-depth-16", "reference", 100e-6, 80e-6),
            bench("write-atomic-vs-plain-4KiB", "subject", 130e-6, 100e-6),
            bench("write-atomic-vs-plain-4KiB", "reference", 100e-6, 100e-6),
            bench("read-openat2-vs-open-depth-4", "subject", 5e-6, 5e-6),  # no reference: left out
            {"name": "untagged", "extra_info": {}, "stats": {"median": 1.0, "min": 1.0}},
        ]
    }
    found = {r.criterion.key: r for r in criteria.ratios(run)}
    assert set(found) == {"read-walk-vs-realpath-depth-16", "write-atomic-vs-plain-4KiB"}
    walk = found["read-walk-vs-realpath-depth-16"]
    assert walk.ratio == pytest.approx(0.30)
    assert walk.min_ratio == pytest.approx(0.35)
    assert walk.met  # limit 0.35
    write = found["write-atomic-vs-plain-4KiB"]
    assert write.ratio == pytest.approx(1.30)
    assert not write.met  # limit 1.2
    table = criteria.format_ratios(list(found.values()))
    assert "NOT met" in table and "0.300" in table


def test_main_reads_a_run_and_fails_when_a_criterion_is_missed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.json"
    path.write_text(
        json.dumps(
            {
                "benchmarks": [
                    bench("write-atomic-vs-plain-4KiB", "subject", 2e-4, 2e-4),
                    bench("write-atomic-vs-plain-4KiB", "reference", 1e-4, 1e-4),
                ]
            }
        )
    )
    assert criteria.main([str(path)]) == 1
    assert "write-atomic-vs-plain-4KiB" in capsys.readouterr().out


def test_main_without_a_run_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert criteria.main([]) == 2
    assert "make bench" in capsys.readouterr().err


def test_markdown_tables_of_criteria_and_scaling_readings() -> None:
    run = {
        "benchmarks": [
            bench("read-walk-vs-realpath-depth-16", "subject", 20e-6, 19e-6),
            bench("read-walk-vs-realpath-depth-16", "reference", 10e-6, 9e-6),
            {
                "extra_info": {"scaling": "scaling depth 64", "reader": "walk"},
                "stats": {"median": 50e-6, "min": 40e-6},
            },
            {
                "extra_info": {"scaling": "scaling depth 64", "reader": "open"},
                "stats": {"median": 10e-6, "min": 9e-6},
            },
        ]
    }
    table = criteria.format_markdown(criteria.ratios(run))
    assert (
        "| `read-walk-vs-realpath-depth-16` |" in table and "| 2.000 | 2.111 | 0.35 | **not met** |" in table
    )
    scaling = criteria.scaling_markdown(run)
    assert "| depth (µs per read, median) | open | walk |" in scaling
    assert "| 64 | 10.0 | 50.0 |" in scaling
