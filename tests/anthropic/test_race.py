"""The SDK's agent toolset against safefs's drop-in, raced: a separate process swaps ``d/`` with a
symlink to an outside directory while the tools read, write and edit ``d/...``.

Each case runs for a bounded time; the counts are printed. The SDK's tools (``realpath``, then
the path string) are expected to escape at least once where the attacker got swaps in; safefs's
never do.
"""

from __future__ import annotations

import asyncio
import sys
from functools import partial
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools import agent_toolset as sdk_toolset

from safefs import capabilities
from safefs.anthropic import agent_toolset as our_toolset
from safefs.testing import INSIDE_CONTENT, OUTSIDE_CONTENT, race
from tests.race_window import RACE_SECONDS

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not capabilities().renameat2,
    reason="the attacker swaps names with renameat2 (Linux)",
)

SECONDS = RACE_SECONDS
IMPLEMENTATIONS = {"sdk": sdk_toolset, "safefs": our_toolset}


class ToolsetVictim:
    """read / write / edit calls of one implementation's tools, as the race harness drives them:
    ``read(path) -> bytes`` and ``write(path, data)``, a ToolError raised as a PermissionError.

    For ``edit``, ``read`` is an edit instead: replace ``secret`` (only the outside file has it)
    with itself. It succeeds only if the edit read and rewrote the outside file, which is
    reported as having read the outside content; "not found" means it edited the inside file."""

    def __init__(self, workspace: str, implementation: str, op: str) -> None:
        module: Any = IMPLEMENTATIONS[implementation]
        self.ctx = module.AgentToolContext(workdir=workspace)
        self.tools = {t.name: t for t in module.beta_agent_toolset_20260401(self.ctx) if t.name != "bash"}
        self.op = op
        self.loop = asyncio.new_event_loop()

    def __enter__(self) -> ToolsetVictim:
        return self

    def __exit__(self, *exc: object) -> None:
        closer = getattr(self.ctx, "close", None)
        if closer is not None and not asyncio.iscoroutinefunction(closer):
            closer()
        self.loop.close()

    def _call(self, name: str, args: dict[str, Any]) -> Any:
        try:
            return self.loop.run_until_complete(self.tools[name].call(args))
        except ToolError as exc:
            raise PermissionError(str(exc)) from None

    def read(self, rel: str) -> bytes:
        if self.op == "edit":
            try:
                self._call("edit", {"file_path": rel, "old_string": "secret", "new_string": "secret"})
            except PermissionError as exc:
                if "not found" in str(exc):
                    return INSIDE_CONTENT
                raise
            return OUTSIDE_CONTENT
        return str(self._call("read", {"file_path": rel})).encode()

    def write(self, rel: str, data: bytes) -> None:
        self._call("write", {"file_path": rel, "content": data.decode()})


def victim(workspace: str, *, implementation: str, op: str) -> ToolsetVictim:
    return ToolsetVictim(workspace, implementation, op)


@pytest.mark.parametrize("op", ["read", "write", "edit"])
def test_the_sdk_toolset_escapes_and_the_drop_in_does_not(op: str) -> None:
    harness_op = "write" if op == "write" else "read"
    counts = {
        impl: race(partial(victim, implementation=impl, op=op), harness_op, SECONDS, "dir", name=impl)
        for impl in IMPLEMENTATIONS
    }
    for impl, c in counts.items():
        print(
            f"{op}: {impl}: {c.escapes} escapes / {c.attempts} attempts "
            f"({c.inside} inside, {c.refused} refused, {c.swaps} swaps)"
        )
    assert counts["safefs"].escapes == 0
    assert counts["safefs"].inside > 0, "the drop-in must also work while attacked"
    if counts["sdk"].swaps == 0:
        pytest.skip("the attacker made no swap in time on this machine")
    assert counts["sdk"].escapes > 0, "the SDK's check-then-use was expected to escape at least once"
