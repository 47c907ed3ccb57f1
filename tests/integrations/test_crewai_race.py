"""crewAI's ``FileReadTool`` and ``FileWriterTool`` against the drop-ins, raced: a separate
process swaps ``d/`` with a symlink to an outside directory (or ``f`` with a symlink to an outside
file) while the tools read and write inside ``base_dir``. Bounded in time; counts printed.

The originals resolve the path with ``realpath``, check it lies under ``base_dir``, then open the
path string again: a swap between the two lets them out. The drop-ins must let nothing out.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.race_window import RACE_SECONDS

pytest.importorskip("crewai_tools")

import crewai_tools as original

from safefs.integrations import crewai as drop_in
from tests.integrations.racing import NEEDS_ATTACKER, race_each
from tests.integrations.support import ClosingVictim, assert_race

pytestmark = NEEDS_ATTACKER

SECONDS = RACE_SECONDS
IMPLEMENTATIONS: dict[str, Any] = {"crewai": original, "safefs": drop_in}
FAILED = ("Error", "An error", "File ")  # a refusal or failure text of either tool


class ToolVictim(ClosingVictim):
    """``FileReadTool`` / ``FileWriterTool`` of one implementation on ``base_dir``; a result
    reporting an error is a refusal (the harness counts it so only if nothing outside changed)."""

    def __init__(self, workspace: str, implementation: str) -> None:
        module = IMPLEMENTATIONS[implementation]
        self.reader = module.FileReadTool(base_dir=workspace)
        self.writer = module.FileWriterTool(base_dir=workspace)

    def closables(self) -> tuple[Any, ...]:
        return (self.reader, self.writer)

    def read(self, rel: str) -> bytes:
        text = self.reader._run(file_path=rel)
        if text.startswith(FAILED):
            raise PermissionError(text)
        return str(text).encode()

    def write(self, rel: str, data: bytes) -> None:
        text = self.writer._run(filename=rel, content=data.decode(), overwrite=True)
        if not text.startswith("Content successfully written"):
            raise PermissionError(text)


@pytest.mark.parametrize("swap", ["dir", "final"])
@pytest.mark.parametrize("op", ["read", "write"])
def test_the_original_escapes_and_the_drop_in_does_not(op: str, swap: str) -> None:
    counts = race_each(ToolVictim, IMPLEMENTATIONS, op, swap, SECONDS)
    assert_race(
        counts, "crewai", original_escapes=op == "read"
    )  # writes escape too, too rarely on a loaded machine to require it
