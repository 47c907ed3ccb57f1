"""Starter files (:mod:`safefs.workspace.starters`): the table in docs/permissions.md is the
code's list; the file tools refuse each one; a bash command cannot change one that is there,
and one it makes is set aside when it returns. Each made for real: the write tool under its
permission layer, and commands in the sandbox."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import safefs
from agent.messages import ToolCall, ToolResult
from agent.policy.ask import NO_TERMINAL, TerminalApprover
from agent.policy.sensitive import PathRules
from agent.policy.setup import permission_policy
from agent.session import Session
from agent.tools.bash import BashTool
from agent.tools.write import WriteTool
from safefs.workspace.starters import STARTER_FILES, starter_paths
from tests.agent.conftest import AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, text_reply, tool_reply
from tests.agent.test_ask_terminal import finish, start_agent
from tests.sandbox.harness import PATH, WORLD_PARENT, sandbox_refusal
from tests.sandbox.host_git import must_git

PROTECTED_PROMPT = b"(asked every time for this path): "
DOCS = Path(__file__).resolve().parents[2] / "docs" / "permissions.md"
needs_sandbox = pytest.mark.skipif(sandbox_refusal() is not None, reason=f"no sandbox: {sandbox_refusal()}")


def file_in(path: str) -> str:
    """A file the path stands for: itself, or one inside the directory it names."""
    return f"{path}x.json" if path.endswith("/") else path


def test_the_documented_table_is_the_codes_list() -> None:
    text = DOCS.read_text()
    section = text[text.index("### Starter files") : text.index("### Compared with Claude Code")]
    rows = re.findall(r"^\| `([^`]+)` \| (.+?) \|$", section, re.MULTILINE)
    assert rows == list(STARTER_FILES)


@pytest.fixture
def workspace() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="safefs-starters-", dir=WORLD_PARENT))
    base.chmod(0o755)
    try:
        yield base / "work"
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("mode", ["edit", "full"])
def test_the_file_tools_refuse_each(workspace: Path, mode: str) -> None:
    workspace.mkdir()
    with safefs.Root(workspace) as root:
        tool = WriteTool(root)
        policy = permission_policy(mode, root, tools=[tool])
        allowed = []
        for path, _who in STARTER_FILES:
            args = {"path": file_in(path), "content": "touch /tmp/x\n"}
            if policy(ToolCall("w", "write", args)).approved:
                allowed.append(path)
    assert allowed == []
    assert list(workspace.iterdir()) == []


def test_in_full_mode_each_is_asked(workspace: Path) -> None:
    """``--mode full`` with a person's approver: every starter file goes to the person (here
    no terminal, so each is declined for want of one; ``.envrc`` is refused outright, as a
    sensitive path), and any other write does not."""
    workspace.mkdir()
    with safefs.Root(workspace) as root:
        tool = WriteTool(root)
        approver = TerminalApprover(root, tools=[tool], rules=PathRules(), terminal=lambda: None, mode="full")
        policy = permission_policy("full", root, tools=[tool], approver=approver, rules=PathRules())
        decisions = {
            path: policy(ToolCall("w", "write", {"path": file_in(path), "content": "x\n"}))
            for path, _who in STARTER_FILES
        }
        plain = policy(ToolCall("w", "write", {"path": "src/main.py", "content": "x\n"}))
    envrc = decisions.pop(".envrc")  # a sensitive path too: never read or written
    assert not envrc.approved and envrc.decided_by == "rule:.envrc"
    assert {path: (d.approved, d.reason, d.decided_by) for path, d in decisions.items()} == {
        path: (False, NO_TERMINAL, "mode:full") for path, _who in STARTER_FILES if path != ".envrc"
    }
    assert plain.approved and plain.decided_by == "mode:full"


@needs_sandbox
def test_bash_cannot_change_those_there(workspace: Path) -> None:
    workspace.mkdir()
    must_git("init", "-q", workspace)
    for path in starter_paths():
        place = workspace / path
        place.parent.mkdir(parents=True, exist_ok=True)
        if dict(STARTER_FILES).get(path + "/"):
            place.mkdir(exist_ok=True)
            (place / "x.json").write_text("before\n")
        else:
            place.write_text("before\n")
    before = {p: p.read_text() for p in workspace.rglob("*") if p.is_file() and ".git" not in p.parts}
    writes = "; ".join(f"echo after > '{file_in(p)}'; mv '{p.rstrip('/')}' moved" for p, _ in STARTER_FILES)
    with safefs.Root(workspace) as root:
        tool = BashTool(root, base_env={"PATH": PATH})
        try:
            out = tool.execute({"command": writes}).content
        finally:
            tool.close()
    # a rename of a read-only mount is EXDEV, which mv turns into a copy it cannot remove: a
    # copy elsewhere is harmless, the starter files themselves are what must not change
    after = {p: p.read_text() if p.is_file() else None for p in before}
    assert after == before, out


@needs_sandbox
@pytest.mark.parametrize("top", [".", "sub"])
def test_bash_sets_aside_each_it_makes(workspace: Path, top: str) -> None:
    (workspace / "sub").mkdir(parents=True)
    must_git("init", "-q", workspace / "sub")
    prefix = "" if top == "." else f"{top}/"
    made = "; ".join(
        f"mkdir -p \"$(dirname '{prefix}{file_in(p)}')\"; echo x > '{prefix}{file_in(p)}'"
        for p, _ in STARTER_FILES
    )
    with safefs.Root(workspace) as root:
        tool = BashTool(root, base_env={"PATH": PATH})
        try:
            assert tool.execute({"command": "true"}).content.startswith("exit status 0")
            out = tool.execute({"command": made}).content
            again = tool.execute({"command": "true"}).content
        finally:
            tool.close()
    left = [p for p in starter_paths() if (workspace / prefix / p).exists()]
    assert left == [], out
    assert "set aside: " in out, out
    assert (workspace / prefix / ".envrc.untrusted").read_text() == "x\n"
    assert "set aside" not in again, again


def test_ask_mode_asks_about_each_at_a_real_terminal(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path
) -> None:
    """``--mode ask`` through a pseudo-terminal: a write to each starter file is a question
    marked protected, never done unasked (``.envrc`` is refused outright, as a sensitive path),
    and the person's "no" keeps the file from being written."""
    calls = [
        (f"w{i}", "write", {"path": file_in(path), "content": "x\n"})
        for i, (path, _) in enumerate(STARTER_FILES)
    ]
    messages_api.queue(tool_reply("", *calls))
    messages_api.queue(text_reply("done"))
    asked = [path for path, _ in STARTER_FILES if path != ".envrc"]
    proc, term = start_agent(ws, messages_api, "--session", str(tmp_path / "run.jsonl"))
    questions = []
    try:
        for _ in asked:
            questions.append(term.read_until(PROTECTED_PROMPT))
            os.write(term.master, b"n\n")
    finally:
        finish(proc, term)
    for path, shown in zip(asked, questions, strict=True):
        assert b"protected: protected config path" in shown, (path, shown)
        assert b"[a]lways" not in shown.split(b"protected:")[1], (path, shown)
    written = [path for path, _ in STARTER_FILES if (ws.path / file_in(path)).exists()]
    assert written == []


