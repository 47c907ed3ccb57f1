"""list, glob and grep leave denied files out, as they do ignored ones: not listed, not searched,
not counted, so no result says anything of a denied file's content."""

from __future__ import annotations

import os

import pytest

from agent.loop import run_agent
from agent.messages import AssistantMessage, ToolCall, ToolResult
from agent.models.scripted import ScriptedModelClient
from agent.policy.sensitive import PathRules
from agent.policy.setup import prepare
from agent.secret_scanner import SecretScanner
from agent.tools import file_tools
from tests.agent.conftest import AgentWorkspace

MARK = "needle-4f1c"


@pytest.fixture
def tree(ws: AgentWorkspace) -> AgentWorkspace:
    (ws.path / ".env").write_text(f"DB={MARK}\n")
    (ws.path / "notes.txt").write_text(f"plain {MARK}\n")
    (ws.path / "a:1:b.pem").write_text(f"colon {MARK}\n")  # a name that looks like a grep line
    (ws.path / "sub" / ".ssh").mkdir(parents=True)
    (ws.path / "sub" / ".ssh" / "config").write_text(f"Host x # {MARK}\n")
    (ws.path / "build").mkdir()
    (ws.path / "build" / "out.log").write_text(f"built {MARK}\n")
    os.symlink(".env", ws.path / "innocent")
    return ws


def run(ws: AgentWorkspace, *calls: ToolCall) -> dict[str, ToolResult]:
    permissions = prepare(
        file_tools(ws.root), ws.root, mode="edit", rules=PathRules(deny=["build/"]), scanner=SecretScanner()
    )
    history = run_agent(
        ScriptedModelClient([AssistantMessage("", calls), AssistantMessage("ok")]),
        permissions.tools,
        prompt="go",
        before_tool_call=permissions.policy,
    )
    return {m.tool_call_id: m for m in history if isinstance(m, ToolResult)}


def test_grep_never_returns_or_counts_a_denied_files_lines(tree: AgentWorkspace) -> None:
    for mode in ("content", "files_with_matches", "count"):
        got = run(tree, ToolCall("g", "grep", {"pattern": MARK, "output_mode": mode}))["g"]
        assert not got.is_error
        lines = got.content.splitlines()
        assert lines[0].startswith("notes.txt"), got.content
        assert sum(MARK in line for line in lines) == (1 if mode == "content" else 0), got.content
        for hidden in (".env", "a:1:b.pem", ".ssh", "build", "innocent", "denied"):
            assert hidden not in got.content, (mode, got.content)
        # The totals count only what was searched: a count of hidden matches would be an oracle.
        want = (
            "[1 of 2 files searched match]" if mode == "files_with_matches" else "[1 matching line in 1 of 2"
        )
        assert lines[-1].startswith(want), got.content


def test_grep_of_a_denied_file_or_directory_is_denied(tree: AgentWorkspace) -> None:
    got = run(
        tree,
        ToolCall("g1", "grep", {"pattern": MARK, "path": "innocent"}),
        ToolCall("g2", "grep", {"pattern": MARK, "path": "sub/.ssh"}),
    )
    assert got["g1"].is_error and "(really '.env')" in got["g1"].content
    assert got["g2"].is_error and "'.ssh/'" in got["g2"].content


def test_list_and_glob_leave_denied_files_out(tree: AgentWorkspace) -> None:
    got = run(tree, ToolCall("l", "list", {"depth": 3}), ToolCall("b", "glob", {"pattern": "**"}))
    listing = got["l"].content.splitlines()
    matches = got["b"].content.splitlines()
    assert any(line.startswith("notes.txt (") for line in listing)
    assert "notes.txt" in matches
    for shown in (got["l"].content, got["b"].content):
        for hidden in (".env", "innocent", ".ssh", "build", "a:1:b.pem", MARK):
            assert hidden not in shown, shown


def test_entries_under_a_linked_start_directory_are_judged_by_their_real_path(ws: AgentWorkspace) -> None:
    (ws.path / "data" / "private").mkdir(parents=True)
    (ws.path / "data" / "private" / "rows.csv").write_text(f"{MARK}\n")
    (ws.path / "data" / "public.csv").write_text(f"ok {MARK[:6]}\n")
    os.symlink("data", ws.path / "view")
    permissions = prepare(file_tools(ws.root), ws.root, mode="edit", rules=PathRules(deny=["data/private/"]))
    tools = {tool.name: tool for tool in permissions.tools}
    listing = tools["list"].execute({"path": "view", "depth": 2}).content.splitlines()
    assert any(line.startswith("view/public.csv (") for line in listing)
    assert not any("private" in line for line in listing), listing
    found = tools["grep"].execute({"pattern": MARK[:6], "path": "view", "output_mode": "content"}).content
    assert MARK not in found and "private" not in found and found.startswith("view/public.csv:1:"), found


def test_the_guard_sets_the_walks_hook_so_denied_files_are_neither_searched_nor_counted(
    tree: AgentWorkspace,
) -> None:
    permissions = prepare(
        file_tools(tree.root),
        tree.root,
        mode="edit",
        rules=PathRules(deny=["build/"]),
        scanner=SecretScanner(),
    )
    tools = {tool.name: tool for tool in permissions.tools}
    for mode in ("content", "files_with_matches", "count"):
        got = tools["grep"].execute({"pattern": MARK, "output_mode": mode}).content
        assert "denied" not in got and ".env" not in got and "build" not in got, got
        assert got.splitlines()[0].startswith("notes.txt")
    summary = tools["grep"].execute({"pattern": MARK}).content.splitlines()[-1]
    assert summary == "[1 of 2 files searched match]"  # notes.txt and hello.txt
    listed = tools["list"].execute({"depth": 3}).content
    assert ".env" not in listed and "sub/.ssh" not in listed and "build" not in listed
    assert tools["glob"].execute({"pattern": "**/config"}).content.startswith("no paths match")
