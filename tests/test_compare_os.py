"""Each confined call against the plain ``os`` call, on identical trees where nothing escapes.

Where no path leaves the root, a confined call must behave as ``os`` does: the same result, or
an error of the same class and errno, and the same tree afterwards. (Go's os.Root tests compare
each Root method with its os counterpart the same way.) With ``symlinks="none"`` only the paths
that follow no symlink are compared; the scenario table covers what that mode refuses.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import safefs
from tests.conftest import Flavour, Workspace, build_tree, restore_tree

# A tree whose links all stay inside it. ``zz_src`` is the source for rename/link *to* a path.
TREE = [
    "f", "d/g", "d/sub/h", "empty/", "~/t", "zz_src",
    "lf => f", "ld => d", "d/up => ../f", "dangling => nowhere", "d/sub/deep => ../../d/g",
    "chain => lf", "loop => loop", "ld2 => d/sub/..", "dirlink-dangling => gone/",
]

# Paths that meet no symlink at all, and paths whose only symlink is the final name (those
# agree with os under symlinks="none" for the calls that act on the name itself).
NO_LINK = [
    "f", "d", "d/", "d/g", "d/sub/h", "./f", "d/./g", "d//g", "d/../f", "d/sub/../g",
    "d/sub/../../f", "empty", "empty/", "missing", "d/missing", "missing/x", "f/", "f/x", "f/.",
    "f/..", "~", "~/t", ".", "d/..", "d/sub/..", "new/", "n" * 255, "n" * 256, "d/" + "n" * 256,
]
FINAL_LINK = ["lf", "ld", "d/up", "dangling", "chain", "loop", "d/sub/deep", "dirlink-dangling"]
THROUGH_LINK = ["ld/g", "ld/", "ld/sub/deep", "ld/../f", "ld2/g", "lf/", "lf/x", "loop/x",
                "ld/sub/../g", "dangling/", "chain/x", "d/up/x", "ld/new"]


@dataclass(frozen=True)
class Pair:
    """One operation, confined and plain; ``acts_on_name``: the final symlink is not followed."""

    name: str
    acts_on_name: bool
    confined: Callable[[safefs.Root, str], Any]
    plain: Callable[[str], Any]
    changes_tree: bool = False  # only these are followed by a comparison of the two trees


def _plain_read_bytes(p: str) -> bytes:
    with open(p, "rb") as f:  # not pathlib: it would drop a trailing slash
        return f.read()


def _plain_mode(p: str, follow: bool = True) -> int | None:
    """pathlib's exists()/is_*() rule (False for ENOENT, ENOTDIR, EBADF, ELOOP, any other error
    raised), on the path exactly as given: pathlib itself would drop a trailing slash."""
    try:
        return (os.stat(p) if follow else os.lstat(p)).st_mode
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            return None
        raise


def _read_text(root: safefs.Root, p: str) -> str:
    with root.open(p) as f:
        text: str = f.read()
    return text


def _plain_read_text(p: str) -> str:
    with open(p) as f:
        return f.read()


def _stat(st: os.stat_result) -> tuple[int, int | None]:
    return stat.S_IFMT(st.st_mode), st.st_size if stat.S_ISREG(st.st_mode) else None


def _scan(entries: Any) -> list[tuple[str, bool, bool, bool]]:
    # (Following links from an entry is left out: os raises ELOOP where safefs says False.)
    return sorted((e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False),
                   e.is_symlink()) for e in entries)


def _plain_scan(p: str) -> list[tuple[str, bool, bool, bool]]:
    with os.scandir(p) as it:
        return _scan(it)


def _walk(root: safefs.Root, p: str) -> list[tuple[str, list[str], list[str]]]:
    return [(top, sorted(dirs), sorted(files)) for top, dirs, files in root.walk(p)]


def _plain_walk(p: str) -> list[tuple[str, list[str], list[str]]]:
    """os.walk(followlinks=False), with links to directories counted as files, as safefs
    documents; an error opening the top is raised (os.walk would swallow it)."""
    os.scandir(p).close()
    out = []
    for top, dirs, files in os.walk(p):
        links = [d for d in dirs if os.path.islink(os.path.join(top, d))]
        out.append((top, sorted(set(dirs) - set(links)), sorted(files + links)))
    return out


def _create_x(root: safefs.Root, p: str) -> None:
    with root.open(p, "xb") as f:
        f.write(b"x")


def _plain_create_x(p: str) -> None:
    with open(p, "xb") as f:
        f.write(b"x")


def _plain_write(p: str) -> int:
    with open(p, "wb") as f:
        return f.write(b"written")


def _open_rw(root: safefs.Root, p: str, mode: str) -> str:
    with root.open(p, mode) as f:
        f.write("more\n")
        f.seek(0)
        return f.read() if "+" in mode else ""


def _plain_open_rw(p: str, mode: str) -> str:
    with open(p, mode) as f:
        f.write("more\n")
        f.seek(0)
        return f.read() if "+" in mode else ""


def _plain_touch(p: str) -> None:
    with open(p, "ab"):
        pass


PAIRS = [
    Pair("read_bytes", False, lambda r, p: r.read_bytes(p), _plain_read_bytes),
    Pair("open_text", False, _read_text, _plain_read_text),
    Pair("stat", False, lambda r, p: _stat(r.stat(p)), lambda p: _stat(os.stat(p))),
    Pair("lstat", True, lambda r, p: _stat(r.lstat(p)), lambda p: _stat(os.lstat(p))),
    Pair("exists", False, lambda r, p: r.exists(p), lambda p: _plain_mode(p) is not None),
    Pair("is_file", False, lambda r, p: r.is_file(p), lambda p: stat.S_ISREG(_plain_mode(p) or 0)),
    Pair("is_dir", False, lambda r, p: r.is_dir(p), lambda p: stat.S_ISDIR(_plain_mode(p) or 0)),
    Pair("is_symlink", True, lambda r, p: r.is_symlink(p),
         lambda p: stat.S_ISLNK(_plain_mode(p, follow=False) or 0)),
    Pair("listdir", False, lambda r, p: sorted(r.listdir(p)), lambda p: sorted(os.listdir(p))),
    Pair("scandir", False, lambda r, p: _scan(r.scandir(p)), _plain_scan),
    Pair("walk", False, _walk, _plain_walk),
    Pair("write_bytes", False, lambda r, p: r.write_bytes(p, b"written"), _plain_write, True),
    Pair("open_w", False, lambda r, p: _open_rw(r, p, "w"), lambda p: _plain_open_rw(p, "w"), True),
    Pair("open_a+", False, lambda r, p: _open_rw(r, p, "a+"), lambda p: _plain_open_rw(p, "a+"),
         True),
    Pair("open_r+", False, lambda r, p: _open_rw(r, p, "r+"), lambda p: _plain_open_rw(p, "r+"),
         True),
    Pair("touch", False, lambda r, p: r.touch(p), _plain_touch, True),
    Pair("create_x", True, _create_x, _plain_create_x, True),
    Pair("mkdir", True, lambda r, p: r.mkdir(p), os.mkdir, True),
    Pair("makedirs", True, lambda r, p: r.mkdir(p, parents=True), os.makedirs, True),
    Pair("makedirs_exist_ok", False, lambda r, p: r.mkdir(p, parents=True, exist_ok=True),
         lambda p: os.makedirs(p, exist_ok=True), True),
    Pair("remove", True, lambda r, p: r.remove(p), os.unlink, True),
    Pair("rmdir", True, lambda r, p: r.rmdir(p), os.rmdir, True),
    Pair("rename_from", True, lambda r, p: r.rename(p, "zz_moved"),
         lambda p: os.rename(p, "zz_moved"), True),
    Pair("rename_to", True, lambda r, p: r.rename("zz_src", p), lambda p: os.rename("zz_src", p), True),
    Pair("link_from", True, lambda r, p: r.link(p, "zz_moved"),
         lambda p: os.link(p, "zz_moved", follow_symlinks=False), True),
    Pair("link_to", True, lambda r, p: r.link("zz_src", p), lambda p: os.link("zz_src", p), True),
    Pair("readlink", True, lambda r, p: r.readlink(p), os.readlink),
    Pair("symlink", True, lambda r, p: r.symlink("zz_src", p), lambda p: os.symlink("zz_src", p), True),
    Pair("chmod", False, lambda r, p: r.chmod(p, 0o751), lambda p: os.chmod(p, 0o751), True),
]


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """The result, or the error's class and errno (its message and filename may differ)."""
    try:
        return "ok", call()
    except OSError as exc:
        return type(exc).__name__, exc.errno


