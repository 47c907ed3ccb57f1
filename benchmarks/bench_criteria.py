"""The safefs performance criteria, each subject timed beside its reference in the same run, and
the scaling readings around them (depth, file size, threads).

Each criterion benchmark is tagged (``extra_info``) with its criterion and role; after the run,
``python -m benchmarks.criteria`` prints the median ratios (``make bench`` runs it and fails when a
criterion is missed). The scaling benchmarks are tagged with ``scaling`` instead: they are
readings, not verdicts. safefs is called directly here, not through the strategy wrappers, so the
ratios carry no benchmark-harness overhead.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

import safefs
from benchmarks.criteria import BY_KEY
from safefs import capabilities
from safefs.testing import RealpathGuard
from safefs_bench.machine import filesystem_of
from safefs_bench.report import size_label
from safefs_bench.scaling import DEPTHS, SIZES, SMALL, build_scaling_tree, depth_file, size_file

TMPFS_DIR = "/dev/shm"
WRITE_DATA = b"w" * 4096
MIB = 1024 * 1024
FOUR_MIB = 4 * MIB
THREADS = (1, 2, 8)
READS_PER_THREAD = 200


@pytest.fixture(scope="session")
def scaling_tree(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("criteria") / "ws"
    root.mkdir()
    build_scaling_tree(str(root), extra_sizes=(FOUR_MIB,))
    return str(root)


@pytest.fixture
def roots(scaling_tree: str) -> Iterator[Callable[[safefs.ResolverName], safefs.Root]]:
    opened: list[safefs.Root] = []

    def open_root(resolver: safefs.ResolverName) -> safefs.Root:
        if resolver == "openat2" and not capabilities().openat2:
            pytest.skip("openat2 cannot run here")
        root = safefs.Root(scaling_tree, resolver=resolver)
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


Read = tuple[Callable[[str], bytes], str]  # a read function and its argument, worked out untimed


def read_pair(benchmark: BenchmarkFixture, role: str, subject: Read, reference: Read, size: int) -> None:
    """Time the subject's or the reference's read, checking it read ``size`` bytes."""
    read, arg = subject if role == "subject" else reference
    assert len(benchmark(read, arg)) == size


def write_plain(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


# -- criteria --------------------------------------------------------------------------------------

ROLES = pytest.mark.parametrize("role", ["subject", "reference"])


@ROLES
@pytest.mark.parametrize("depth", [1, 4, 16])
def test_read_openat2_vs_plain_open(
    benchmark: BenchmarkFixture,
    roots: Callable[[safefs.ResolverName], safefs.Root],
    scaling_tree: str,
    depth: int,
    role: str,
) -> None:
    """Each depth's pair runs back to back, so drift on a busy machine hits both alike."""
    tag(benchmark, f"read-openat2-vs-open-depth-{depth}", role)
    rel = depth_file(depth)
    plain = (read_plain, os.path.join(scaling_tree, rel))
    read_pair(benchmark, role, (roots("openat2").read_bytes, rel), plain, SMALL)


@ROLES
def test_read_openat2_vs_plain_open_4mib(
    benchmark: BenchmarkFixture,
    roots: Callable[[safefs.ResolverName], safefs.Root],
    scaling_tree: str,
    role: str,
) -> None:
    tag(benchmark, "read-openat2-vs-open-4MiB", role)
    rel = size_file(FOUR_MIB)
    plain = (read_plain, os.path.join(scaling_tree, rel))
    read_pair(benchmark, role, (roots("openat2").read_bytes, rel), plain, FOUR_MIB)


@ROLES
@pytest.mark.parametrize("depth", [1, 16])
def test_read_walk_vs_plain_open(
    benchmark: BenchmarkFixture,
    roots: Callable[[safefs.ResolverName], safefs.Root],
    scaling_tree: str,
    depth: int,
    role: str,
) -> None:
    tag(benchmark, f"read-walk-vs-open-depth-{depth}", role)
    rel = depth_file(depth)
    plain = (read_plain, os.path.join(scaling_tree, rel))
    read_pair(benchmark, role, (roots("walk").read_bytes, rel), plain, SMALL)


@ROLES
def test_read_walk_vs_realpath_guard(
    benchmark: BenchmarkFixture,
    roots: Callable[[safefs.ResolverName], safefs.Root],
    scaling_tree: str,
    role: str,
) -> None:
    tag(benchmark, "read-walk-vs-realpath-depth-16", role)
    rel = depth_file(16)
    guard = (RealpathGuard(scaling_tree).read, rel)
    read_pair(benchmark, role, (roots("walk").read_bytes, rel), guard, SMALL)


