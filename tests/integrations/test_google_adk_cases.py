"""Google ADK drop-in behaviours the original has: ``write_file`` writes where the path resolves
(through a dangling symlink, the file it names is made) and makes its directory as ``makedirs``
does (``File exists`` where a file stands in its place)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

pytest.importorskip("google.adk.environment")

from google.adk.environment import LocalEnvironment as Original

from safefs.integrations.google_adk import LocalEnvironment

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


async def _write(cls: type, ws: Path, path: str) -> str:
    env = cls(working_dir=ws)
    await env.initialize()
    try:
        await env.write_file(path, "new\n")
    except OSError as exc:
        return f"{type(exc).__name__} {exc.errno}"
    finally:
        await env.close()
    return "written"


@pytest.mark.parametrize("cls", [Original, LocalEnvironment])
def test_a_write_through_a_dangling_link_makes_the_file_it_names(tmp_path: Path, cls: type) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink("target", ws / "link")
    assert asyncio.run(_write(cls, ws, "link/x.txt")) == "written"
    assert (ws / "target" / "x.txt").read_text() == "new\n"
    assert os.readlink(ws / "link") == "target"


@pytest.mark.parametrize("cls", [Original, LocalEnvironment])
def test_a_file_where_the_directory_would_be_is_makedirs_answer(tmp_path: Path, cls: type) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "d").write_text("file")
    assert asyncio.run(_write(cls, ws, "d/a")) == "FileExistsError 17"
    assert asyncio.run(_write(cls, ws, "d/a/b")) == "NotADirectoryError 20"
    assert (ws / "d").read_text() == "file"
