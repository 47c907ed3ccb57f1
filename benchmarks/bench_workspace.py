"""The workspace tools side by side with the programs a user would otherwise run: grep and glob
against ripgrep (the ``ripgrep`` wheel's ``rg``), a ranged read against ``sed -n``, and a one-line
edit against a plain read-replace-rename. One benchmark group per comparison, so each pair sits
side by side in the table; every result is checked after timing.

    .venv/bin/python -m pytest benchmarks/bench_workspace.py --benchmark-group-by=group

The tree: 10,000 source files in 100 directories (2 KiB each, one in fifty holding the needle),
plus a ``node_modules/`` of 5,000 files that ``.gitignore`` excludes, so both sides skip it.
With ``--benchmark-disable`` (``make test``), where each function runs once to check its result,
the trees are a tenth of that size.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

import safefs
from safefs.workspace.edits import Edit, edit_file
from safefs.workspace.search import glob, grep
from safefs.workspace.text import read_lines

DIRS, FILES_PER_DIR = 100, 100
NEEDLE_EVERY = 50
LINE = "    value = compute(alpha, beta)  # an ordinary line of source code\n"
BIG_LINES = 700_000  # about 50 MB of lines like LINE
EDIT_BYTES = 10 << 20


def _rg() -> str | None:
    beside = Path(sys.executable).with_name("rg")
    return str(beside) if beside.exists() else shutil.which("rg")


RG = _rg()
needs_rg = pytest.mark.skipif(RG is None, reason="rg not installed (pip install 'ripgrep==14.1.0')")


@pytest.fixture(scope="module")
def dirs(request: pytest.FixtureRequest) -> int:
    """How many source directories the tree has: all of them only when timing."""
    return DIRS // 10 if request.config.getoption("benchmark_disable") else DIRS


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory, dirs: int) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("workspace") / "repo"
    body = LINE * 30
    for d in range(dirs):
        directory = base / "src" / f"pkg{d:03}"
        directory.mkdir(parents=True)
        for f in range(FILES_PER_DIR):
            n = d * FILES_PER_DIR + f
            extra = f"needle_{n} = {n}\n" if n % NEEDLE_EVERY == 0 else ""
            (directory / f"mod{f:03}.py").write_text(body + extra)
    for i in range(dirs * 50):
        directory = base / "node_modules" / f"dep{i // 100:02}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"i{i}.js").write_text("needle in a dependency\n")
    (base / ".gitignore").write_text("node_modules/\n")
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    yield base


@pytest.fixture(scope="module")
def root(tree: Path) -> Iterator[safefs.Root]:
    with safefs.Root(str(tree)) as r:
        yield r


def expected_files(dirs: int) -> int:
    return dirs * FILES_PER_DIR // NEEDLE_EVERY


def _rg_run(*args: str, cwd: Path) -> list[str]:
    assert RG is not None
    out = subprocess.run([RG, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout
    return out.splitlines()


@needs_rg
@pytest.mark.parametrize("side", ["safefs", "rg"])
def test_grep_files_with_matches(
    benchmark: BenchmarkFixture, root: safefs.Root, tree: Path, dirs: int, side: str
) -> None:
    benchmark.group = "grep -l: 10k files"
    if side == "safefs":
        result = benchmark(lambda: grep(root, "needle_", mode="files_with_matches", max_results=1000))
        found = result.entries
    else:
        found = benchmark(_rg_run, "-l", "needle_", cwd=tree)
    assert len(found) == expected_files(dirs)


@needs_rg
@pytest.mark.parametrize("side", ["safefs", "rg"])
def test_grep_content(
    benchmark: BenchmarkFixture, root: safefs.Root, tree: Path, dirs: int, side: str
) -> None:
    benchmark.group = "grep -n: 10k files"
    if side == "safefs":
        found = benchmark(lambda: grep(root, r"needle_\d+", mode="content", max_results=1000)).entries
    else:
        found = benchmark(_rg_run, "-n", r"needle_\d+", cwd=tree)
    assert len(found) == expected_files(dirs) and all(":31:needle_" in line for line in found)


@needs_rg
@pytest.mark.parametrize("side", ["safefs", "rg"])
def test_glob(benchmark: BenchmarkFixture, root: safefs.Root, tree: Path, dirs: int, side: str) -> None:
    benchmark.group = "glob **/*.py: 10k files, 5k ignored"
    if side == "safefs":
        found = [e.path for e in benchmark(lambda: glob(root, "**/*.py", max_results=20_000)).matches]
    else:
        found = benchmark(_rg_run, "--files", "-g", "*.py", cwd=tree)
    assert len(found) == dirs * FILES_PER_DIR


@pytest.fixture(scope="module")
def big_lines(dirs: int) -> int:
    return BIG_LINES * dirs // DIRS


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory, big_lines: int) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.txt"
    with open(path, "w") as f:
        for i in range(big_lines):
            f.write(f"{i:07} {LINE}")
    return path


@pytest.mark.parametrize("side", ["safefs", "sed"])
def test_ranged_read(benchmark: BenchmarkFixture, big_file: Path, big_lines: int, side: str) -> None:
    benchmark.group = "read lines 10000-10100 of 50 MB"
    if side == "safefs":
        with safefs.Root(str(big_file.parent)) as r:
            got = benchmark(lambda: read_lines(r, big_file.name, 10_000, 101, numbered=True))
        lines = got.text.splitlines()
        assert not got.total_known and 10_100 < got.total < big_lines  # counted a little past the range
    else:
        out = benchmark(
            lambda: (
                subprocess.run(
                    ["sed", "-n", "10000,10100p;10100q", str(big_file)], capture_output=True, check=True
                ).stdout
            )
        )
        lines = out.decode().splitlines()
    assert len(lines) == 101 and lines[0].endswith(f"0009999 {LINE.rstrip()}")


@pytest.fixture
def edit_target(tmp_path: Path) -> Path:
    path = tmp_path / "ten.txt"
    lines = EDIT_BYTES // len(LINE)
    path.write_text(LINE * (lines // 2) + "    target = 1\n" + LINE * (lines // 2))
    return path


def _plain_edit(path: Path) -> None:
    text = path.read_text()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text.replace("    target = 1\n", "    target = 2\n", 1))
    os.replace(tmp, path)


def _swap_back(path: Path) -> None:
    text = path.read_text()
    path.write_text(text.replace("    target = 2\n", "    target = 1\n", 1))


@pytest.mark.parametrize("side", ["safefs", "plain"])
def test_one_line_edit(benchmark: BenchmarkFixture, edit_target: Path, side: str) -> None:
    benchmark.group = "edit one line of 10 MB"
    with safefs.Root(str(edit_target.parent)) as r:

        def run() -> None:
            if side == "safefs":
                edit_file(r, edit_target.name, [Edit("    target = 1\n", "    target = 2\n")])
            else:
                _plain_edit(edit_target)

        benchmark.pedantic(  # type: ignore[no-untyped-call]  # pytest-benchmark leaves it untyped
            run, setup=lambda: _swap_back(edit_target), rounds=15
        )
    assert "    target = 2\n" in edit_target.read_text()
