"""pydantic-ai drop-in behaviours the original has, each on a tree of its own: a listing with a
link the root cannot follow stays usable (pydantic-ai-harness stats and checks what it lists),
an absolute symlink that points inside is followed, and ``working_dir`` spelled with ``..``
after a symlink means what the kernel makes of it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai.workspaces")

from pydantic_ai.workspaces import LocalWorkspaceBackend as Original

from safefs.integrations.pydantic_ai import LocalWorkspaceBackend as DropIn

KINDS = {"original": Original, "drop-in": DropIn}


def _tree(base: Path) -> Path:
    ws, outside = base / "ws", base / "outside"
    (ws / "data").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_text("secret\n")
    (ws / "data" / "f.txt").write_text("inside\n")
    os.symlink(ws / "data", ws / "abs")  # absolute, points inside
    os.symlink(ws / "data" / "f.txt", ws / "abs-file")
    os.symlink("../outside/secret", ws / "out")  # leads out
    os.symlink("nothing", ws / "dangling")
    return ws


def _go(coro: Any) -> Any:
    return asyncio.run(coro)


async def _harness_listing(backend: Any, directory: str) -> list[tuple[str, bool]]:
    """What pydantic-ai-harness's ``list_directory`` and ``find_files`` do with a listing: an
    entry without a size is stat-ed (FileNotFoundError: left out) and checked with ``exists``."""
    shown = []
    for entry in await backend.list_dir(directory):
        if not entry.is_dir and entry.size is None:
            try:
                await backend.stat(entry.path)
            except FileNotFoundError:
                continue
            assert await backend.exists(entry.path)
        shown.append((entry.name, entry.is_dir))
    return shown


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_listing_with_links_the_root_cannot_follow_is_usable(tmp_path: Path, kind: str) -> None:
    ws = _tree(tmp_path)
    backend = KINDS[kind](ws)
    shown = _go(_harness_listing(backend, str(ws)))
    assert shown == [("abs", True), ("abs-file", False), ("data", True), ("out", False)]
    assert _go(backend.exists(str(ws / "out")))
    assert not _go(backend.exists(str(ws / "dangling")))


def test_a_link_leading_out_is_described_never_followed(tmp_path: Path) -> None:
    ws = _tree(tmp_path)
    backend = DropIn(ws)
    entry = _go(backend.stat(str(ws / "out")))
    assert (entry.name, entry.is_dir, entry.size) == ("out", False, None)
    with pytest.raises(PermissionError):
        _go(backend.read_bytes(str(ws / "out")))
    with pytest.raises(PermissionError):
        _go(backend.stat(str(tmp_path / "outside" / "secret")))
    with pytest.raises(PermissionError):
        _go(backend.exists(str(ws / "out" / "x")))


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_absolute_symlink_pointing_inside_is_followed(tmp_path: Path, kind: str) -> None:
    ws = _tree(tmp_path)
    backend = KINDS[kind](ws)
    assert _go(backend.read_bytes(str(ws / "abs" / "f.txt"))) == b"inside\n"
    assert _go(backend.read_bytes(str(ws / "abs-file"))) == b"inside\n"
    entry = _go(backend.stat(str(ws / "abs-file")))
    assert (entry.is_dir, entry.size) == (False, len(b"inside\n"))
    assert [e.name for e in _go(backend.list_dir(str(ws / "abs")))] == ["f.txt"]
    _go(backend.write_bytes(str(ws / "abs" / "g.txt"), b"made"))
    assert (ws / "data" / "g.txt").read_bytes() == b"made"


@pytest.mark.parametrize("kind", list(KINDS))
def test_working_dir_with_dotdot_after_a_symlink_is_physical(tmp_path: Path, kind: str) -> None:
    (tmp_path / "releases" / "v3").mkdir(parents=True)
    (tmp_path / "releases" / "data").mkdir()
    (tmp_path / "releases" / "data" / "which").write_text("releases/data\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "which").write_text("lexical data\n")
    os.symlink("releases/v3", tmp_path / "current")
    backend = KINDS[kind](f"{tmp_path}/current/../data")
    working = _go(backend.working_dir())
    assert os.path.realpath(working) == str((tmp_path / "releases" / "data").resolve())
    assert _go(backend.read_bytes(os.path.join(working, "which"))) == b"releases/data\n"
    assert [e.name for e in _go(backend.list_dir(working))] == ["which"]


LOOPS = ["a", "b", "b/z", "x", "q/r", "a/../data/f.txt"]


@pytest.mark.parametrize("spelled", LOOPS)
def test_realpath_of_looping_links_is_spelled_as_the_original_spells_it(tmp_path: Path, spelled: str) -> None:
    """``os.path.realpath`` stops at a link met twice and appends the rest; so does the drop-in,
    beneath the root (a loop is not an error for ``realpath``)."""
    answers = []
    for kind, backend_type in KINDS.items():
        ws = _tree(tmp_path / kind)
        os.symlink("a", ws / "a")  # a -> a
        os.symlink("c", ws / "b")  # b -> c -> b
        os.symlink("b", ws / "c")
        os.symlink("data/../a", ws / "x")
        (ws / "q").mkdir()
        os.symlink("../x", ws / "q" / "r")
        answers.append(_go(backend_type(ws).realpath(str(ws / spelled))).replace(str(ws), "<ws>"))
    assert answers[0].startswith("<ws>"), answers
    assert answers[1] == answers[0]


def test_realpath_of_a_loop_climbing_out_is_refused(tmp_path: Path) -> None:
    ws = _tree(tmp_path)
    os.symlink("a", ws / "a")
    with pytest.raises(PermissionError):
        _go(DropIn(ws).realpath(str(ws / "a" / ".." / ".." / "outside" / "secret")))
