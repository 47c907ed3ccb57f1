"""safefs-mcp beside the official MCP filesystem server, in one run, on the same tree.

1. Round trip of ``read_text_file`` and ``write_file`` over stdio: a real MCP client session
   to each server, their calls interleaved round by round; the medians per server are printed
   and kept in ``extra_info`` (the benchmark's own time is that of one call to each).
2. The contest's directory-swap attack (``safefs_bench.race``) against each server: a second
   process exchanges ``d/`` with a symlink to the outside while the client reads ``d/f`` or
   writes ``d/wN`` for ``RACE_SECONDS``; escapes / attempts are printed and kept in the saved
   benchmark JSON (``extra_info``).

3. Start-up: time from spawning each server to its answer to the first ``tools/list``
   (after ``initialize``), what a client such as Claude Code waits for before it lists the
   tools; the servers are started in turn, round by round, and the medians and their ratio
   are kept in ``extra_info``.

The official server comes from the npm registry, installed on first use into ``.bench-node/``;
without node/npm its rows are skipped with a note. With ``--benchmark-disable`` (``make test``)
only safefs-mcp's round trips run, once each, as a smoke test.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from safefs_bench.mcp_client import SyncClient, mcp_session, official_server, safefs_server
from safefs_bench.race import race_victim
from safefs_bench.trees import DEPTH_1, DEPTH_4, Shape, build_tree

SERVERS = ("safefs-mcp", "official")
TEXT = "".join(chr(32 + i % 95) for i in range(255)) + "\n"  # 256 characters of text
WRITE_TEXT = "w" * 4095 + "\n"
RACE_SECONDS = 5.0
ROUNDS = 400  # each round is one call to every server
WARMUP = 40  # first rounds left out of the medians
START_ROUNDS = 30  # each round starts every server once
HANDSHAKE = "".join(
    json.dumps(m) + "\n"
    for m in (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    )
).encode()

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


def _official_or_note(benchmark: BenchmarkFixture) -> tuple[list[str] | None, str]:
    if benchmark.disabled:
        return None, "the official server runs only when benchmarking"
    return official_server()


@pytest.mark.parametrize("tool", ["read_text_file", "write_file"])
@by_shape
def test_round_trip_side_by_side(
    benchmark: BenchmarkFixture,
    capsys: pytest.CaptureFixture[str],
    sessions: Sessions,
    mcp_tree: Path,
    tool: str,
    shape: Shape,
) -> None:
    """Each round calls every server once, in turn, so the machine's drift hits them alike;
    the medians of those calls are the numbers, kept in ``extra_info``."""
    clients = {"safefs-mcp": sessions("safefs-mcp", _command("safefs-mcp", True))}
    official, note = _official_or_note(benchmark)
    if official is not None:
        clients["official"] = sessions("official", official)
    if tool == "read_text_file":
        args: dict[str, str] = {"path": _in(shape, "t.txt")}
        expected = TEXT
    else:
        args = {"path": _in(shape, "w.txt"), "content": WRITE_TEXT}
        expected = f"Successfully wrote to {args['path']}"
    samples: dict[str, list[float]] = {name: [] for name in clients}

    def one_round() -> None:
        for name, client in clients.items():
            t0 = time.perf_counter()
            result = client.text(tool, args)
            samples[name].append(time.perf_counter() - t0)
            assert result == (False, expected), (name, result)

    benchmark.group = f"mcp {tool} {shape.name}"
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        one_round, rounds=1 if benchmark.disabled else ROUNDS, warmup_rounds=0
    )
    if tool == "write_file":
        assert (mcp_tree / shape.dir / "w.txt").read_text() == WRITE_TEXT
    kept = {name: s[WARMUP:] or s for name, s in samples.items()}
    medians = {name: statistics.median(s) * 1e3 for name, s in kept.items()}
    benchmark.extra_info.update({f"{name} median ms": round(m, 3) for name, m in medians.items()})
    line = ", ".join(f"{name} {m:.2f} ms" for name, m in medians.items())
    if "official" in medians:
        line += f" (safefs-mcp / official: {medians['safefs-mcp'] / medians['official']:.2f})"
    else:
        line += f"; official skipped: {note}"
    with capsys.disabled():
        print(f"\n{tool} {shape.name}, median of {len(kept['safefs-mcp'])} round trips: {line}")


@pytest.mark.parametrize("op", ["read", "write"])
@by_server
def test_swap_attack(
    benchmark: BenchmarkFixture, capsys: pytest.CaptureFixture[str], server: str, op: str
) -> None:
    if benchmark.disabled:
        pytest.skip("the attack runs only when benchmarking (tests/mcp/test_race.py covers it)")
    if sys.platform != "linux":
        pytest.skip("the attacker needs Linux's renameat2")
    command = _command(server, False)
    benchmark.group = f"mcp swap attack {op}"
    counts = benchmark.pedantic(  # type: ignore[no-untyped-call]
        race_victim,
        args=(server, lambda ws: mcp_session(command, ws), op, RACE_SECONDS),
        rounds=1,
        iterations=1,
    )
    benchmark.extra_info.update(counts.as_dict())
    with capsys.disabled():
        print(
            f"\n{server} {op} under the directory swap: {counts.escapes} escapes / "
            f"{counts.attempts} attempts ({counts.inside} inside, {counts.refused} refused, "
            f"{counts.swaps} swaps)"
        )
    if server == "safefs-mcp":
        assert counts.escapes == 0


def _time_to_tools(command: list[str], directory: str) -> float:
    """Seconds from spawning the server to reading its ``tools/list`` answer."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*command, directory], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(HANDSHAKE)
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            assert line, "the server exited before listing its tools"
            if json.loads(line).get("id") == 2:
                elapsed = time.perf_counter() - t0
                assert json.loads(line)["result"]["tools"]
                return elapsed
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_start_up_side_by_side(
    benchmark: BenchmarkFixture, capsys: pytest.CaptureFixture[str], mcp_tree: Path
) -> None:
    commands = {"safefs-mcp": _command("safefs-mcp", True)}
    official, note = _official_or_note(benchmark)
    if official is not None:
        commands["official"] = official
    samples: dict[str, list[float]] = {name: [] for name in commands}

    def one_round() -> None:
        for name, command in commands.items():
            samples[name].append(_time_to_tools(command, str(mcp_tree)))

    benchmark.group = "mcp start-up to first tools/list"
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        one_round,
        rounds=1 if benchmark.disabled else START_ROUNDS,
        warmup_rounds=0 if benchmark.disabled else 2,
    )
    kept = {name: s[2:] or s for name, s in samples.items()}  # the warm-up rounds left out
    medians = {name: statistics.median(s) * 1e3 for name, s in kept.items()}
    benchmark.extra_info.update({f"{name} median ms": round(m, 1) for name, m in medians.items()})
    line = ", ".join(f"{name} {m:.0f} ms" for name, m in medians.items())
    if "official" in medians:
        ratio = medians["safefs-mcp"] / medians["official"]
        benchmark.extra_info["safefs-mcp / official"] = round(ratio, 2)
        line += f" (safefs-mcp / official: {ratio:.2f})"
    else:
        line += f"; official skipped: {note}"
    with capsys.disabled():
        print(f"\nstart-up to the first tools/list answer, median of {len(kept['safefs-mcp'])}: {line}")
