"""The record of what a command changed for an agent that is not root (inotify watches on every
directory, ``safefs/sandbox/watch.py``), made as an ordinary user (``useradd``; the test forks
and drops to it): every change another process makes, however it makes it, is in the record at
its directory; what the record cannot vouch for gives ``None`` (the caller then searches); and
through the bash tool, the whole workspace is searched once, not after each command."""

from __future__ import annotations

import importlib.readers  # noqa: F401  (imported lazily by the tool; the child cannot read the library)
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import safefs
from agent.tools.bash import BashTool
from safefs.sandbox import changes, git, watch
from safefs.workspace import gitrepos
from tests.sandbox.harness import PATH, WORLD_PARENT, as_user, chown_tree, ordinary_user, sandbox_refusal

pytestmark = pytest.mark.skipif(sandbox_refusal() is not None, reason=f"no sandbox: {sandbox_refusal()}")


@pytest.fixture
def workspace() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="safefs-watch-", dir=WORLD_PARENT))
    base.chmod(0o755)
    ws = base / "ws"
    for i in range(3):
        (ws / f"a{i}" / "b" / "c").mkdir(parents=True)
    (ws / "a0" / "b" / "c" / "file").write_text("x")
    (ws / "a1" / "b" / "c" / "kept").write_text("x")
    chown_tree(base, ordinary_user())
    try:
        yield ws
    finally:
        for dirpath, dirnames, _ in os.walk(base):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o755)
        shutil.rmtree(base, ignore_errors=True)


# Each way to change an entry, made by a second process while the span records.
CHANGES = """
mkdir -p new/x/y && touch new/x/y/HEAD          # a tree made at once, before any watch on it
mv a1 moved && touch moved/b/c/late              # a renamed directory keeps its watch
mkdir a2/hidden && touch a2/hidden/HEAD && chmod 0311 a2/hidden   # made unreadable
ln a0/b/c/file a2/b/linked                       # a hard link
chmod 0700 a2/b/c                                # attributes
"""


def record_changes(ws: Path) -> dict[str, list[str]] | None:
    with safefs.Root(ws) as root:
        keeper = watch.Watch(root)
        try:
            held = os.open(ws / "a0" / "b" / "c" / "file", os.O_WRONLY)  # opened before
            span = keeper.begin()
            assert span is not None, "an ordinary user's agent must get a record"
            subprocess.run(["bash", "-c", CHANGES], cwd=ws, env={"PATH": PATH}, check=True)
            os.write(held, b"written through an fd opened earlier")
            os.close(held)
            span.end()
            found = span.directories()
            return None if found is None else {path: sorted(names) for path, names in found.items()}
        finally:
            keeper.close()


def test_every_change_is_recorded_at_its_directory(workspace: Path) -> None:
    found = as_user(ordinary_user(), lambda: record_changes(workspace), fork=True)
    print(found)
    assert found is not None
    expected = [
        ("new/x/y", "HEAD"),
        ("moved/b/c", "late"),
        ("a2/hidden", "HEAD"),
        ("a2/b", "linked"),
        ("a2/b", "c"),
        ("a0/b/c", "file"),
        (".", "moved"),
    ]
    for directory, name in expected:
        assert name in found.get(directory, []), (directory, name, found)


def overflow(ws: Path) -> object:
    with safefs.Root(ws) as root:
        keeper = watch.Watch(root)
        try:
            span = keeper.begin()
            assert span is not None
            queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
            for n in range(queued + 100):
                os.close(os.open(ws / "a0" / f"n{n}", os.O_CREAT | os.O_WRONLY, 0o644))
            span.end()
            first = span.directories()
            again = keeper.begin()  # the watches are made afresh
            assert again is not None
            (ws / "a2" / "after").write_text("x")
            second = again.directories()
            return [first, None if second is None else {k: sorted(v) for k, v in second.items()}]
        finally:
            keeper.close()


def test_an_overflowed_queue_is_no_record(workspace: Path) -> None:
    """More changes than the kernel queues: ``None`` (the caller searches), and the next
    command's record is whole again."""
    first, second = as_user(ordinary_user(), lambda: overflow(workspace), fork=True)
    assert first is None
    assert second == {"a2": ["after"]}


def swapped(ws: Path) -> object:
    with safefs.Root(ws) as root:
        keeper = watch.Watch(root)
        try:
            span = keeper.begin()
            assert span is not None
            # A directory moved out of the workspace and another put where it was: the path the
            # record knows leads to another directory now, so the record does not vouch for it.
            outside = ws.parent / "out"
            os.rename(ws / "a1", outside)
            (outside / "b" / "made").write_text("x")
            (ws / "a1").mkdir()
            os.rename(ws / "a2" / "b", ws / "a1" / "b")
            (ws / "a1" / "b" / "c" / "inner").write_text("x")
            span.end()
            found = span.directories()
            return None if found is None else {path: sorted(names) for path, names in found.items()}
        finally:
            keeper.close()


def test_a_directory_moved_out_is_no_longer_the_workspace(workspace: Path) -> None:
    found = as_user(ordinary_user(), lambda: swapped(workspace), fork=True)
    print(found)
    assert found is not None
    assert sorted(found) == [".", "a1", "a1/b", "a1/b/c", "a2"]
    assert "inner" in found["a1/b/c"]  # the directory moved in keeps its watch, under its new path
    assert not any("made" in names for names in found.values())  # made outside, not in the workspace


def bash_searches(ws: Path) -> list[object]:
    searches: list[object] = []
    original = gitrepos.find_repositories

    def counted(root: safefs.Root, **kw: object) -> gitrepos.Repositories:
        searches.append(kw.get("enter_all_but") is not None)
        return original(root, **kw)  # type: ignore[arg-type]

    git.gitrepos.find_repositories = counted  # type: ignore[attr-defined]
    try:
        with safefs.Root(ws) as root:
            tool = BashTool(root, base_env={"PATH": PATH})
            try:
                out = [
                    tool.execute({"command": command}).content
                    for command in (
                        "true",
                        "mkdir -p deep/er/repo/objects deep/er/repo/refs"
                        " && echo 'ref: refs/heads/main' > deep/er/repo/HEAD",
                        "true",
                    )
                ]
            finally:
                tool.close()
    finally:
        git.gitrepos.find_repositories = original  # type: ignore[attr-defined]
    return [searches, out[1], sorted(os.listdir(ws / "deep" / "er" / "repo"))]


def test_bash_as_an_ordinary_user_searches_once(workspace: Path) -> None:
    """The repository search walks the workspace once (the first command's plan); after each
    command only what the record names is judged, and a repository made is still disabled."""
    for d in range(200):
        (workspace / "wide" / f"d{d}").mkdir(parents=True)
    chown_tree(workspace, ordinary_user())
    searches, out, repo = as_user(ordinary_user(), lambda: bash_searches(workspace), fork=True)
    print(searches, out)
    assert searches == [False], searches  # the plan's search only: no search after a command
    assert "deep/er/repo/HEAD -> deep/er/repo/HEAD.untrusted" in out
    assert "HEAD" not in repo and "HEAD.untrusted" in repo


def test_the_record_is_the_watch_for_an_ordinary_user(workspace: Path) -> None:
    def kind() -> str:
        with safefs.Root(workspace) as root:
            recorders = changes.Recorders(root)
            try:
                record = recorders.take()
                return type(record).__name__
            finally:
                recorders.close()

    assert as_user(ordinary_user(), kind, fork=True) == "Span"
    assert as_user(0, kind) == "ChangeRecord"
