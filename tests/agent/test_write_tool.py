"""write: atomic, creates parents, and refuses every way out with nothing created outside."""

from __future__ import annotations

import os

import pytest

from agent.tools import WriteTool
from agent.tools.base import ToolOutput
from tests.agent.conftest import AgentWorkspace


def write(ws: AgentWorkspace, path: object, content: object = "data\n") -> ToolOutput:
    return WriteTool(ws.root).execute({"path": path, "content": content})


def test_writes_and_replaces_creating_parent_directories(ws: AgentWorkspace) -> None:
    assert write(ws, "a/b/c.txt", "first ✓\n") == ToolOutput("wrote 10 bytes to a/b/c.txt")
    assert (ws.path / "a" / "b" / "c.txt").read_text(encoding="utf-8") == "first ✓\n"
    assert not write(ws, "a/b/c.txt", "second\n").is_error
    assert (ws.path / "a" / "b" / "c.txt").read_text() == "second\n"
    assert sorted(os.listdir(ws.path / "a" / "b")) == ["c.txt"]  # no temporary left behind


def test_replacement_is_a_new_inode_so_readers_never_see_half_a_file(ws: AgentWorkspace) -> None:
    before = os.stat(ws.path / "hello.txt").st_ino
    with open(ws.path / "hello.txt") as held:
        assert not write(ws, "hello.txt", "new content\n").is_error
        assert held.read() == "hello from inside\n"  # the old file, whole
    assert os.stat(ws.path / "hello.txt").st_ino != before


def test_symlink_inside_the_workspace_is_written_through(ws: AgentWorkspace) -> None:
    os.symlink("hello.txt", ws.path / "alias")
    assert not write(ws, "alias", "via alias\n").is_error
    assert (ws.path / "hello.txt").read_text() == "via alias\n"
    assert os.path.islink(ws.path / "alias")


def test_escapes_are_refused_and_nothing_is_created_outside(each_backend: AgentWorkspace) -> None:
    ws = each_backend
    os.symlink(ws.outside / "secret.txt", ws.path / "abs-link")
    os.symlink("../outside", ws.path / "rel-link")
    os.symlink("../work-other", ws.path / "sib-link")
    before = ws.outside_state()
    attempts = [
        "../work-other/secret.txt",
        "../work-other/new/deep/file.txt",  # parents=True must not create directories there
        str(ws.sibling / "planted.txt"),
        str(ws.sibling / "new" / "dir" / "planted.txt"),
        str(ws.outside / "secret.txt"),
        "../outside/new.txt",
        "abs-link",
        "rel-link/secret.txt",
        "rel-link/new/dir/x.txt",
        "sib-link/x.txt",
    ]
    for path in attempts:
        out = write(ws, path, "pwned\n")
        assert out == ToolOutput(f"path escapes workspace: {path!r}", is_error=True)
    assert ws.outside_state() == before
    assert sorted(os.listdir(ws.path)) == ["abs-link", "hello.txt", "rel-link", "sib-link"]


@pytest.mark.parametrize(
    "path, message",
    [
        (".", "Is a directory: '.'"),
        ("hello.txt/x", "Not a directory: 'hello.txt/x'"),
        ("d/", "Is a directory: 'd/'"),
    ],
)
def test_os_errors_name_the_given_path_only(ws: AgentWorkspace, path: str, message: str) -> None:
    out = write(ws, path)
    assert out == ToolOutput(message, is_error=True)
    assert str(ws.path) not in out.content


def test_fifo_is_refused_without_blocking(ws: AgentWorkspace) -> None:
    os.mkfifo(ws.path / "pipe")
    assert write(ws, "pipe") == ToolOutput("not a regular file: 'pipe'", is_error=True)


@pytest.mark.parametrize(
    "args, problem",
    [
        ({"path": "a"}, "missing required field 'content'"),
        ({"path": "a", "content": None}, "field 'content' must be of type string"),
        ({"path": "", "content": ""}, "invalid path"),
        ({"path": "a", "content": "\ud800"}, "content is not encodable as UTF-8"),
    ],
)
def test_bad_input_is_an_error_result_and_writes_nothing(
    ws: AgentWorkspace, args: object, problem: str
) -> None:
    out = WriteTool(ws.root).execute(args)
    assert out.is_error and problem in out.content
    assert sorted(os.listdir(ws.path)) == ["hello.txt"]
