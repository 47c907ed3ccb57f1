"""The safefs tools of the Claude Agent SDK raced: a separate process swaps ``d/`` with a symlink
to an outside directory (or ``f`` with a symlink to an outside file) while ``Read`` reads and
``Write`` writes inside the root, each call through the handler of the SDK tool object
(``SdkMcpTool``) that ``file_tools`` makes. Bounded in time; counts printed.

Claude Code's own tools are not raced here: they run in the binary, one call per model turn
(about 0.1 s each through the fake model server), too few attempts in a race window to say
anything."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.race_window import RACE_SECONDS

pytest.importorskip("claude_agent_sdk")

import safefs
from safefs.integrations.claude_agent_sdk import ToolError, file_tools
from safefs.testing import race
from tests.integrations.racing import NEEDS_ATTACKER

pytestmark = NEEDS_ATTACKER


class ToolVictim:
    """``Read`` and ``Write`` of ``file_tools`` on a root on the workspace; an error result is a
    refusal (the harness counts it so only if nothing outside changed)."""

    def __init__(self, workspace: str) -> None:
        self.root = safefs.Root(workspace)
        self.tools = {t.name: t for t in file_tools(self.root, bash=False)}
        self.loop = asyncio.new_event_loop()

    def __enter__(self) -> ToolVictim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.close()
        self.root.close()

    def _call(self, name: str, args: dict[str, Any]) -> str:
        try:
            result = self.loop.run_until_complete(self.tools[name].handler(args))
        except ToolError as exc:
            raise PermissionError(str(exc)) from None
        return str(result["content"][0]["text"])

    def read(self, rel: str) -> bytes:
        numbered = self._call("Read", {"file_path": rel})  # "1\t<line>\n2": the last line is empty
        return "\n".join(line.partition("\t")[2] for line in numbered.split("\n")).encode()

    def write(self, rel: str, data: bytes) -> None:
        self._call("Write", {"file_path": rel, "content": data.decode()})


@pytest.mark.parametrize("swap", ["dir", "final"])
@pytest.mark.parametrize("op", ["read", "write"])
def test_the_tools_let_nothing_out_while_raced(op: str, swap: str) -> None:
    counts = race(ToolVictim, op, RACE_SECONDS, swap, name="claude-agent-sdk")
    print(
        f"{op}/{swap}: safefs tools: {counts.escapes} escapes / {counts.attempts} attempts "
        f"({counts.inside} inside, {counts.refused} refused, {counts.swaps} swaps)"
    )
    assert counts.escapes == 0
    assert counts.inside > 0, "the tools must also work while attacked"
