"""safefs.Path and Root.copy beside what they stand for, each pair timed in one run: a Path's read
beside the Root's read of the same file, and a confined 64 MiB copy beside ``shutil.copyfile``
on the same file system (criteria ``path-read-vs-root-read-4KiB`` and
``copy-64MiB-vs-shutil-copyfile`` of benchmarks/criteria.py)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

import safefs
from benchmarks.criteria import BY_KEY

SMALL = 4096
BIG = 64 * 1024 * 1024
ROLES = pytest.mark.parametrize("role", ["subject", "reference"])


def tag(benchmark: BenchmarkFixture, key: str, role: str) -> None:
    assert key in BY_KEY
    benchmark.group = f"criterion {key}"
    benchmark.extra_info.update(criterion=key, role=role)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> str:
    top = tmp_path_factory.mktemp("path-bench")
    (top / "d").mkdir()
    (top / "d" / "small").write_bytes(os.urandom(SMALL))
    with open(top / "big", "wb") as f:
        for _ in range(BIG // (1 << 20)):
            f.write(os.urandom(1 << 20))
    return str(top)


@pytest.fixture
def root(tree: str) -> Iterator[safefs.Root]:
    with safefs.Root(tree) as r:
        yield r


@ROLES
def test_path_read_vs_root_read(benchmark: BenchmarkFixture, root: safefs.Root, role: str) -> None:
    tag(benchmark, "path-read-vs-root-read-4KiB", role)
    if role == "subject":
        path = root / "d/small"
        got = benchmark(path.read_bytes)
    else:
        got = benchmark(root.read_bytes, "d/small")
    assert len(got) == SMALL


@ROLES
def test_copy_vs_shutil_copyfile(
    benchmark: BenchmarkFixture, root: safefs.Root, tree: str, role: str
) -> None:
    tag(benchmark, "copy-64MiB-vs-shutil-copyfile", role)
    if role == "subject":
        benchmark.pedantic(root.copy, ("big", "copied"), rounds=15, warmup_rounds=2)  # type: ignore[no-untyped-call]
    else:
        src, dst = os.path.join(tree, "big"), os.path.join(tree, "copied")
        benchmark.pedantic(shutil.copyfile, (src, dst), rounds=15, warmup_rounds=2)  # type: ignore[no-untyped-call]
    assert os.path.getsize(os.path.join(tree, "copied")) == BIG
