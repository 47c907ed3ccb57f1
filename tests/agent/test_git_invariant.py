"""The invariant, searched for a counterexample: whatever sequence of writes (through the write
tool and its permission layer) and commands (renames, writes, ``git init``, in the bash sandbox)
the agent makes, the person's own git, run as they would run it (``git status`` in the
workspace and in every directory below it, a commit at the top), runs nothing the agent wrote:
a marker outside the workspace never appears.

The workspace starts as a repository with what the findings used: a submodule, a hooks path
in the work tree (``.husky/_``, whose script runs ``.husky/pre-commit`` as husky's does), a
config it includes (``.gitconfig``) and one it includes through a symbolic link
(``linked/x``, ``linked -> cfg``); and it lies in an enclosing repository whose hooks path is
in it (``githooks``). Beside writes, renames and ``git init``, the moves plant repositories
with decoy spellings of ``HEAD``, after taking the names ``HEAD`` would be set aside to, make
directories unreadable, and replace the link. The budget is small
(a few sequences of a few steps; each command is a real sandbox, each check dozens of real git
runs), and hypothesis keeps any counterexample it finds for the next run.
"""

from __future__ import annotations

import importlib.readers  # noqa: F401  (imported lazily by the tool; the child cannot read the library)
import itertools
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import safefs
from agent.messages import ToolCall
from agent.policy.gitdirs import git_rules
from agent.policy.sensitive import PathRules
from agent.policy.setup import permission_policy
from agent.tools.bash import BashTool
from agent.tools.write import WriteTool
from tests.sandbox import host_git
from tests.sandbox.harness import PATH, as_user, ordinary_user, sandbox_refusal
from tests.sandbox.host_git import (
    commit_empty,
    fsmonitor_config,
    hook_script,
    host_git_ran_marker,
    make_superproject,
    must_git,
)

pytestmark = pytest.mark.slow  # a property test against the host's git

SANDBOX = sandbox_refusal() is None
DIRECTORIES = [".", "libs", "libs/sub", ".husky", ".husky/_", "src", "src/pkg", "githooks", "cfg"]
# Names whose content git may act on, wherever they stand.
NAMES = [
    "HEAD",
    "config",
    "commondir",
    "objects/info/packs",
    "refs/heads/.keep",
    ".git",
    ".git/HEAD",
    ".git/config",
    ".git/objects/info/packs",
    ".git/refs/heads/.keep",
    ".gitconfig",
    "pre-commit",
    "x",
]
# What makes a directory a repository to git (with ``HEAD`` written last or first, whichever).
REPOSITORY = ["HEAD", "config", "objects/info/packs", "refs/heads/.keep"]
COUNTS = {"tool_written": 0, "tool_denied": 0, "commands": 0}
HEAD_SPELLINGS = sorted(
    {"".join(c) for c in itertools.product(*[(ch.lower(), ch.upper()) for ch in "head"])} - {"HEAD"}
)


def shell_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def place(directory: str, name: str) -> str:
    return name if directory == "." else f"{directory}/{name}"


