"""What the sandbox costs: one ``bash -c true`` through the bash tool, sandboxed and not.

Three ways side by side, 50 runs each:

- ``popen``: ``subprocess`` starts bash in a new session (what the tool did before the sandbox);
- ``off``: the bash tool with ``sandbox="off"``: the C launcher, a PID namespace only;
- ``sandboxed``: the bash tool with the kernel sandbox (Landlock, mount, PID, network, IPC and
  UTS namespaces, idmapped nosuid workspace or user namespace, a private /tmp tmpfs, .git bound
  read-only, a fresh keyring, the seccomp filter, rlimits).

``pytest benchmarks/bench_sandbox.py --benchmark-only`` times each (p90 in ``extra_info``);
``python -m benchmarks.bench_sandbox`` interleaves the runs, so drift on a shared machine hits all
three alike, and prints median, p90 and the fastest run, each with its difference to ``popen``
(on a shared machine the fastest run is the steadiest of the three), and whether the sandbox's
addition at the median is within the budget of 5 ms.
"""

from __future__ import annotations

import importlib.readers  # noqa: F401  (imported lazily by the tool; a child as another user cannot)
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

import safefs
from agent.tools.bash import DEFAULT_SHELL, BashTool
from safefs.sandbox import Refused
from safefs.workspace.gitrepos import find_repositories
from tests.sandbox.harness import as_user, chown_tree, ordinary_user

RUNS = 50
MEDIAN_BUDGET_MS = 5.0  # what the full sandbox may add to a command at the median
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


def popen_true() -> None:
    subprocess.run([DEFAULT_SHELL, "-c", "true"], env=ENV, start_new_session=True, check=True)


def tool_true(tool: BashTool) -> Callable[[], None]:
    def run() -> None:
        out = tool.execute({"command": "true"})
        if not out.content.startswith("exit status 0\n"):
            raise RuntimeError(out.content)

    return run


def p90(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=10)[-1]


@pytest.fixture(scope="module")
def root() -> Iterator[safefs.Root]:
    path = tempfile.mkdtemp(prefix="safefs-bench-sandbox-")
    with safefs.Root(path) as r:
        yield r
    shutil.rmtree(path, ignore_errors=True)


def _bench(benchmark: BenchmarkFixture, fn: Callable[[], None]) -> None:
    benchmark.group = "bash -c true"
    benchmark.pedantic(fn, rounds=RUNS, iterations=1, warmup_rounds=3)  # type: ignore[no-untyped-call]
    if benchmark.stats is not None:  # None under --benchmark-disable: fn ran once, untimed
        data = list(benchmark.stats.stats.data)
        benchmark.extra_info["p90_ms"] = round(p90(data) * 1e3, 3)


def test_popen(benchmark: BenchmarkFixture) -> None:
    _bench(benchmark, popen_true)


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_bash_tool(benchmark: BenchmarkFixture, root: safefs.Root, mode: str) -> None:
    tool = BashTool(root, sandbox=mode, base_env=ENV)
    if isinstance(tool.sandbox, Refused):
        pytest.skip(tool.sandbox.refusal)
    try:
        _bench(benchmark, tool_true(tool))
    finally:
        tool.close()


TREE_DIRECTORIES = 1_500  # about this project's own tree, its .venv included
TREE_FILES_PER_DIRECTORY = 12


@pytest.fixture(scope="module")
def large_root() -> Iterator[safefs.Root]:
    """A workspace of 1,500 directories and 18,000 files: what the repository search walks."""
    path = tempfile.mkdtemp(prefix="safefs-bench-sandbox-tree-")
    for d in range(TREE_DIRECTORIES):
        directory = os.path.join(path, f"d{d % 30}", f"e{d}")
        os.makedirs(directory)
        for f in range(TREE_FILES_PER_DIRECTORY):
            open(os.path.join(directory, f"f{f}.py"), "w").close()
    with safefs.Root(path) as r:
        yield r
    shutil.rmtree(path, ignore_errors=True)


def test_bash_tool_in_a_large_tree(benchmark: BenchmarkFixture, large_root: safefs.Root) -> None:
    """The sandbox there: the tree is searched for repositories before and after the command."""
    tool = BashTool(large_root, base_env=ENV)
    if isinstance(tool.sandbox, Refused):
        pytest.skip(tool.sandbox.refusal)
    try:
        benchmark.group = "repository search, large tree"
        benchmark.pedantic(tool_true(tool), rounds=10, iterations=1, warmup_rounds=1)  # type: ignore[no-untyped-call]
    finally:
        tool.close()


