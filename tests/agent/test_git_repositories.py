"""No sequence of tool calls leaves a repository, a git config or a hook of the agent's making
that the person's own git will use: each case through ``safefs-agent run`` (the write tool in
the default ``edit`` mode, ``bash`` in its sandbox with ``--mode full``), then the real ``git``
run as the person would (``git status`` in the workspace and every directory below it, a commit
at the top), and a marker outside the workspace that nothing may create."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.messages import ToolCall
from agent.policy.approval import ALLOW
from agent.policy.setup import permission_policy
from agent.tools.write import WriteTool
from tests.agent.cli_runs import results
from tests.agent.conftest import AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, text_reply, tool_reply
from tests.sandbox.harness import sandbox_refusal
from tests.sandbox.host_git import (
    fsmonitor_config,
    hook_script,
    host_git_ran_marker,
    make_superproject,
    must_git,
)

needs_sandbox = pytest.mark.skipif(sandbox_refusal() is not None, reason=f"no sandbox: {sandbox_refusal()}")


def run_calls(
    inline: Any,
    api: LoopbackMessagesAPI,
    ws: AgentWorkspace,
    tmp_path: Path,
    calls: list[tuple[str, dict[str, Any]]],
    *options: str,
) -> list[str]:
    """The results of one run whose model makes ``calls`` (tool, input), one per reply."""
    for i, (tool, args) in enumerate(calls):
        api.queue(tool_reply("", (f"c{i}", tool, args)))
    api.queue(text_reply("done"))
    session = tmp_path / f"run{len(list(tmp_path.glob('run*.jsonl')))}.jsonl"
    proc = inline(api, "--workspace", str(ws.path), "--session", str(session), *options, "go")
    assert proc.returncode == 0, proc.stderr
    return [r.content for r in results(session)]


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("bash", {"command": command})


def write(path: str, content: str) -> tuple[str, dict[str, Any]]:
    return ("write", {"path": path, "content": content})


def marker_of(ws: AgentWorkspace) -> Path:
    return ws.outside / "git-ran-the-agents-code"


def fresh_repository(directory: str, marker: Path) -> str:
    """Shell text making ``directory`` a repository whose config runs ``touch marker``."""
    config = fsmonitor_config(marker).replace("\n", "\\n").replace("\t", "\\t")
    return (
        f"mkdir -p {directory}/objects {directory}/refs/heads && "
        f"echo 'ref: refs/heads/master' > {directory}/HEAD && printf '{config}' > {directory}/config"
    )


# -- 1. a renamed parent -------------------------------------------------------------------------


@needs_sandbox
@pytest.mark.parametrize(
    "move",
    ["mv libs/sub libs/.sub_old", "mv libs libs.old && mkdir libs"],
    ids=["the-submodule-renamed", "its-parent-renamed-mount-and-all"],
)
def test_a_submodule_renamed_away_leaves_no_fresh_repository_in_its_place(
    move: str, ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    make_superproject(ws.path)
    marker = marker_of(ws)
    command = f"{move}; {fresh_repository('libs/sub/.git', marker)}; ls -a libs"
    (out,) = run_calls(inline, messages_api, ws, tmp_path, [bash(command)], "--mode", "full")
    assert host_git_ran_marker(ws.path, marker) == []
    assert "Device or resource busy" in out, out  # the directory above git's state is pinned
    assert (ws.path / "libs" / "sub" / ".git" / "HEAD").is_file()  # the submodule's own, untouched


@needs_sandbox
def test_a_hooks_directory_renamed_away_cannot_be_replaced(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    must_git("init", "-q", ws.path)
    must_git("config", "core.hooksPath", ".husky/_", cwd=ws.path)
    (ws.path / ".husky" / "_").mkdir(parents=True)
    marker = marker_of(ws)
    script = hook_script(marker).replace("\n", "\\n")
    command = (
        f"mv .husky .husky.old; mkdir -p .husky/_ && printf '{script}' > .husky/_/pre-commit "
        "&& chmod +x .husky/_/pre-commit; ls -a .husky"
    )
    (out,) = run_calls(inline, messages_api, ws, tmp_path, [bash(command)], "--mode", "full")
    assert host_git_ran_marker(ws.path, marker, commit=True) == []
    assert "Device or resource busy" in out, out


# -- 2. a work tree made into a repository ------------------------------------------------------


def make_root_a_repository(ws: AgentWorkspace, marker: Path) -> str:
    config = fsmonitor_config(marker, worktree=ws.path).replace("\n", "\\n").replace("\t", "\\t")
    return (
        f"echo 'ref: refs/heads/main' > HEAD; mkdir -p objects refs src/pkg; printf '{config}' > config; ls"
    )


@needs_sandbox
@pytest.mark.parametrize("layout", ["no-git", "monorepo-package"])
def test_the_workspace_cannot_be_made_a_repository_by_a_command(
    layout: str, ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    if layout == "monorepo-package":
        must_git("init", "-q", ws.base)  # the workspace is a package of a repository above it
    marker = marker_of(ws)
    (out,) = run_calls(
        inline, messages_api, ws, tmp_path, [bash(make_root_a_repository(ws, marker))], "--mode", "full"
    )
    assert host_git_ran_marker(ws.path, marker) == []
    assert "HEAD -> HEAD.untrusted" in out, out


@pytest.mark.parametrize("layout", ["no-git", "monorepo-package"])
def test_the_workspace_cannot_be_made_a_repository_by_the_write_tool(
    layout: str, ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    if layout == "monorepo-package":
        must_git("init", "-q", ws.base)
    marker = marker_of(ws)
    calls = [
        write("src/pkg/mod.py", "x = 1\n"),
        write("config", fsmonitor_config(marker, worktree=ws.path)),
        write("objects/info/packs", ""),
        write("refs/heads/.keep", ""),
        write("HEAD", "ref: refs/heads/main\n"),
    ]
    got = run_calls(inline, messages_api, ws, tmp_path, calls)
    assert host_git_ran_marker(ws.path, marker) == []
    assert "would make '.' a git repository" in got[-1], got


# -- 3. a bare repository under any name, in the default mode -----------------------------------


@pytest.mark.parametrize("name", ["src", "build.cache", "vendor/x.git"])
def test_four_writes_cannot_plant_a_bare_repository(
    name: str, ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    must_git("init", "-q", ws.path)
    (ws.path / name / "pkg").mkdir(parents=True)
    marker = marker_of(ws)
    calls = [
        write(f"{name}/HEAD", "ref: refs/heads/main\n"),
        write(f"{name}/config", fsmonitor_config(marker, worktree=ws.path)),
        write(f"{name}/objects/info/packs", ""),
        write(f"{name}/refs/heads/.keep", ""),
    ]
    got = run_calls(inline, messages_api, ws, tmp_path, calls)
    assert host_git_ran_marker(ws.path, marker) == []
    assert f"would make {name!r} a git repository" in got[-1], got
    # Nor can a write change a repository that is there already (its config, its hooks).
    (ws.path / name / "refs" / "heads" / ".keep").parent.mkdir(parents=True, exist_ok=True)
    got = run_calls(inline, messages_api, ws, tmp_path, [write(f"{name}/config", fsmonitor_config(marker))])
    assert "denied: git repository path" in got[0], got


# -- 4. a config file the repository includes ----------------------------------------------------


def with_includes(ws: AgentWorkspace) -> None:
    must_git("init", "-q", ws.path)
    must_git("config", "include.path", "../.gitconfig", cwd=ws.path)
    must_git("config", "includeIf.gitdir:/.path", "../tools/git.inc", cwd=ws.path)  # missing yet
    (ws.path / ".gitconfig").write_text("[user]\n\tname = p\n")


@pytest.mark.parametrize("included", [".gitconfig", "tools/git.inc"])
def test_an_included_config_cannot_be_written_by_the_write_tool(
    included: str, ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    with_includes(ws)
    marker = marker_of(ws)
    (got,) = run_calls(inline, messages_api, ws, tmp_path, [write(included, fsmonitor_config(marker))])
    assert host_git_ran_marker(ws.path, marker) == []
    # .gitconfig is a starter file too (protected config); the git rule still holds it when
    # --allow-path lifts that one
    assert (
        "denied: git repository path" in got
        or "denied: protected config path (built-in rule '.gitconfig'" in got
    ), got


@needs_sandbox
def test_an_included_config_cannot_be_written_by_a_command(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    with_includes(ws)
    marker = marker_of(ws)
    config = fsmonitor_config(marker).replace("\n", "\\n").replace("\t", "\\t")
    command = (
        f"printf '{config}' >> .gitconfig; mv .gitconfig .gitconfig.old; printf '{config}' > .gitconfig; "
        f"mkdir -p tools; printf '{config}' > tools/git.inc; ls -a . tools"
    )
    (out,) = run_calls(inline, messages_api, ws, tmp_path, [bash(command)], "--mode", "full")
    assert host_git_ran_marker(ws.path, marker) == []
    assert "Read-only file system" in out, out
    assert not (ws.path / "tools" / "git.inc").exists()  # the placeholder is gone after the run


def test_a_person_answering_yes_to_everything_in_ask_mode_still_cannot_make_a_repository(
    ws: AgentWorkspace,
) -> None:
    tools = [WriteTool(ws.root)]
    policy = permission_policy("ask", ws.root, approver=lambda call: ALLOW, tools=tools)
    decisions = []
    for i, (path, content) in enumerate(
        [("HEAD", "ref: refs/heads/main\n"), ("objects/info/packs", ""), ("refs/heads/.keep", "")]
    ):
        args = {"path": f"lib/{path}", "content": content}
        decision = policy(ToolCall(f"w{i}", "write", args))
        if decision.approved:
            tools[0].execute(args)
        decisions.append((decision.approved, decision.decided_by))
    assert decisions == [(True, None), (True, None), (False, "rule:git-repository")], decisions
