"""grep: regex matches as path:line:text; binary, .git and .gitignore'd files skipped; non-UTF-8
searched; symlinks never followed; caps with counts."""

from __future__ import annotations

import os

import pytest

from agent.tools import GrepTool
from agent.tools.base import ToolOutput
from tests.agent.conftest import AgentWorkspace


def grep(ws: AgentWorkspace, **args: object) -> ToolOutput:
    """The lines grep shows (``content``; the tool's default lists only the files)."""
    return GrepTool(ws.root).execute({"output_mode": "content", **args})


def test_the_default_lists_the_matching_files(repo: AgentWorkspace) -> None:
    listed = GrepTool(repo.root).execute({"pattern": "."}).content.splitlines()
    content = grep(repo, pattern=".").content.splitlines()
    files = sorted({line.split(":", 1)[0] for line in content[:-1]})
    assert sorted(listed[:-1]) == files and files
    assert listed[-1].startswith(f"[{len(files)} of ")


@pytest.fixture
def repo(each_backend: AgentWorkspace) -> AgentWorkspace:
    ws = each_backend
    files = {
        ".gitignore": "build/\n*.log\n!keep.log\n",
        "src/app.py": "import os\nTOKEN = 'needle'\n",
        "src/.gitignore": "generated.py\n",
        "src/generated.py": "needle in generated\n",
        "build/out.py": "needle in build\n",
        "debug.log": "needle in log\n",
        "keep.log": "needle kept\n",
        ".git/config": "needle in git\n",
        "docs/readme.md": "A Needle in caps\n",
    }
    for name, text in files.items():
        (ws.path / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.path / name).write_text(text)
    (ws.path / "bin.dat").write_bytes(b"needle\0binary")
    (ws.path / "latin1.txt").write_bytes(b"caf\xe9 needle\n")
    (ws.outside / "secret.txt").write_text("needle outside\n")
    os.symlink(ws.outside, ws.path / "out")
    os.symlink(ws.outside / "secret.txt", ws.path / "secret-link.txt")
    return ws


def test_matches_respect_gitignore_git_binary_and_links(repo: AgentWorkspace) -> None:
    out = grep(repo, pattern="needle")
    assert out == ToolOutput(
        "keep.log:1:needle kept\nlatin1.txt:1:caf\ufffd needle\nsrc/app.py:2:TOKEN = 'needle'\n"
        "[3 matching lines in 3 of 7 files searched; 1 binary files skipped]"
    )


def test_ignore_case_and_file_glob(repo: AgentWorkspace) -> None:
    assert grep(repo, pattern="needle", ignore_case=True, glob="*.md") == ToolOutput(
        "docs/readme.md:1:A Needle in caps\n[1 matching line in 1 of 1 files searched]"
    )


def test_a_start_path_keeps_the_ancestors_gitignore(repo: AgentWorkspace) -> None:
    assert grep(repo, pattern="needle", path="src").content.splitlines()[0] == "src/app.py:2:TOKEN = 'needle'"
    assert "generated" not in grep(repo, pattern="needle", path="src").content
    # A single file is searched even if ignored: it was asked for by name.
    assert grep(repo, pattern="needle", path="debug.log").content.startswith("debug.log:1:")


def test_caps_and_long_lines(ws: AgentWorkspace) -> None:
    (ws.path / "many.txt").write_text("hit\n" * 1500 + "hit " + "z" * 5000 + "\n")
    out = grep(ws, pattern="hit").content
    assert len(out) <= 30_000
    assert out.endswith(
        "\nmany.txt:1000:hit\n"
        "[1501 matching lines in 1 of 2 files searched; entries 1-1000 of 1501 shown; offset=1000 continues]"
    )  # and hello.txt
    rest = grep(ws, pattern="hit", offset=1000).content.splitlines()
    assert rest[0] == "many.txt:1001:hit" and rest[-2].startswith("many.txt:1501:hit ")
    (ws.path / "many.txt").write_text("hit " + "z" * 5000 + "\n")
    line = grep(ws, pattern="hit").content.splitlines()[0]
    assert line == "many.txt:1:hit " + "z" * 496 + "[... 4504 more characters]"


@pytest.mark.parametrize(
    "args, message",
    [
        ({"pattern": "("}, "invalid regular expression '('"),
        ({"pattern": "x", "path": "out"}, "path escapes workspace: 'out'"),
        ({"pattern": "x", "path": "secret-link.txt"}, "path escapes workspace: 'secret-link.txt'"),
        ({"pattern": "x", "path": "../outside"}, "path escapes workspace: '../outside'"),
        ({"pattern": "x", "ignore_case": "yes"}, "field 'ignore_case' must be of type boolean"),
    ],
)
def test_errors(repo: AgentWorkspace, args: dict[str, object], message: str) -> None:
    out = grep(repo, **args)
    assert out.is_error and message in out.content, out.content


def test_a_fifo_in_the_tree_never_blocks(ws: AgentWorkspace) -> None:
    os.mkfifo(ws.path / "pipe")
    (ws.path / "a.txt").write_text("find me\n")
    assert grep(ws, pattern="find").content.startswith("a.txt:1:find me")
