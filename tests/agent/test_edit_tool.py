"""edit: exact, unique text replaced atomically, with a diff; anything else refused with advice."""

from __future__ import annotations

import os

import pytest

from agent.tools import EditTool
from agent.tools.base import ToolOutput
from tests.agent.conftest import AgentWorkspace


def edit(ws: AgentWorkspace, **args: object) -> ToolOutput:
    return EditTool(ws.root).execute({"path": "code.py", **args})


@pytest.fixture
def code(ws: AgentWorkspace) -> AgentWorkspace:
    (ws.path / "code.py").write_text("a = 1\nb = 2\nb = 2\nc = 3\n")
    return ws


def test_unique_text_is_replaced_and_a_diff_returned(code: AgentWorkspace) -> None:
    out = edit(code, old_string="a = 1\n", new_string="a = 10\n")
    assert out == ToolOutput(
        "edited code.py: 1 replacement\n--- code.py\toriginal\n"
        "+++ code.py\tmodified\n@@ -1,4 +1,4 @@\n-a = 1\n+a = 10\n b = 2\n"
        " b = 2\n c = 3\n"
    )
    assert (code.path / "code.py").read_text() == "a = 10\nb = 2\nb = 2\nc = 3\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (
            {"old_string": "b = 2", "new_string": "x"},
            "edit of 'code.py': text occurs 2 times; include more surrounding lines so that it is "
            "unique, or replace every occurrence",
        ),
        (
            {"old_string": "zzz", "new_string": "x"},
            "edit of 'code.py': text not found; read the file and copy the exact text, including "
            "whitespace and line breaks",
        ),
        ({"old_string": "", "new_string": "x"}, "edit of 'code.py': the text to replace must not be empty"),
        (
            {"old_string": "a", "new_string": "x", "path": "missing.py"},
            "No such file or directory: 'missing.py'",
        ),
        (
            {"old_string": "a", "new_string": "x", "path": "../outside/secret.txt"},
            "path escapes workspace: '../outside/secret.txt'",
        ),
        ({"old_string": "a"}, "missing required field 'new_string'"),
    ],
)
def test_refusals_change_nothing(code: AgentWorkspace, args: dict[str, str], message: str) -> None:
    before = (code.path / "code.py").read_bytes()
    state = code.outside_state()
    out = edit(code, **args)
    assert out.is_error and message in out.content, out.content
    assert (code.path / "code.py").read_bytes() == before
    assert code.outside_state() == state


def test_replace_all(code: AgentWorkspace) -> None:
    out = edit(code, old_string="b = 2", new_string="b = 20", replace_all=True)
    assert out.content.startswith("edited code.py: 2 replacements\n")
    assert (code.path / "code.py").read_text() == "a = 1\nb = 20\nb = 20\nc = 3\n"


def test_crlf_files_accept_lf_text_and_keep_their_line_ends(ws: AgentWorkspace) -> None:
    (ws.path / "code.py").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert not edit(ws, old_string="one\ntwo\n", new_string="1\n2\n").is_error
    assert (ws.path / "code.py").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_non_utf8_files_are_refused(ws: AgentWorkspace) -> None:
    (ws.path / "code.py").write_bytes(b"caf\xe9\n")
    out = edit(ws, old_string="caf", new_string="tea")
    assert out.is_error and "not valid UTF-8: 'code.py' (at byte offset 3)" in out.content
    assert (ws.path / "code.py").read_bytes() == b"caf\xe9\n"


def test_an_edit_through_a_link_out_is_refused(each_backend: AgentWorkspace) -> None:
    ws = each_backend
    os.symlink(ws.outside / "secret.txt", ws.path / "code.py")
    out = edit(ws, old_string="outside", new_string="pwned")
    assert out == ToolOutput("path escapes workspace: 'code.py'", is_error=True)
    assert (ws.outside / "secret.txt").read_text() == "outside secret\n"


def test_the_file_is_replaced_atomically_keeping_its_mode(code: AgentWorkspace) -> None:
    os.chmod(code.path / "code.py", 0o640)
    with open(code.path / "code.py") as held:
        edit(code, old_string="c = 3", new_string="c = 30")
        assert held.read() == "a = 1\nb = 2\nb = 2\nc = 3\n"  # a reader keeps the old file whole
    assert os.stat(code.path / "code.py").st_mode & 0o777 == 0o640


def test_target_paths_for_a_policy(ws: AgentWorkspace) -> None:
    assert EditTool(ws.root).target_paths({"path": "a/b.py", "old_string": "x"}) == ["a/b.py"]


def test_a_huge_file_is_refused_without_loading_it(ws: AgentWorkspace) -> None:
    from safefs.workspace.edits import MAX_EDIT_BYTES

    with open(ws.path / "code.py", "wb") as f:
        f.truncate(MAX_EDIT_BYTES + 1)  # sparse
    out = edit(ws, old_string="a", new_string="b")
    assert out == ToolOutput("file too large to edit: 'code.py' is over 64 MiB", is_error=True)


def test_a_fifo_is_refused_at_once(ws: AgentWorkspace) -> None:
    os.mkfifo(ws.path / "code.py")
    assert edit(ws, old_string="a", new_string="b") == ToolOutput(
        "not a regular file: 'code.py'", is_error=True
    )
