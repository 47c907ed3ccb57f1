"""safefs-mcp beside the official MCP filesystem server, in one run, on the same tree.

1. Round trip of ``read_text_file`` and ``write_file`` over stdio: a real MCP client session
   to each server, one benchmark group per (tool, path depth) so the two sit side by side.
2. The contest's directory-swap attack (``benchmarks.race``) against each server: a second
   process exchanges ``d/`` with a symlink to the outside while the client reads ``d/f`` or
   writes ``d/wN`` for ``RACE_SECONDS``; escapes / attempts are printed and kept in the saved
   benchmark JSON (``extra_info``).

The official server comes from the npm registry, installed on first use into ``.bench-node/``;
without node/npm its rows are skipped with a note. With ``--benchmark-disable`` (``make test``)
only safefs-mcp's round trips run, once each, as a smoke test.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benchmarks.mcp_client import SyncClient, mcp_session, official_server, safefs_server
from benchmarks.race import race_victim
from benchmarks.trees import DEPTH_1, DEPTH_4, Shape, build_tree

SERVERS = ("safefs-mcp", "official")
TEXT = "".join(chr(32 + i % 95) for i in range(255)) + "\n"  # 256 characters of text
WRITE_TEXT = "w" * 4095 + "\n"
RACE_SECONDS = 5.0

by_shape = pytest.mark.parametrize("shape", (DEPTH_1, DEPTH_4), ids=lambda s: s.name)
by_server = pytest.mark.parametrize("server", SERVERS)


def _command(server: str, benchmark_disabled: bool) -> list[str]:
    if server == "safefs-mcp":
        command = safefs_server()
        if command is None:
            pytest.skip(f"safefs-mcp is not installed beside {sys.executable}")
        return command
    if benchmark_disabled:
        pytest.skip("the official server runs only when benchmarking")
    official, note = official_server()
    if official is None:
        pytest.skip(note)
    return official


@pytest.fixture(scope="module")
def mcp_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-bench") / "ws"
    root.mkdir()
    build_tree(str(root))
    for shape in (DEPTH_1, DEPTH_4):
        (root / shape.dir / "t.txt").write_text(TEXT)
    return root


Sessions = Callable[[str, list[str]], SyncClient]


@pytest.fixture(scope="module")
def sessions(mcp_tree: Path) -> Iterator[Sessions]:
    """``sessions(server, command)``: each server started once on the tree, on first use."""
    opened: dict[str, SyncClient] = {}
    with ExitStack() as stack:
        def session(server: str, command: list[str]) -> SyncClient:
            if server not in opened:
                opened[server] = stack.enter_context(mcp_session(command, str(mcp_tree)))
            return opened[server]

        yield session


def _in(shape: Shape, name: str) -> str:
    return f"{shape.dir}/{name}" if shape.dir else name


@by_shape
@by_server
def test_read_text_file_round_trip(benchmark: BenchmarkFixture, sessions: Sessions, server: str,
                                   shape: Shape) -> None:
    client = sessions(server, _command(server, benchmark.disabled))
    benchmark.group = f"mcp read_text_file {shape.name}"
    result = benchmark(client.text, "read_text_file", {"path": _in(shape, "t.txt")})
    assert result == (False, TEXT)


@by_shape
@by_server
def test_write_file_round_trip(benchmark: BenchmarkFixture, sessions: Sessions, mcp_tree: Path,
                               server: str, shape: Shape) -> None:
    client = sessions(server, _command(server, benchmark.disabled))
    benchmark.group = f"mcp write_file-4KiB {shape.name}"
    error, text = benchmark(client.text, "write_file",
                            {"path": _in(shape, "w.txt"), "content": WRITE_TEXT})
    assert not error, text
    assert (mcp_tree / shape.dir / "w.txt").read_text() == WRITE_TEXT


@pytest.mark.parametrize("op", ["read", "write"])
@by_server
def test_swap_attack(benchmark: BenchmarkFixture, capsys: pytest.CaptureFixture[str],
                     server: str, op: str) -> None:
    if benchmark.disabled:
        pytest.skip("the attack runs only when benchmarking (tests/mcp/test_race.py covers it)")
    if sys.platform != "linux":
        pytest.skip("the attacker needs Linux's renameat2")
    command = _command(server, False)
    benchmark.group = f"mcp swap attack {op}"
    counts = benchmark.pedantic(  # type: ignore[no-untyped-call]
        race_victim, args=(server, lambda ws: mcp_session(command, ws), op, RACE_SECONDS),
        rounds=1, iterations=1)
    benchmark.extra_info.update(counts.as_dict())
    with capsys.disabled():
        print(f"\n{server} {op} under the directory swap: {counts.escapes} escapes / "
              f"{counts.attempts} attempts ({counts.inside} inside, {counts.refused} refused, "
              f"{counts.swaps} swaps)")
    if server == "safefs-mcp":
        assert counts.escapes == 0
