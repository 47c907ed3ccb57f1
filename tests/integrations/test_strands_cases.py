"""The strands drop-ins case by case: the tools the model sees, the path tricks that let each
original out (refused here in the tool's own error shape, nothing outside read or changed), the
consent prompt as the original asks it, and each named difference."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands_tools.file_read")

import strands_tools.editor as original_editor_module
import strands_tools.file_write as original_write_module
from strands_tools import editor as o_editor
from strands_tools import file_read as o_read
from strands_tools import file_write as o_write

import safefs.integrations.strands.editor as drop_in_editor_module
import safefs.integrations.strands.file_write as drop_in_write_module
from safefs.integrations.strands import ROOT_VARIABLE, close
from safefs.integrations.strands import editor as d_editor
from safefs.integrations.strands import file_read as d_read
from safefs.integrations.strands import file_write as d_write
from tests.integrations.support import documented

SECRET = "outside the workdir\n"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``<tmp>/work`` (the current directory) beside ``<tmp>/secret.txt`` and ``<tmp>/outdir``."""
    work = tmp_path / "work"
    (work / "d").mkdir(parents=True)
    (work / "a.txt").write_text("alpha\nbeta\n")
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "s.txt").write_text(SECRET)
    os.symlink("../outdir", work / "out")
    os.symlink(tmp_path / "secret.txt", work / "abs-out")
    os.symlink(work / "a.txt", work / "abs-in")
    monkeypatch.chdir(work)
    monkeypatch.setenv("BYPASS_TOOL_CONSENT", "true")
    monkeypatch.delenv(ROOT_VARIABLE, raising=False)
    yield work
    close()


