"""The arena for the MCP tests: ``base/ws`` (served), ``base/ws_evil`` (a sibling whose name
starts with the served one) and ``base/outside``, each holding a secret."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.agent.conftest import AgentWorkspace

SECRET = "outside secret: never to be read\n"
SIBLING_SECRET = "sibling secret: never to be read\n"


@dataclass
class Arena:
    base: Path
    ws: Path
    sibling: Path
    outside: Path

    def outside_state(self) -> dict[str, bytes]:
        """Every name and byte outside the workspace, to compare before and after."""
        return AgentWorkspace.outside_state(self)  # type: ignore[arg-type]  # same two fields


def make_arena(base: Path) -> Arena:
    ws, sibling, outside = base / "ws", base / "ws_evil", base / "outside"
    for d in (ws, sibling, outside):
        d.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (sibling / "secret.txt").write_text(SIBLING_SECRET)
    (ws / "hello.txt").write_text("hello from inside\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "lines.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    os.symlink(outside, ws / "link_out")  # a directory link out (absolute target)
    os.symlink("../outside/secret.txt", ws / "link_file")  # a file link out (relative)
    os.symlink("../ws_evil", ws / "link_sibling")  # a link to the same-prefix sibling
    os.symlink("hello.txt", ws / "link_in")  # a link that stays inside
    return Arena(base, ws, sibling, outside)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    yield make_arena(tmp_path)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The directory a real client's snippet serves: one file, ``a.txt``, holding ``hello``."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("hello\n")
    return project
