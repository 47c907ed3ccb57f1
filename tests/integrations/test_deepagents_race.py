"""deepagents' ``FilesystemBackend`` (``virtual_mode=True``, its guarded mode) against the
drop-in, raced: a separate process swaps ``d/`` with a symlink to an outside directory (or ``f``
with a symlink to an outside file) while the backend reads and writes inside ``root_dir``.
Bounded in time; the counts are printed. The original resolves the path, checks it lies under
``root_dir`` and then opens the resolved path string again (``O_NOFOLLOW`` on its last
component only)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.race_window import RACE_SECONDS

pytest.importorskip("deepagents.backends.filesystem")

from deepagents.backends import filesystem as original

from safefs.integrations import deepagents as drop_in
from tests.integrations.racing import NEEDS_ATTACKER, race_each
from tests.integrations.support import ClosingVictim, assert_race

pytestmark = NEEDS_ATTACKER

SECONDS = RACE_SECONDS
IMPLEMENTATIONS: dict[str, Any] = {"deepagents": original, "safefs": drop_in}


class BackendVictim(ClosingVictim):
    """``read`` / ``write`` of one implementation; an error result or a raised refusal is a
    refusal (the race harness counts it as one only if nothing outside was touched)."""

    def __init__(self, workspace: str, implementation: str) -> None:
        self.backend = IMPLEMENTATIONS[implementation].FilesystemBackend(
            root_dir=workspace, virtual_mode=True
        )

    def closables(self) -> tuple[Any, ...]:
        return (self.backend,)

    def read(self, rel: str) -> bytes:
        try:
            result = self.backend.read("/" + rel)
        except ValueError as exc:
            raise PermissionError(str(exc)) from None
        if result.error is not None or result.file_data is None:
            raise PermissionError(result.error)
        return str(result.file_data["content"]).encode()

    def write(self, rel: str, data: bytes) -> None:
        try:
            result = self.backend.write("/" + rel, data.decode())
        except ValueError as exc:
            raise PermissionError(str(exc)) from None
        if result.error is not None:
            raise PermissionError(result.error)


@pytest.mark.parametrize("swap", ["dir", "final"])
@pytest.mark.parametrize("op", ["read", "write"])
def test_the_original_escapes_and_the_drop_in_does_not(op: str, swap: str) -> None:
    counts = race_each(BackendVictim, IMPLEMENTATIONS, op, swap, SECONDS)
    # its O_NOFOLLOW holds against a swapped final name; a swapped directory lets reads out
    assert_race(counts, "deepagents", original_escapes=(op, swap) == ("read", "dir"))
