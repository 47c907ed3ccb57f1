"""langchain-community's ``read_file`` and ``write_file`` tools against the drop-ins, raced: a
separate process swaps ``d/`` with a symlink to an outside directory (or ``f`` with a symlink to
an outside file) while the tools read and write inside ``root_dir``. Bounded in time; the counts
are printed. The original checks the resolved path, then opens the path string again."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.race_window import RACE_SECONDS

pytest.importorskip("langchain_community.tools.file_management")

from langchain_community.tools import file_management as original

from safefs import capabilities
from safefs.integrations import langchain as drop_in
from tests.integrations.support import ClosingVictim, assert_race, race_each

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not capabilities().renameat2,
    reason="the attacker swaps names with renameat2 (Linux)",
)

SECONDS = RACE_SECONDS
IMPLEMENTATIONS: dict[str, Any] = {"langchain": original, "safefs": drop_in}


class ToolVictim(ClosingVictim):
    """``read_file`` / ``write_file`` of one implementation; a result starting with ``Error`` is
    a refusal (the race harness counts it as one only if nothing outside was touched)."""

    def __init__(self, workspace: str, implementation: str) -> None:
        module = IMPLEMENTATIONS[implementation]
        self.reader = module.ReadFileTool(root_dir=workspace)
        self.writer = module.WriteFileTool(root_dir=workspace)

    def closables(self) -> tuple[Any, ...]:
        return (self.reader, self.writer)

    def read(self, rel: str) -> bytes:
        text = self.reader.run({"file_path": rel})
        if text.startswith("Error"):
            raise PermissionError(text)
        return str(text).encode()

    def write(self, rel: str, data: bytes) -> None:
        text = self.writer.run({"file_path": rel, "text": data.decode()})
        if text.startswith("Error"):
            raise PermissionError(text)


@pytest.mark.parametrize("swap", ["dir", "final"])
@pytest.mark.parametrize("op", ["read", "write"])
def test_the_original_escapes_and_the_drop_in_does_not(op: str, swap: str) -> None:
    counts = race_each(ToolVictim, IMPLEMENTATIONS, op, swap, SECONDS)
    # about 1 in 70 read through a swapped directory here; the others escape too rarely to require
    assert_race(counts, "langchain", original_escapes=(op, swap) == ("read", "dir"))


class AppendingVictim(ToolVictim):
    """``write_file`` with ``append=True``: the drop-in appends through its root as it writes, and
    never hands the call to the original's check-then-open."""

    def write(self, rel: str, data: bytes) -> None:
        text = self.writer.run({"file_path": rel, "text": data.decode(), "append": True})
        if text.startswith("Error"):
            raise PermissionError(text)


def test_an_append_through_a_swapped_directory_never_escapes() -> None:
    counts = race_each(AppendingVictim, IMPLEMENTATIONS, "write", "dir", SECONDS)
    assert_race(counts, "langchain", original_escapes=False)
