"""agno's ``FileTools`` against the drop-in, raced: a separate process swaps ``d/`` with a symlink
to an outside directory (or ``f`` with a symlink to an outside file) while ``read_file`` and
``save_file`` work inside ``base_dir``. Bounded in time; counts printed.

The original resolves the path (realpath, then ``relative_to``) and then opens the resolved
path string again: a swap between the two lets it out. The drop-in must let nothing out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.race_window import RACE_SECONDS

pytest.importorskip("agno.tools.file")

import agno.tools.file as original

from safefs.integrations import agno as drop_in
from tests.integrations.racing import NEEDS_ATTACKER, race_each
from tests.integrations.support import ClosingVictim, assert_race

pytestmark = NEEDS_ATTACKER

SECONDS = RACE_SECONDS
IMPLEMENTATIONS: dict[str, Any] = {"agno": original, "safefs": drop_in}


class ToolVictim(ClosingVictim):
    """``FileTools`` of one implementation on ``base_dir``; a result reporting an error is a
    refusal (the harness counts it so only if nothing outside changed)."""

    def __init__(self, workspace: str, implementation: str) -> None:
        self.tools = IMPLEMENTATIONS[implementation].FileTools(base_dir=Path(workspace))

    def closables(self) -> tuple[Any, ...]:
        return (self.tools,)

    def read(self, rel: str) -> bytes:
        text = self.tools.read_file(file_name=rel)
        if text.startswith("Error reading file"):
            raise PermissionError(text)
        return str(text).encode()

    def write(self, rel: str, data: bytes) -> None:
        text = self.tools.save_file(contents=data.decode(), file_name=rel)
        if text != rel:
            raise PermissionError(text)


@pytest.mark.parametrize("swap", ["dir", "final"])
@pytest.mark.parametrize("op", ["read", "write"])
def test_the_original_escapes_and_the_drop_in_does_not(op: str, swap: str) -> None:
    counts = race_each(ToolVictim, IMPLEMENTATIONS, op, swap, SECONDS)
    assert_race(
        counts, "agno", original_escapes=op == "read"
    )  # writes escape too, too rarely on a loaded machine to require it
