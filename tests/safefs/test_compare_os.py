"""Each confined call against the plain ``os`` call, on identical trees where nothing escapes.

Where no path leaves the root, a confined call must behave as ``os`` does: the same result, or
an error of the same class and errno, and the same tree afterwards. (Go's os.Root tests compare
each Root method with its os counterpart the same way.) With ``symlinks="none"`` only the paths
that follow no symlink are compared; the scenario table covers what that mode refuses.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import safefs
from tests.safefs.conftest import Flavour, Workspace, build_tree, restore_tree, tree_snapshot
from tests.safefs.registry import OPERATIONS, Operation

# A tree whose links all stay inside it. ``zz_src`` is the source for rename/link *to* a path.
TREE = [
    "f",
    "d/g",
    "d/sub/h",
    "empty/",
    "~/t",
    "zz_src",
    "lf => f",
    "ld => d",
    "d/up => ../f",
    "dangling => nowhere",
    "d/sub/deep => ../../d/g",
    "chain => lf",
    "loop => loop",
    "ld2 => d/sub/..",
    "dirlink-dangling => gone/",
]

# Paths that meet no symlink at all, and paths whose only symlink is the final name (those
# agree with os under symlinks="none" for the calls that act on the name itself).
NO_LINK = [
    "f",
    "d",
    "d/",
    "d/g",
    "d/sub/h",
    "./f",
    "d/./g",
    "d//g",
    "d/../f",
    "d/sub/../g",
    "d/sub/../../f",
    "empty",
    "empty/",
    "missing",
    "d/missing",
    "missing/x",
    "f/",
    "f/x",
    "f/.",
    "f/..",
    "~",
    "~/t",
    ".",
    "d/..",
    "d/sub/..",
    "new/",
    "n" * 255,
    "n" * 256,
    "d/" + "n" * 256,
]
FINAL_LINK = ["lf", "ld", "d/up", "dangling", "chain", "loop", "d/sub/deep", "dirlink-dangling"]
THROUGH_LINK = [
    "ld/g",
    "ld/",
    "ld/sub/deep",
    "ld/../f",
    "ld2/g",
    "lf/",
    "lf/x",
    "loop/x",
    "ld/sub/../g",
    "dangling/",
    "chain/x",
    "d/up/x",
    "ld/new",
]


# Every registry operation that os can do too; rename_noreplace_to and resolve have no os call.
COMPARED = [op for op in OPERATIONS if op.plain is not None]


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """The result, or the error's class and errno (its message and filename may differ)."""
    try:
        return "ok", call()
    except OSError as exc:
        return type(exc).__name__, exc.errno


def tree_state(top: Path) -> dict[str, Any]:
    return tree_snapshot(top)


# Links whose target, read from the root (where rename_from and link_from put them), leads
# outside: safefs refuses to plant them there (see the scenario table), os does not.
ESCAPES_WHEN_MOVED = {"d/up", "d/sub/deep", "ld/sub/deep"}
MOVES = {"rename_from", "link_from"}
# A second link to a looping link cannot be judged (the kernel answers ELOOP): safefs refuses it,
# os makes it (see the scenario table).
UNJUDGED_WHEN_LINKED = {"loop"}


def compared_on(op: Operation, path: str, mode: str) -> bool:
    if path in ESCAPES_WHEN_MOVED and op.name in MOVES:
        return False
    if path in UNJUDGED_WHEN_LINKED and op.name == "link_from":
        return False
    if mode != "none" or path in NO_LINK:
        return True
    return path in FINAL_LINK and not op.follows


PATHS = NO_LINK + FINAL_LINK + THROUGH_LINK


@pytest.mark.parametrize("op", COMPARED, ids=str)
def test_same_as_os(
    op: Operation, flavour: Flavour, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One operation on every path, confined and plain, on identical trees."""
    paths = [p for p in PATHS if compared_on(op, p, flavour.symlinks)]
    if not paths:
        pytest.skip("symlinks='none' refuses every path it would take: see the scenario table")
    confined_dir = workspace.root_path
    plain_dir = workspace.base / "plain"
    plain_dir.mkdir()
    build_tree(confined_dir, TREE)
    build_tree(plain_dir, TREE)
    pristine = tree_state(plain_dir)
    monkeypatch.chdir(plain_dir)
    differences = []
    with flavour.open(confined_dir) as root:
        for path in paths:
            got = outcome(lambda: op.call(root, path))  # noqa: B023
            want = outcome(lambda: op.call_plain(path))  # noqa: B023
            if got != want:
                differences.append(f"{path!r}: safefs {got!r}, os {want!r}")
            if not op.changes_tree:
                continue
            after = tree_state(plain_dir)
            if got == want and tree_state(confined_dir) != after:
                differences.append(f"{path!r}: the trees differ afterwards")
            for directory in (confined_dir, plain_dir):  # back to the tree as built
                now = tree_state(directory)
                if now != pristine:
                    restore_tree(directory, TREE, lambda rel: now[rel] != pristine.get(rel))  # noqa: B023
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
    ("d", "d/sub/x", False),
    ("d", "empty", False),
    ("empty", "d", False),
    ("f", "d", False),
    ("d", "f", False),
    ("f", "f", False),
    ("f", "missing/x", False),
    ("d/", "e/", False),
    ("f", "d/sub/h/", False),
    ("d/g", "d/sub/../g2", False),
    ("missing", "x", False),
    ("f", "d/g", False),
    ("d/sub", "d/e", False),  # d/sub to the root would make d/sub/deep lead out: refused, see hardening
    ("empty/", "f", False),
    ("f", "e/", False),
    ("lf", "ld", True),
    ("lf", "x", True),
    ("ld/g", "x", True),
    ("f", "ld/x", True),
    ("ld", "d/x", True),
    ("ld/", "x", True),
    ("dangling", "y", True),
]


@pytest.mark.parametrize(("src", "dst", "links"), TWO_PATHS)
def test_two_paths_same_as_os(
    src: str, dst: str, links: bool, flavour: Flavour, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
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
