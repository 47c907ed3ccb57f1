"""A second process swaps a workspace directory with a symlink to the outside
(renameat2(RENAME_EXCHANGE)) while a real MCP client calls read_text_file / write_file on the
installed safefs-mcp in a loop. Bounded in time; outcomes are counted and printed; an escape is
outside content read, or a file created outside."""

from __future__ import annotations

import sys

import pytest

from safefs_bench.mcp_client import mcp_session, safefs_server
from safefs_bench.race import race_victim
from tests.race_window import RACE_SECONDS

SECONDS = 2 * RACE_SECONDS  # a real MCP client over stdio makes fewer calls a second


@pytest.mark.skipif(sys.platform != "linux", reason="the attacker needs Linux's renameat2")
@pytest.mark.parametrize("op", ["read", "write"])
def test_swap_attack_never_escapes(op: str) -> None:
    command = safefs_server()
    if command is None:
        pytest.skip(f"the safefs-mcp console script is not installed beside {sys.executable}")
    counts = race_victim("safefs-mcp", lambda ws: mcp_session(command, ws), op, SECONDS)
    print(f"\nsafefs-mcp {op} under the directory swap: {counts.as_dict()}")
    assert counts.attempts > 50 and counts.swaps > 1000  # the race really ran
    assert counts.inside > 0  # and the workspace still worked under it
    assert counts.escapes == 0
    assert counts.attempts == counts.inside + counts.refused
