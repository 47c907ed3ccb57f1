"""The record of what a command changed for an agent that is not root (inotify watches on every
directory, ``safefs/sandbox/watch.py``), made as an ordinary user (``useradd``; the test forks
and drops to it): every change another process makes, however it makes it, is in the record at
its directory; what the record cannot vouch for gives ``None`` (the caller then searches); and
through the bash tool, the whole workspace is searched once, not after each command."""

from __future__ import annotations

import importlib.readers  # noqa: F401  (imported lazily by the tool; the child cannot read the library)
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# -- the invariant: every entry changed is in the record at its directory ----------------------

NAMES = st.sampled_from(["a", "b", "HEAD", "head", ".git"])
DIRS = st.sampled_from([".", "a0", "a0/b", "a1/b/c", "a2", "x", "x/y"])
OPS = st.one_of(
    st.tuples(st.just("mkdir -p"), DIRS, NAMES),
    st.tuples(st.just("touch"), DIRS, NAMES),
    st.tuples(st.just("append"), DIRS, NAMES),
    st.tuples(st.just("chmod 0311"), DIRS, NAMES),
    st.tuples(st.just("chmod 0755"), DIRS, NAMES),
    st.tuples(st.just("mv"), DIRS, NAMES, DIRS, NAMES),
    st.tuples(st.just("ln"), DIRS, NAMES, DIRS, NAMES),
    st.tuples(st.just("rm -rf"), DIRS, NAMES),
)


def script(ops: list[tuple[str, ...]]) -> str:
    lines = []
    for op in ops:
        path = shlex.quote(f"{op[1]}/{op[2]}")
        if op[0] == "append":
            lines.append(f"echo x >> {path}")
        elif op[0] in ("mv", "ln"):
            lines.append(f"{op[0]} -T {path} {shlex.quote(f'{op[3]}/{op[4]}')}")
        else:
            lines.append(f"{op[0]} {path}")
    return "\n".join(f"{{ {line}; }} 2>/dev/null" for line in lines) + "\ntrue\n"


INODES: dict[int, tuple[int, int, int]] = {}  # inode -> links, modification time, mode (last snapshot)


def snapshot(ws: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """Every entry as (its directory, its name) -> (inode, change time); directories the
    script left unreadable are made readable first (as the judgement after a command does)."""
    for dirpath, dirnames, _ in os.walk(ws):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if mode & 0o500 != 0o500:
                os.chmod(path, mode & 0o7777 | 0o700)
    found = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        where = os.path.relpath(dirpath, ws)
        for name in dirnames + filenames:
            st_ = os.lstat(os.path.join(dirpath, name))
            found[(where, name)] = (st_.st_ino, st_.st_ctime_ns)
            INODES[st_.st_ino] = (st_.st_nlink, st_.st_mtime_ns, st_.st_mode)
    return found


def missed(ws: Path, batches: list[list[tuple[str, ...]]]) -> list[object]:
    """What the record left out, batch by batch (one span each, the watches kept between)."""
    problems: list[object] = []
    with safefs.Root(ws) as root:
        keeper = watch.Watch(root)
        try:
            for ops in batches:
                before = snapshot(ws)
                kept = dict(INODES)
                span = keeper.begin()
                assert span is not None
                subprocess.run(["bash", "-c", script(ops)], cwd=ws, env={"PATH": PATH}, check=True)
                span.end()
                found = span.directories()
                after = snapshot(ws)  # after the record: the snapshot's own chmods are not the script's
                if found is None:
                    problems.append("no record")
                    continue
                # a directory that only lost entries changed nothing git could use: not watched
                emptied = {where for where, name in before if (where, name) not in after}
                by_inode: dict[tuple[int, int], list[tuple[str, str]]] = {}
                for entry, ident in after.items():
                    by_inode.setdefault(ident, []).append(entry)
                unchanged = set(before.values())
                for (where, name), ident in after.items():
                    if ident in unchanged and before.get((where, name)) != ident:
                        continue  # carried along by a directory renamed, itself unchanged
                    links, mtime, mode = INODES[ident[0]]
                    was = kept.get(ident[0])
                    if was is not None and links < was[0] and (mtime, mode) == was[1:]:
                        continue  # only lost a name elsewhere (removals are not watched)
                    if before.get((where, name), (None, None))[0] != ident[0]:
                        if name not in found.get(where, set()):  # new here: recorded here
                            problems.append(["new", where, name, ops])
                    elif before[(where, name)] != ident and not any(
                        n in found.get(w, set()) or os.path.normpath(f"{w}/{n}") in found.keys() | emptied
                        for w, n in by_inode[ident]
                    ):
                        # recorded at one of its names, or (a directory changed within) itself
                        problems.append(["changed", where, name, ops])
        finally:
            keeper.close()
    return problems


@pytest.mark.slow
@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(batches=st.lists(st.lists(OPS, min_size=1, max_size=12), min_size=1, max_size=3))
def test_every_changed_entry_is_recorded_at_its_directory(batches: list[list[tuple[str, ...]]]) -> None:
    """A second process runs random makes, writes, modes, renames, links and removals (as the
    ordinary user, between spans too): every entry new in a directory is in the record at that
    directory, and every entry whose inode changed at one of the directories naming it."""
    base = Path(tempfile.mkdtemp(prefix="safefs-watch-prop-", dir=WORLD_PARENT))
    try:
        base.chmod(0o755)
        ws = base / "ws"
        for i in range(3):
            (ws / f"a{i}" / "b" / "c").mkdir(parents=True)
        chown_tree(base, ordinary_user())
        problems = as_user(ordinary_user(), lambda: missed(ws, batches), fork=True)
        assert problems == [], problems
    finally:
        for dirpath, dirnames, _ in os.walk(base):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_a_tree_that_cannot_be_watched_whole_gives_no_record(workspace: Path) -> None:
    """A directory the agent cannot read (another user's, mode 0700): no watch on it, so no
    record at all (the caller searches, and its search refuses what it cannot read), and the
    walk is not tried again for each command."""
    (workspace / "a1" / "theirs").mkdir()
    (workspace / "a1" / "theirs").chmod(0o700)  # root's, in the ordinary user's workspace

    def twice() -> list[bool]:
        with safefs.Root(workspace) as root:
            keeper = watch.Watch(root)
            try:
                return [keeper.begin() is None, keeper.begin() is None, keeper.fd == -1]
            finally:
                keeper.close()

    assert as_user(ordinary_user(), twice, fork=True) == [True, True, True]
