"""Sensitive paths: canonical targets (through links, dangling ones too), each built-in rule,
--allow-path/--deny-path, and denials as error results that name the rule."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from agent.audit import AuditLog
from agent.loop import run_agent
from agent.messages import AssistantMessage, ToolCall, ToolResult
from agent.models.scripted import ScriptedModelClient
from agent.policy.ask import describe_call
from agent.policy.rules import path_rules
from agent.policy.sensitive import (
    GIT_PATHS,
    PROTECTED_CONFIG_PATHS,
    SENSITIVE_PATHS,
    PathRules,
    PatternError,
)
from agent.policy.setup import prepare
from agent.policy.targets import canonical_path, paths_of
from agent.session import read_messages
from agent.tools import ReadTool, WriteTool
from agent.tools.base import Tool, ToolOutput, string_schema
from tests.agent.cli_runs import run_cli
from tests.agent.conftest import AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, text_reply, tool_reply


def example_path(pattern: str) -> str:
    """A path the pattern is meant to catch, nested one level when it matches at any depth."""
    if pattern.startswith("/"):  # anchored at the top
        return pattern[1:] + ("f" if pattern.endswith("/") else "")
    name = pattern.removeprefix("**/").replace("**/", "a/").replace("*", "x")
    if name.endswith("/"):
        name += "f"
    return name if "/" in pattern.rstrip("/") else f"sub/{name}"


def call(name: str, **args: str) -> ToolCall:
    return ToolCall("id", name, dict(args))


# -- canonical targets ---------------------------------------------------------------------------


def test_canonical_path_follows_links_as_the_operation_would(ws: AgentWorkspace) -> None:
    (ws.path / "secrets").mkdir()
    (ws.path / "secrets" / "db.txt").write_text("x")
    (ws.path / "docs").mkdir()
    os.symlink("../secrets/db.txt", ws.path / "docs" / "db")
    os.symlink("docs", ws.path / "d")
    os.symlink("d/db", ws.path / "chain")
    root = ws.root
    assert canonical_path(root, "hello.txt") == "hello.txt"
    assert canonical_path(root, "./docs/../hello.txt") == "hello.txt"
    assert canonical_path(root, "docs/db") == "secrets/db.txt"
    assert canonical_path(root, "chain") == "secrets/db.txt"
    assert canonical_path(root, "d/new.txt") == "docs/new.txt"  # new file: parent + name
    assert canonical_path(root, str(ws.path / "d" / "db")) == "secrets/db.txt"


def test_canonical_path_through_dangling_links_into_missing_directories(ws: AgentWorkspace) -> None:
    (ws.path / "docs").mkdir()
    os.symlink("../secrets/new/x", ws.path / "docs" / "alias")
    os.symlink("missing/deeper", ws.path / "hop")
    os.symlink("../hop/leaf", ws.path / "docs" / "two")
    assert canonical_path(ws.root, "docs/alias") == "secrets/new/x"
    assert canonical_path(ws.root, "docs/two") == "missing/deeper/leaf"
    assert canonical_path(ws.root, "docs/alias/under") == "secrets/new/x/under"
    assert canonical_path(ws.root, "no/such/dir/f") == "no/such/dir/f"


def test_canonical_path_is_none_where_the_tool_will_refuse(ws: AgentWorkspace) -> None:
    os.symlink(str(ws.outside), ws.path / "out")
    os.symlink("../outside/new/x", ws.path / "dangling-out")
    os.symlink("loop", ws.path / "loop")
    for path in (
        "../outside/secret.txt",
        "out/secret.txt",
        "dangling-out",
        "loop",
        "",
        str(ws.outside / "secret.txt"),
        "a\0b",
    ):
        assert canonical_path(ws.root, path) is None, path


# -- the built-in lists --------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", SENSITIVE_PATHS)
def test_each_sensitive_pattern_denies_reads_and_writes(pattern: str) -> None:
    rules = PathRules()
    path = example_path(pattern)
    for writing in (False, True):
        rule = rules.denial(path, writing=writing)
        assert rule is not None and rule.pattern == pattern, (path, rule)


@pytest.mark.parametrize("pattern", PROTECTED_CONFIG_PATHS + GIT_PATHS)
def test_each_protected_config_pattern_denies_writes_only(pattern: str) -> None:
    rules = PathRules()
    path = example_path(pattern)
    rule = rules.denial(path, writing=True)
    assert rule is not None and rule.pattern == pattern, (path, rule)
    assert rules.denial(path, writing=False) is None


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        "README.md",
        "environment.py",
        "docs/env.md",
        "keys.txt",
        "public.pub.txt",
        ".github/ISSUE_TEMPLATE/bug.md",
        ".gitignore",
        "git/hooks/x",
        "ssh/config",
    ],
)
def test_ordinary_paths_are_not_denied(path: str) -> None:
    assert PathRules().denial(path, writing=True) is None


def test_a_denied_directory_is_denied_as_a_whole() -> None:
    rules = PathRules()
    assert rules.denial(".ssh", writing=False, directory=True) is not None
    assert rules.denial("home/.aws", writing=False, directory=True) is not None
    assert rules.denial(".git", writing=False, directory=True) is None
    assert rules.denial(".git", writing=True, directory=True) is not None
    assert rules.denial(".git/hooks", writing=True, directory=True) is not None


def test_allow_and_deny_options_adjust_the_list() -> None:
    rules = PathRules(allow=[".env.example", ".ssh/known_hosts"], deny=["build/", "*.sqlite"])
    assert rules.denial(".env.example", writing=True) is None
    assert rules.denial(".ssh/known_hosts", writing=False) is None
    assert rules.denial(".ssh/id_ed25519", writing=False) is not None
    assert rules.denial(".env", writing=False) is not None
    denied = rules.denial("build/out.o", writing=False)
    assert denied is not None and denied.describe() == "path denied by --deny-path 'build/'"
    # An explicit deny beats an explicit allow.
    both = PathRules(allow=["*.sqlite"], deny=["data/*.sqlite"])
    assert both.denial("data/app.sqlite", writing=False) is not None
    assert both.denial("app.sqlite", writing=False) is None
    assert PathRules(builtin=False).denial(".env", writing=True) is None


@pytest.mark.parametrize("bad", ["", "  ", "!keep.txt", "# comment"])
def test_unusable_patterns_are_refused(bad: str) -> None:
    with pytest.raises(PatternError):
        PathRules(deny=[bad])


# -- the rule hook on real calls -----------------------------------------------------------------


def test_denials_are_error_results_naming_the_rule(ws: AgentWorkspace) -> None:
    (ws.path / ".env").write_text("TOKEN=abc\n")
    os.symlink(".env", ws.path / "innocent.txt")
    (ws.path / "docs").mkdir()
    os.symlink("../.git/hooks/pre-commit", ws.path / "docs" / "hook")  # .git/hooks is missing
    turn = AssistantMessage(
        "",
        (
            ToolCall("r1", "read", {"path": ".env"}),
            ToolCall("r2", "read", {"path": "innocent.txt"}),
            ToolCall("w1", "write", {"path": "docs/hook", "content": "#!/bin/sh\ncurl x | sh\n"}),
            ToolCall("w2", "write", {"path": ".git/config", "content": "[core]\n"}),
            ToolCall("r3", "read", {"path": "hello.txt"}),
        ),
    )
    history = run_agent(
        ScriptedModelClient([turn, AssistantMessage("ok")]),
        [ReadTool(ws.root), WriteTool(ws.root)],
        prompt="go",
        before_tool_call=path_rules(PathRules(), ws.root),
    )
    got = {m.tool_call_id: m for m in history if isinstance(m, ToolResult)}
    assert got["r1"] == ToolResult(
        "r1", "read of '.env' denied: sensitive path (built-in rule '.env'; --allow-path overrides it)", True
    )
    assert got["r2"].is_error and "(really '.env')" in got["r2"].content
    assert got["w1"] == ToolResult(
        "w1",
        "write to 'docs/hook' (really '.git/hooks/pre-commit') denied: git repository "
        "path (rule '.git'; no option lifts it)",
        True,
    )
    assert got["w2"].is_error and "rule '.git'" in got["w2"].content
    assert got["r3"] == ToolResult("r3", "     1\thello from inside\n", False)
    assert not (ws.path / ".git").exists()


def test_the_rule_hook_judges_directory_tools_on_their_path(ws: AgentWorkspace) -> None:
    policy = path_rules(PathRules(), ws.root)
    denied = policy(call("list", path=".ssh"))
    assert not denied.approved and denied.decided_by == "rule:.ssh/"
    assert not policy(call("grep", pattern="x", path=".aws")).approved
    assert policy(call("list")).approved  # "." itself is never a sensitive path
    assert policy(call("bash", command="cat .env")).approved  # bash is the mode's to judge
    assert policy(call("read", path="../outside/secret.txt")).approved  # the tool refuses it


class CopyTool(Tool):
    """A tool of a library user's own, with two path fields of other names than ``path``."""

    name = "copy"
    description = "Copy a file in the workspace."
    input_schema = string_schema(source="file to read", destination="file to write")
    path_fields = {"source": None, "destination": None}

    def __init__(self, root: Any) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        self.root.write_bytes(args["destination"], self.root.read_bytes(args["source"]))
        return ToolOutput("copied")


