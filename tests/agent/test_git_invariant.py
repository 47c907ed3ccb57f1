"""The invariant, searched for a counterexample: whatever sequence of writes (through the write
tool and its permission layer) and commands (renames, writes, ``git init``, in the bash sandbox)
the agent makes, the person's own git, run as they would run it (``git status`` in the
workspace and in every directory below it, a commit at the top), runs nothing the agent wrote:
a marker outside the workspace never appears.

The workspace starts as a repository with what the findings used: a submodule, a hooks path
in the work tree (``.husky/_``) and a config it includes (``.gitconfig``). The budget is small
(a few sequences of a few steps; each command is a real sandbox, each check dozens of real git
runs), and hypothesis keeps any counterexample it finds for the next run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import safefs
from agent.messages import ToolCall
from agent.policy.gitdirs import git_rules
from agent.policy.sensitive import PathRules
from agent.policy.setup import permission_policy
from agent.tools.bash import BashTool
from agent.tools.write import WriteTool
from tests.sandbox.harness import PATH, sandbox_refusal
from tests.sandbox.host_git import (
    fsmonitor_config,
    hook_script,
    host_git_ran_marker,
    make_superproject,
    must_git,
)

pytestmark = pytest.mark.slow  # a property test against the host's git

SANDBOX = sandbox_refusal() is None
DIRECTORIES = [".", "libs", "libs/sub", ".husky", ".husky/_", "src", "src/pkg"]
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
]
# What makes a directory a repository to git (with ``HEAD`` written last or first, whichever).
REPOSITORY = ["HEAD", "config", "objects/info/packs", "refs/heads/.keep"]
COUNTS = {"tool_written": 0, "tool_denied": 0, "commands": 0}


def place(directory: str, name: str) -> str:
    return name if directory == "." else f"{directory}/{name}"


class AgentAgainstHostGit(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="safefs-git-invariant-", dir="/var/tmp"))
        self.workspace = self.base / "work"
        self.marker = self.base / "outside" / "git-ran-the-agents-code"
        self.marker.parent.mkdir()
        self._make_repository()
        self.root = safefs.Root(self.workspace)
        self.write_tool = WriteTool(self.root)
        rules = PathRules(extra=git_rules(self.root))  # read when the run starts, as the CLI does
        self.policy = permission_policy("full", self.root, rules=rules, tools=[self.write_tool])
        self.bash = BashTool(self.root, base_env={"PATH": PATH}) if SANDBOX else None

    def _make_repository(self) -> None:
        ws = self.workspace
        make_superproject(ws)
        must_git("config", "core.hooksPath", ".husky/_", cwd=ws)
        must_git("config", "include.path", "../.gitconfig", cwd=ws)
        (ws / ".husky" / "_").mkdir(parents=True)
        (ws / ".gitconfig").write_text("[user]\n\tname = p\n")
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
        if last in ("config", ".gitconfig"):
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
        text = self.content(name).replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
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

    @invariant()
    def the_persons_git_runs_nothing_of_the_agents(self) -> None:
        assert host_git_ran_marker(self.workspace, self.marker) == []

    def teardown(self) -> None:
        try:
            assert host_git_ran_marker(self.workspace, self.marker, commit=True) == []
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
