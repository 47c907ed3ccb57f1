"""Fixtures for the agent tests: a workspace beside a similarly named sibling and an outside dir."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

import safefs
from safefs import capabilities
from tests.agent.cli_runs import API_KEY, inline_runner
from tests.agent.messages_api_server import LoopbackMessagesAPI, serve

__all__ = ["API_KEY"]


@dataclass
class AgentWorkspace:
    """``base/work`` (the root), ``base/work-other`` (a sibling sharing its prefix) and
    ``base/outside`` holding a secret; ``root`` is a safefs.Root on ``work``."""

    base: Path
    path: Path
    sibling: Path
    outside: Path
    root: safefs.Root

    def outside_state(self) -> dict[str, bytes]:
        state: dict[str, bytes] = {}
        for top in (self.sibling, self.outside):
            for dirpath, dirnames, filenames in os.walk(top):
                for name in dirnames + filenames:
                    p = Path(dirpath, name)
                    state[str(p)] = b"<dir>" if p.is_dir() else p.read_bytes()
        return state


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[AgentWorkspace]:
    work = tmp_path / "work"
    sibling = tmp_path / "work-other"
    outside = tmp_path / "outside"
    for d in (work, sibling, outside):
        d.mkdir()
    (sibling / "secret.txt").write_text("sibling secret\n")
    (outside / "secret.txt").write_text("outside secret\n")
    (work / "hello.txt").write_text("hello from inside\n")
    with safefs.Root(work) as root:
        yield AgentWorkspace(tmp_path, work, sibling, outside, root)


@pytest.fixture
def messages_api() -> Iterator[LoopbackMessagesAPI]:
    yield from serve(API_KEY)


@pytest.fixture(params=["openat2", "walk", "walk-no-o-path"])
def each_backend(request: pytest.FixtureRequest, ws: AgentWorkspace) -> Iterator[AgentWorkspace]:
    """``ws`` with its root reopened on each safefs backend: the tools must hold on all."""
    backend: safefs.ResolverName | Literal["walk-no-o-path"] = request.param
    if backend == "openat2" and not capabilities().native_extension:
        pytest.skip("native extension not built")
    if backend == "walk-no-o-path":
        root = safefs.Root(ws.path, resolver="walk", _use_o_path=False)
    else:
        root = safefs.Root(ws.path, resolver=backend)
    with root:
        yield AgentWorkspace(ws.base, ws.path, ws.sibling, ws.outside, root)


@pytest.fixture
def inline(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """``safefs-agent run`` as ``main()`` in this process (see ``tests.agent.cli_runs``)."""
    return inline_runner(monkeypatch, capsys)