class AgentAgainstHostGit(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="safefs-git-invariant-", dir="/var/tmp"))
        self.outer = self.base / "outer"  # the repository enclosing the workspace
        self.workspace = self.outer / "work"
        self.marker = self.base / "outside" / "git-ran-the-agents-code"
        try:
            self.marker.parent.mkdir()
            self._make_enclosing_repository()
            self._make_repository()
        except BaseException:
            shutil.rmtree(self.base, ignore_errors=True)  # no teardown follows a failed start
            raise
        self.root = safefs.Root(self.workspace)
        self.write_tool = WriteTool(self.root)
        rules = PathRules(extra=git_rules(self.root))  # read when the run starts, as the CLI does
        self.policy = permission_policy("full", self.root, rules=rules, tools=[self.write_tool])
        self.bash = BashTool(self.root, base_env={"PATH": PATH}) if SANDBOX else None

    def _make_enclosing_repository(self) -> None:
        must_git("init", "-q", self.outer)
        must_git("config", "core.hooksPath", "work/githooks", cwd=self.outer)
        (self.workspace / "githooks").mkdir(parents=True)

    def _make_repository(self) -> None:
        ws = self.workspace
        make_superproject(ws)
        must_git("config", "core.hooksPath", ".husky/_", cwd=ws)
        must_git("config", "include.path", "../.gitconfig", cwd=ws)
        must_git("config", "--add", "include.path", "../linked/x", cwd=ws)
        (ws / ".husky" / "_").mkdir(parents=True)
        husky = ws / ".husky" / "_" / "pre-commit"
        husky.write_text("#!/bin/sh\n[ -f .husky/pre-commit ] && sh .husky/pre-commit\nexit 0\n")
        husky.chmod(0o755)
        (ws / ".gitconfig").write_text("[user]\n\tname = p\n")
        (ws / "cfg").mkdir()
        (ws / "cfg" / "x").write_text("[user]\n\tname = p\n")
        (ws / "linked").symlink_to("cfg")
        (ws / "src" / "pkg").mkdir(parents=True)

    def content(self, name: str) -> str:
        """What the agent writes: for each name, the text git would act on."""
        last = name.rsplit("/", 1)[-1]
        if last == "HEAD":
            return "ref: refs/heads/main\n"
        if last == "commondir":
            return ".\n"  # itself: the directory stays a repository when it has the rest
        if last == ".git":
            return "gitdir: ../.git\n"
        if last == "pre-commit":
            return hook_script(self.marker)
        if last in ("config", ".gitconfig", "x"):
            return fsmonitor_config(self.marker, worktree=self.workspace)
        return ""

    def write(self, path: str, content: str) -> None:
        args = {"path": path, "content": content}
        if self.policy(ToolCall("w", "write", args)).approved:
            self.write_tool.execute(args)
            COUNTS["tool_written"] += 1
        else:
            COUNTS["tool_denied"] += 1

    @rule(directory=st.sampled_from(DIRECTORIES), name=st.sampled_from(NAMES))
    def write_with_the_tool(self, directory: str, name: str) -> None:
        self.write(place(directory, name), self.content(name))

    @rule(directory=st.sampled_from(DIRECTORIES), order=st.permutations(REPOSITORY))
    def plant_a_repository_with_the_tool(self, directory: str, order: list[str]) -> None:
        """The four writes that make a directory a repository, in any order."""
        for name in order:
            self.write(place(directory, name), self.content(name))

    def command(self, text: str) -> None:
        assert self.bash is not None
        out = self.bash.execute({"command": text})
        assert "sandbox: landlock" in out.content, out.content
        COUNTS["commands"] += 1

    @precondition(lambda self: self.bash is not None)
    @rule(directory=st.sampled_from(DIRECTORIES), name=st.sampled_from(NAMES))
    def write_with_a_command(self, directory: str, name: str) -> None:
        path = place(directory, name)
        text = shell_text(self.content(name))
        parent = path.rsplit("/", 1)[0] if "/" in path else "."
        self.command(f"mkdir -p '{parent}'; printf '{text}' > '{path}'; chmod +x '{path}'")

    @precondition(lambda self: self.bash is not None)
    @rule(
        source=st.sampled_from([*DIRECTORIES[1:], ".gitconfig", ".git"]),
        suffix=st.sampled_from([".old", "2"]),
    )
    def rename_with_a_command(self, source: str, suffix: str) -> None:
        self.command(f"mv '{source}' '{source}{suffix}'")

    @precondition(lambda self: self.bash is not None)
    @rule(directory=st.sampled_from([*DIRECTORIES, "new"]))
    def make_a_repository_with_a_command(self, directory: str) -> None:
        self.command(
            f"git init -q '{directory}' && git -C '{directory}' config core.fsmonitor 'touch {self.marker}'; "
            f"git -C '{directory}' config core.worktree '{self.workspace}'"
        )

    @precondition(lambda self: self.bash is not None)
    @rule(directory=st.sampled_from([*DIRECTORIES, "new"]), decoys=st.sets(st.sampled_from(HEAD_SPELLINGS)))
    def plant_behind_decoy_spellings_of_head(self, directory: str, decoys: set[str]) -> None:
        names = " ".join(f"'{place(directory, name)}'" for name in sorted(decoys))
        self.command(f"mkdir -p '{directory}'; {self.planted(directory)}; touch {names or '/dev/null'}")

    @precondition(lambda self: self.bash is not None)
    @rule(directory=st.sampled_from([*DIRECTORIES, "new"]), count=st.integers(1, 120))
    def take_the_set_aside_names_first(self, directory: str, count: int) -> None:
        first = place(directory, "HEAD.untrusted")
        taken = " ".join(f"'{first}.{n}'" for n in range(1, count))
        self.command(f"mkdir -p '{directory}'; touch '{first}' {taken}; {self.planted(directory)}")

    @precondition(lambda self: self.bash is not None)
    @rule(
        directory=st.sampled_from(["src", "src/pkg", "libs", "new"]),
        mode=st.sampled_from(["0311", "0111", "0"]),
    )
    def plant_then_make_unreadable(self, directory: str, mode: str) -> None:
        self.command(
            f"mkdir -p '{directory}'; {self.planted(directory + '/.git')}; chmod {mode} '{directory}'"
        )

    @precondition(lambda self: self.bash is not None)
    @rule(name=st.sampled_from(["x", "pre-commit"]))
    def replace_the_link_on_a_config_path(self, name: str) -> None:
        text = shell_text(self.content(name))
        self.command(f"rm -f linked && mkdir -p linked && printf '{text}' > 'linked/{name}'")

    @precondition(lambda self: self.bash is not None)
    @rule(hook=st.sampled_from(["githooks/pre-commit", ".husky/pre-commit", ".husky/_/h"]))
    def write_a_hook_with_a_command(self, hook: str) -> None:
        text = shell_text(hook_script(self.marker))
        self.command(f"printf '{text}' > '{hook}'; chmod +x '{hook}'")

    def planted(self, directory: str) -> str:
        """Shell text making ``directory`` a repository whose config runs the marker."""
        config = shell_text(fsmonitor_config(self.marker, worktree=self.workspace))
        return (
            f"mkdir -p '{directory}/objects' '{directory}/refs/heads' && "
            f"echo 'ref: refs/heads/main' > '{directory}/HEAD' && printf '{config}' > '{directory}/config'"
        )

    def _readable(self) -> None:
        """Directories a move made unreadable are opened again for the person's own walk."""
        for dirpath, dirnames, _ in os.walk(self.workspace):
            for name in dirnames:
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    os.chmod(path, os.stat(path).st_mode | 0o755)

    def enclosing_commit_ran(self) -> bool:
        commit_empty(self.outer)
        ran = self.marker.exists()
        if ran:
            self.marker.unlink()
        return ran

    @invariant()
    def the_persons_git_runs_nothing_of_the_agents(self) -> None:
        self._readable()
        assert host_git_ran_marker(self.workspace, self.marker) == []
        assert not self.enclosing_commit_ran()

    def teardown(self) -> None:
        try:
            self._readable()
            assert host_git_ran_marker(self.workspace, self.marker, commit=True) == []
            assert not self.enclosing_commit_ran()
        finally:
            if self.bash is not None:
                self.bash.close()
            self.root.close()
            shutil.rmtree(self.base, ignore_errors=True)
            print(f"git invariant search so far: {COUNTS}")


