"""Google ADK's ``LocalEnvironment`` against the drop-in, raced: a separate process swaps ``d/``
with a symlink to an outside directory (or ``f`` with a symlink to an outside file) while the
environment reads and writes inside its working directory. Bounded in time; counts printed.

The original resolves the path, checks it lies under the working directory, then opens the path
string again: a swap between the two lets it out. The drop-in must let nothing out.
"""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.race_window import RACE_SECONDS

pytest.importorskip("google.adk.environment")

from google.adk.environment import LocalEnvironment as Original

from safefs.integrations.google_adk import LocalEnvironment as DropIn
from tests.integrations.racing import NEEDS_ATTACKER, race_each
from tests.integrations.support import assert_race

pytestmark = NEEDS_ATTACKER

SECONDS = RACE_SECONDS
IMPLEMENTATIONS: dict[str, Any] = {"google-adk": Original, "safefs": DropIn}


class EnvironmentVictim:
    """One environment's ``read_file`` / ``write_file`` by working-dir-relative path, as ADK's
    ``ReadFile`` and ``WriteFile`` tools call them; the original's ``ValueError`` refusal counts
    as a refusal (the harness counts it so only if nothing outside was touched)."""

    def __init__(self, workspace: str, implementation: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ADK marks LocalEnvironment experimental
            self.environment = IMPLEMENTATIONS[implementation](working_dir=Path(workspace))
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self.environment.initialize())

    def __enter__(self) -> EnvironmentVictim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.run_until_complete(self.environment.close())
        self.loop.close()

    def read(self, rel: str) -> bytes:
        try:
            data: bytes = self.loop.run_until_complete(self.environment.read_file(rel))
        except ValueError as exc:
            raise PermissionError(str(exc)) from None
        return data

    def write(self, rel: str, data: bytes) -> None:
        try:
            self.loop.run_until_complete(self.environment.write_file(rel, data))
        except ValueError as exc:
            raise PermissionError(str(exc)) from None


@pytest.mark.parametrize("swap", ["dir", "final"])
@pytest.mark.parametrize("op", ["read", "write"])
def test_the_original_escapes_and_the_drop_in_does_not(op: str, swap: str) -> None:
    counts = race_each(EnvironmentVictim, IMPLEMENTATIONS, op, swap, SECONDS)
    assert_race(
        counts, "google-adk", original_escapes=op == "read"
    )  # writes escape too, too rarely on a loaded machine to require it
