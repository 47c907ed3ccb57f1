"""The run's own record through ``bash`` (``--mode full``): a command can neither read, rewrite,
rename nor replace the session and the audit log when they lie in the workspace, as the file
tools cannot; the run goes on and its log verifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.audit import verify
from tests.agent.cli_runs import results
from tests.agent.conftest import AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, text_reply, tool_reply
from tests.sandbox.harness import sandbox_refusal

pytestmark = pytest.mark.skipif(sandbox_refusal() is not None, reason=f"no sandbox: {sandbox_refusal()}")


@pytest.mark.parametrize("where", [".agent/run.jsonl", "run.jsonl"], ids=["own-directory", "workspace-root"])
def test_a_command_cannot_touch_the_session_or_the_audit_log(
    where: str, ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, inline: Any
) -> None:
    session = ws.path / where
    session.parent.mkdir(exist_ok=True)
    audit = Path(str(session).removesuffix(".jsonl") + ".audit.jsonl")
    folder = session.parent.relative_to(ws.path).as_posix()
    s, a = session.relative_to(ws.path).as_posix(), audit.relative_to(ws.path).as_posix()
    command = (
        f"cat {s} {a} | head -c 300; echo forged >> {s}; echo forged >> {a}; "
        f": > {a}; mv {a} stolen; rm -f {s}; echo '{{}}' > {s}; "
        + (f"mv {folder} moved; " if folder != "." else "")
        + f"ls -l {s} {a}"
    )
    messages_api.queue(tool_reply("", ("b1", "bash", {"command": command})))
    messages_api.queue(tool_reply("", ("b2", "bash", {"command": "echo second"})))
    messages_api.queue(text_reply("done"))
    proc = inline(
        messages_api, "--workspace", str(ws.path), "--session", str(session), "--mode", "full", "go"
    )
    assert proc.returncode == 0, proc.stderr
    first, second = (r.content for r in results(session))
    assert f"hidden: {s}, {a}" in first, first
    assert first.count("Permission denied") >= 4, first  # cat of each, and each append
    assert "Device or resource busy" in first, first  # the renames and the removal
    for record in (session, audit):  # every line is the run's own JSON, none the command's
        assert all(line.startswith('{"') for line in record.read_text().splitlines()), record
    assert "second" in second  # the run went on, with the same log
    checked = verify(str(audit))
    assert checked.ok and checked.events >= 6, checked