def test_repository_search_of_a_large_tree(benchmark: BenchmarkFixture, large_root: safefs.Root) -> None:
    benchmark.group = "repository search, large tree"
    benchmark.pedantic(find_repositories, args=(large_root,), rounds=10, iterations=1)  # type: ignore[no-untyped-call]


# -- beside bubblewrap, by the size of the workspace -------------------------------------------

BESIDE_RUNS = 30
BWRAP_BOUND = 2.0  # a sandboxed command may cost at most this many times bubblewrap's
WORKSPACES = {"empty": (0, 0), "18,000 files": (1_500, 12), "50,000 directories": (50_000, 0)}


def make_workspace(path: str, directories: int, files_per_directory: int) -> None:
    """``directories`` directories (in groups of 100) with ``files_per_directory`` files each."""
    for d in range(directories):
        directory = os.path.join(path, f"d{d // 100}", f"e{d}")
        os.makedirs(directory)
        for f in range(files_per_directory):
            open(os.path.join(directory, f"f{f}.py"), "w").close()


def bwrap_true(workspace: str) -> Callable[[], None] | None:
    """bubblewrap's ``bash -c true`` with the workspace writable and every namespace new."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    argv = [bwrap, "--ro-bind", "/", "/", "--bind", workspace, workspace, "--unshare-all"]
    argv += ["--chdir", workspace, DEFAULT_SHELL, "-c", "true"]

    def run() -> None:
        subprocess.run(argv, env=ENV, check=True)

    return run


def beside_bubblewrap(workspace: str, runs: int = BESIDE_RUNS) -> dict[str, list[float]]:
    """``runs`` interleaved ``bash -c true`` through bubblewrap and through the sandboxed bash
    tool (its first command, which finds the workspace's repositories, timed apart)."""
    bwrap = bwrap_true(workspace)
    if bwrap is None:
        raise RuntimeError("bubblewrap is not installed (make system-packages)")
    samples: dict[str, list[float]] = {"bwrap": [], "sandboxed": [], "first": []}
    with safefs.Root(workspace) as r:
        tool = BashTool(r, base_env=ENV)
        if isinstance(tool.sandbox, Refused):
            raise RuntimeError(tool.sandbox.refusal)
        try:
            sandboxed = tool_true(tool)
            t0 = time.perf_counter()
            sandboxed()
            samples["first"].append(time.perf_counter() - t0)
            bwrap()
            for _ in range(runs):
                for name, fn in (("bwrap", bwrap), ("sandboxed", sandboxed)):
                    t0 = time.perf_counter()
                    fn()
                    samples[name].append(time.perf_counter() - t0)
        finally:
            tool.close()
    return samples


def beside_bubblewrap_as(who: str, path: str, runs: int) -> dict[str, list[float]]:
    """:func:`beside_bubblewrap` as the agent runs it: as this process's user, or (``who`` an
    ordinary user, this process root) in a child dropped to one made with ``useradd``, whose
    sandbox records changes with inotify watches instead of fanotify (both run the same
    bubblewrap, as that user)."""
    if who == "agent's user":
        return beside_bubblewrap(path, runs=runs)
    uid = ordinary_user()
    chown_tree(Path(path), uid)
    return dict(as_user(uid, lambda: beside_bubblewrap(path, runs=runs), fork=True))


WHO = ["agent's user", "ordinary user"]


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("size", list(WORKSPACES))
def test_bash_tool_beside_bubblewrap(benchmark: BenchmarkFixture, size: str, who: str) -> None:
    """A sandboxed ``bash -c true`` costs at most twice bubblewrap's, measured in the same run,
    whatever the size of the workspace, for root (fanotify's record) and for an ordinary user
    (inotify's)."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (make system-packages)")
    if sandbox_unavailable() is not None:
        pytest.skip(str(sandbox_unavailable()))
    if benchmark.disabled and size != next(iter(WORKSPACES)):
        pytest.skip("timed only under make bench; the smoke run (make test) tries the smallest workspace")
    if who == "ordinary user" and os.geteuid() != 0:
        pytest.skip("the agent's user is an ordinary user already: its rows are the ones above")
    path = tempfile.mkdtemp(prefix="safefs-bench-sandbox-size-", dir="/var/tmp")
    try:
        os.chmod(path, 0o755)
        make_workspace(path, *WORKSPACES[size])
        samples = beside_bubblewrap_as(who, path, runs=2 if benchmark.disabled else BESIDE_RUNS)
    finally:
        shutil.rmtree(path, ignore_errors=True)
    ratio = statistics.median(samples["sandboxed"]) / statistics.median(samples["bwrap"])
    benchmark.group = "bash -c true beside bubblewrap"
    benchmark.extra_info.update(
        who=who,
        size=size,
        bwrap_median_ms=round(statistics.median(samples["bwrap"]) * 1e3, 2),
        sandboxed_median_ms=round(statistics.median(samples["sandboxed"]) * 1e3, 2),
        first_command_ms=round(samples["first"][0] * 1e3, 2),
        ratio=round(ratio, 2),
    )
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)  # type: ignore[no-untyped-call]
    print(f"{size}: {benchmark.extra_info}")
    if not benchmark.disabled:  # a timing bound holds on a measured run, not on make test's smoke run
        assert ratio <= BWRAP_BOUND, benchmark.extra_info


def sandbox_unavailable() -> str | None:
    path = tempfile.mkdtemp(prefix="safefs-bench-sandbox-")
    try:
        with safefs.Root(path) as r:
            tool = BashTool(r, base_env=ENV)
            tool.close()
            return tool.sandbox.refusal if isinstance(tool.sandbox, Refused) else None
    finally:
        shutil.rmtree(path, ignore_errors=True)


def main_beside_bubblewrap() -> int:
    print(f"bash -c true, {BESIDE_RUNS} interleaved runs each, beside bubblewrap")
    header = ("who", "workspace", "bwrap ms", "sandboxed ms", "ratio", "first ms")
    print("  {:<14} {:<20} {:>9} {:>13} {:>6} {:>9}".format(*header))
    for who in WHO if os.geteuid() == 0 else WHO[:1]:
        for size, shape in WORKSPACES.items():
            path = tempfile.mkdtemp(prefix="safefs-bench-sandbox-size-", dir="/var/tmp")
            try:
                os.chmod(path, 0o755)
                make_workspace(path, *shape)
                samples = beside_bubblewrap_as(who, path, BESIDE_RUNS)
            finally:
                shutil.rmtree(path, ignore_errors=True)
            bw, sb = statistics.median(samples["bwrap"]), statistics.median(samples["sandboxed"])
            first = samples["first"][0]
            row = (who, size, bw * 1e3, sb * 1e3, sb / bw, first * 1e3)
            print("  {:<14} {:<20} {:>9.2f} {:>13.2f} {:>6.2f} {:>9.1f}".format(*row), flush=True)
    return 0


def main() -> int:
    path = tempfile.mkdtemp(prefix="safefs-bench-sandbox-")
    try:
        with safefs.Root(path) as r:
            off, sandboxed = BashTool(r, sandbox="off", base_env=ENV), BashTool(r, base_env=ENV)
            if isinstance(sandboxed.sandbox, Refused):
                print(f"bench_sandbox: {sandboxed.sandbox.refusal}", file=sys.stderr)
                return 1
            ways = {"popen": popen_true, "off": tool_true(off), "sandboxed": tool_true(sandboxed)}
            samples: dict[str, list[float]] = {name: [] for name in ways}
            for fn in ways.values():  # warm up
                fn()
            for _ in range(RUNS):
                for name, fn in ways.items():
                    t0 = time.perf_counter()
                    fn()
                    samples[name].append(time.perf_counter() - t0)
            off.close()
            sandboxed.close()
    finally:
        shutil.rmtree(path, ignore_errors=True)
    print(f"bash -c true, {RUNS} interleaved runs each ({sandboxed.sandbox_layers})")
    base_median = statistics.median(samples["popen"])
    base_p90 = p90(samples["popen"])
    base_min = min(samples["popen"])
    print(
        f"  {'way':<10} {'median ms':>10} {'p90 ms':>8} {'min ms':>8} {'+median':>8} {'+p90':>8} {'+min':>8}"
    )
    for name, s in samples.items():
        med, high, low = statistics.median(s), p90(s), min(s)
        print(
            f"  {name:<10} {med * 1e3:>10.2f} {high * 1e3:>8.2f} {low * 1e3:>8.2f} "
            f"{(med - base_median) * 1e3:>+8.2f} {(high - base_p90) * 1e3:>+8.2f} "
            f"{(low - base_min) * 1e3:>+8.2f}"
        )
    added = (statistics.median(samples["sandboxed"]) - base_median) * 1e3
    verdict = "within" if added <= MEDIAN_BUDGET_MS else "OVER"
    print(f"  the sandbox adds {added:.2f} ms at the median: {verdict} the budget of {MEDIAN_BUDGET_MS:g} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main_beside_bubblewrap() if sys.argv[1:] == ["--beside-bubblewrap"] else main())