def _read(module: Any, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = module.file_read({"toolUseId": "t", "input": args})
    return result


def _write(module: Any, path: str, content: str) -> dict[str, Any]:
    result: dict[str, Any] = module.file_write(
        {"toolUseId": "t", "input": {"path": path, "content": content}}
    )
    return result


def _text(result: dict[str, Any]) -> str:
    return "\n".join(item.get("text", "") for item in result["content"])


def test_the_model_sees_the_same_tools() -> None:
    assert d_read.TOOL_SPEC == o_read.TOOL_SPEC
    assert d_write.TOOL_SPEC == o_write.TOOL_SPEC
    assert d_editor.editor.tool_spec == o_editor.editor.tool_spec
    assert d_editor.editor.tool_name == "editor"


# Path tricks: each one lets the original out (checked on the original, which reads only inside
# this test's temporary tree), and each is refused by the drop-in.
READ_TRICKS = [
    "../secret.txt",
    "{tmp}/secret.txt",
    "out/s.txt",
    "abs-out",
    "d/../../secret.txt",
    "../outdir/*.txt",
    "out",
    "a.txt,../secret.txt",
]


@pytest.mark.parametrize("trick", READ_TRICKS)
def test_a_read_trick_lets_the_original_out_and_not_the_drop_in(work: Path, trick: str) -> None:
    path = trick.format(tmp=work.parent)
    original, drop_in = _read(o_read, path=path, mode="view"), _read(d_read, path=path, mode="view")
    assert SECRET in _text(original), "the original was expected to read outside"
    assert SECRET not in _text(drop_in)
    texts = _text(drop_in)
    assert (
        drop_in["status"] == "error"
        or "path escapes workspace" in texts
        or texts.startswith("Content of a.txt")
    )


WRITE_TRICKS = ["../planted.txt", "{tmp}/planted.txt", "out/planted.txt", "d/../../planted.txt"]


@pytest.mark.parametrize("trick", WRITE_TRICKS)
def test_a_write_trick_is_refused(work: Path, trick: str) -> None:
    path = trick.format(tmp=work.parent)
    result = _write(d_write, path, "x")
    assert result["status"] == "error" and "path escapes workspace" in _text(result)
    edit = d_editor.editor(command="create", path=path, file_text="x")
    assert edit["status"] == "error" and "path escapes workspace" in _text(edit)
    assert (
        not (work.parent / "planted.txt").exists() and not (work.parent / "outdir" / "planted.txt").exists()
    )


def test_a_path_under_home_is_refused_unless_the_root_holds_it(work: Path) -> None:
    result = d_editor.editor(command="view", path="~/.bashrc")  # never asked of the original
    assert result["status"] == "error" and "path escapes workspace" in _text(result)


def test_an_absolute_link_pointing_inside_is_followed(work: Path) -> None:
    assert _read(d_read, path="abs-in", mode="view") == _read(o_read, path="abs-in", mode="view")


def test_an_absolute_path_inside_and_the_root_variable(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(work / "a.txt")
    assert _read(d_read, path=path, mode="lines", start_line=1) == _read(
        o_read, path=path, mode="lines", start_line=1
    )
    monkeypatch.chdir(work.parent)
    monkeypatch.setenv(ROOT_VARIABLE, str(work))
    assert _text(_read(d_read, path="a.txt", mode="view")) == "Content of a.txt:\nalpha\nbeta\n"
    assert "path escapes workspace" in _text(d_editor.editor(command="view", path="../secret.txt"))


@pytest.mark.parametrize("answers", [["n", "not now"], ["later"]])
def test_declined_consent_is_answered_as_the_original(
    work: Path, monkeypatch: pytest.MonkeyPatch, answers: list[str]
) -> None:
    monkeypatch.delenv("BYPASS_TOOL_CONSENT")
    results = []
    for write_module, editor_module, writer, edit in (
        (original_write_module, original_editor_module, o_write, o_editor),
        (drop_in_write_module, drop_in_editor_module, d_write, d_editor),
    ):
        for module in (write_module, editor_module):
            replies = iter(answers * 2)
            monkeypatch.setattr(module, "get_user_input", lambda prompt, replies=replies: next(replies))
        results.append(
            (_write(writer, "new.txt", "x"), edit.editor(command="create", path="d/new.txt", file_text="x"))
        )
    assert results[1] == results[0]
    assert results[0][0]["status"] == "error" and "cancelled by the user" in _text(results[0][0])
    assert not (work / "new.txt").exists() and not (work / "d" / "new.txt").exists()


def test_given_consent_writes_as_the_original(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BYPASS_TOOL_CONSENT")
    monkeypatch.setattr(drop_in_write_module, "get_user_input", lambda prompt: "y")
    monkeypatch.setattr(drop_in_editor_module, "get_user_input", lambda prompt: "y")
    assert _write(d_write, "d/w.txt", "written")["status"] == "success"
    assert (
        d_editor.editor(command="str_replace", path="d/w.txt", old_str="written", new_str="edited")["status"]
        == "success"
    )
    assert (work / "d" / "w.txt").read_text() == "edited"
    assert (work / "d" / "w.txt.bak").read_text() == "written"


NO_GIT = "**`time_machine` with `git_history` reads no git history**"


def test_time_machine_reads_no_git_history(work: Path) -> None:
    assert documented(NO_GIT)
    result = _read(
        d_read, path="d/../a.txt", mode="time_machine", git_history=True
    )  # never asked of the original
    assert "git history is not read" in _text(result)
    result = _read(d_read, path="a.txt", mode="time_machine", git_history=False)
    assert "Size: 11 bytes" in _text(result)


def test_the_content_cache_is_kept_per_working_directory(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert documented("**The editor's content cache is kept per working directory**")
    other = work.parent / "other"
    other.mkdir()
    (other / "a.txt").write_text("other\n")
    assert "alpha" in _text(d_editor.editor(command="view", path="a.txt"))
    monkeypatch.chdir(other)
    assert "other" in _text(d_editor.editor(command="view", path="a.txt"))


def test_an_absolute_path_through_a_link_to_the_current_directory(work: Path) -> None:
    assert documented("**An absolute path spelled through a symlink to the current directory is refused**")
    via = work.parent / "via"
    os.symlink("work", via)
    os.chdir(via)  # getcwd() names work/, as the kernel does
    assert "path escapes workspace" in _text(d_editor.editor(command="view", path=str(via / "a.txt")))
    assert "alpha" in _text(d_editor.editor(command="view", path="a.txt"))


def test_a_model_pattern_is_matched_in_linear_time(work: Path) -> None:
    """A pattern that makes Python's ``re`` backtrack for ever, and a fuzzy search of many words
    on a long line, answer at once; the edit a plain pattern makes is the original's."""
    import time

    assert documented("**`pattern_replace` and `find_line`'s fuzzy search match with RE2**")
    (work / "long.txt").write_text("a" * 50_000 + "!\n")
    start = time.monotonic()
    result = d_editor.editor(command="pattern_replace", path="long.txt", pattern="(a+)+$", new_str="x")
    assert "not found" in _text(result), result
    words = " ".join(["a"] * 12 + ["b"])
    result = d_editor.editor(command="find_line", path="long.txt", search_text=words, fuzzy=True)
    assert "Could not find" in _text(result), result
    assert time.monotonic() - start < 5.0
    result = d_editor.editor(command="pattern_replace", path="a.txt", pattern=r"(\w)eta", new_str=r"\1ETA")
    assert (work / "a.txt").read_text() == "alpha\nbETA\n"
    result = d_editor.editor(command="pattern_replace", path="a.txt", pattern=r"(a)\1", new_str="x")
    assert "Invalid regex pattern" in _text(result) and (work / "a.txt").read_text() == "alpha\nbETA\n"


@pytest.mark.slow  # the budget of 200,000 entries is spent: several seconds
def test_a_glob_through_links_leading_back_up_ends(work: Path) -> None:
    """Two links back up in one directory make ``**`` visit 2**40 paths: a missing name (looked
    for under ``**``) is answered as missing once the budget is spent, and a found one lists
    what it found by then."""
    import time

    assert documented("**A glob or a directory read stops after 200,000 entries listed or 30 seconds**")
    os.symlink("..", work / "d" / "up1")
    os.symlink("..", work / "d" / "up2")
    start = time.monotonic()
    result = _read(d_read, path="missing.txt", mode="view")
    assert result["status"] == "error" and "No files found" in _text(result), result
    found = _read(d_read, path="**/a.txt", mode="find")
    assert found["status"] == "success" and "\na.txt\n" in _text(found) + "\n", found
    assert time.monotonic() - start < 2 * 30 + 10
