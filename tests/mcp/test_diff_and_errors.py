"""What crosses from the workspace to the MCP layer is data: an edit's hunks, and the paths an
error names. The hunks say what the workspace's diff text says, and an error shows each path in
the client's spelling at the places it names a path, and nowhere else."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from safefs.mcp.node_format import edit_diff
from safefs.workspace.edits import Hunk, unified_diff
from safefs.workspace.errors import PATH, WorkspaceError, quoted

lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "", "e", "\n"]), max_size=30).map("".join)


def as_difflib_writes(hunk: Hunk) -> str:
    """A hunk as difflib heads it: a count of one left out."""
    old = "" if hunk.old_count == 1 else f",{hunk.old_count}"
    new = "" if hunk.new_count == 1 else f",{hunk.new_count}"
    return f"@@ -{hunk.old_start}{old} +{hunk.new_start}{new} @@\n" + "".join(hunk.lines)


@given(old=lines, new=lines)
def test_the_hunks_are_the_diff_text(old: str, new: str) -> None:
    hunks: list[Hunk] = []
    text = unified_diff(old, new, "f", hunks=hunks)
    body = "".join(as_difflib_writes(h) for h in hunks)
    assert text == ("--- f\toriginal\n+++ f\tmodified\n" + body if hunks else "")
    for hunk in hunks:
        assert (
            sum(not line.startswith("+") and not line.startswith("\\") for line in hunk.lines)
            == hunk.old_count
        )
        assert (
            sum(not line.startswith("-") and not line.startswith("\\") for line in hunk.lines)
            == hunk.new_count
        )


@given(old=lines, new=lines)
def test_the_mcp_diff_writes_every_count_and_names_the_path(old: str, new: str) -> None:
    hunks: list[Hunk] = []
    unified_diff(old, new, "f", hunks=hunks)
    shown = edit_diff("/abs/f", hunks)
    assert shown.startswith(
        "```diff\nIndex: /abs/f\n" + "=" * 67 + "\n--- /abs/f\toriginal\n+++ /abs/f\tmodified\n"
    )
    headers = re.findall(r"^@@ .* @@$", shown, re.MULTILINE)
    assert headers == [f"@@ -{h.old_start},{h.old_count} +{h.new_start},{h.new_count} @@" for h in hunks]


paths = st.text(st.characters(codec="utf-8", exclude_characters="\0"), min_size=1, max_size=8)


@given(before=st.text(max_size=10).filter(lambda t: PATH not in t), path=paths, other=paths)
def test_an_error_shows_the_clients_spelling_only_where_it_names_the_path(
    before: str, path: str, other: str
) -> None:
    # The message repeats the path's text outside the slot: only the slot changes.
    error = WorkspaceError.naming(f"{before}{path!r}: {PATH}", path)
    assert str(error) == f"{before}{path!r}: {path!r}"
    assert error.spelled(lambda p: None) == str(error)
    assert error.spelled({path: other}.get) == f"{before}{path!r}: {quoted(other)}"


def test_an_error_about_two_paths_spells_each() -> None:
    error = WorkspaceError.naming(f"No such file or directory: {PATH} -> {PATH}", "a", "b/c")
    assert str(error) == "No such file or directory: 'a' -> 'b/c'"
    assert error.spelled({"a": "/ws/a"}.get) == "No such file or directory: '/ws/a' -> 'b/c'"
    assert error.paths == ("a", "b/c")
