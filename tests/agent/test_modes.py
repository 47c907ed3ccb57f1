"""Permission modes: each mode's hook, what the model is offered and told, and the CLI wiring."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.cli import main
from agent.messages import ToolCall
from agent.policy.approval import BASH_DENIAL_REASON, Decision
from agent.policy.ask import NO_TERMINAL
from agent.policy.modes import mode_notice, mode_policy, unavailable_tools
from tests.agent.conftest import API_KEY, AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, text_reply, tool_reply

REPO = Path(__file__).resolve().parents[2]
ALL_TOOLS = ["read", "write", "edit", "list", "glob", "grep", "bash"]


def call(name: str) -> ToolCall:
    return ToolCall("id", name, {})


@pytest.mark.parametrize(
    ("mode", "allowed"),
    [
        ("read-only", {"read", "list", "glob", "grep"}),
        ("edit", {"read", "list", "glob", "grep", "write", "edit"}),
        ("full", set(ALL_TOOLS)),
    ],
)
def test_each_mode_allows_exactly_its_tools(mode: str, allowed: set[str]) -> None:
    policy = mode_policy(mode)
    for name in ALL_TOOLS:
        decision = policy(call(name))
        assert decision.approved == (name in allowed), (mode, name)
        assert decision.decided_by == f"mode:{mode}"
    offered = set(ALL_TOOLS) - set(unavailable_tools(mode, ALL_TOOLS))
    assert offered == (allowed if mode in ("read-only", "edit") else set(ALL_TOOLS))


def test_denial_texts_say_what_is_available() -> None:
    assert mode_policy("edit")(call("bash")).reason == BASH_DENIAL_REASON
    assert mode_policy("read-only")(call("write")).reason == (
        "read-only mode: the write tool is not available (available: glob, grep, list, read)"
    )


def test_ask_asks_only_about_writes_edits_and_bash() -> None:
    asked: list[str] = []

    def approver(c: ToolCall) -> Decision:
        asked.append(c.name)
        return Decision(c.name != "bash", "no" if c.name == "bash" else None, "person")

    policy = mode_policy("ask", approver=approver)
    decisions = {name: policy(call(name)) for name in ALL_TOOLS}
    assert asked == ["write", "edit", "bash"]
    assert decisions["read"] == Decision(True, decided_by="mode:ask")
    assert decisions["write"] == Decision(True, None, "person")
    assert not decisions["bash"].approved
    with pytest.raises(ValueError, match="needs an approver"):
        mode_policy("ask")
    with pytest.raises(ValueError, match="unknown mode"):
        mode_policy("yolo")


def test_notice_names_the_unavailable_tools() -> None:
    assert mode_notice("read-only", ["read", "write", "bash", "grep"]) == (
        "This run is in read-only mode: the write and bash tools are not available, so do not "
        "try them. Use read and grep."
    )
    assert mode_notice("read-only", ["read", "bash"]) == (
        "This run is in read-only mode: the bash tool is not available, so do not try it. Use read."
    )
    assert mode_notice("edit", ["read", "bash"]) == (
        "This run is in edit mode: the bash tool is not available, so do not try it. Use read."
    )
    assert mode_notice("edit", ["read", "write"]) is None
    assert mode_notice("full", ALL_TOOLS) is None


def tool_results(request: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    """The tool results a Messages API request carries: id -> (is_error, text)."""
    found = {}
    for message in request["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content", "")
                text = (
                    content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
                )
                found[block["tool_use_id"]] = (bool(block.get("is_error")), text)
    return found


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, messages_api: LoopbackMessagesAPI) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_api.url)
    monkeypatch.setenv("ANTHROPIC_MODEL", "loopback-model")


@pytest.mark.usefixtures("cli_env")
def test_read_only_run_offers_only_read_tools_and_tells_the_model(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    messages_api.queue(
        tool_reply(
            "", ("t1", "write", {"path": "new.txt", "content": "x"}), ("t2", "read", {"path": "hello.txt"})
        )
    )
    messages_api.queue(text_reply("done"))
    assert main(["run", "--workspace", str(ws.path), "--mode", "read-only", "look"]) == 0
    capsys.readouterr()
    first = messages_api.requests[0]
    offered = {tool["name"] for tool in first["tools"]}
    assert offered == {"read", "list", "glob", "grep"}
    assert "read-only mode: the write, edit and bash tools are not available" in json.dumps(first["system"])
    assert tool_results(messages_api.requests[1]) == {
        "t1": (True, "read-only mode: the write tool is not available (available: glob, grep, list, read)"),
        "t2": (False, "     1\thello from inside\n"),
    }
    assert not (ws.path / "new.txt").exists()


@pytest.mark.usefixtures("cli_env")
def test_full_mode_runs_bash_and_edit_mode_does_not(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    for mode in ("edit", "full"):
        messages_api.queue(tool_reply("", ("t1", "bash", {"command": f"echo {mode} > {mode}.txt"})))
        messages_api.queue(text_reply("done"))
        assert main(["run", "--workspace", str(ws.path), "--mode", mode, "go"]) == 0
    capsys.readouterr()
    assert not (ws.path / "edit.txt").exists()
    assert (ws.path / "full.txt").read_text() == "full\n"
    edit_result = tool_results(messages_api.requests[1])["t1"]
    assert edit_result == (
        True,
        "bash requires an explicit approval policy; --mode full allows it",
    )


@pytest.mark.usefixtures("cli_env")
def test_allow_bash_and_another_mode_is_a_usage_error(
    ws: AgentWorkspace, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--workspace", str(ws.path), "--mode", "edit", "--allow-bash", "x"]) == 1
    assert capsys.readouterr().err == ("safefs-agent: error: --allow-bash contradicts --mode edit\n")


def test_ask_without_a_terminal_denies_with_the_reason(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path
) -> None:
    messages_api.queue(
        tool_reply(
            "", ("t1", "write", {"path": "new.txt", "content": "x"}), ("t2", "bash", {"command": "touch ran"})
        )
    )
    messages_api.queue(text_reply("done"))
    env = dict(
        os.environ,
        ANTHROPIC_API_KEY=API_KEY,
        ANTHROPIC_BASE_URL=messages_api.url,
        ANTHROPIC_MODEL="loopback-model",
    )
    # A new session has no controlling terminal, as under cron, CI or a service manager.
    proc = subprocess.run(
        [sys.executable, "-m", "agent", "run", "--workspace", str(ws.path), "--mode", "ask", "go"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert tool_results(messages_api.requests[1]) == {"t1": (True, NO_TERMINAL), "t2": (True, NO_TERMINAL)}
    assert not (ws.path / "new.txt").exists() and not (ws.path / "ran").exists()
