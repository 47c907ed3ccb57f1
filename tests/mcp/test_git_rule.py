"""safefs-mcp's writing tools and git: by default no call writes into a repository, makes one,
or writes what a repository's config names (its included config, its hooks path, husky's
directory, the enclosing repository's hooks path); ``--allow-git-writes`` (``git_rule=False``)
writes them as the official server does. Each refusal is checked with the real git afterwards:
what it would have planted does not run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from safefs.mcp.calls import run_validated
from safefs.mcp.directories import Directories
from safefs.mcp.tools import tools_for
from tests.sandbox.host_git import AUTHOR, fsmonitor_config, hook_script, host_git_ran_marker, must_git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """``tmp_path/outer`` a repository whose hooks path is ``work/githooks``; ``work`` one with
    husky's hooks path ``.husky/_`` and an included ``../shared.cfg``."""
    outer = tmp_path / "outer"
    work = outer / "work"
    (work / "githooks").mkdir(parents=True)
    must_git("init", "-q", outer)
    must_git("config", "core.hooksPath", "work/githooks", cwd=outer)
    must_git("init", "-q", work)
    must_git("config", "core.hooksPath", ".husky/_", cwd=work)
    must_git("config", "include.path", "../shared.cfg", cwd=work)
    (work / ".husky" / "_").mkdir(parents=True)
    (work / "shared.cfg").write_text("[user]\n\tname = p\n")
    (work / "src" / "objects").mkdir(parents=True)
    (work / "src" / "refs").mkdir()
    return work


def call(repo: Path, name: str, args: dict[str, Any], *, git_rule: bool = True) -> dict[str, Any]:
    tools = {tool.name: tool for tool in tools_for(read_only=False, allow_delete=True, git_rule=git_rule)}
    dirs = Directories.open([str(repo)])
    try:
        return run_validated(tools[name], dirs, args)
    finally:
        dirs.close()


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "ran"


def planted(marker: Path) -> list[tuple[str, dict[str, Any]]]:
    config, hook = fsmonitor_config(marker), hook_script(marker)
    return [
        ("write_file", {"path": ".git/config", "content": config}),
        ("write_file", {"path": ".git/hooks/pre-commit", "content": hook}),
        ("write_file", {"path": ".GIT/hooks/post-checkout", "content": hook}),
        ("write_file", {"path": "shared.cfg", "content": config}),
        ("write_file", {"path": ".husky/pre-commit", "content": hook}),
        ("write_file", {"path": "githooks/pre-commit", "content": hook}),
        ("write_file", {"path": "src/HEAD", "content": "ref: refs/heads/main\n"}),
        ("write_file", {"path": "new/.git", "content": "gitdir: ../.git\n"}),
        ("create_directory", {"path": "nested/.git"}),
        ("edit_file", {"path": "shared.cfg", "edits": [{"oldText": "name = p", "newText": "name = q"}]}),
        ("move_file", {"source": "shared.cfg", "destination": "moved.cfg"}),
    ]


def test_writes_git_would_act_on_are_refused_by_default(repo: Path, marker: Path) -> None:
    for name, args in planted(marker):
        result = call(repo, name, args)
        assert result.get("isError"), (name, args, result)
        assert "refused" in text(result) and "--allow-git-writes" in text(result), text(result)
        assert str(repo) not in text(result)  # no host path the client did not send
    assert host_git_ran_marker(repo, marker, commit=True) == []
    must_git(*AUTHOR, "commit", "-q", "--allow-empty", "-m", "p", cwd=repo.parent)
    assert not marker.exists()


def test_ordinary_writes_are_not(repo: Path) -> None:
    assert not call(repo, "write_file", {"path": "src/main.py", "content": "x\n"}).get("isError")
    assert not call(repo, "create_directory", {"path": "docs/api"}).get("isError")
    assert not call(repo, "move_file", {"source": "src/main.py", "destination": "main.py"}).get("isError")


def test_allow_git_writes_writes_them_as_the_official_server(repo: Path, marker: Path) -> None:
    result = call(
        repo, "write_file", {"path": ".git/config", "content": fsmonitor_config(marker)}, git_rule=False
    )
    assert not result.get("isError"), result
    assert host_git_ran_marker(repo, marker) != []  # what the rule is there to stop
