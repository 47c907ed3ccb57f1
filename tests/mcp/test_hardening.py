"""Inputs that used to crash or hang the server, each through the real client over stdio (the
HTTP ones are in test_http.py): file names that are not UTF-8, a very deep tree, malformed JSON,
and a long call that must neither block other calls nor outlive its cancel."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from safefs.mcp.stdio_server import MAX_PENDING, MAX_RUNNING
from tests.mcp.client import mcp_client, server_command
from tests.mcp.raw_stdio import RawServer

NAME = b"caf\xe9.txt"  # Latin-1 bytes: not UTF-8
SHOWN = "caf\\xe9.txt"
DIR_NAME = b"d\xff"
DIR_SHOWN = "d\\xff"


@pytest.fixture
def undecodable(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    with open(os.path.join(os.fsencode(ws), NAME), "wb") as f:
        f.write(b"needle in a badly named file\n")
    os.mkdir(os.path.join(os.fsencode(ws), DIR_NAME))
    with open(os.path.join(os.fsencode(ws), DIR_NAME, b"inner.txt"), "wb") as f:
        f.write(b"needle\n")
    return ws


def test_undecodable_names_in_every_listing_and_search_tool(undecodable: Path) -> None:
    ws = undecodable
    with mcp_client(str(ws)) as client:
        calls: list[tuple[str, dict[str, Any], list[str]]] = [
            ("list_directory", {"path": "."}, [f"[FILE] {SHOWN}", f"[DIR] {DIR_SHOWN}"]),
            ("list_directory_with_sizes", {"path": "."}, [SHOWN, DIR_SHOWN]),
            ("directory_tree", {"path": "."}, [json.dumps(SHOWN), json.dumps(DIR_SHOWN)]),  # JSON
            (
                "search_files",
                {"path": ".", "pattern": "**/*"},
                [f"{ws}/{SHOWN}", f"{ws}/{DIR_SHOWN}/inner.txt"],
            ),
            ("search_file_contents", {"path": ".", "pattern": "needle"}, [f"{ws}/{SHOWN}:1:", DIR_SHOWN]),
        ]
        for tool, args, wanted in calls:
            error, text = client.text(tool, args)
            assert not error, (tool, text)
            for want in wanted:
                assert want in text, (tool, want, text)
        # The escaped spelling is accepted back as a path, relative or absolute.
        assert client.text("read_text_file", {"path": SHOWN}) == (False, "needle in a badly named file\n")
        assert client.text("read_text_file", {"path": f"{ws}/{DIR_SHOWN}/inner.txt"}) == (False, "needle\n")
        assert client.text("write_file", {"path": f"{DIR_SHOWN}/new.txt", "content": "x"}) == (
            False,
            f"Successfully wrote to {DIR_SHOWN}/new.txt",
        )
        error, text = client.text("read_text_file", {"path": f"{DIR_SHOWN}/missing.txt"})
        assert error and DIR_SHOWN in text
    assert os.path.exists(os.path.join(os.fsencode(ws), DIR_NAME, b"new.txt"))


def test_a_600_level_tree_renders(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    deep = os.fsencode(ws)
    fd = os.open(deep, os.O_RDONLY)
    try:  # made by fd, one level at a time, so no path grows past PATH_MAX
        for _ in range(600):
            os.mkdir("d", dir_fd=fd)
            next_fd = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    finally:
        os.close(fd)
    with mcp_client(str(ws)) as client:
        error, text = client.text("directory_tree", {"path": "."})
        assert not error, text[:300]
        tree = json.loads(text)
        node = tree[0]
        while node.get("children"):
            node = node["children"][0]
        assert node["name"] == "d" and node.get("truncated") is True  # cut by the size cap, not the stack
        assert not client.text("list_directory", {"path": "d/d/d"})[0]  # and the server lives on


def _raw_exchange(ws: Path, lines: list[bytes]) -> list[dict[str, Any]]:
    """Send ``lines`` to a server as they are, then end the input; its answers, in order."""
    init = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    text = [
        json.dumps(init).encode(),
        *lines,
        json.dumps({"jsonrpc": "2.0", "id": "last", "method": "ping"}).encode(),
    ]
    done = subprocess.run(
        [*server_command(), str(ws)], input=b"\n".join(text) + b"\n", capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": ',  # cut short
        b"\xff\xfe not utf-8",
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_text_file", '
        b'"arguments": {"path": "\\ud800"}}}',  # a lone surrogate
    ],
    ids=["truncated", "not-utf8", "lone-surrogate"],
)
def test_malformed_json_gets_a_parse_error(tmp_path: Path, line: bytes) -> None:
    answers = _raw_exchange(tmp_path, [line])
    assert [a.get("id") for a in answers] == ["init", None, "last"]
    assert answers[1]["error"]["code"] == -32700


def test_not_a_request_gets_invalid_request(tmp_path: Path) -> None:
    answers = _raw_exchange(tmp_path, [b"[1, 2]", b'{"jsonrpc": "1.0", "id": 7, "method": "ping"}'])
    assert [(a.get("id"), a["error"]["code"]) for a in answers[1:3]] == [(None, -32600), (7, -32600)]
    assert answers[3] == {"jsonrpc": "2.0", "id": "last", "result": {}}


def _slow_tree(ws: Path, files: int = 100, more: int = 30_000) -> None:
    """Content search matches in linear time (RE2), so no pattern makes it slow: the tree does.
    ``more`` files in subdirectories, each one to open and search, make a search of the tree
    take seconds, in steps the walk can stop between."""
    for i in range(files):
        (ws / f"f{i:03}.txt").write_text(("a" * 100 + "\n") * 10)
    for i in range(more):
        sub = ws / f"d{i // 1000:02}"
        if i % 1000 == 0:
            sub.mkdir()
        (sub / f"g{i:05}.txt").write_text("a" * 100 + "\n")


def _threads_of_server(ws: Path) -> int:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if os.fsencode(ws) in cmdline and any(b"safefs-mcp" in part for part in cmdline[:2]):
            return int(next(line for line in status.splitlines() if line.startswith("Threads:")).split()[1])
    raise AssertionError("the server process was not found")


@pytest.mark.slow  # waits out a long call
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="counts threads in /proc")
def test_a_long_call_blocks_nothing_and_stops_when_cancelled(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _slow_tree(ws, more=60_000)
    slow = {"path": ".", "pattern": "a*a*a*c"}
    with mcp_client(str(ws)) as client:
        idle = _threads_of_server(ws)
        # How long the search takes here and now: the cancel comes at half of that, so the call
        # is still running when it comes, on a quiet machine as on a loaded one, and the quick
        # calls (each waits for the interpreter lock the search holds between its steps) have
        # time to be answered before it.
        started = time.monotonic()
        assert client.text("search_file_contents", slow)[0] is False
        full = time.monotonic() - started

        async def race() -> list[str]:
            events: list[str] = []

            async def long_call() -> None:
                try:
                    timeout = full / 2
                    await client.session.call_tool("search_file_contents", slow, read_timeout_seconds=timeout)
                    events.append("slow answered")
                except Exception:  # the client gave up and sent notifications/cancelled
                    events.append("cancelled")

            async def quick_calls() -> None:
                await anyio.sleep(full / 20)
                for _ in range(5):
                    result = await client.session.call_tool("list_directory", {"path": "."})
                    assert not result.is_error
                    events.append("quick")

            async with anyio.create_task_group() as group:
                group.start_soon(long_call)
                group.start_soon(quick_calls)
            return events

        events = client.portal.call(race)
        print(f"\nfull search {full * 1000:.0f} ms; events: {events}")
        assert events == ["quick"] * 5 + ["cancelled"]  # every quick call answered during the slow one
        # Left alone, the search would run for half its time more: its thread must be gone well
        # before that.
        cancelled = time.monotonic()
        while _threads_of_server(ws) > idle and time.monotonic() - cancelled < full / 4:
            time.sleep(0.005)
        waited = time.monotonic() - cancelled
        print(f"threads: idle {idle}, {_threads_of_server(ws)} after {waited * 1000:.0f} ms")
        assert _threads_of_server(ws) == idle
        assert client.text("read_text_file", {"path": "f000.txt", "head": 1}) == (False, "a" * 100)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="looks at processes in /proc")
def test_a_catastrophic_pattern_stops_nothing_else_and_ends_when_cancelled(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a" * 40 + "\n")  # (a|aa)*c backtracks for minutes on it in Python's re
    with mcp_client(str(ws)) as client:
        idle = _threads_of_server(ws)

        async def race() -> tuple[int, bool]:
            answered = 0
            cancelled = False

            async def long_call() -> None:
                nonlocal cancelled
                try:
                    await client.session.call_tool(
                        "search_file_contents", {"path": ".", "pattern": "(a|aa)*c"}, read_timeout_seconds=2.0
                    )
                except Exception:  # the client gave up and sent notifications/cancelled
                    cancelled = True

            async def quick_calls() -> None:
                nonlocal answered
                await anyio.sleep(0.3)
                with anyio.fail_after(10):  # with the interpreter lock held, they would wait minutes
                    for _ in range(5):
                        result = await client.session.call_tool("list_directory", {"path": "."})
                        assert not result.is_error
                        answered += 1
                    await client.session.send_ping()

            async with anyio.create_task_group() as group:
                group.start_soon(long_call)
                group.start_soon(quick_calls)
            return answered, cancelled

        answered, cancelled = client.portal.call(race)
        assert answered == 5
        if cancelled:  # the search was still running: its thread must be gone soon after
            deadline = time.monotonic() + 5.0
            while _threads_of_server(ws) > idle and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _threads_of_server(ws) == idle
        print(f"\nquick calls answered during the search: {answered}; search cancelled: {cancelled}")
        assert client.text("read_text_file", {"path": "a.txt"}) == (False, "a" * 40 + "\n")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="counts threads in /proc")
def test_calls_past_the_cap_are_refused_without_a_thread(tmp_path: Path) -> None:
    """1,024 calls in progress at once (64 running in the worker threads, the rest waiting for
    one); the next one is refused with -32000 at once, the server still answers a ping, and once
    the calls can go on every one of them is answered. The calls are held by an unanswered
    roots/list: every call waits for the client's roots, without using the CPU."""
    (tmp_path / "a.txt").write_text("a\n")
    with RawServer(str(tmp_path)) as server:
        server.send(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"roots": {"listChanged": True}},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            }
        )
        assert server.next()["id"] == "init"
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        roots_request = server.next()
        assert roots_request["method"] == "roots/list"
        calls = [
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "list_directory", "arguments": {"path": "."}},
            }
            for i in range(MAX_PENDING + 1)
        ]
        server.send(*calls, {"jsonrpc": "2.0", "id": "ping", "method": "ping"})
        refused, pong = server.next(), server.next()
        assert refused == {
            "jsonrpc": "2.0",
            "id": MAX_PENDING,
            "error": {"code": -32000, "message": f"{MAX_PENDING} calls are in progress; try again"},
        }
        assert pong == {"jsonrpc": "2.0", "id": "ping", "result": {}}
        threads = server.threads()
        assert threads <= MAX_RUNNING + 3  # one per call running, none for those waiting or refused
        server.send(
            {"jsonrpc": "2.0", "id": roots_request["id"], "result": {"roots": [{"uri": tmp_path.as_uri()}]}}
        )
        answered = [server.next() for _ in range(MAX_PENDING)]
        print(f"\nthreads with {MAX_PENDING} calls in progress: {threads}; answered later: {len(answered)}")
        assert sorted(a["id"] for a in answered) == list(range(MAX_PENDING))
        assert all(a["result"]["content"][0]["text"] == "[FILE] a.txt" for a in answered)
        server.send({**calls[0], "id": "again"})  # the cap counts calls in progress, not calls made
        assert server.next()["id"] == "again"