def tree_state(top: Path) -> dict[str, Any]:
    """What a caller can observe of a tree: kinds, contents, link targets and mode bits."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = p.lstat()
            rel = str(p.relative_to(top))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("file", p.read_bytes(), stat.S_IMODE(st.st_mode), st.st_nlink)
    out["."] = stat.S_IMODE(top.stat().st_mode)
    return out


# Links whose target, read from the root (where rename_from and link_from put them), leads
# outside: safefs refuses to plant them there (see the scenario table), os does not.
ESCAPES_WHEN_MOVED = {"d/up", "d/sub/deep", "ld/sub/deep"}
MOVES = {"rename_from", "link_from"}


def pairs_for(path: str, mode: str) -> list[Pair]:
    pairs = [p for p in PAIRS if path not in ESCAPES_WHEN_MOVED or p.name not in MOVES]
    if mode != "none" or path in NO_LINK:
        return pairs
    if path in FINAL_LINK:
        return [p for p in pairs if p.acts_on_name]
    return []


@pytest.mark.parametrize("path", NO_LINK + FINAL_LINK + THROUGH_LINK)
def test_same_as_os(path: str, flavour: Flavour, workspace: Workspace,
                    open_root: Callable[..., safefs.Root], monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = pairs_for(path, flavour.symlinks)
    if not pairs:
        pytest.skip("symlinks='none' refuses this path: see the scenario table")
    confined_dir = workspace.root_path
    plain_dir = workspace.base / "plain"
    monkeypatch.chdir(plain_dir.parent)
    differences = []
    pristine: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for pair in pairs:
        if not pristine:
            for directory in (confined_dir, plain_dir):
                directory.mkdir(exist_ok=True)
                build_tree(directory, TREE)
            pristine = tree_state(plain_dir)
        elif after != pristine:  # the last call changed something
            for directory in (confined_dir, plain_dir):
                now = tree_state(directory)
                restore_tree(directory, TREE, lambda rel: now[rel] != pristine.get(rel))  # noqa: B023
                assert tree_state(directory) == pristine
        os.chdir(plain_dir)
        with flavour.open(confined_dir) as root:
            got = outcome(lambda: pair.confined(root, path))  # noqa: B023
        want = outcome(lambda: pair.plain(path))  # noqa: B023
        os.chdir(plain_dir.parent)
        after = tree_state(plain_dir) if pair.changes_tree else pristine
        if got != want:
            differences.append(f"{pair.name}: safefs {got!r}, os {want!r}")
            after = {}  # start the next call from a fresh tree
        elif pair.changes_tree and tree_state(confined_dir) != after:
            differences.append(f"{pair.name}: the trees differ afterwards")
            after = {}
    assert not differences, "\n".join(differences)


def test_the_comparison_notices_a_difference(workspace: Workspace) -> None:
    # The harness itself: a confined call that really differs from os must be reported.
    build_tree(workspace.root_path, ["f"])
    with safefs.Root(workspace.root_path) as root:
        assert outcome(lambda: root.read_bytes("f")) != outcome(lambda: b"other")
        assert outcome(lambda: root.read_bytes("missing")) == ("FileNotFoundError", 2)
        assert outcome(lambda: root.read_bytes("f")) != outcome(lambda: root.read_bytes("missing"))


# (src, dst, meets a symlink on the way). rename and link both take two paths: each pair is
# tried with both calls.
TWO_PATHS = [
    ("d", "d/sub/x", False), ("d", "empty", False), ("empty", "d", False), ("f", "d", False),
    ("d", "f", False), ("f", "f", False), ("f", "missing/x", False), ("d/", "e/", False),
    ("f", "d/sub/h/", False), ("d/g", "d/sub/../g2", False), ("missing", "x", False),
    ("f", "d/g", False), ("d/sub", "e", False), ("empty/", "f", False), ("f", "e/", False),
    ("lf", "ld", True), ("lf", "x", True), ("ld/g", "x", True), ("f", "ld/x", True),
    ("ld", "d/x", True), ("ld/", "x", True), ("dangling", "y", True),
]


@pytest.mark.parametrize(("src", "dst", "links"), TWO_PATHS)
def test_two_paths_same_as_os(src: str, dst: str, links: bool, flavour: Flavour,
                              workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    if links and flavour.symlinks == "none":
        pytest.skip("symlinks='none' refuses this path: see the scenario table")
    confined_dir = workspace.root_path
    plain_dir = workspace.base / "plain"
    differences = []
    calls: list[tuple[str, Callable[[safefs.Root], None], Callable[[], None]]] = [
        ("rename", lambda r: r.rename(src, dst), lambda: os.rename(src, dst)),
        ("link", lambda r: r.link(src, dst), lambda: os.link(src, dst, follow_symlinks=False)),
    ]
    for name, confined, plain in calls:
        for directory in (confined_dir, plain_dir):
            if directory.exists():
                shutil.rmtree(directory)
            directory.mkdir()
            build_tree(directory, TREE)
        monkeypatch.chdir(plain_dir)
        with flavour.open(confined_dir) as root:
            got = outcome(lambda: confined(root))  # noqa: B023
        want = outcome(plain)
        if got != want:
            differences.append(f"{name}: safefs {got!r}, os {want!r}")
        elif tree_state(confined_dir) != tree_state(plain_dir):
            differences.append(f"{name}: the trees differ afterwards")
    assert not differences, "\n".join(differences)


def test_resolve_matches_realpath(flavour: Flavour, workspace: Workspace) -> None:
    # Where the path exists, resolve() names the entry os.path.realpath finds.
    build_tree(workspace.root_path, TREE)
    paths = NO_LINK if flavour.symlinks == "none" else NO_LINK + FINAL_LINK + THROUGH_LINK
    checked = 0
    differences = []
    with flavour.open(workspace.root_path) as root:
        for path in paths:
            try:
                os.stat(os.path.join(workspace.root_path, path))  # the kernel finds it...
                real = os.path.realpath(workspace.root_path / path, strict=True)  # ...and where
            except OSError:
                continue
            checked += 1
            got = root.resolve(path)
            want = os.path.relpath(real, workspace.root_path)
            if got != want:
                differences.append(f"{path}: safefs {got!r}, os {want!r}")
    assert not differences, "\n".join(differences)
    assert checked >= 15
