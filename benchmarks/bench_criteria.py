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
from safefs import capabilities
from safefs.contest.machine import filesystem_of
from safefs.contest.trees import DEPTH_1, DEPTH_16, DEPTHS, FILE_CONTENT, WRITE_DATA, Shape
from safefs.testing import RealpathGuard

TMPFS_DIR = "/dev/shm"
by_depth = pytest.mark.parametrize("shape", DEPTHS, ids=[s.name for s in DEPTHS])


@pytest.fixture
def roots(bench_tree: str) -> Iterator[Callable[[safefs.ResolverName], safefs.Root]]:
    opened: list[safefs.Root] = []

    def open_root(resolver: safefs.ResolverName) -> safefs.Root:
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


@pytest.mark.parametrize("role", ["subject", "reference"])
@by_depth
def test_read_openat2_vs_plain_open(
    benchmark: BenchmarkFixture,
    roots: Callable[[safefs.ResolverName], safefs.Root],
    tree_path: Callable[[str], str],
    shape: Shape,
    role: str,
) -> None:
    """Each depth's pair runs back to back, so drift on a busy machine hits both alike."""
    tag(benchmark, f"read-openat2-vs-open-depth-{shape.components}", role)
    if role == "subject":
        if not capabilities().native_extension:
            pytest.skip("safefs native extension not built")
        root = roots("openat2")
        assert benchmark(root.read_bytes, shape.file) == FILE_CONTENT
    else:
        assert benchmark(read_plain, tree_path(shape.file)) == FILE_CONTENT


def test_read_walk_depth_16(
    benchmark: BenchmarkFixture, roots: Callable[[safefs.ResolverName], safefs.Root]
) -> None:
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


@pytest.mark.parametrize("role", ["subject", "reference"])
def test_write_atomic_vs_plain_open(
    benchmark: BenchmarkFixture, write_dir: tuple[str, str], role: str
) -> None:
    directory, key = write_dir
    path = os.path.join(directory, DEPTH_1.write_target)
    tag(benchmark, key, role)
    benchmark.extra_info["filesystem"] = filesystem_of(directory)
    if role == "subject":
        with safefs.Root(directory) as root:
            benchmark(root.write_bytes, DEPTH_1.write_target, WRITE_DATA)
    else:
        benchmark(write_plain, path, WRITE_DATA)
    assert read_plain(path) == WRITE_DATA