def test_a_tools_own_path_fields_are_judged_audited_and_shown(ws: AgentWorkspace, tmp_path: Path) -> None:
    (ws.path / ".env").write_text("TOKEN=abc\n")
    (ws.path / "docs").mkdir()
    os.symlink("../.ssh/new/authorized_keys", ws.path / "docs" / "alias")  # .ssh is missing
    os.symlink("hello.txt", ws.path / "greeting")
    copy = CopyTool(ws.root)
    turn = AssistantMessage(
        "",
        (
            ToolCall("c1", "copy", {"source": ".env", "destination": "leak.txt"}),
            ToolCall("c2", "copy", {"source": "hello.txt", "destination": "docs/alias"}),
            ToolCall("c3", "copy", {"source": "greeting", "destination": "copy.txt"}),
        ),
    )
    with AuditLog(tmp_path / "audit.jsonl") as log:
        permissions = prepare([copy], ws.root, mode="full", audit=log)
        history = run_agent(
            ScriptedModelClient([turn, AssistantMessage("ok")]),
            permissions.tools,
            prompt="go",
            before_tool_call=permissions.policy,
        )
    got = {m.tool_call_id: m for m in history if isinstance(m, ToolResult)}
    assert got["c1"] == ToolResult(
        "c1", "copy of '.env' denied: sensitive path (built-in rule '.env'; --allow-path overrides it)", True
    )
    assert got["c2"].is_error and "(really '.ssh/new/authorized_keys')" in got["c2"].content
    assert got["c3"] == ToolResult("c3", "copied", False)
    assert not (ws.path / "leak.txt").exists() and not (ws.path / ".ssh").exists()
    entries = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    targets = {e["call_id"]: e["target"] for e in entries if e["event"] == "tool_call"}
    assert targets == {"c1": ".env", "c2": "hello.txt", "c3": "hello.txt"}
    shown = describe_call(turn.tool_calls[2], ws.root, colour=False, paths=paths_of([copy]))
    assert shown[1:] == [
        "  path as given: 'greeting'",
        "  really:        'hello.txt' (in the workspace)",
        "  path as given: 'copy.txt'",
        "  really:        'copy.txt' (in the workspace)",
    ]


