"""Six ways a command or a write tool once left something the person's git ran, each made for
real (a bash command in the sandbox, or the write tool under its permission layer), then the
real ``git`` run as the person would (``git status`` in every directory, a commit at the top,
with a home and config of the test's own) and a marker outside the workspace that nothing may
create:

1. a decoy: a repository with fifteen other spellings of ``HEAD`` beside the real one;
2. no free name: ``HEAD.untrusted`` and ``.1`` to ``.99`` made first;
3. a directory the agent cannot read (``chmod 0311``), the agent an ordinary user;
4. a symbolic link on the path git's config spells (``include.path``, ``core.hooksPath``)
   replaced;
5. the repository enclosing the workspace, whose hooks path lies in it (the write tool in
   ``edit`` mode, and bash);
6. husky: ``.husky/pre-commit``, which the hook in ``.husky/_`` runs.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import safefs
from agent.messages import ToolCall
from agent.policy.gitdirs import git_rules
from agent.policy.sensitive import PathRules
from agent.policy.setup import permission_policy
from agent.tools.bash import BashTool
from agent.tools.write import WriteTool
from tests.sandbox.harness import PATH, WORLD_PARENT, as_user, chown_tree, ordinary_user, sandbox_refusal
from tests.sandbox.host_git import AUTHOR, fsmonitor_config, hook_script, host_git_ran_marker, must_git

pytestmark = pytest.mark.skipif(sandbox_refusal() is not None, reason=f"no sandbox: {sandbox_refusal()}")


@pytest.fixture
def base() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="safefs-git-cases-", dir=WORLD_PARENT))
    path.chmod(0o755)
    (path / "outside").mkdir()
    try:
        yield path
    finally:
        for dirpath, dirnames, _ in os.walk(path):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o755)
        shutil.rmtree(path, ignore_errors=True)


def run_bash(workspace: Path, *commands: str) -> list[str]:
    with safefs.Root(workspace) as root:
        tool = BashTool(root, base_env={"PATH": PATH})
        try:
            return [tool.execute({"command": command}).content for command in commands]
        finally:
            tool.close()


def shell_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def planted_repository(directory: str, marker: Path, workspace: Path) -> str:
    """Shell text making ``directory`` a repository whose config runs ``touch marker``."""
    config = shell_text(fsmonitor_config(marker, worktree=workspace))
    return (
        f"mkdir -p {directory}/objects {directory}/refs/heads && "
        f"echo 'ref: refs/heads/main' > {directory}/HEAD && printf '{config}' > {directory}/config"
    )


def spellings(name: str) -> list[str]:
    return ["".join(chars) for chars in itertools.product(*[(c.lower(), c.upper()) for c in name])]


def test_1_a_decoy_spelling_of_head_does_not_keep_the_repository(base: Path) -> None:
    workspace, marker = base / "work", base / "outside" / "ran"
    (workspace / "src").mkdir(parents=True)
    decoys = " ".join(f"src/{name}" for name in spellings("head") if name != "HEAD")
    command = f"{planted_repository('src', marker, workspace)} && touch {decoys}"
    (out,) = run_bash(workspace, command)
    assert host_git_ran_marker(workspace, marker, commit=True) == []
    assert "src/HEAD -> src/HEAD.untrusted" in out, out
    assert not [name for name in os.listdir(workspace / "src") if name.casefold() == "head"]


def test_2_no_free_name_beside_head_still_disables_the_repository(base: Path) -> None:
    workspace, marker = base / "work", base / "outside" / "ran"
    (workspace / "src").mkdir(parents=True)
    taken = "touch src/HEAD.untrusted src/HEAD.untrusted.{1..99} src/head.UNTRUSTED.100"
    (out,) = run_bash(workspace, f"{taken}; {planted_repository('src', marker, workspace)}")
    assert host_git_ran_marker(workspace, marker, commit=True) == []
    assert out.startswith("exit status 0"), out
    assert "src/HEAD -> src/HEAD.untrusted." in out, out
    assert not (workspace / "src" / "HEAD").exists()
    assert run_bash(workspace, "true")[0].startswith("exit status 0")  # the sandbox goes on


def test_3_a_directory_the_agent_cannot_read_is_judged_too(base: Path) -> None:
    uid = ordinary_user()
    workspace, marker = base / "work", base / "outside" / "ran"
    (workspace / "src").mkdir(parents=True)
    chown_tree(workspace, uid)
    command = f"{planted_repository('src/.git', marker, workspace / 'src')} && chmod 0311 src"
    (out,) = as_user(uid, lambda: run_bash(workspace, command), fork=True)
    assert host_git_ran_marker(workspace, marker, as_owner=True) == []
    assert "src/.git/HEAD -> src/.git/HEAD.untrusted" in out, out


@pytest.mark.parametrize("key", ["include.path", "core.hooksPath"])
def test_4_a_link_on_the_path_a_config_spells_cannot_be_replaced(base: Path, key: str) -> None:
    workspace, marker = base / "work", base / "outside" / "ran"
    workspace.mkdir()
    must_git("init", "-q", workspace)
    (workspace / "real").mkdir()
    (workspace / "real" / "x").write_text("[user]\n\tname = p\n")
    (workspace / "shared").symlink_to("real")
    spelled = "shared/x" if key == "include.path" else "shared"
    must_git("config", key, f"../{spelled}" if key == "include.path" else spelled, cwd=workspace)
    if key == "include.path":
        planted = f"printf '{shell_text(fsmonitor_config(marker))}' > shared/x"
    else:
        hook = shell_text(hook_script(marker))
        planted = f"printf '{hook}' > shared/pre-commit && chmod +x shared/pre-commit"
    (out,) = run_bash(workspace, f"rm shared && mkdir shared && {planted}")
    assert host_git_ran_marker(workspace, marker, commit=True) == []
    assert ".git/HEAD -> .git/HEAD.untrusted" in out, out


def enclosing_repository(base: Path, marker: Path) -> tuple[Path, Path]:
    """``base/outer``, a repository whose hooks path is ``app/githooks`` (an executable hook
    there), and its work tree's ``app``, the workspace."""
    outer = base / "outer"
    workspace = outer / "app"
    (workspace / "githooks").mkdir(parents=True)
    must_git("init", "-q", outer)
    must_git("config", "core.hooksPath", "app/githooks", cwd=outer)
    hook = workspace / "githooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    return outer, workspace


