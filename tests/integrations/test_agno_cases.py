"""agno drop-in behaviours the original has: ``base_dir`` reassigned after construction is
honoured on every call, an absolute symlink that points inside is followed, and a missing
``base_dir`` is found empty and made by the first ``save_file``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("agno.tools.file")

from agno.tools.file import FileTools as Original

from safefs.integrations.agno import FileTools as DropIn

KINDS = {"original": Original, "drop-in": DropIn}


@pytest.mark.parametrize("kind", list(KINDS))
def test_base_dir_reassigned_after_construction_is_followed(tmp_path: Path, kind: str) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for d, text in ((first, "one"), (second, "two")):
        d.mkdir()
        (d / "f.txt").write_text(text)
    tools = KINDS[kind](base_dir=first, all=True)
    assert tools.read_file(file_name="f.txt") == "one"
    tools.base_dir = second
    assert tools.read_file(file_name="f.txt") == "two"
    tools.save_file(contents="x", file_name="new.txt")
    assert (second / "new.txt").read_text() == "x" and not (first / "new.txt").exists()


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_absolute_symlink_pointing_inside_is_followed(tmp_path: Path, kind: str) -> None:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "f.txt").write_text("inside")
    os.symlink(ws / "data", ws / "abs")
    tools = KINDS[kind](base_dir=ws, all=True)
    assert tools.read_file(file_name="abs/f.txt") == "inside"


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_missing_base_dir_is_found_empty_and_made_by_the_first_save(tmp_path: Path, kind: str) -> None:
    ws = tmp_path / "ws"
    tools = KINDS[kind](base_dir=ws, all=True)
    assert tools.read_file(file_name="a.txt").startswith("Error reading file: [Errno 2]")
    assert tools.list_files().startswith("Error reading files: [Errno 2]")
    assert '"matches_found": 0' in tools.search_files(pattern="*")
    assert tools.search_content(query="x", directory="d") == "Error: 'd' is not a directory"
    assert tools.save_file(contents="x", file_name="../planted") == "Error saving file"
    assert not ws.exists() and not (tmp_path / "planted").exists()
    assert tools.save_file(contents="hi\n", file_name="d/a.txt") == "d/a.txt"
    assert (ws / "d" / "a.txt").read_text() == "hi\n"
    assert tools.read_file(file_name="d/a.txt") == "hi\n"
    if kind == "drop-in":  # the host path of base_dir is never named
        fresh = KINDS[kind](base_dir=tmp_path / "other", all=True)
        for answer in (
            fresh.read_file(file_name="a.txt"),
            fresh.list_files(),
            fresh.delete_file(file_name="a"),
        ):
            assert str(tmp_path) not in answer, answer


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_base_dir_given_through_a_symlink_takes_that_spelling(tmp_path: Path, kind: str) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "inside.txt").write_text("hi")
    os.symlink("real", tmp_path / "via")
    tools = KINDS[kind](base_dir=tmp_path / "via", all=True)
    assert tools.read_file(file_name=str(tmp_path / "via" / "inside.txt")) == "hi"
    assert tools.read_file(file_name=str(tmp_path / "real" / "inside.txt")) == "hi"
