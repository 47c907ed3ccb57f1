"""safefs-mcp over streamable HTTP: loopback only unless asked, a bearer token on every request,
an Origin check; a refused request touches nothing, a correct one works."""

from __future__ import annotations

import json
import os
import queue
import socket
import stat
import subprocess
import threading
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from safefs_bench.mcp_client import safefs_server

TOKEN = "test-token-5f0c2b9e"


@dataclass
class Served:
    url: str
    stderr: list[str]
    ws: Path


def _start(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], queue.Queue[str]]:
    command = safefs_server()
    if command is None:
        pytest.skip("the safefs-mcp console script is not installed")
    proc = subprocess.Popen(
        [*command, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put("")  # end of output

    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def _wait_for_url(lines: queue.Queue[str], seen: list[str]) -> str:
    while True:
        line = lines.get(timeout=30)
        seen.append(line)
        if "listening on " in line:
            return line.split("listening on ", 1)[1].strip()
        if line == "":
            pytest.fail(f"server exited: {''.join(seen)}")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    ws = tmp_path_factory.mktemp("http") / "ws"
    ws.mkdir()
    (ws / "hello.txt").write_text("hello over http\n")
    env = {**os.environ, "SAFEFS_MCP_TOKEN": TOKEN}
    proc, lines = _start(["--http", "127.0.0.1:0", str(ws)], env)
    seen: list[str] = []
    try:
        yield Served(_wait_for_url(lines, seen), seen, ws)
    finally:
        _stop(proc)


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


WRITE_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "write_file", "arguments": {"path": "pwned.txt", "content": "x"}},
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", f"Basic {TOKEN}", TOKEN])
def test_without_the_token_401_and_nothing_touched(served: Served, authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    for body in (INITIALIZE, WRITE_CALL):
        status, text = _post(served.url, body, headers)
        assert status == 401, text
    assert not (served.ws / "pwned.txt").exists()


def test_a_foreign_origin_is_refused(served: Served) -> None:
    for origin in ("http://evil.example", "http://127.0.0.1.evil.example:80", "null"):
        status, _text = _post(served.url, WRITE_CALL, {"Authorization": f"Bearer {TOKEN}", "Origin": origin})
        assert status == 403, origin
    assert not (served.ws / "pwned.txt").exists()


def test_a_foreign_origin_is_refused_with_allow_remote_too(tmp_path: Path) -> None:
    # Off loopback the MCP SDK's own Origin check is off: the server's check is the only one.
    (tmp_path / "ws").mkdir()
    env = {**os.environ, "SAFEFS_MCP_TOKEN": TOKEN}
    proc, lines = _start(["--http", "0.0.0.0:0", "--allow-remote", str(tmp_path / "ws")], env)
    try:
        port = _wait_for_url(lines, []).rsplit(":", 1)[1].split("/", 1)[0]
        url = f"http://127.0.0.1:{port}/mcp"
        for origin in ("http://evil.example", "null"):
            status, _text = _post(url, WRITE_CALL, {"Authorization": f"Bearer {TOKEN}", "Origin": origin})
            assert status == 403, origin
    finally:
        _stop(proc)
    assert not (tmp_path / "ws" / "pwned.txt").exists()


def test_a_correct_call_works(served: Served) -> None:
    async def session() -> tuple[str, str]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(served.url, http_client=http) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    first = await client.call_tool("read_text_file", {"path": "hello.txt"})
                    await client.call_tool("write_file", {"path": "new.txt", "content": "made\n"})
                    escape = await client.call_tool("read_text_file", {"path": "../x"})
                    texts = [getattr(r.content[0], "text", "") for r in (first, escape)]
                    return texts[0], texts[1]

    read_back, refused = anyio.run(session)
    assert read_back == "hello over http\n"
    assert refused == "path escapes workspace: '../x'"
    assert (served.ws / "new.txt").read_text() == "made\n"
    # A browser page on the loopback origin itself is allowed.
    status, _ = _post(
        served.url, INITIALIZE, {"Authorization": f"Bearer {TOKEN}", "Origin": served.url.rsplit("/", 1)[0]}
    )
    assert status == 200


def test_a_generated_token_is_printed_once_and_required(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SAFEFS_MCP_TOKEN"}
    proc, lines = _start(
        ["--http", "127.0.0.1:0", "--allow-origin", "https://app.example", str(tmp_path)], env
    )
    seen: list[str] = []
    try:
        url = _wait_for_url(lines, seen)
        printed = [line for line in seen if "bearer token" in line]
        assert len(printed) == 1
        token = printed[0].rsplit(": ", 1)[1].strip()
        assert len(token) >= 32
        assert _post(url, INITIALIZE, {})[0] == 401
        assert _post(url, INITIALIZE, {"Authorization": f"Bearer {token}"})[0] == 200
        allowed = {"Authorization": f"Bearer {token}", "Origin": "https://app.example"}
        assert _post(url, INITIALIZE, allowed)[0] == 200  # --allow-origin
        assert _post(url, INITIALIZE, {**allowed, "Origin": "https://app.example.evil"})[0] == 403
    finally:
        _stop(proc)


def test_a_remote_address_needs_allow_remote(tmp_path: Path) -> None:
    command = safefs_server()
    if command is None:
        pytest.skip("the safefs-mcp console script is not installed")
    done = subprocess.run(
        [*command, "--http", "0.0.0.0:0", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "safefs-mcp: refusing to listen on '0.0.0.0', which is not a loopback "
        "address; pass --allow-remote to serve other machines\n"
    )


def test_missing_and_wrong_tokens_are_told_apart(served: Served) -> None:
    assert _post(served.url, INITIALIZE, {}) == (401, "Unauthorized: a bearer token is required")
    wrong = {"Authorization": "Bearer wrong-token"}
    assert _post(served.url, INITIALIZE, wrong) == (401, "Unauthorized: the bearer token is wrong")


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp"]
)
def test_oauth_discovery_is_not_found(served: Served, path: str) -> None:
    url = served.url.rsplit("/", 1)[0] + path
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    assert status == 404


@pytest.mark.parametrize(
    "body", [b"{bad", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\\ud800"}}']
)
def test_malformed_json_gets_a_parse_error_over_http(served: Served, body: bytes) -> None:
    request = urllib.request.Request(
        served.url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {TOKEN}",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=30)
    assert json.loads(caught.value.read())["error"]["code"] == -32700


def test_an_undecodable_name_over_http(served: Served) -> None:
    with open(os.path.join(os.fsencode(served.ws), b"caf\xe9.txt"), "wb") as f:
        f.write(b"latin-1 named\n")

    async def session() -> list[str]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(served.url, http_client=http) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    texts = []
                    for name, args in [
                        ("list_directory", {"path": "."}),
                        ("search_files", {"path": ".", "pattern": "*.txt"}),
                        ("read_text_file", {"path": "caf\\xe9.txt"}),
                    ]:
                        result = await client.call_tool(name, args)
                        assert not result.is_error, result
                        texts.append(getattr(result.content[0], "text", ""))
                    return texts

    listed, found, read = anyio.run(session)
    assert "[FILE] caf\\xe9.txt" in listed.splitlines()
    assert f"{served.ws}/caf\\xe9.txt" in found.splitlines()
    assert read == "latin-1 named\n"


def test_idle_connections_are_capped_and_timed_out(tmp_path: Path) -> None:
    env = {**os.environ, "SAFEFS_MCP_TOKEN": TOKEN}
    args = ["--http", "127.0.0.1:0", "--max-connections", "3", "--header-timeout", "1", str(tmp_path)]
    proc, lines = _start(args, env)
    seen: list[str] = []
    try:
        url = _wait_for_url(lines, seen)
        host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
        idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(3)]
        idle[0].sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")  # a head that never ends
        extra = socket.create_connection((host, int(port)), timeout=10)
        assert extra.recv(100) == b""  # refused: the cap is reached
        for sock in idle:
            assert sock.recv(100) == b""  # closed by the server after the header timeout
            sock.close()
        extra.close()
        assert _post(url, INITIALIZE, {"Authorization": f"Bearer {TOKEN}"})[0] == 200
    finally:
        _stop(proc)
    while (line := lines.get(timeout=10)) != "":
        seen.append(line)
    refused = [x for x in seen if "refused a connection" in x]
    closed = [x for x in seen if "closed a connection" in x and "no request within 1 s" in x]
    print(f"\nstderr lines: {len(seen)} ({len(refused)} refused, {len(closed)} timed out)")
    assert (len(refused), len(closed)) == (1, 3)
    assert len(seen) == 5  # the listening line, and one line per connection dropped


def test_roots_over_http_are_asked_once_per_session(served: Served) -> None:
    (served.ws / "sub").mkdir(exist_ok=True)
    (served.ws / "sub" / "in.txt").write_text("in sub\n")
    roots = [(served.ws / "sub").as_uri()]
    asked: list[int] = []

    async def answer(context: Any) -> types.ListRootsResult:
        asked.append(1)
        return types.ListRootsResult.model_validate({"roots": [{"uri": u} for u in roots]})

    async def session() -> list[str]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        texts = []
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(served.url, http_client=http) as (read, write):
                async with ClientSession(read, write, list_roots_callback=answer) as client:
                    await client.initialize()
                    for _ in range(5):
                        result = await client.call_tool("read_text_file", {"path": "in.txt"})
                        texts.append(getattr(result.content[0], "text", ""))
                    roots[:] = [served.ws.as_uri()]
                    with warnings.catch_warnings():  # the client SDK marks roots deprecated
                        warnings.simplefilter("ignore")
                        await client.send_roots_list_changed()
                    result = await client.call_tool("list_allowed_directories", {})
                    texts.append(getattr(result.content[0], "text", ""))
        return texts

    texts = anyio.run(session)
    assert texts[:5] == ["in sub\n"] * 5
    assert texts[5] == f"Allowed directories:\n{served.ws}"
    assert len(asked) == 2  # once for the session, once after the change


def _directory_fds(pid: int) -> int:
    """The directories a process holds open (its sockets come and go with the connections)."""
    held = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            held += stat.S_ISDIR(os.stat(f"/proc/{pid}/fd/{fd}").st_mode)
        except OSError:
            continue  # closed meanwhile
    return held


@pytest.mark.slow  # many sessions over HTTP
@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts fds in /proc")
def test_roots_changes_over_http_leave_no_fd_behind(tmp_path: Path) -> None:
    """Each change makes the next call ask for the roots and open the new sub-root; the one it
    replaces is closed once its last call is done, so the server's fds stay flat."""
    ws = tmp_path / "ws"
    for name in ("a", "b"):
        (ws / name).mkdir(parents=True)
        (ws / name / f"in-{name}.txt").write_text(f"{name}\n")
    proc, lines = _start(["--http", "127.0.0.1:0", str(ws)], {**os.environ, "SAFEFS_MCP_TOKEN": TOKEN})
    seen: list[str] = []
    roots = [(ws / "a").as_uri()]

    async def answer(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate({"roots": [{"uri": u} for u in roots]})

    async def session(url: str) -> list[int]:
        fds = []
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write, list_roots_callback=answer) as client:
                    await client.initialize()
                    for i in range(120):
                        name = "ab"[i % 2]
                        roots[:] = [(ws / name).as_uri()]
                        with warnings.catch_warnings():  # the client SDK marks roots deprecated
                            warnings.simplefilter("ignore")
                            await client.send_roots_list_changed()
                        result = await client.call_tool("list_directory", {"path": "."})
                        assert getattr(result.content[0], "text", "") == f"[FILE] in-{name}.txt"
                        if i in (19, 119):
                            fds.append(_directory_fds(proc.pid))
        return fds

    try:
        before, after = anyio.run(session, _wait_for_url(lines, seen))
    finally:
        _stop(proc)
    print(f"\nserver directory fds after 20 roots changes: {before}, after 120: {after}")
    assert after == before
