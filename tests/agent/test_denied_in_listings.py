"""list, glob and grep never return a denied file's content; listings mark denied files."""

from __future__ import annotations

import os

import pytest

from agent.loop import run_agent
from agent.messages import AssistantMessage, ToolCall, ToolResult
from agent.models.scripted import ScriptedModelClient
from agent.policy.guard import DeniedFiles
from agent.policy.sensitive import PathRules
from agent.policy.setup import prepare
from agent.secret_scanner import SecretScanner
from agent.tools import file_tools
from agent.tools.base import Tool
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


def test_grep_never_returns_a_denied_files_lines(tree: AgentWorkspace) -> None:
    got = run(tree, ToolCall("g", "grep", {"pattern": MARK}))["g"]
    assert not got.is_error
    lines = got.content.splitlines()
    assert lines[0] == f"notes.txt:1:plain {MARK}"
    assert sum(MARK in line for line in lines) == 1, got.content
    assert "[4 matching lines in 4 denied files not shown]" in lines


def test_grep_of_a_denied_file_or_directory_is_denied(tree: AgentWorkspace) -> None:
    got = run(
        tree,
        ToolCall("g1", "grep", {"pattern": MARK, "path": "innocent"}),
        ToolCall("g2", "grep", {"pattern": MARK, "path": "sub/.ssh"}),
    )
    assert got["g1"].is_error and "(really '.env')" in got["g1"].content
    assert got["g2"].is_error and "'.ssh/'" in got["g2"].content


def test_list_and_glob_mark_denied_files(tree: AgentWorkspace) -> None:
    got = run(tree, ToolCall("l", "list", {"depth": 3}), ToolCall("b", "glob", {"pattern": "**"}))
    listing = got["l"].content.splitlines()
    assert ".env (15 bytes) [denied: sensitive path '.env'; not readable]" in listing
    assert "innocent -> .env [symlink] [denied: sensitive path '.env'; not readable]" in listing
    assert "sub/.ssh/ [denied: sensitive path '.ssh/'; not readable]" in listing
    assert "build/ [denied: path denied by --deny-path 'build/'; not readable]" in listing
    assert any(line.startswith("notes.txt (") and "denied" not in line for line in listing)
    matches = got["b"].content.splitlines()
    assert ".env [denied: sensitive path '.env'; not readable]" in matches
    assert "sub/.ssh/config [denied: sensitive path '.ssh/'; not readable]" in matches
    assert "notes.txt" in matches
    assert MARK not in got["l"].content + got["b"].content


def test_entries_under_a_linked_start_directory_are_judged_by_their_real_path(ws: AgentWorkspace) -> None:
    (ws.path / "data" / "private").mkdir(parents=True)
    (ws.path / "data" / "private" / "rows.csv").write_text(f"{MARK}\n")
    (ws.path / "data" / "public.csv").write_text("ok\n")
    os.symlink("data", ws.path / "view")
    permissions = prepare(file_tools(ws.root), ws.root, mode="edit", rules=PathRules(deny=["data/private/"]))
    tools = {tool.name: tool for tool in permissions.tools}
    listing = tools["list"].execute({"path": "view", "depth": 2}).content.splitlines()
    assert "view/private/ [denied: path denied by --deny-path 'data/private/'; not readable]" in listing
    assert any(line.startswith("view/private/rows.csv (") and "[denied" in line for line in listing)
    assert any(line.startswith("view/public.csv (") and "denied" not in line for line in listing)
    found = tools["grep"].execute({"pattern": MARK, "path": "view"}).content
    assert MARK not in found and "[1 matching line in 1 denied file not shown]" in found


def hidden_by(ws: AgentWorkspace, rules: PathRules) -> list[Tool]:
    """The file tools with the walk's policy hook set from the read rules: a denied entry is
    treated as an ignored one. A link is judged by where it leads, so its canonical path is
    left for the rules to resolve."""
    denied = DeniedFiles(rules, ws.root)
    tools = file_tools(ws.root)
    for tool in tools:
        tool.hide_entries(
            lambda e: (
                denied.rule_for(
                    e.path, directory=e.kind == "dir", canonical=None if e.kind == "link" else e.real
                )
                is not None
            )
        )
    return tools


def test_with_the_hook_denied_files_are_neither_searched_nor_counted(tree: AgentWorkspace) -> None:
    permissions = prepare(
        hidden_by(tree, PathRules(deny=["build/"])),
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
    assert summary == "[1 matching lines in 1 of 2 files searched]"  # notes.txt and hello.txt
    listed = tools["list"].execute({"depth": 3}).content
    assert ".env" not in listed and "sub/.ssh" not in listed and "build" not in listed
    assert tools["glob"].execute({"pattern": "**/config"}).content.startswith("no paths match")
