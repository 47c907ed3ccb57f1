"""Approval policies: bash denied by default, composition, an argument-reading policy."""

from __future__ import annotations

import os

import pytest

import safefs
from agent.loop import run_agent
from agent.messages import AssistantMessage, ToolCall, ToolResult
from agent.models.scripted import ScriptedModelClient
from agent.policy.approval import (
    BASH_DENIAL_REASON,
    Decision,
    allow_all,
    compose,
    deny,
    deny_bash_by_default,
)
from agent.policy.rules import deny_paths
from agent.policy.sensitive import PatternError
from agent.tools import BashTool, ReadTool, WriteTool
from tests.agent.conftest import AgentWorkspace


def call(name: str, **args: str) -> ToolCall:
    return ToolCall("id", name, dict(args))


def test_deny_bash_by_default_denies_only_bash() -> None:
    assert deny_bash_by_default(call("bash", command="ls")) == Decision(
        False, BASH_DENIAL_REASON, "deny_bash_by_default"
    )
    assert deny_bash_by_default(call("read", path="a")).approved
    assert deny_bash_by_default(call("write", path="a", content="")).approved


def test_bash_denied_by_default_in_the_loop_never_runs(ws: AgentWorkspace) -> None:
    marker = ws.path / "ran"
    turn = AssistantMessage("", (ToolCall("b1", "bash", {"command": f"touch {marker}"}),))
    history = run_agent(
        ScriptedModelClient([turn, AssistantMessage("ok")]),
        [BashTool(ws.root)],
        prompt="go",
        before_tool_call=deny_bash_by_default,
    )
    assert (
        ToolResult(
            "b1",
            "bash requires an explicit approval policy; --mode full allows it",
            True,
        )
        in history
    )
    assert not marker.exists()


def test_compose_first_denial_wins_and_later_policies_are_not_asked() -> None:
    asked: list[str] = []

    def named(name: str, decision: Decision):  # type: ignore[no-untyped-def]
        def policy(c: ToolCall) -> Decision:
            asked.append(name)
            return decision

        return policy

    policy = compose(named("a", Decision(True)), named("b", deny("b says no")), named("c", deny("c says no")))
    assert policy(call("read", path="x")) == Decision(False, "b says no")
    assert asked == ["a", "b"]
    assert compose()(call("bash", command="x")).approved
    # When all approve, the last approval that names who decided is the answer.
    assert compose(named("d", Decision(True, decided_by="mode:edit")), named("e", Decision(True)))(
        call("read", path="x")
    ) == Decision(True, decided_by="mode:edit")
    assert compose(allow_all, deny_bash_by_default)(call("bash", command="x")).reason == BASH_DENIAL_REASON


def test_deny_paths_reads_the_arguments() -> None:
    policy = deny_paths(["*.pem", ".env", "secrets/*"])
    assert not policy(call("read", path="certs/server.pem")).approved
    assert not policy(call("write", path=".env", content="x")).approved
    assert not policy(call("read", path="./secrets/../secrets/db.txt")).approved
    denial = policy(call("read", path="a/.env"))
    assert denial == Decision(False, "path 'a/.env' is denied by policy (.env)", "rule:.env")
    assert policy(call("read", path="src/main.py")).approved
    assert policy(call("bash", command="cat x.pem")).approved  # not a path tool: not its job


def test_deny_paths_patterns_are_gitignore_patterns_as_deny_path_takes_them() -> None:
    anchored = deny_paths(["*/secret.txt", "build/"])
    assert not anchored(call("read", path="a/secret.txt")).approved
    assert anchored(call("read", path="a/b/secret.txt")).approved  # a "*" stops at a "/"
    assert not anchored(call("read", path="build/out/x.o")).approved
    assert not anchored(call("list", path="build")).approved  # the directory itself too
    assert not deny_paths(["**/secret.txt"])(call("read", path="a/b/secret.txt")).approved
    for bad in ("", "!keep.txt", "# a comment"):
        with pytest.raises(PatternError):
            deny_paths([bad])


def test_deny_paths_judges_the_paths_each_tool_declares(ws: AgentWorkspace) -> None:
    class Archive(ReadTool):
        name = "archive"
        path_fields = {"into": "archive/default.tar"}

    policy = deny_paths(["archive/"], root=ws.root, tools=[Archive(ws.root), ReadTool(ws.root)])
    assert not policy(call("archive")).approved  # the declared default is judged too
    assert not policy(call("archive", into="archive/x.tar")).approved
    assert policy(call("archive", into="elsewhere.tar")).approved
    assert not policy(call("read", path="archive/x.tar")).approved
    assert policy(call("write", path="archive/x.tar", content="")).approved  # not among tools


def test_deny_paths_with_root_sees_through_symlink_aliases(ws: AgentWorkspace) -> None:
    (ws.path / "secrets").mkdir()
    (ws.path / "secrets" / "db.txt").write_text("password\n")
    os.symlink("secrets/db.txt", ws.path / "innocent.txt")
    lexical = deny_paths(["secrets/*"])
    resolving = deny_paths(["secrets/*"], root=ws.root)
    assert lexical(call("read", path="innocent.txt")).approved
    assert not resolving(call("read", path="innocent.txt")).approved
    # An escaping path is not this policy's to judge: safefs refuses it in the tool.
    assert resolving(call("read", path="../outside/secret.txt")).approved


def test_deny_paths_sees_through_a_dangling_alias_into_a_missing_directory(ws: AgentWorkspace) -> None:
    (ws.path / "secrets").mkdir()
    (ws.path / "docs").mkdir()
    os.symlink("../secrets/new/x", ws.path / "docs" / "alias")  # secrets/new does not exist
    policy = deny_paths(["secrets/*"], root=ws.root)
    turn = AssistantMessage("", (ToolCall("w1", "write", {"path": "docs/alias", "content": "planted\n"}),))
    history = run_agent(
        ScriptedModelClient([turn, AssistantMessage("ok")]),
        [WriteTool(ws.root)],
        prompt="go",
        before_tool_call=policy,
    )
    result = next(m for m in history if isinstance(m, ToolResult))
    assert result == ToolResult("w1", "path 'docs/alias' is denied by policy (secrets/*)", True)
    assert not (ws.path / "secrets" / "new").exists()
    # Beneath the policy, safefs creates no directory through a link: the write alone is
    # refused too, as the kernel's open(O_CREAT) would refuse it, and nothing is created.
    alone = WriteTool(ws.root).execute({"path": "docs/alias", "content": "x"})
    assert alone.is_error and alone.content == "No such file or directory: 'docs/alias'"
    assert not (ws.path / "secrets" / "new").exists()


def test_composed_policy_in_the_loop(ws: AgentWorkspace) -> None:
    (ws.path / "key.pem").write_text("-----BEGIN-----\n")
    turn = AssistantMessage(
        "", (ToolCall("r1", "read", {"path": "key.pem"}), ToolCall("r2", "read", {"path": "hello.txt"}))
    )
    policy = compose(deny_bash_by_default, deny_paths(["*.pem"], root=ws.root))
    history = run_agent(
        ScriptedModelClient([turn, AssistantMessage("ok")]),
        [ReadTool(ws.root)],
        prompt="go",
        before_tool_call=policy,
    )
    got = {m.tool_call_id: m for m in history if isinstance(m, ToolResult)}
    assert got["r1"] == ToolResult("r1", "path 'key.pem' is denied by policy (*.pem)", True)
    assert got["r2"] == ToolResult("r2", "     1\thello from inside\n", False)
    assert isinstance(ws.root, safefs.Root)