AgentAgainstHostGit.TestCase.settings = settings(
    max_examples=8,
    stateful_step_count=5,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestAgentAgainstHostGit = AgentAgainstHostGit.TestCase


@pytest.mark.skipif(not SANDBOX, reason=f"no sandbox: {sandbox_refusal()}")
def test_the_invariant_with_the_agent_an_ordinary_user() -> None:
    """The same search with the agent an ordinary user (made with ``useradd``; the machine runs
    in a child dropped to it), whose sandbox records what a command changed with an inotify
    watch on every directory instead of fanotify's filesystem mark; the person's git runs as
    that user too, the workspace's owner."""

    def search() -> dict[str, int]:
        host_git._HOME.clear()  # a home of this user's own
        try:
            run_state_machine_as_test(
                AgentAgainstHostGit,
                settings=settings(
                    max_examples=8,
                    stateful_step_count=5,
                    deadline=None,
                    database=None,  # the checkout is not this user's to write
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
                ),
            )
        finally:
            for home in host_git._HOME:
                shutil.rmtree(home, ignore_errors=True)
        return COUNTS

    counts = as_user(ordinary_user(), search, fork=True)
    print(f"git invariant search as an ordinary user: {counts}")
    assert counts["commands"] > 0


@pytest.mark.skipif(not SANDBOX, reason=f"no sandbox: {sandbox_refusal()}")
@pytest.mark.parametrize("mode", ["0311", "0"])
def test_a_repository_planted_in_a_directory_then_made_unreadable_is_disabled(mode: str) -> None:
    """A counterexample the search above found, replayed every time: as an ordinary user, a
    command plants a repository in the existing ``src/pkg`` and takes the directory's read
    permission away. The watch cannot list it (no record); the search that replaces the record
    must still see the directory it could not list, make it readable and disable the repository
    (it saw only directories it could not list beside a ``.git``, and the person's git ran the
    command's fsmonitor in ``src/pkg``)."""

    def replay() -> list[str]:
        host_git._HOME.clear()
        machine = AgentAgainstHostGit()
        try:
            machine.plant_then_make_unreadable(directory="src/pkg", mode=mode)
            machine._readable()
            return host_git_ran_marker(machine.workspace, machine.marker, commit=True)
        finally:
            machine.teardown()
            for home in host_git._HOME:
                shutil.rmtree(home, ignore_errors=True)

    assert as_user(ordinary_user(), replay, fork=True) == []
