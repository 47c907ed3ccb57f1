"""A synchronous handle on a real MCP client session with the installed ``safefs-mcp``.

The SDK's ``ClientSession`` over ``stdio_client`` runs in an event loop on a portal thread; the
tests call tools through it as plain functions. The server is the console script installed in
the project's venv, started as a subprocess exactly as an MCP client configuration would.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio.from_thread
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SERVER = Path(sys.executable).with_name("safefs-mcp")


def server_command() -> str:
    if not SERVER.exists():
        pytest.skip(f"the safefs-mcp console script is not installed next to {sys.executable}")
    return str(SERVER)


class Client:
    def __init__(self, portal: anyio.from_thread.BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def tools(self) -> list[types.Tool]:
        return self.portal.call(self.session.list_tools).tools

    def call(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        return self.portal.call(self.session.call_tool, name, args)

    def text(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        """(is_error, the text of the first content block)."""
        result = self.call(name, args)
        block = result.content[0]
        assert isinstance(block, types.TextContent), block
        return result.is_error, block.text


@asynccontextmanager
async def _session(args: Sequence[str], roots: Sequence[str] | None,
                   errlog: Any) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=server_command(), args=list(args),
                                   env={"PATH": os.environ.get("PATH", "")})
    callback = None
    if roots is not None:
        async def callback(context: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in roots])
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write, list_roots_callback=callback) as session:
            await session.initialize()
            yield session


@contextmanager
def mcp_client(*args: str, roots: Sequence[str] | None = None,
               errlog: Any = None) -> Iterator[Client]:
    """``with mcp_client("--read-only", str(dir)) as client: client.call(...)``"""
    with anyio.from_thread.start_blocking_portal() as portal:
        manager = portal.wrap_async_context_manager(
            _session(args, roots, sys.stderr if errlog is None else errlog))
        with manager as session:
            yield Client(portal, session)
