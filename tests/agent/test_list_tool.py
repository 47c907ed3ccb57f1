"""list: kinds and sizes, depth, caps; symlinks described, never entered."""

from __future__ import annotations

import os

import pytest

from agent.tools import ListTool
from agent.tools.base import ToolOutput
from tests.agent.conftest import AgentWorkspace


def listing(ws: AgentWorkspace, **args: object) -> ToolOutput:
    return ListTool(ws.root).execute(args)


@pytest.fixture
def tree(each_backend: AgentWorkspace) -> AgentWorkspace:
    ws = each_backend
    (ws.path / "src" / "pkg").mkdir(parents=True)
    (ws.path / "src" / "main.py").write_text("print(1)\n")
    (ws.path / "src" / "pkg" / "deep.py").write_text("")
    (ws.path / ".git").mkdir()
    (ws.path / ".git" / "HEAD").write_text("ref\n")
    os.symlink(ws.outside, ws.path / "out")
    os.symlink("src/main.py", ws.path / "in")
    os.mkfifo(ws.path / "pipe")
    return ws


def test_one_level(tree: AgentWorkspace) -> None:
    assert listing(tree, include_ignored=True) == ToolOutput(
        ".git/\nhello.txt (18 bytes)\nin -> src/main.py [symlink]\n"
        "out -> outside the workspace (not followed) [symlink]\npipe [special file, not read]\nsrc/"
    )


def test_depth_lists_below_but_not_into_git_or_links(tree: AgentWorkspace) -> None:
    out = listing(tree, depth=3, include_ignored=True).content.splitlines()
    assert "src/pkg/deep.py (0 bytes)" in out and "src/main.py (9 bytes)" in out
    assert ".git/" in out and not any(line.startswith(".git/HEAD") for line in out)
    # By default .git is left out, as git's own listings leave it out.
    assert not any(line.startswith(".git") for line in listing(tree, depth=3).content.splitlines())
    assert not any("secret" in line for line in out)
    assert listing(tree, path="src", depth=1) == ToolOutput("src/main.py (9 bytes)\nsrc/pkg/")


def test_many_entries_are_capped_with_a_count(ws: AgentWorkspace) -> None:
    for i in range(1500):
        (ws.path / f"f{i:04d}").touch()
    out = listing(ws).content
    assert len(out) <= 30_000
    assert out.endswith("[501 more entries not shown; list a subdirectory, lower depth, or use glob]")


@pytest.mark.parametrize(
    "args, message",
    [
        ({"path": "nope"}, "No such file or directory: 'nope'"),
        ({"path": "hello.txt"}, "Not a directory: 'hello.txt'"),
        ({"path": "../outside"}, "path escapes workspace: '../outside'"),
        ({"path": "out"}, "path escapes workspace: 'out'"),
        ({"depth": 0}, "depth must be between 1 and 10, got 0"),
    ],
)
def test_errors(tree: AgentWorkspace, args: dict[str, object], message: str) -> None:
    assert listing(tree, **args) == ToolOutput(message, is_error=True)


def test_target_paths_default_to_the_workspace(ws: AgentWorkspace) -> None:
    assert ListTool(ws.root).target_paths({}) == ["."]
    assert ListTool(ws.root).target_paths({"path": "src"}) == ["src"]
