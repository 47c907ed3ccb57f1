"""The safefs performance criteria, each subject timed beside its reference in the same run.

Each benchmark is tagged (``extra_info``) with its criterion and role; after ``make bench``,
``python -m benchmarks.criteria`` prints the median ratios. safefs is called directly here, not
through the strategy wrappers, so the ratios carry no benchmark-harness overhead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

import safefs
from benchmarks.criteria import BY_KEY
from benchmarks.strategies import RealpathGuard
from benchmarks.trees import DEPTH_1, DEPTH_16, DEPTHS, FILE_CONTENT, WRITE_DATA, Shape
from safefs import _sys

needs_native = pytest.mark.skipif(not _sys.HAVE_NATIVE, reason="safefs native extension not built")
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


def test_write_atomic(benchmark: BenchmarkFixture, roots: Callable[[str], safefs.Root],
                      tree_path: Callable[[str], str]) -> None:
    root = roots("auto")
    tag(benchmark, "write-atomic-vs-plain-4KiB", "subject")
    benchmark(root.write_bytes, DEPTH_1.write_target, WRITE_DATA)
    assert read_plain(tree_path(DEPTH_1.write_target)) == WRITE_DATA


def test_write_plain_open(benchmark: BenchmarkFixture, tree_path: Callable[[str], str]) -> None:
    path = tree_path(DEPTH_1.write_target)
    tag(benchmark, "write-atomic-vs-plain-4KiB", "reference")
    benchmark(write_plain, path, WRITE_DATA)
    assert os.path.getsize(path) == len(WRITE_DATA)
