"""The workspace operations themselves, called directly on a real directory held by a safefs.Root,
without the agent's tools or the MCP server in front of them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import safefs
from safefs.workspace import WorkspaceError
from safefs.workspace.edits import Edit, edit_file
from safefs.workspace.files import write_text
from safefs.workspace.listing import list_directory
from safefs.workspace.search import glob, grep
from safefs.workspace.text import read_lines, read_whole


@dataclass
class Tree:
    base: Path  # holds the workspace and, beside it, a directory outside it
    work: Path
    outside: Path
    root: safefs.Root


# The operations are written on the public Root API only, so they behave alike on each resolver.
@pytest.fixture(params=safefs.capabilities().resolvers)
def tree(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Tree]:
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 'outside'\n")
    (work / "src" / "app.py").write_text("def main():\n    return 41\n")
    (work / "src" / "notes.txt").write_text("return to sender\n")
    (work / "blob.bin").write_bytes(b"return\0binary")
    os.symlink(outside, work / "out")  # a way out, which no operation may take
    with safefs.Root(work, resolver=request.param) as root:
        yield Tree(tmp_path, work, outside, root)


def test_a_write_then_a_read_round_trips(tree: Tree) -> None:
    text = "first\nsecond ünïcode\nthird\n"
    assert write_text(tree.root, "new/dir/file.txt", text) == len(text.encode())
    assert (tree.work / "new" / "dir" / "file.txt").read_text() == text  # parents were made
    assert read_whole(tree.root, "new/dir/file.txt") == text
    second = read_lines(tree.root, "new/dir/file.txt", offset=2, limit=1)
    assert (second.text, second.first, second.last, second.total) == ("second ünïcode\n", 2, 2, 3)


def test_an_edit_of_a_unique_string_applies_and_reports_a_diff(tree: Tree) -> None:
    result = edit_file(tree.root, "src/app.py", [Edit("return 41", "return 42")])
    assert result.replacements == 1
    assert (tree.work / "src" / "app.py").read_text() == "def main():\n    return 42\n"
    diff = result.diff.splitlines()
    assert diff[0].startswith("--- src/app.py") and diff[1].startswith("+++ src/app.py")
    assert "-    return 41" in diff and "+    return 42" in diff


def test_an_ambiguous_edit_is_refused_and_the_file_is_unchanged(tree: Tree) -> None:
    target = tree.work / "twice.py"
    target.write_text("x = 1\ny = 2\nx = 1\n")
    before = target.read_bytes(), target.stat().st_ino
    with pytest.raises(WorkspaceError, match="occurs 2 times") as info:
        edit_file(tree.root, "twice.py", [Edit("x = 1", "x = 3")])
    assert "'twice.py'" in str(info.value)
    assert (target.read_bytes(), target.stat().st_ino) == before  # not even rewritten
    # Asked to replace every occurrence, the same edit applies.
    assert edit_file(tree.root, "twice.py", [Edit("x = 1", "x = 3", replace_all=True)]).replacements == 2
    assert target.read_text() == "x = 3\ny = 2\nx = 3\n"


def test_grep_finds_the_line_and_skips_what_it_must(tree: Tree) -> None:
    found = grep(tree.root, r"return \d+")
    assert found.lines == ["src/app.py:2:    return 41"]
    assert found.files_matched == 1
    assert found.binary_skipped == 1  # blob.bin matches "return" but is never searched
    # Nothing behind the symlink was read: the secret outside holds no "return", but neither
    # was it searched.
    assert found.files_searched == 2
    assert grep(tree.root, "RETURN", "src", ignore_case=True, file_glob="*.txt").lines == [
        "src/notes.txt:1:return to sender"
    ]


def test_glob_matches_and_lists_a_symlink_without_entering_it(tree: Tree) -> None:
    result = glob(tree.root, "**/*.py")
    assert [m.rel for m in result.matches] == ["src/app.py"]  # out/secret.py is not reached
    assert {m.rel: m.kind for m in glob(tree.root, "*").matches} == {
        "blob.bin": "file",
        "out": "link",
        "src": "dir",
    }


def test_a_link_to_a_directory_inside_is_listed_and_never_entered(tree: Tree) -> None:
    (tree.work / "inner").symlink_to("src")  # leads inside: following it would be allowed
    assert {m.rel: m.kind for m in glob(tree.root, "*").matches}["inner"] == "link"
    assert [m.rel for m in glob(tree.root, "**/*.py").matches] == ["src/app.py"]  # no inner/app.py
    listed = {item.entry.name: item for item in list_directory(tree.root, ".").items}
    assert listed["inner"].entry.kind == "link"


def test_listing_describes_a_link_out_without_following_it(tree: Tree) -> None:
    listed = {item.entry.name: item for item in list_directory(tree.root, ".").items}
    assert sorted(listed) == ["blob.bin", "out", "src"]
    assert listed["blob.bin"].size == len(b"return\0binary")
    assert listed["out"].link == "outside the workspace (not followed)"
    assert str(tree.outside) not in repr(listed)


@pytest.mark.parametrize("path", ["../outside/secret.py", "out/secret.py", "src/../../outside/secret.py"])
def test_an_escape_is_refused_naming_only_the_path_as_given(tree: Tree, path: str) -> None:
    for operation in (
        lambda: read_whole(tree.root, path),
        lambda: edit_file(tree.root, path, [Edit("outside", "inside")]),
        lambda: write_text(tree.root, path, "TOKEN = 'overwritten'\n"),
    ):
        with pytest.raises(WorkspaceError) as info:
            operation()
        assert str(info.value) == f"{safefs.ESCAPE_MESSAGE}: {path!r}"
        assert str(tree.base) not in str(info.value)
    assert (tree.outside / "secret.py").read_text() == "TOKEN = 'outside'\n"
