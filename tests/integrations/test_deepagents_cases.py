"""deepagents drop-in behaviours the original has: ``cwd`` changed after the first call is
honoured, an absolute symlink that points inside is followed, a root given through a symlink
takes that spelling, and a missing root is found empty and made by the first write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("deepagents.backends.filesystem")

from deepagents.backends.filesystem import FilesystemBackend as Original

from safefs.integrations.deepagents import FilesystemBackend as DropIn

KINDS = {"original": Original, "drop-in": DropIn}


def _content(result: object) -> object:
    data = getattr(result, "file_data", None)
    return data["content"] if data is not None else getattr(result, "error", result)


@pytest.mark.parametrize("kind", list(KINDS))
def test_cwd_changed_after_the_first_call_is_followed(tmp_path: Path, kind: str) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for d, text in ((first, "one"), (second, "two")):
        d.mkdir()
        (d / "f.txt").write_text(text)
    backend = KINDS[kind](root_dir=first, virtual_mode=True)
    assert "one" in str(_content(backend.read("/f.txt")))
    backend.cwd = second
    assert "two" in str(_content(backend.read("/f.txt")))


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_absolute_symlink_pointing_inside_is_followed(tmp_path: Path, kind: str) -> None:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "f.txt").write_text("inside")
    os.symlink(ws / "data", ws / "abs")
    backend = KINDS[kind](root_dir=ws, virtual_mode=True)
    assert "inside" in str(_content(backend.read("/abs/f.txt")))


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_root_given_through_a_symlink_takes_that_spelling(tmp_path: Path, kind: str) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "inside.txt").write_text("hi")
    os.symlink("real", tmp_path / "via")
    backend = KINDS[kind](root_dir=str(tmp_path / "via"), virtual_mode=False)
    assert _content(backend.read(str(tmp_path / "via" / "inside.txt"))) == "hi"
    assert _content(backend.read(str(tmp_path / "real" / "inside.txt"))) == "hi"


@pytest.mark.parametrize("virtual", [True, False])
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_missing_root_is_found_empty_and_made_by_the_first_write(
    tmp_path: Path, kind: str, virtual: bool
) -> None:
    ws = tmp_path / "ws"
    backend = KINDS[kind](root_dir=ws, virtual_mode=virtual)
    top, f = ("/", "/a.txt") if virtual else (str(ws), str(ws / "a.txt"))
    answers = [
        backend.ls(top).error,
        backend.read(f).error,
        backend.edit(f, "x", "y").error,
        backend.delete(f).error,
        backend.glob("*").matches,
        backend.grep("x").matches,
        backend.download_files([f])[0].error,
    ]
    assert answers == [
        f"Path '{top}': path_not_found",
        f"File '{f}' not found",
        f"Error: File '{f}' not found",
        f"Error: '{f}' not found",
        [],
        [],
        "file_not_found",
    ]
    assert not ws.exists()
    assert backend.write(f, "hi\n").error is None
    assert (ws / "a.txt").read_text() == "hi\n"
    assert _content(backend.read(f)) == "hi\n"