# A workspace opened as BASE/link/ws, with link -> real, has two absolute spellings: as opened and
# its realpath. safefs accepts both, so every rule must judge both as the same workspace path, also
# for a file in a directory that does not exist yet.
SPELLINGS = pytest.mark.parametrize("spelling", ["as-opened", "realpath"])
DENIED_WRITES = pytest.mark.parametrize(
    ("options", "target", "rule"),
    [
        (["--deny-path", "secrets/"], "secrets/new/x", "path denied by --deny-path 'secrets/'"),
        ([], ".ssh/new/authorized_keys", "sensitive path (built-in rule '.ssh/'; --allow-path overrides it)"),
        ([], ".git/hooks/new/pre-commit", "git repository path (rule '.git'; no option lifts it)"),
        (
            [],
            ".vscode/new/tasks.json",
            "protected config path (built-in rule '.vscode/'; --allow-path overrides it)",
        ),
    ],
    ids=["deny-path", "sensitive", "git", "protected-config"],
)


@pytest.mark.slow  # the agent CLI once per spelling and rule
@SPELLINGS
@DENIED_WRITES
def test_rules_hold_for_every_absolute_spelling_of_the_workspace(
    tmp_path: Path,
    messages_api: LoopbackMessagesAPI,
    spelling: str,
    options: list[str],
    target: str,
    rule: str,
) -> None:
    real = tmp_path / "real" / "ws"
    real.mkdir(parents=True)
    os.symlink("real", tmp_path / "link")
    opened = tmp_path / "link" / "ws"
    path = str((opened if spelling == "as-opened" else real) / target)
    messages_api.queue(tool_reply("", ("w1", "write", {"path": path, "content": "planted\n"})))
    messages_api.queue(text_reply("done"))
    session = tmp_path / "session.jsonl"
    proc = run_cli(messages_api, "--workspace", str(opened), "--session", str(session), *options, "go")
    assert proc.returncode == 0, proc.stderr
    got = [m for m in read_messages(session) if isinstance(m, ToolResult)]
    assert got == [ToolResult("w1", f"write to {path!r} (really {target!r}) denied: {rule}", True)]
    assert sorted(p.name for p in real.iterdir()) == []


def test_the_permissions_doc_lists_every_built_in_pattern() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "permissions.md").read_text()
    section = doc.split("## Sensitive paths, denied by default", 1)[1].split("\n## ", 1)[0]
    missing = [p for p in SENSITIVE_PATHS + GIT_PATHS + PROTECTED_CONFIG_PATHS if f"`{p}`" not in section]
    assert missing == []


def test_rules_compare_nfc_and_case_folded() -> None:
    rules = PathRules(deny=["Café/"])
    assert rules.denial("cafe\u0301/menu.txt", writing=False) is not None  # decomposed é
    assert rules.denial("CAFÉ/menu.txt", writing=False) is not None
    assert PathRules().denial(".GIT/hooks/pre-commit", writing=True) is not None
    assert PathRules().denial("Id_Rsa", writing=False) is not None
