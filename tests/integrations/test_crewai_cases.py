"""crewAI drop-in behaviours the original has: ``DirectoryReadTool`` lists in ``os.walk``'s order
(a directory's own files before its subdirectories'), and an absolute symlink that points inside
is followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("crewai_tools")

from crewai_tools import DirectoryReadTool as OriginalDirectory
from crewai_tools import FileReadTool as OriginalRead

from safefs.integrations.crewai import DirectoryReadTool, FileReadTool


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
