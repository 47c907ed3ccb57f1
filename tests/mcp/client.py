"""The installed ``safefs-mcp`` behind a real MCP client session (see safefs_bench.mcp_client),
and :class:`RootsClient`, a session whose roots a test can change and count."""

from __future__ import annotations

import sys
import warnings
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio.from_thread
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from safefs_bench.mcp_client import SyncClient, mcp_session, safefs_server, server_environment

Client = SyncClient


def server_command() -> list[str]:
    command = safefs_server()
    if command is None:
        pytest.skip(f"the safefs-mcp console script is not installed beside {sys.executable}")
    return command


@contextmanager
def mcp_client(*args: str, roots: Sequence[str] | None = None, errlog: Any = None) -> Iterator[SyncClient]:
    """``with mcp_client("--read-only", str(dir)) as client: client.call(...)``"""
    command = server_command()
    with mcp_session(command, *args, roots=roots, errlog=sys.stderr if errlog is None else errlog) as client:
        yield client


class RootsClient(SyncClient):
    """A client whose roots are :attr:`roots` (changed with :meth:`change_roots`), counting the
    ``roots/list`` requests the server makes in :attr:`asked`."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, session: ClientSession, state: RootsState):
        super().__init__(portal, session)
        self.state = state

    @property
    def asked(self) -> int:
        return self.state.asked

    def change_roots(self, uris: list[str]) -> None:
        self.state.uris = uris
        with warnings.catch_warnings():  # the client SDK marks roots deprecated; they are used
            warnings.simplefilter("ignore")
            self.portal.call(self.session.send_roots_list_changed)


class RootsState:
    def __init__(self, uris: list[str]) -> None:
        self.uris = uris
        self.asked = 0

    async def answer(self, context: Any) -> types.ListRootsResult:
        self.asked += 1
        return types.ListRootsResult.model_validate({"roots": [{"uri": u} for u in self.uris]})


@asynccontextmanager
async def _roots_session(
    args: Sequence[str], state: RootsState, errlog: TextIO
) -> AsyncIterator[ClientSession]:
    command = server_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], *args], env=server_environment())
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write, list_roots_callback=state.answer) as session:
            await session.initialize()
            yield session


@contextmanager
def roots_client(*args: str, roots: list[str], errlog_path: Path) -> Iterator[RootsClient]:
    """A started server whose client offers ``roots``; the server's stderr goes to ``errlog_path``."""
    state = RootsState(roots)
    with anyio.from_thread.start_blocking_portal() as portal, errlog_path.open("w") as log:
        with portal.wrap_async_context_manager(_roots_session(args, state, log)) as session:
            yield RootsClient(portal, session, state)
