"""strands-agents-tools' ``file_read`` and ``file_write`` against the drop-ins, raced: a separate
process swaps ``d/`` with a symlink to an outside directory (or ``f`` with a symlink to an
outside file) while the tools read and write inside the workspace. Bounded in time; counts
printed.

The originals check nothing: a path is opened as the host resolves it at that moment, so every
swap that lands between the attacker's rename and the open lets the call out. The drop-ins must
let nothing out. The originals are given the workspace's absolute path (the race's workspace is
a temporary directory beside its ``outside``); the drop-ins the path relative to
``SAFEFS_STRANDS_ROOT``, the workspace.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import pytest

from tests.race_window import RACE_SECONDS

pytest.importorskip("strands_tools.file_read")

from strands_tools import file_read as o_read
from strands_tools import file_write as o_write

from safefs.integrations import strands as drop_in
from safefs.integrations.strands import file_read as d_read
from safefs.integrations.strands import file_write as d_write
from tests.integrations.racing import NEEDS_ATTACKER, race_each
from tests.integrations.support import ClosingVictim, assert_race

pytestmark = NEEDS_ATTACKER

SECONDS = RACE_SECONDS
IMPLEMENTATIONS: dict[str, tuple[ModuleType, ModuleType]] = {
    "strands": (o_read, o_write),
    "safefs": (d_read, d_write),
}


class ToolVictim(ClosingVictim):
    """The two tools of one implementation; an error result is a refusal (the harness counts it
    so only if nothing outside changed)."""

    def __init__(self, workspace: str, implementation: str) -> None:
        self.reader, self.writer = IMPLEMENTATIONS[implementation]
        self.original = implementation != "safefs"
        self.workspace = workspace
        self.saved = {k: os.environ.get(k) for k in (drop_in.ROOT_VARIABLE, "BYPASS_TOOL_CONSENT")}
        os.environ["BYPASS_TOOL_CONSENT"] = "true"
        os.environ[drop_in.ROOT_VARIABLE] = workspace

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        drop_in.close()

    def _path(self, rel: str) -> str:
        return os.path.join(self.workspace, rel) if self.original else rel

    def read(self, rel: str) -> bytes:
        path = self._path(rel)
        result: Any = self.reader.file_read({"toolUseId": "t", "input": {"path": path, "mode": "view"}})
        text = result["content"][0]["text"] if result["content"] else ""
        prefix = f"Content of {path}:\n"
        if result["status"] != "success" or not text.startswith(prefix):
            raise PermissionError(text)
        return text[len(prefix) :].encode()

    def write(self, rel: str, data: bytes) -> None:
        path = self._path(rel)
        result: Any = self.writer.file_write(
            {"toolUseId": "t", "input": {"path": path, "content": data.decode()}}
        )
        if result["status"] != "success":
            raise PermissionError(result["content"][0]["text"])


@pytest.mark.parametrize("swap", ["dir", "final"])
@pytest.mark.parametrize("op", ["read", "write"])
def test_the_original_escapes_and_the_drop_in_does_not(op: str, swap: str) -> None:
    counts = race_each(ToolVictim, IMPLEMENTATIONS, op, swap, SECONDS)
    assert_race(counts, "strands", original_escapes=op == "read")
