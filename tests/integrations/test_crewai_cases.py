"""crewAI drop-in behaviours the original has: ``DirectoryReadTool`` lists in ``os.walk``'s order
(a directory's own files before its subdirectories'), an absolute symlink that points inside is
followed, a missing ``base_dir`` is made by the first write (and named in no answer), and a
``base_dir`` given through a symlink accepts absolute paths spelled through that symlink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("crewai_tools")

from crewai_tools import DirectoryReadTool as OriginalDirectory
from crewai_tools import FileReadTool as OriginalRead
from crewai_tools import FileWriterTool as OriginalWrite

from safefs.integrations.crewai import DirectoryReadTool, FileReadTool, FileWriterTool


def _tree(ws: Path) -> None:
    (ws / "d" / "e").mkdir(parents=True)
    (ws / "d" / "e" / "deep.txt").write_text("deep")
    (ws / "d" / "mid.txt").write_text("mid")
    (ws / "top.txt").write_text("top")


@pytest.mark.parametrize("cls", [OriginalDirectory, DirectoryReadTool])
def test_listing_order_is_os_walks(tmp_path: Path, cls: type, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    _tree(ws)
    monkeypatch.chdir(ws)
    text = cls().run(directory=".")
    names = [line.rsplit("/", 1)[-1] for line in text.split("\n- ")[1:] if line] if "\n- " in text else []
    first = text.split("\n-", 1)[1].split("\n- ")[0].rsplit("/", 1)[-1]
    assert [first, *names] == ["top.txt", "mid.txt", "deep.txt"], text


@pytest.mark.parametrize("cls", [OriginalRead, FileReadTool])
def test_an_absolute_symlink_pointing_inside_is_followed(tmp_path: Path, cls: type) -> None:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "f.txt").write_text("inside")
    os.symlink(ws / "data", ws / "abs")
    assert cls(base_dir=str(ws)).run(file_path="abs/f.txt") == "inside"


@pytest.mark.parametrize("cls", [OriginalWrite, FileWriterTool])
def test_a_missing_base_dir_is_made_by_the_first_write(tmp_path: Path, cls: type) -> None:
    ws = tmp_path / "ws"
    tool = cls(base_dir=str(ws))
    assert tool.run(filename="a.txt", content="made\n") == "Content successfully written to a.txt"
    assert (ws / "a.txt").read_text() == "made\n"


@pytest.mark.parametrize("cls", [OriginalWrite, FileWriterTool])
def test_a_missing_base_dir_still_refuses_a_directory_leading_out(tmp_path: Path, cls: type) -> None:
    ws = tmp_path / "ws"
    text = cls(base_dir=str(ws)).run(filename="x", content="x", directory="../out")
    assert text.startswith("Error: Invalid directory: Path 'out' is outside the allowed directory."), text
    assert str(tmp_path) not in text
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.parametrize("cls", [OriginalRead, FileReadTool])
def test_a_missing_base_dir_reads_as_a_missing_file(tmp_path: Path, cls: type) -> None:
    ws = tmp_path / "ws"
    tool = cls(base_dir=str(ws))
    assert tool.run(file_path="a.txt") == "Error: File not found at path: a.txt"
    refused = tool.run(file_path="../secret")
    assert refused.startswith("Error: Invalid file path: Path 'secret' is outside the allowed directory.")
    assert not ws.exists()


@pytest.mark.parametrize("cls", [OriginalRead, FileReadTool])
def test_a_base_dir_given_through_a_symlink_takes_that_spelling(tmp_path: Path, cls: type) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "inside.txt").write_text("inside")
    os.symlink("ws", tmp_path / "via")
    tool = cls(base_dir=str(tmp_path / "via"))
    assert tool.run(file_path=str(tmp_path / "via" / "inside.txt")) == "inside"
    assert tool.run(file_path=str(tmp_path / "ws" / "inside.txt")) == "inside"


@pytest.mark.parametrize("cls", [OriginalWrite, FileWriterTool])
def test_a_write_into_a_directory_spelled_through_the_symlink(tmp_path: Path, cls: type) -> None:
    (tmp_path / "ws").mkdir()
    os.symlink("ws", tmp_path / "via")
    tool = cls(base_dir=str(tmp_path / "via"))
    text = tool.run(filename="w.txt", content="w", directory=str(tmp_path / "via" / "sub"))
    assert text == "Content successfully written to w.txt"
    assert (tmp_path / "ws" / "sub" / "w.txt").read_text() == "w"


@pytest.mark.parametrize("cls", [OriginalDirectory, DirectoryReadTool])
def test_a_listing_spelled_through_a_symlink_to_the_current_directory(
    tmp_path: Path, cls: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path / "ws")
    os.symlink("ws", tmp_path / "via")
    monkeypatch.chdir(tmp_path / "via")
    text = cls().run(directory=str(tmp_path / "via" / "d" / "e"))
    assert text == f"File paths: \n-{tmp_path / 'ws' / 'd' / 'e' / 'deep.txt'}"


@pytest.mark.parametrize("cls", [OriginalWrite, FileWriterTool])
def test_a_write_names_and_writes_the_file_its_filename_resolves_to(tmp_path: Path, cls: type) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a").write_text("a")
    os.symlink("a", ws / "link")
    os.symlink("made", ws / "dangling")
    tool = cls(base_dir=str(ws))
    assert (
        tool.run(filename="link", content="x") == "File a already exists and overwrite option was not passed."
    )
    assert tool.run(filename="dangling", content="d") == "Content successfully written to made"
    assert (ws / "made").read_text() == "d"
    assert tool.run(filename=str(ws / "abs.txt"), content="abs") == "Content successfully written to abs.txt"
    assert (ws / "abs.txt").read_text() == "abs"


@pytest.mark.parametrize("cls", [OriginalWrite, FileWriterTool])
def test_a_file_in_the_way_gets_makedirs_answer(tmp_path: Path, cls: type) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a").write_text("a")
    tool = cls(base_dir=str(ws))
    assert tool.run(filename="new.txt", content="x", directory="a") == (
        "Error: Cannot write to new.txt because a file already exists where a directory is needed."
    )
    assert tool.run(filename="d/new.txt", content="x", directory="a") == (
        "Error: Could not create the directory for d/new.txt. Not a directory"
    )