def commit_ran(outer: Path, marker: Path) -> bool:
    must_git(*AUTHOR, "commit", "-q", "--allow-empty", "-m", "p", cwd=outer)
    return marker.exists()


def test_5_the_write_tool_cannot_write_the_enclosing_repositorys_hooks(base: Path) -> None:
    marker = base / "outside" / "ran"
    outer, workspace = enclosing_repository(base, marker)
    with safefs.Root(workspace) as root:
        tool = WriteTool(root)
        policy = permission_policy("edit", root, rules=PathRules(extra=git_rules(root)), tools=[tool])
        args = {"path": "githooks/pre-commit", "content": hook_script(marker)}
        decision = policy(ToolCall("w", "write", args))
        if decision.approved:
            tool.execute(args)
    assert not commit_ran(outer, marker)
    assert not decision.approved, decision
    assert decision.reason is not None and "githooks" in decision.reason, decision


def test_5_bash_cannot_write_the_enclosing_repositorys_hooks(base: Path) -> None:
    marker = base / "outside" / "ran"
    outer, workspace = enclosing_repository(base, marker)
    (out,) = run_bash(workspace, f"printf '{shell_text(hook_script(marker))}' > githooks/pre-commit")
    assert not commit_ran(outer, marker)
    assert "Read-only file system" in out, out
    assert "githooks" in out.split("\n")[1], out  # the sandbox line names it read-only


def test_6_husky_scripts_are_read_only_to_bash(base: Path) -> None:
    workspace, marker = base / "work", base / "outside" / "ran"
    workspace.mkdir()
    must_git("init", "-q", workspace)
    must_git("config", "core.hooksPath", ".husky/_", cwd=workspace)
    (workspace / ".husky" / "_").mkdir(parents=True)
    hook = workspace / ".husky" / "_" / "pre-commit"
    hook.write_text("#!/bin/sh\n[ -f .husky/pre-commit ] && sh .husky/pre-commit\nexit 0\n")  # as husky's h
    hook.chmod(0o755)
    (out,) = run_bash(workspace, f"printf '{shell_text(hook_script(marker))}' > .husky/pre-commit")
    assert host_git_ran_marker(workspace, marker, commit=True) == []
    assert "Read-only file system" in out, out


def person_makes_a_repository(workspace: Path, name: str) -> None:
    must_git("init", "-q", workspace / name)
    must_git("config", "core.hooksPath", "hooks", cwd=workspace / name)
    (workspace / name / "hooks").mkdir()


def test_a_repository_made_between_commands_is_judged_by_what_the_command_changed(base: Path) -> None:
    """The person makes repositories while the agent runs: a command writing a file of one's
    work tree leaves it alone (and the next command finds its hooks path read-only); one
    writing another's hooks path disables that one."""
    workspace, marker = base / "work", base / "outside" / "ran"
    workspace.mkdir()
    hook = shell_text(hook_script(marker))
    with safefs.Root(workspace) as root:
        tool = BashTool(root, base_env={"PATH": PATH})
        try:
            assert tool.execute({"command": "true"}).content.startswith("exit status 0")
            person_makes_a_repository(workspace, "sub")
            person_makes_a_repository(workspace, "other")
            planted = tool.execute(
                {"command": f"printf '{hook}' > sub/hooks/pre-commit; chmod +x sub/hooks/*"}
            )
            plain = tool.execute({"command": "echo x > other/notes.txt"}).content
            again = tool.execute({"command": f"printf '{hook}' > other/hooks/pre-commit"}).content
        finally:
            tool.close()
    assert host_git_ran_marker(workspace, marker, commit=True) == []
    assert "sub/.git/HEAD -> sub/.git/HEAD.untrusted" in planted.content, planted.content
    assert "disabled" not in plain and (workspace / "other" / ".git" / "HEAD").is_file(), plain
    assert "Read-only file system" in again, again
