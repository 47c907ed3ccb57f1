"""The safefs performance criteria, each subject timed beside its reference in the same run.

Each benchmark is tagged (``extra_info``) with its criterion and role; after ``make bench``,
``python -m benchmarks.criteria`` prints the median ratios. safefs is called directly here, not
through the strategy wrappers, so the ratios carry no benchmark-harness overhead.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

import safefs
from benchmarks.criteria import BY_KEY
from benchmarks.machine import filesystem_of
from benchmarks.strategies import RealpathGuard
from benchmarks.trees import DEPTH_1, DEPTH_16, DEPTHS, FILE_CONTENT, WRITE_DATA, Shape
from safefs import _sys

needs_native = pytest.mark.skipif(not _sys.HAVE_NATIVE, reason="safefs native extension not built")
TMPFS_DIR = "/dev/shm"
by_depth = pytest.mark.parametrize("shape", DEPTHS, ids=[s.name for s in DEPTHS])


@pytest.fixture
def roots(bench_tree: str) -> Iterator[Callable[[str], safefs.Root]]:
    opened: list[safefs.Root] = []

    def open_root(resolver: str) -> safefs.Root:
        root = safefs.Root(bench_tree, resolver=resolver)
        opened.append(root)
        return root

    yield open_root
    for r in opened:
        r.close()


def tag(benchmark: BenchmarkFixture, key: str, role: str) -> None:
    assert key in BY_KEY
    benchmark.group = f"criterion {key}"
    benchmark.extra_info.update(criterion=key, role=role)


def read_plain(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def write_plain(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


@needs_native
@by_depth
def test_read_openat2(benchmark: BenchmarkFixture, roots: Callable[[str], safefs.Root],
                      shape: Shape) -> None:
    root = roots("openat2")
    tag(benchmark, f"read-openat2-vs-open-depth-{shape.components}", "subject")
    assert benchmark(root.read_bytes, shape.file) == FILE_CONTENT


@by_depth
def test_read_plain_open(benchmark: BenchmarkFixture, tree_path: Callable[[str], str],
                         shape: Shape) -> None:
    tag(benchmark, f"read-openat2-vs-open-depth-{shape.components}", "reference")
    assert benchmark(read_plain, tree_path(shape.file)) == FILE_CONTENT


def test_read_walk_depth_16(benchmark: BenchmarkFixture,
                            roots: Callable[[str], safefs.Root]) -> None:
    root = roots("walk")
    tag(benchmark, "read-walk-vs-realpath-depth-16", "subject")
    assert benchmark(root.read_bytes, DEPTH_16.file) == FILE_CONTENT


def test_read_realpath_guard_depth_16(benchmark: BenchmarkFixture, bench_tree: str) -> None:
    guard = RealpathGuard(bench_tree)
    tag(benchmark, "read-walk-vs-realpath-depth-16", "reference")
    assert benchmark(guard.read, DEPTH_16.file) == FILE_CONTENT


@pytest.fixture(params=["tree", "tmpfs"])
def write_dir(request: pytest.FixtureRequest, bench_tree: str) -> Iterator[tuple[str, str]]:
    """(directory, criterion key) for the write pair: the bench tree's own filesystem, and tmpfs
    (/dev/shm) where writeback does not dominate."""
    if request.param == "tree":
        yield bench_tree, "write-atomic-vs-plain-4KiB"
        return
    if filesystem_of(TMPFS_DIR) != "tmpfs":
        pytest.skip(f"{TMPFS_DIR} is not a tmpfs here")
    d = tempfile.mkdtemp(prefix="safefs-bench-", dir=TMPFS_DIR)
    try:
        yield d, "write-atomic-vs-plain-4KiB-tmpfs"
    finally:
        shutil.rmtree(d)


def test_write_atomic(benchmark: BenchmarkFixture, write_dir: tuple[str, str]) -> None:
    directory, key = write_dir
    tag(benchmark, key, "subject")
    benchmark.extra_info["filesystem"] = filesystem_of(directory)
    with safefs.Root(directory) as root:
        benchmark(root.write_bytes, DEPTH_1.write_target, WRITE_DATA)
    assert read_plain(os.path.join(directory, DEPTH_1.write_target)) == WRITE_DATA


def test_write_plain_open(benchmark: BenchmarkFixture, write_dir: tuple[str, str]) -> None:
    directory, key = write_dir
    path = os.path.join(directory, DEPTH_1.write_target)
    tag(benchmark, key, "reference")
    benchmark.extra_info["filesystem"] = filesystem_of(directory)
    benchmark(write_plain, path, WRITE_DATA)
    assert os.path.getsize(path) == len(WRITE_DATA)
