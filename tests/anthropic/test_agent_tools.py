"""``safefs-agent run --tools anthropic``: the agent offers Anthropic's text editor and bash tools
(schema-less, by type), and runs them on safefs and the sandbox. The real CLI in a process of its
own, against a Messages API on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.messages import ToolResult
from agent.session import read_messages
from tests.agent.messages_api_server import LoopbackMessagesAPI, serve, text_reply, tool_reply

API_KEY = "sk-ant-test-loopback-agent-tools"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def api() -> Iterator[LoopbackMessagesAPI]:
    yield from serve(API_KEY)


def run_agent(api: LoopbackMessagesAPI, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=api.url, ANTHROPIC_MODEL="loopback-model")
    return subprocess.run(
        [sys.executable, "-m", "agent", "run", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow  # the agent CLI end to end with both tools
def test_the_agent_offers_and_runs_anthropics_editor_and_bash_tools(
    tmp_path: Path, api: LoopbackMessagesAPI
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "secret.txt").write_text("outside\n")
    editor = "str_replace_based_edit_tool"
    api.queue(
        tool_reply(
            "",
            ("t1", editor, {"command": "create", "path": "app.py", "file_text": "x = 1\n"}),
            ("t2", editor, {"command": "str_replace", "path": "app.py", "old_str": "1", "new_str": "2"}),
            ("t3", editor, {"command": "view", "path": "app.py"}),
            ("t4", editor, {"command": "view", "path": "../secret.txt"}),
        )
    )
    api.queue(
        tool_reply(
            "",
            ("t5", "bash", {"command": "mkdir sub && cd sub && export GREETING=hi"}),
            ("t6", "bash", {"command": "pwd; echo $GREETING; cat ../../secret.txt"}),
        )
    )
    api.queue(text_reply("Done."))
    session = tmp_path / "s.jsonl"
    proc = run_agent(
        api,
        "--workspace",
        str(work),
        "--tools",
        "anthropic",
        "--mode",
        "full",
        "--session",
        str(session),
        "go",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Done."
    offered = [(t["type"], t["name"]) for t in api.requests[0]["tools"]]
    assert offered == [("text_editor_20250728", editor), ("bash_20250124", "bash")]
    assert (work / "app.py").read_text() == "x = 2\n"
    got = {m.tool_call_id: m for m in read_messages(session) if isinstance(m, ToolResult)}
    assert got["t2"].content == "Successfully replaced text at exactly one location."
    assert got["t3"].content == "1: x = 2"
    assert got["t4"].is_error and "outside" in got["t4"].content and str(tmp_path) not in got["t4"].content
    assert not got["t5"].is_error
    shell_out = got["t6"].content
    assert got["t6"].is_error  # cat of the file outside fails in the sandbox, so the command does
    assert shell_out.splitlines()[:2] == [str(work.resolve() / "sub"), "hi"]
    assert "outside\n" not in shell_out


@pytest.mark.slow  # the agent CLI end to end
def test_the_editor_tool_is_judged_by_its_command_in_the_default_mode(
    tmp_path: Path, api: LoopbackMessagesAPI
) -> None:
    """In ``edit`` mode (the default) the editor runs, bash is not offered, and a ``create`` is a
    write: the protected-config and sensitive-path rules hold for it as for ``write``."""
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    (work / ".env").write_text("DB_PASSWORD=hunter2hunter2\n")
    editor = "str_replace_based_edit_tool"
    api.queue(
        tool_reply(
            "",
            ("c1", editor, {"command": "create", "path": "app.py", "file_text": "x = 1\n"}),
            (
                "c2",
                editor,
                {"command": "create", "path": ".git/config", "file_text": "[core]\nfsmonitor = x\n"},
            ),
            (
                "c3",
                editor,
                {"command": "insert", "path": ".vscode/tasks.json", "insert_line": 0, "insert_text": "{}"},
            ),
            ("c4", editor, {"command": "view", "path": ".env"}),
            ("c5", editor, {"command": "view", "path": "app.py"}),
        )
    )
    api.queue(text_reply("Done."))
    session = tmp_path / "s.jsonl"
    proc = run_agent(api, "--workspace", str(work), "--tools", "anthropic", "--session", str(session), "go")
    assert proc.returncode == 0, proc.stderr
    offered = [t["name"] for t in api.requests[0]["tools"]]
    assert offered == [editor]
    got = {m.tool_call_id: m for m in read_messages(session) if isinstance(m, ToolResult)}
    assert not got["c1"].is_error and (work / "app.py").read_text() == "x = 1\n"
    for refused in ("c2", "c3", "c4"):
        assert got[refused].is_error, got[refused].content
    assert "denied" in got["c2"].content and "write to" in got["c2"].content
    assert (work / ".git" / "config").read_text() == "[core]\n"
    assert not (work / ".vscode").exists()
    assert "hunter2" not in got["c4"].content
    assert got["c5"].content == "1: x = 1"
