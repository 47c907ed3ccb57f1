"""``cat_file`` of a 4 KiB file through SafeFileSystem beside fsspec's own LocalFileSystem, on
the same file (criterion ``fsspec-cat-4KiB-vs-local``, benchmarks/criteria.py). Timed in process
CPU time, as the archive benchmark, so other processes' load on a shared machine does not count.
Skipped where fsspec is not installed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

pytest.importorskip("fsspec")

from fsspec.implementations.local import LocalFileSystem

from safefs.fsspec import SafeFileSystem

KEY = "fsspec-cat-4KiB-vs-local"
DATA = bytes(range(256)) * 16  # 4 KiB
pytestmark = pytest.mark.benchmark(timer=time.process_time)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("fsspec-bench")
    (ws / "data").mkdir()
    (ws / "data" / "f.bin").write_bytes(DATA)
    return ws


@pytest.fixture
def safe(workspace: Path) -> Iterator[SafeFileSystem]:
    fs = SafeFileSystem(str(workspace))
    yield fs
    fs.close()


def test_cat_file_4KiB_local(benchmark: BenchmarkFixture, workspace: Path) -> None:
    fs = LocalFileSystem()
    path = str(workspace / "data" / "f.bin")
    benchmark.extra_info.update(criterion=KEY, role="reference")
    assert benchmark(fs.cat_file, path) == DATA


def test_cat_file_4KiB_safefs(benchmark: BenchmarkFixture, safe: SafeFileSystem) -> None:
    benchmark.extra_info.update(criterion=KEY, role="subject")
    assert benchmark(safe.cat_file, "data/f.bin") == DATA
