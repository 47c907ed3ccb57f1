"""The person's own ``git``, run outside the sandbox as they would run it: ``git status`` in the
workspace and in every directory below it (a git-aware prompt runs git wherever they ``cd``),
and a commit at the top. What it runs is seen by a marker file outside the workspace."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
from pathlib import Path

from tests.leftovers import session_directory

MAX_PLACES = 300  # directories git is run in, at most (the trees here are small)


_HOME: list[str] = []


def _home() -> str:
    """An empty home of the tests' own: no config of the machine's reaches the person's git."""
    if not _HOME:
        _HOME.append(session_directory("safefs-git-home-"))
        atexit.register(shutil.rmtree, _HOME[0], True)
    return _HOME[0]


def host_env() -> dict[str, str]:
    """The environment of the person's shell: no ``GIT_*`` variable narrows discovery, and the
    global and system config are the tests' own (an empty home, no system file)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=_home(), XDG_CONFIG_HOME=_home(), GIT_CONFIG_NOSYSTEM="1")
    return env


def git(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *map(str, args)],
        cwd=cwd,
        env=host_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def must_git(*args: str | Path, cwd: Path | None = None) -> str:
    done = git(*args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


AUTHOR = ("-c", "user.name=p", "-c", "user.email=p@p")


def commit_empty(cwd: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return git(*options, *AUTHOR, "commit", "-q", "--allow-empty", "-m", "p", cwd=cwd)


def make_superproject(workspace: Path) -> None:
    """``workspace`` a repository with a submodule at ``libs/sub`` (its ``.git`` a directory,
    as ``git submodule add`` of a repository already there leaves it), committed."""
    must_git("init", "-q", workspace)
    (workspace / "libs").mkdir()
    must_git("init", "-q", workspace / "libs" / "sub")
    assert commit_empty(workspace / "libs" / "sub").returncode == 0
    add = ("submodule", "add", "-q", "./libs/sub", "libs/sub")
    must_git("-c", "protocol.file.allow=always", *add, cwd=workspace)
    must_git(*AUTHOR, "commit", "-q", "-m", "init", cwd=workspace)


def fsmonitor_config(marker: Path, *, worktree: Path | None = None) -> str:
    """A config that runs ``touch marker`` at the next ``git status`` (and, with ``worktree``,
    has a work tree, so that git uses it from a bare repository too)."""
    lines = ["[core]", "\trepositoryformatversion = 0", "\tbare = false"]
    if worktree is not None:
        lines.append(f"\tworktree = {worktree}")
    lines.append(f"\tfsmonitor = touch {marker}")
    return "\n".join(lines) + "\n"


def hook_script(marker: Path) -> str:
    return f"#!/bin/sh\ntouch {marker}\n"


def places(workspace: Path) -> list[Path]:
    """The workspace and every directory below it, ``.git`` directories left out (a person does
    not work there), at most :data:`MAX_PLACES`."""
    found = [workspace]
    for dirpath, dirnames, _files in os.walk(workspace):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        found += [Path(dirpath, d) for d in dirnames]
    return found[:MAX_PLACES]


def host_git_ran_marker(
    workspace: Path, marker: Path, *, commit: bool = False, as_owner: bool = False
) -> list[str]:
    """Run ``git status`` everywhere in ``workspace`` (and ``git commit`` at its top with
    ``commit``); the places after which ``marker`` existed (it is removed after each).
    ``as_owner``: the workspace belongs to another user than this process's, and git is run as
    its owner would run it (``safe.directory`` passes it)."""
    owner = ("-c", "safe.directory=*") if as_owner else ()
    ran = []
    for place in places(workspace):
        git(*owner, "status", "--porcelain", cwd=place)
        if marker.exists():
            ran.append(str(place.relative_to(workspace)))
            marker.unlink()
    if commit:
        commit_empty(workspace, *owner)
        if marker.exists():
            ran.append("commit")
            marker.unlink()
    return ran
