"""The installed ``safefs-mcp`` behind a real MCP client session (see safefs.contest.mcp_client)."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from safefs.contest.mcp_client import SyncClient, mcp_session, safefs_server

Client = SyncClient


@contextmanager
def mcp_client(*args: str, roots: Sequence[str] | None = None, errlog: Any = None) -> Iterator[SyncClient]:
    """``with mcp_client("--read-only", str(dir)) as client: client.call(...)``"""
    command = safefs_server()
    if command is None:
        pytest.skip(f"the safefs-mcp console script is not installed beside {sys.executable}")
    with mcp_session(command, *args, roots=roots, errlog=sys.stderr if errlog is None else errlog) as client:
        yield client
