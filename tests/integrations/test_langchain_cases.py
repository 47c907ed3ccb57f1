"""LangChain drop-in behaviours the original has, each on a tree of its own: a symlink copied or
moved as the file it names, ``root_dir`` changed after the first call, a missing ``root_dir``, an
absolute symlink that points inside, and ``append=True`` confined like every other write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("langchain_community.agent_toolkits")

from langchain_community.agent_toolkits import FileManagementToolkit as Original

from safefs.integrations import langchain as drop_in
from safefs.integrations.langchain import FileManagementToolkit as DropIn

KITS = {"original": Original, "drop-in": DropIn}


def _tools(kit: type, root: Path | str | None) -> dict[str, object]:
    return {t.name: t for t in kit(root_dir=None if root is None else str(root)).get_tools()}


def _both(tmp_path: Path, build: object) -> dict[str, tuple[Path, dict[str, object]]]:
    out = {}
    for name, kit in KITS.items():
        ws = tmp_path / name / "ws"
        ws.mkdir(parents=True)
        build(ws)  # type: ignore[operator]
        out[name] = (ws, _tools(kit, ws))
    return out


def _run(tools: dict[str, object], name: str, **args: object) -> str:
    return str(tools[name].run(args))  # type: ignore[attr-defined]


def _notes(ws: Path) -> None:
    (ws / "notes.txt").write_text("v1\n")
    (ws / "sub").mkdir()
    os.symlink("notes.txt", ws / "link")


@pytest.mark.parametrize("kind", list(KITS))
def test_copy_of_a_symlink_copies_the_bytes_it_names(tmp_path: Path, kind: str) -> None:
    (ws, tools) = _both(tmp_path, _notes)[kind]
    assert _run(tools, "copy_file", source_path="link", destination_path="backup.txt").startswith(
        "File copied"
    )
    assert _run(tools, "copy_file", source_path="link", destination_path="sub/deeper").startswith(
        "File copied"
    )
    _run(tools, "write_file", file_path="notes.txt", text="v2\n")
    assert not (ws / "backup.txt").is_symlink() and (ws / "backup.txt").read_text() == "v1\n"
    assert (ws / "sub" / "deeper").read_text() == "v1\n"


@pytest.mark.parametrize("kind", list(KITS))
def test_move_of_a_symlink_moves_the_file_it_names(tmp_path: Path, kind: str) -> None:
    (ws, tools) = _both(tmp_path, _notes)[kind]
    assert _run(tools, "move_file", source_path="link", destination_path="sub/moved").startswith("File moved")
    assert not (ws / "sub" / "moved").is_symlink() and (ws / "sub" / "moved").read_text() == "v1\n"
    assert not (ws / "notes.txt").exists() and (ws / "link").is_symlink()


@pytest.mark.parametrize("kind", list(KITS))
def test_delete_of_a_symlink_deletes_the_file_it_names(tmp_path: Path, kind: str) -> None:
    (ws, tools) = _both(tmp_path, _notes)[kind]
    assert _run(tools, "file_delete", file_path="link").startswith("File deleted")
    assert not (ws / "notes.txt").exists() and (ws / "link").is_symlink()


@pytest.mark.parametrize("kind", list(KITS))
def test_root_dir_changed_after_the_first_call_is_followed(tmp_path: Path, kind: str) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for d, text in ((first, "one"), (second, "two")):
        d.mkdir()
        (d / "f.txt").write_text(text)
    tool = KITS[kind](root_dir=str(first)).get_tools()
    read = next(t for t in tool if t.name == "read_file")
    write = next(t for t in tool if t.name == "write_file")
    assert read.run({"file_path": "f.txt"}) == "one"
    read.root_dir = write.root_dir = str(second)
    assert read.run({"file_path": "f.txt"}) == "two"
    write.run({"file_path": "new.txt", "text": "x"})
    assert (second / "new.txt").read_text() == "x" and not (first / "new.txt").exists()


@pytest.mark.parametrize("kind", list(KITS))
def test_a_missing_root_dir_is_made_by_the_first_write(tmp_path: Path, kind: str) -> None:
    ws = tmp_path / kind / "later"
    tools = _tools(KITS[kind], ws)
    assert _run(tools, "read_file", file_path="a.txt") == "Error: no such file or directory: a.txt"
    assert _run(tools, "file_search", pattern="*").startswith("No files found")
    assert _run(tools, "write_file", file_path="a.txt", text="made\n").startswith("File written")
    assert (ws / "a.txt").read_text() == "made\n"
    assert _run(tools, "read_file", file_path="a.txt") == "made\n"


def test_a_missing_root_dir_is_never_named_in_an_answer(tmp_path: Path) -> None:
    ws = tmp_path / "nowhere"
    tools = _tools(DropIn, ws)
    calls = [
        ("read_file", {"file_path": "a"}),
        ("list_directory", {"dir_path": "."}),
        ("copy_file", {"source_path": "a", "destination_path": "b"}),
        ("move_file", {"source_path": "a", "destination_path": "b"}),
        ("file_delete", {"file_path": "a"}),
        ("file_search", {"pattern": "*"}),
        ("read_file", {"file_path": "../x"}),
    ]
    for name, args in calls:
        text = _run(tools, name, **args)
        assert str(tmp_path) not in text, (name, text)
        assert text.startswith(("Error", "No files")), (name, text)
    assert not ws.exists()


@pytest.mark.parametrize("kind", list(KITS))
def test_an_absolute_symlink_pointing_inside_is_followed(tmp_path: Path, kind: str) -> None:
    def build(ws: Path) -> None:
        (ws / "data").mkdir()
        (ws / "data" / "f.txt").write_text("inside\n")
        os.symlink(ws / "data", ws / "abs")

    (ws, tools) = _both(tmp_path, build)[kind]
    assert _run(tools, "read_file", file_path="abs/f.txt") == "inside\n"
    assert _run(tools, "list_directory", dir_path="abs") == "f.txt"
    assert _run(tools, "write_file", file_path="abs/g.txt", text="made").startswith("File written")
    assert (ws / "data" / "g.txt").read_text() == "made"


def test_append_never_reaches_outside_without_root_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``append=True`` goes through the root like every write: with ``root_dir=None`` the current
    directory is the root, and an absolute path outside it is refused (the original appends)."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "log").write_text("kept\n")
    monkeypatch.chdir(work)
    tool = drop_in.WriteFileTool()
    text = tool.run({"file_path": str(outside / "log"), "text": "appended\n", "append": True})
    assert text.startswith("Error: Access denied to file_path"), text
    assert (outside / "log").read_text() == "kept\n"
    assert tool.run({"file_path": "inside.txt", "text": "a\n", "append": True}).startswith("File written")
    assert tool.run({"file_path": "inside.txt", "text": "b\n", "append": True}).startswith("File written")
    assert (work / "inside.txt").read_text() == "a\nb\n"


def test_append_through_a_symlink_leading_out_is_refused(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "log").write_text("kept\n")
    os.symlink("../outside/log", ws / "log")
    tool = drop_in.WriteFileTool(root_dir=str(ws))
    text = tool.run({"file_path": "log", "text": "x", "append": True})
    assert text.startswith("Error: Access denied to file_path"), text
    assert (outside / "log").read_text() == "kept\n"


def _beside_a_dangling_link(ws: Path) -> None:
    (ws / "a").write_text("moved\n")
    (ws / "d").mkdir()
    os.symlink("nothing", ws / "d" / "a")


@pytest.mark.parametrize("kind", list(KITS))
def test_move_into_a_directory_replaces_a_dangling_link_of_that_name(tmp_path: Path, kind: str) -> None:
    """shutil.move asks os.path.exists, which follows: a dangling link is no obstacle."""
    (ws, tools) = _both(tmp_path, _beside_a_dangling_link)[kind]
    assert _run(tools, "move_file", source_path="a", destination_path="d") == (
        "File moved successfully from a to d."
    )
    assert not (ws / "d" / "a").is_symlink() and (ws / "d" / "a").read_text() == "moved\n"


def test_copy_into_a_directory_through_its_link_leading_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a").write_text("secret\n")

    def build(ws: Path) -> None:
        (ws / "a").write_text("payload\n")
        (ws / "e").mkdir()
        os.symlink(outside / "a", ws / "e" / "a")

    (_ws, tools) = _both(tmp_path, build)["drop-in"]
    answer = _run(tools, "copy_file", source_path="a", destination_path="e")
    assert answer.startswith("Error: Access denied to destination_path: e."), answer
    assert (outside / "a").read_text() == "secret\n"


def test_a_refusal_names_the_destination_when_source_and_destination_are_spelled_alike(
    tmp_path: Path,
) -> None:
    """``copy_file("d", "d")`` with ``d/d`` a link leading out: the destination's entry leads
    out, and the refusal names ``destination_path`` though ``source_path`` has the same text."""
    outside = tmp_path / "outside"
    outside.mkdir()

    def build(ws: Path) -> None:
        (ws / "d").mkdir()
        os.symlink(outside, ws / "d" / "d")

    (_ws, tools) = _both(tmp_path, build)["drop-in"]
    answer = _run(tools, "copy_file", source_path="d", destination_path="d")
    assert answer.startswith("Error: Access denied to destination_path: d."), answer
    assert not list(outside.iterdir())
