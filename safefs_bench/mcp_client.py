"""MCP filesystem servers as plain Python objects: a real ``ClientSession`` over ``stdio_client``
on a portal thread, for the tests, the race and the round-trip benchmark.

:func:`safefs_server` is the ``safefs-mcp`` console script installed beside this interpreter;
:func:`official_server` is ``@modelcontextprotocol/server-filesystem`` from the npm registry,
installed on first use into ``.bench-node/`` at the top of the checkout (git-ignored), or None
with the reason when node/npm or the package cannot be had.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio.from_thread
import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

OFFICIAL_PACKAGE = "@modelcontextprotocol/server-filesystem"
OFFICIAL_VERSION = "2026.8.31"


def _node_prefix() -> Path:
    """Where the official server is installed: ``SAFEFS_BENCH_NODE``, else ``.bench-node`` at the
    top of a checkout (git-ignored), else a per-user cache for an installed safefs-bench."""
    named = os.environ.get("SAFEFS_BENCH_NODE")
    if named:
        return Path(named)
    top = Path(__file__).resolve().parents[1]  # the checkout, when run from one
    if (top / "safefs_bench" / "pyproject.toml").exists():
        return top / ".bench-node"
    return Path.home() / ".cache" / "safefs" / "bench-node"


NODE_PREFIX = _node_prefix()


def safefs_server() -> list[str] | None:
    script = Path(sys.executable).with_name("safefs-mcp")
    return [str(script)] if script.exists() else None


def npm_binary(package: str, binary: str, prefix: Path = NODE_PREFIX) -> tuple[Path | None, str]:
    """``binary`` of the npm ``package`` (``name@version``), installed on first use under
    ``prefix`` (:data:`NODE_PREFIX`): (its path, or None; a note saying what was had, or why not)."""
    installed = prefix / "node_modules" / ".bin" / binary
    if installed.exists():
        return installed, package
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return None, f"node/npm not installed: {package} cannot be had here"
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(prefix),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                package,
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        return None, f"npm install {package} took over 600 s"
    if done.returncode != 0 or not installed.exists():
        return None, f"npm install {package} failed: {done.stderr.strip()[-300:]}"
    return installed, package


def official_server() -> tuple[list[str] | None, str]:
    """(the command that starts the official server, or None; a note saying why not)."""
    binary, note = npm_binary(f"{OFFICIAL_PACKAGE}@{OFFICIAL_VERSION}", "mcp-server-filesystem")
    if binary is None:
        return None, f"{note}: the official server was skipped"
    return [str(binary)], note


class ToolFailed(OSError):
    """An error result from a tool, as the OSError a race victim raises."""


class SyncClient:
    def __init__(self, portal: anyio.from_thread.BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def tools(self) -> list[types.Tool]:
        return self.portal.call(self.session.list_tools).tools

    def call(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        result: types.CallToolResult = self.portal.call(self.session.call_tool, name, args)
        return result

    def text(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        """(is_error, the text of the first content block)."""
        result = self.call(name, args)
        block = result.content[0]
        assert isinstance(block, types.TextContent), block
        return result.is_error, block.text

    # The race victim's interface: bytes in and out, failures as OSError.
    def read(self, path: str) -> bytes:
        error, text = self.text("read_text_file", {"path": path})
        if error:
            raise ToolFailed(text)
        return text.encode()

    def write(self, path: str, data: bytes) -> None:
        error, text = self.text("write_file", {"path": path, "content": data.decode()})
        if error:
            raise ToolFailed(text)


def server_environment() -> dict[str, str]:
    """The environment a server started over stdio gets: PATH, and PYTHONPATH where it is set (a
    run of the tree's mutation tests points it at the copy under test)."""
    env = {"PATH": os.environ.get("PATH", "")}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


@asynccontextmanager
async def _session(
    command: Sequence[str], args: Sequence[str], roots: Sequence[str] | None, errlog: TextIO
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command[0], args=[*command[1:], *args], env=server_environment())
    callback = None
    if roots is not None:

        async def callback(context: Any) -> types.ListRootsResult:
            return types.ListRootsResult.model_validate({"roots": [{"uri": u} for u in roots]})

    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write, list_roots_callback=callback) as session:
            await session.initialize()
            yield session


@contextmanager
def mcp_session(
    command: Sequence[str], *args: str, roots: Sequence[str] | None = None, errlog: TextIO | None = None
) -> Iterator[SyncClient]:
    """``with mcp_session(cmd, str(dir)) as client: client.call(...)``: a started server."""
    with anyio.from_thread.start_blocking_portal() as portal:
        log = errlog if errlog is not None else open(os.devnull, "w")  # noqa: SIM115
        try:
            manager = portal.wrap_async_context_manager(_session(command, args, roots, log))
            with manager as session:
                yield SyncClient(portal, session)
        finally:
            if errlog is None:
                log.close()