def test_full_mode_asks_about_each_at_a_real_terminal(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path
) -> None:
    """``--mode full`` through a pseudo-terminal: a plain write runs unasked; a write to each
    starter file is a question marked protected, with no "always"; the person's "yes" writes
    the first, "no" keeps every other from being written."""
    calls = [("plain", "write", {"path": "notes.txt", "content": "x\n"})]
    calls += [
        (f"w{i}", "write", {"path": file_in(path), "content": "x\n"})
        for i, (path, _) in enumerate(STARTER_FILES)
    ]
    messages_api.queue(tool_reply("", *calls))
    messages_api.queue(text_reply("done"))
    asked = [path for path, _ in STARTER_FILES if path != ".envrc"]
    proc, term = start_agent(ws, messages_api, "--mode", "full", "--session", str(tmp_path / "run.jsonl"))
    questions = []
    try:
        for n, _path in enumerate(asked):
            questions.append(term.read_until(PROTECTED_PROMPT))
            os.write(term.master, b"y\n" if n == 0 else b"n\n")
    finally:
        finish(proc, term)
    assert b"path as given: 'notes.txt'" not in b"".join(questions)  # never asked about
    for path, shown in zip(asked, questions, strict=True):
        assert file_in(path).encode() in shown, (path, shown)
        assert b"protected: protected config path" in shown, (path, shown)
        assert b"[a]lways" not in shown.split(b"protected:")[1], (path, shown)
    assert (ws.path / "notes.txt").read_text() == "x\n"
    written = [path for path, _ in STARTER_FILES if (ws.path / file_in(path)).exists()]
    assert written == [asked[0]]


@needs_sandbox
def test_full_mode_asks_whether_to_keep_what_a_command_made(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path
) -> None:
    """``--mode full`` through a pseudo-terminal: starter files a bash command makes are set
    aside by its sandbox, then the person is shown each and asked; "yes" puts one back, "no"
    leaves it set aside, and a plain file the command made is never asked about."""
    command = (
        "mkdir .vscode && echo '{}' > .vscode/tasks.json && "
        "echo '{\"mcpServers\": {}}' > .mcp.json && touch notes.txt"
    )
    messages_api.queue(tool_reply("", ("b1", "bash", {"command": command})))
    messages_api.queue(text_reply("done"))
    session = tmp_path / "run.jsonl"
    proc, term = start_agent(ws, messages_api, "--mode", "full", "--session", str(session))
    keep = b"Keep it? [y]es / [n]o (asked every time): "
    try:
        first = term.read_until(keep)
        os.write(term.master, b"y\n")
        second = term.read_until(keep)
        os.write(term.master, b"n\n")
    finally:
        finish(proc, term)
    assert b"path:       '.vscode'" in first and b"set aside:  '.vscode.untrusted'" in first, first
    assert b"path:       '.mcp.json'" in second and b'+{"mcpServers": {}}' in second, second
    assert b"path:       'notes.txt'" not in first + second
    assert (ws.path / ".vscode" / "tasks.json").read_text() == "{}\n"  # kept
    assert not (ws.path / ".mcp.json").exists()
    assert (ws.path / ".mcp.json.untrusted").exists()
    assert (ws.path / "notes.txt").exists()
    with Session.open(session) as stored:
        (result,) = [m for m in stored.messages if isinstance(m, ToolResult)]
    assert "note: .vscode.untrusted put back as .vscode, as the person chose" in result.content, (
        result.content
    )
    assert "set aside: .vscode -> .vscode.untrusted; .mcp.json -> .mcp.json.untrusted" in result.content


@needs_sandbox
def test_a_starter_file_put_back_is_read_only_to_the_next_command(workspace: Path) -> None:
    workspace.mkdir()
    with safefs.Root(workspace) as root:
        tool = BashTool(root, base_env={"PATH": PATH})
        tool.keep_starter = lambda path, aside: path == ".envrc"
        try:
            made = tool.execute({"command": "echo 'export A=1' > .envrc"}).content
            changed = tool.execute({"command": "echo 'export A=2' > .envrc"}).content
        finally:
            tool.close()
    assert "note: .envrc.untrusted put back as .envrc, as the person chose" in made, made
    assert "Read-only file system" in changed, changed
    assert (workspace / ".envrc").read_text() == "export A=1\n"
