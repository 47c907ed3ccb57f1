"""pydantic-ai's ``LocalWorkspaceBackend`` against the drop-in, raced: a separate process swaps
``d/`` with a symlink to an outside directory (or ``f`` with a symlink to an outside file) while
the backend reads and writes inside the working directory. Bounded in time; counts printed.

The original confines nothing (an absolute path reaches anywhere), so every escape it shows here
is one a path *inside* the workspace let out; the drop-in must show none.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import pytest

from tests.race_window import RACE_SECONDS

pytest.importorskip("pydantic_ai.workspaces")

from pydantic_ai.workspaces import LocalWorkspaceBackend as Original

from safefs import capabilities
from safefs.integrations.pydantic_ai import LocalWorkspaceBackend as DropIn
from tests.integrations.support import assert_race, race_each

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not capabilities().renameat2,
    reason="the attacker swaps names with renameat2 (Linux)",
)

SECONDS = RACE_SECONDS
IMPLEMENTATIONS: dict[str, Any] = {"pydantic-ai": Original, "safefs": DropIn}


class BackendVictim:
    """One backend's ``read_bytes`` / ``write_bytes`` by absolute path, as the harness drives them."""

    def __init__(self, workspace: str, implementation: str) -> None:
        self.workspace = workspace
        self.backend = IMPLEMENTATIONS[implementation](workspace)
        self.loop = asyncio.new_event_loop()

    def __enter__(self) -> BackendVictim:
        return self

    def __exit__(self, *exc: object) -> None:
        close = getattr(self.backend, "close", None)
        if close is not None:
            close()
        self.loop.close()

    def read(self, rel: str) -> bytes:
        data: bytes = self.loop.run_until_complete(self.backend.read_bytes(os.path.join(self.workspace, rel)))
        return data

    def write(self, rel: str, data: bytes) -> None:
        self.loop.run_until_complete(self.backend.write_bytes(os.path.join(self.workspace, rel), data))


@pytest.mark.parametrize("swap", ["dir", "final"])
@pytest.mark.parametrize("op", ["read", "write"])
def test_the_original_escapes_and_the_drop_in_does_not(op: str, swap: str) -> None:
    counts = race_each(BackendVictim, IMPLEMENTATIONS, op, swap, SECONDS)
    assert_race(counts, "pydantic-ai", original_escapes=True)
