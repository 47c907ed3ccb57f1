"""agno drop-in behaviours the original has: ``base_dir`` reassigned after construction is
honoured on every call, and an absolute symlink that points inside is followed."""

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
