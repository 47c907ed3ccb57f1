"""Extracting a real source archive, the Django sdist (about 10,000 members): safefs.archive
beside ``tarfile.extractall(filter="data")``, each into a fresh directory on the same filesystem
(tmpfs where there is one), timed in process CPU time.

The archive is fetched at run time with ``pip download --no-deps --no-binary :all: django`` into
the git-ignored ``.bench-downloads/`` (kept for later runs); where pip cannot get it, the
benchmark is skipped with the reason. Criterion ``extract-django-vs-tarfile-data``
(benchmarks/criteria.py).
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from safefs.archive import extractall

DOWNLOADS = Path(__file__).resolve().parents[1] / ".bench-downloads"
ROUNDS = 7
# Process CPU time (user + system), not wall time: on a shared machine the wall time of an
# extraction varied threefold with other processes' load while its CPU time did not.
pytestmark = pytest.mark.benchmark(timer=time.process_time)
TMPFS = "/dev/shm"
KEY = "extract-django-vs-tarfile-data"


def django_sdist() -> Path:
    found = sorted(DOWNLOADS.glob("[dD]jango-*.tar.gz"))
    if found:
        return found[-1]
    DOWNLOADS.mkdir(exist_ok=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--dest",
            str(DOWNLOADS),
            "django",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = sorted(DOWNLOADS.glob("[dD]jango-*.tar.gz"))
    if done.returncode != 0 or not found:
        pytest.skip(f"the Django sdist could not be downloaded: {done.stderr.strip()[-300:]}")
    return found[-1]


@pytest.fixture(scope="module")
def sdist(request: pytest.FixtureRequest) -> Path:
    if request.config.getoption("benchmark_disable") and not any(DOWNLOADS.glob("[dD]jango-*.tar.gz")):
        pytest.skip("benchmarks disabled: the Django sdist is not downloaded for a smoke run")
    return django_sdist()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Callable[[], tuple[tuple[str], dict[str, object]]]]:
    """Fresh targets on tmpfs where there is one: the shared disk's writeback made the readings
    vary fivefold between rounds, which says nothing about either extractor's own cost."""
    if Path(TMPFS).is_dir():
        tmp_path = Path(tempfile.mkdtemp(dir=TMPFS, prefix="bench-archive-"))
    counter = itertools.count()

    def setup() -> tuple[tuple[str], dict[str, object]]:
        target = tmp_path / f"x{next(counter)}"
        return (str(target),), {}

    yield setup
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_extract_django_with_tarfile_data_filter(
    benchmark: BenchmarkFixture, sdist: Path, fresh: Callable[[], tuple[tuple[str], dict[str, object]]]
) -> None:
    def run(target: str) -> None:
        with tarfile.open(sdist) as tar:
            tar.extractall(target, filter="data")

    benchmark.extra_info.update(criterion=KEY, role="reference")
    benchmark.pedantic(run, setup=fresh, rounds=ROUNDS)  # type: ignore[no-untyped-call]


def test_extract_django_with_safefs_archive(
    benchmark: BenchmarkFixture, sdist: Path, fresh: Callable[[], tuple[tuple[str], dict[str, object]]]
) -> None:
    def run(target: str) -> None:
        extractall(sdist, target)

    benchmark.extra_info.update(criterion=KEY, role="subject")
    benchmark.pedantic(run, setup=fresh, rounds=ROUNDS)  # type: ignore[no-untyped-call]
    with tarfile.open(sdist) as tar:
        names = {m.name for m in tar if m.isreg()}
    extracted = next(p for p in (Path(fresh()[0][0]).parent).iterdir() if p.is_dir())
    assert {str(p.relative_to(extracted)) for p in extracted.rglob("*") if p.is_file()} == names
