"""glob: the pattern language, .git skipped, symlinks listed by name and never followed, caps."""

from __future__ import annotations

import os

import pytest

from agent.tools import GlobTool
from agent.tools.base import ToolOutput
from safefs.workspace.patterns import glob_match
from tests.agent.conftest import AgentWorkspace


@pytest.mark.parametrize(
    "pattern, path, matches",
    [
        ("*.py", "a.py", True),
        ("*.py", "d/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "d/e/a.py", True),
        ("d/**", "d/e/a.py", True),
        ("d/**/a.py", "d/a.py", True),
        ("?.py", "ab.py", False),
        ("[ab].py", "b.py", True),
        ("[!ab].py", "b.py", False),
        ("*.{py,md}", "x.md", True),
        ("*.{py,md}", "x.txt", False),
        ("*", ".hidden", True),  # dot files match, as in the MCP filesystem server
        ("*", "d/x", False),
        ("a*b", "a/b", False),  # "*" never crosses a "/"
        ("./src/*.c", "src/x.c", True),
        ("[", "[", True),  # an unclosed bracket is a literal
    ],
)
def test_pattern_language(pattern: str, path: str, matches: bool) -> None:
    assert glob_match(pattern, path) is matches


@pytest.fixture
def tree(each_backend: AgentWorkspace) -> AgentWorkspace:
    ws = each_backend
    (ws.path / "src" / "pkg").mkdir(parents=True)
    for name in ("src/a.py", "src/pkg/b.py", "src/notes.md", ".git/c.py"):
        (ws.path / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.path / name).write_text("x\n")
    os.symlink(ws.outside, ws.path / "src" / "out.py")  # a link that looks like a match
    (ws.outside / "inner.py").write_text("secret\n")
    return ws


def glob(ws: AgentWorkspace, **args: object) -> ToolOutput:
    return GlobTool(ws.root).execute(args)


def test_matches_skip_git_and_never_enter_links(tree: AgentWorkspace) -> None:
    assert glob(tree, pattern="**/*.py") == ToolOutput(
        "src/a.py\nsrc/out.py [symlink, not followed]\nsrc/pkg/b.py"
    )
    assert glob(tree, pattern="**/inner.py") == ToolOutput("no paths match '**/inner.py' under .")


def test_a_start_path(tree: AgentWorkspace) -> None:
    assert glob(tree, pattern="*", path="src") == ToolOutput(
        "src/a.py\nsrc/notes.md\nsrc/out.py [symlink, not followed]\nsrc/pkg/"
    )


def test_results_are_capped(ws: AgentWorkspace) -> None:
    for i in range(1200):
        (ws.path / f"m{i:04d}.txt").touch()
    out = glob(ws, pattern="*.txt").content
    assert out.endswith("[201 more matches not shown; narrow the pattern or the path]")  # +hello.txt


@pytest.mark.parametrize(
    "args, message",
    [
        ({"pattern": "*", "path": "../outside"}, "path escapes workspace: '../outside'"),
        ({"pattern": "*", "path": "nope"}, "No such file or directory: 'nope'"),
        ({"pattern": ""}, "glob pattern must not be empty"),
        ({}, "missing required field 'pattern'"),
    ],
)
def test_errors(tree: AgentWorkspace, args: dict[str, object], message: str) -> None:
    out = glob(tree, **args)
    assert out.is_error and message in out.content