@pytest.fixture(params=["tree", "tmpfs"])
def write_dir(request: pytest.FixtureRequest, scaling_tree: str) -> Iterator[tuple[str, str]]:
    """(directory, criterion key) for the write pair: the tree's own filesystem, and tmpfs
    (/dev/shm) where writeback does not dominate."""
    if request.param == "tree":
        yield scaling_tree, "write-atomic-vs-plain-4KiB"
        return
    if filesystem_of(TMPFS_DIR) != "tmpfs":
        pytest.skip(f"{TMPFS_DIR} is not a tmpfs here")
    d = tempfile.mkdtemp(prefix="safefs-bench-", dir=TMPFS_DIR)
    try:
        yield d, "write-atomic-vs-plain-4KiB-tmpfs"
    finally:
        shutil.rmtree(d)


@ROLES
def test_write_atomic_vs_plain_open(
    benchmark: BenchmarkFixture, write_dir: tuple[str, str], role: str
) -> None:
    directory, key = write_dir
    path = os.path.join(directory, "w")
    tag(benchmark, key, role)
    benchmark.extra_info["filesystem"] = filesystem_of(directory)
    if role == "subject":
        with safefs.Root(directory) as root:
            benchmark(root.write_bytes, "w", WRITE_DATA)
    else:
        benchmark(write_plain, path, WRITE_DATA)
    assert read_plain(path) == WRITE_DATA


# -- scaling readings ------------------------------------------------------------------------------


def reading(benchmark: BenchmarkFixture, group: str, **info: object) -> None:
    benchmark.group = group
    benchmark.extra_info.update(scaling=group, **info)


@pytest.mark.parametrize("reader", ["openat2", "walk", "open"])
@pytest.mark.parametrize("depth", DEPTHS)
def test_scaling_depth(
    benchmark: BenchmarkFixture,
    roots: Callable[[safefs.ResolverName], safefs.Root],
    scaling_tree: str,
    depth: int,
    reader: str,
) -> None:
    reading(benchmark, f"scaling depth {depth}", reader=reader, depth=depth, size=SMALL)
    rel = depth_file(depth)
    if reader == "open":
        assert len(benchmark(read_plain, os.path.join(scaling_tree, rel))) == SMALL
    else:
        assert len(benchmark(roots(reader).read_bytes, rel)) == SMALL  # type: ignore[arg-type]


@pytest.mark.parametrize("reader", ["openat2", "walk", "open"])
@pytest.mark.parametrize("size", SIZES, ids=[f"{s // 1024}KiB" for s in SIZES])
def test_scaling_size(
    benchmark: BenchmarkFixture,
    roots: Callable[[safefs.ResolverName], safefs.Root],
    scaling_tree: str,
    size: int,
    reader: str,
) -> None:
    if size > 16 * MIB and reader == "walk":
        pytest.skip("one reading of a 64 MiB file per resolution kind is enough")
    reading(benchmark, f"scaling size {size_label(size)}", reader=reader, depth=1, size=size)
    rel = size_file(size)
    fn: Callable[[], bytes]
    if reader == "open":
        path = os.path.join(scaling_tree, rel)
        fn = lambda: read_plain(path)  # noqa: E731
    else:
        root = roots(reader)  # type: ignore[arg-type]
        fn = lambda: root.read_bytes(rel)  # noqa: E731
    # A few rounds of a 64 MiB read are enough to see its cost.
    few = size > 16 * MIB
    data = benchmark.pedantic(fn, rounds=5, iterations=1) if few else benchmark(fn)  # type: ignore[no-untyped-call]
    assert len(data) == size


@pytest.mark.parametrize("reader", ["openat2", "walk", "open"])
@pytest.mark.parametrize("threads", THREADS)
def test_scaling_threads(
    benchmark: BenchmarkFixture,
    roots: Callable[[safefs.ResolverName], safefs.Root],
    scaling_tree: str,
    threads: int,
    reader: str,
) -> None:
    """``threads`` threads each read a 4 KiB file at depth 4 ``READS_PER_THREAD`` times, sharing
    one Root (or each calling open()): a round's time is the time of all those reads."""
    reading(benchmark, f"scaling threads {threads}", reader=reader, threads=threads, depth=4, size=SMALL)
    rel = depth_file(4)
    if reader == "open":
        path = os.path.join(scaling_tree, rel)
        one: Callable[[], bytes] = lambda: read_plain(path)  # noqa: E731
    else:
        root = roots(reader)  # type: ignore[arg-type]
        one = lambda: root.read_bytes(rel)  # noqa: E731
    sizes: list[int] = []
    lock = threading.Lock()

    def task() -> None:
        total = 0
        for _ in range(READS_PER_THREAD):
            total += len(one())
        with lock:
            sizes.append(total)

    with ThreadPoolExecutor(threads) as pool:

        def round_of_reads() -> None:
            for f in [pool.submit(task) for _ in range(threads)]:
                f.result()

        benchmark.extra_info["reads_per_round"] = threads * READS_PER_THREAD
        benchmark(round_of_reads)
    assert sizes and all(s == READS_PER_THREAD * SMALL for s in sizes)
