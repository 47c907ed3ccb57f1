"""The scenario table: escapes and legitimate paths, run against every operation.

Each case is a tree, a path and what the path designates in each ``symlinks=`` mode: either the
root-relative entry it lands on (``Lands``) or the error it must raise (``Fails``). Operations that
follow the final component use ``follow``; those that act on the final name itself (lstat,
remove, rmdir, rmtree, rename, link, readlink, is_symlink, mkdir, symlink, exclusive create) use
``final``: a last symlink pointing outside is itself inside, so moving or removing it is allowed
(as Go's Root.Rename and Root.Remove do) while reading or writing through it is not. Each operation
then checks its own effect on the landing entry against the real tree, and every run checks that
nothing outside the root changed.

Trees use the ``open_root`` spec of conftest.py, plus: ``$OUTSIDE`` (absolute path of the bait
directory beside the root), ``$HOSTROOT`` / ``$HOSTOUTSIDE`` (the same absolute paths without
their leading slash: decoys built inside the root show where ``in_root`` lands an absolute link).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import safefs
from tests.safefs.conftest import (
    Flavour,
    Workspace,
    build_tree,
    make_workspace,
    restore_tree,
    tree_snapshot,
)
from tests.safefs.registry import (
    DATA,
    LINK_TARGET,
    MOVED,
    NEW_MODE,
    OPERATIONS,
    SRC,
    TEXT,
    TIMES_NS,
    Operation,
    born,
)

# -- outcomes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lands:
    """The path designates this root-relative entry (which may or may not exist)."""

    rel: str


@dataclass(frozen=True)
class Fails:
    """The operation raises this error class (and, when given, this errno)."""

    exc: type[BaseException]
    errno: int | None = None

    def __str__(self) -> str:
        return self.exc.__name__ if self.errno is None else errno.errorcode[self.errno]


Outcome = Lands | Fails
ESCAPE = Fails(safefs.PathEscapeError, errno.EXDEV)
LOOP = Fails(OSError, errno.ELOOP)
ENOENT = Fails(FileNotFoundError)
ENOTDIR = Fails(NotADirectoryError)
EEXIST = Fails(FileExistsError)
EISDIR = Fails(IsADirectoryError)


def each(beneath: Outcome, none: Outcome, in_root: Outcome) -> dict[str, Outcome]:
    return {"beneath": beneath, "none": none, "in_root": in_root}


def every(outcome: Outcome) -> dict[str, Outcome]:
    return each(outcome, outcome, outcome)


@dataclass(frozen=True)
class Case:
    id: str
    tree: list[str]
    path: str
    follow: dict[str, Outcome]
    # For operations acting on the final name itself; defaults to ``follow``.
    final: dict[str, Outcome] | None = None
    # Operation name -> outcome (in every mode, or per mode), where that operation differs.
    per_op: Mapping[str, Outcome | Mapping[str, Outcome]] = field(default_factory=dict)

    def expected(self, op: Operation, mode: str) -> Outcome:
        for name in (op.name, op.like):
            if name in self.per_op:
                outcome = self.per_op[name]
                return outcome if isinstance(outcome, Lands | Fails) else outcome[mode]
        if op.follows or self.final is None:
            return self.follow[mode]
        return self.final[mode]


# A trailing slash on an existing symlink: lookups (stat, open, readlink) follow it, while the
# calls that create or remove a name act on the link and refuse the slash, as Linux does.
LINK_WITH_SLASH: dict[str, Outcome] = {
    "mkdir": EEXIST,
    "symlink": EEXIST,
    "link_to": EEXIST,
    "remove": ENOTDIR,
    "rmdir": ENOTDIR,
    "rename_from": ENOTDIR,
    "rename_to": ENOTDIR,
    "rename_noreplace_to": ENOTDIR,
    "exchange_to": ENOTDIR,
    "rmtree": ENOTDIR,
    # Go's RemoveAll drops trailing slashes: the link itself is removed.
    "remove_all": Lands("link"),
    # open(O_CREAT) of "name/" is EISDIR before the name is looked at.
    "open_x": EISDIR,
    "open_w": EISDIR,
    "write_bytes": EISDIR,
    "touch": EISDIR,
}
# ``file/``: not a directory, except where Linux reports that the name already exists.
FILE_WITH_SLASH: dict[str, Outcome] = {
    "remove_all": Lands("file"),  # Go: "so RemoveAll("not_a_directory/") succeeds"
    "mkdir": EEXIST,
    "symlink": EEXIST,
    "link_to": EEXIST,
    "write_bytes": EISDIR,
    "touch": EISDIR,
    "open_x": EISDIR,
    "open_w": EISDIR,
}

# A symlink safefs moves (rename) or links (link) must still resolve beneath the root from its
# new directory: moving a link that leads outside from there is refused, in every mode.
PLANTS_ESCAPE: dict[str, Outcome] = {"rename_from": ESCAPE, "link_from": ESCAPE}
# A second link to a link that loops: where it leads cannot be judged (ELOOP), so it is not made.
# (Renamed, the loop's old name is gone: from the new name it leads to a missing entry.)
JUDGED_LOOP: dict[str, Outcome] = {"link_from": LOOP}

HOP = "$HOSTOUTSIDE"
CHAIN_40 = [f"l{i} => l{i + 1}" for i in range(39)] + ["l39 => target"]
CHAIN_41 = [f"l{i} => l{i + 1}" for i in range(40)] + ["l40 => target"]
CASES = [
    # -- ATTACKS.md "Paths and symlinks" ------------------------------------------------------
    Case("1-file", ["target"], "target", every(Lands("target"))),
    Case("2-deep-file", ["a/b/c/target"], "a/b/c/target", every(Lands("a/b/c/target"))),
    Case(
        "3-link-to-file",
        ["target", "link => target"],
        "link",
        each(Lands("target"), LOOP, Lands("target")),
        final=every(Lands("link")),
    ),
    Case(
        "4-link-to-parent",
        ["link => ../"],
        "link",
        each(ESCAPE, LOOP, Lands(".")),
        final=every(Lands("link")),
        per_op=PLANTS_ESCAPE,
    ),
    Case(
        "5-link-to-dir",
        ["dir/target", "link => dir/"],
        "link/target",
        each(Lands("dir/target"), LOOP, Lands("dir/target")),
    ),
    Case(
        "6-link-reenters-slash",
        ["target", "link => ../ROOT/target"],
        "link/",
        each(ESCAPE, LOOP, ENOENT),
        per_op={**LINK_WITH_SLASH, "resolve": each(ESCAPE, LOOP, Lands("ROOT/target"))},
    ),
    Case(
        "7-nested-link-up-two",
        ["dir/link => ../../"],
        "dir/link",
        each(ESCAPE, LOOP, Lands(".")),
        final=every(Lands("dir/link")),
        per_op=PLANTS_ESCAPE,
    ),
    Case(
        "8-link-chain-inside",
        ["link => a/b/c/target", "a/b => e", "a/e => ../f", "f => g/h/i", "g/h/i => ..", "g/c/target"],
        "link",
        each(Lands("g/c/target"), LOOP, Lands("g/c/target")),
        final=every(Lands("link")),
    ),
    Case("9-dots", ["a/b/target"], "./a/./b/./target", every(Lands("a/b/target"))),
    Case("10-dotdots-inside", ["a/b/target"], "a/../a/b/../../a/b/../b/target", every(Lands("a/b/target"))),
    Case("11-parent", [], "../", each(ESCAPE, ESCAPE, Lands("."))),
    Case("11-parent-no-slash", [], "..", each(ESCAPE, ESCAPE, Lands("."))),
    Case("12-up-twice", ["a/"], "a/../../", each(ESCAPE, ESCAPE, Lands("."))),
    Case("13-up-inside", ["a/", "target"], "a/../target", every(Lands("target"))),
    Case(
        "14-physical-dotdot",
        ["a => b/c", "b/c/", "b/target", "target"],
        "a/../target",
        each(Lands("b/target"), LOOP, Lands("b/target")),
    ),
    Case(
        "15-link-after-dotdot",
        ["a => b/c", "b/c/target"],
        "b/../a/target",
        each(Lands("b/c/target"), LOOP, Lands("b/c/target")),
    ),
    Case(
        "16-link-to-dot",
        ["a => b/.", "b/target"],
        "a/target",
        each(Lands("b/target"), LOOP, Lands("b/target")),
    ),
    # resolve() appends a missing tail, as a write with parents=True would create it.
    Case(
        "17-missing-parent",
        [],
        "a/file",
        every(ENOENT),
        per_op={"resolve": Lands("a/file"), "remove_all": Lands("a/file")},  # (Go: nothing to remove)
    ),
    Case("18-empty", [], "", every(ENOENT), per_op={"remove_all": Lands("")}),  # Go: nothing, no error
    Case("19-self-loop", ["a => a"], "a", every(LOOP), final=every(Lands("a")), per_op=JUDGED_LOOP),
    Case(
        "20-reenter-by-name",
        ["target", "ROOT/target"],
        "../ROOT/target",
        each(ESCAPE, ESCAPE, Lands("ROOT/target")),
    ),
    Case(
        "21-reenter-after-dir",
        ["a/", "target", "ROOT/target"],
        "a/../../ROOT/target",
        each(ESCAPE, ESCAPE, Lands("ROOT/target")),
    ),
    Case(
        "22-absolute-link-inside",
        ["target", "$HOSTROOT/target", "link => $ROOT/target"],
        "link",
        each(ESCAPE, LOOP, Lands("$HOSTROOT/target")),
        final=every(Lands("link")),
        per_op=PLANTS_ESCAPE,
    ),
    Case(
        "23-link-reenters",
        ["target", "ROOT/target", "link => ../ROOT/target"],
        "link",
        each(ESCAPE, LOOP, Lands("ROOT/target")),
        final=every(Lands("link")),
        per_op=PLANTS_ESCAPE,
    ),
    Case(
        "24-chain-escapes",
        ["link => a/b/c/target", "a/b => e", "a/e => ../../ROOT", "c/target", "ROOT/c/target"],
        "link",
        each(ESCAPE, LOOP, Lands("ROOT/c/target")),
        final=every(Lands("link")),
        per_op=PLANTS_ESCAPE,
    ),
    Case("25-file-slash", ["file"], "file/", every(ENOTDIR), per_op=FILE_WITH_SLASH),
    Case("25-file-dot", ["file"], "file/.", every(ENOTDIR)),
    Case("25-file-dotdot", ["file"], "file/..", every(ENOTDIR)),
    Case("26-link-up-then-new", ["d/d => .."], "d/d/new", each(Lands("new"), LOOP, Lands("new"))),
    Case(
        "27-abs-link-dir-slash",
        ["link => $OUTSIDE/dir", f"{HOP}/dir/target"],
        "link/",
        each(ESCAPE, LOOP, Lands(f"{HOP}/dir")),
        per_op=LINK_WITH_SLASH,
    ),
    Case(
        "27-abs-link-dir-file",
        ["link => $OUTSIDE/dir", f"{HOP}/dir/target"],
        "link/target",
        each(ESCAPE, LOOP, Lands(f"{HOP}/dir/target")),
    ),
    Case(
        "28-dangling-out",
        ["outside/", "link => ../outside/new"],
        "link",
        each(ESCAPE, LOOP, Lands("outside/new")),
        final=every(Lands("link")),
        per_op=PLANTS_ESCAPE,
    ),
    # -- ATTACKS.md "From the EscapeRoute advisories" -----------------------------------------
    Case("sibling-prefix-abs", ["target"], "$ROOT-other/secret", every(ESCAPE)),
    Case(
        "sibling-prefix-rel",
        ["ROOT-other/secret"],
        "../ROOT-other/secret",
        each(ESCAPE, ESCAPE, Lands("ROOT-other/secret")),
    ),
    Case("abs-root", ["a"], "$ROOT", every(Lands("."))),
    Case("abs-root-slash", ["a"], "$ROOT/", every(Lands("."))),
    Case("abs-double-slash", ["a"], "$ROOT//a", every(Lands("a"))),
    Case("abs-dot", ["a"], "$ROOT/./a", every(Lands("a"))),
    Case("abs-dotdot-inside", ["a/", "b"], "$ROOT/a/../b", every(Lands("b"))),
    Case("dotdot-sibling", ["a/", "b"], "a/../b", every(Lands("b"))),
    Case(
        "last-link-out-abs",
        ["link => $OUTSIDE/target", f"{HOP}/target"],
        "link",
        each(ESCAPE, LOOP, Lands(f"{HOP}/target")),
        final=every(Lands("link")),
        per_op=PLANTS_ESCAPE,
    ),
    Case(
        "last-link-out-rel",
        ["link => ../outside/target", "outside/target"],
        "link",
        each(ESCAPE, LOOP, Lands("outside/target")),
        final=every(Lands("link")),
        per_op=PLANTS_ESCAPE,
    ),
    Case(
        "dir-link-out-rel",
        ["evil => ../outside/dir", "outside/dir/target"],
        "evil/target",
        each(ESCAPE, LOOP, Lands("outside/dir/target")),
    ),
    Case(
        "dir-link-out-new",
        ["evil => ../outside/dir", "outside/dir/"],
        "evil/new",
        each(ESCAPE, LOOP, Lands("outside/dir/new")),
    ),
    Case(
        "dir-link-out-abs",
        ["evil => $OUTSIDE/dir", f"{HOP}/dir/"],
        "evil/new",
        each(ESCAPE, LOOP, Lands(f"{HOP}/dir/new")),
    ),
    Case(
        "dangling-out-abs",
        ["dang => $OUTSIDE/new", f"{HOP}/"],
        "dang",
        each(ESCAPE, LOOP, Lands(f"{HOP}/new")),
        final=every(Lands("dang")),
        per_op=PLANTS_ESCAPE,
    ),
    Case(
        "chain-in-in-out",
        ["l1 => l2", "l2 => d/l3", "d/l3 => ../../outside/target", "outside/target"],
        "l1",
        each(ESCAPE, LOOP, Lands("outside/target")),
        final=every(Lands("l1")),
        per_op=PLANTS_ESCAPE,
    ),
    Case("loop-pair", ["a => b", "b => a"], "a", every(LOOP), final=every(Lands("a")), per_op=JUDGED_LOOP),
    Case("loop-pair-inner", ["a => b", "b => a"], "a/x", every(LOOP)),
    Case("tilde-dir", ["~/x"], "~/x", every(Lands("~/x"))),
    Case("tilde", ["~/x"], "~", every(Lands("~"))),
    Case(
        "file-uri",
        ["target"],
        "file://$ROOT/target",
        every(ENOENT),
        per_op={"resolve": Lands("file:/$HOSTROOT/target"), "remove_all": Lands("file:/$HOSTROOT/target")},
    ),
    Case(
        "abs-through-link",
        ["evil => ../outside/dir", "outside/dir/target"],
        "$ROOT/evil/target",
        each(ESCAPE, LOOP, Lands("outside/dir/target")),
    ),
    # An absolute path is matched against the root's spelling component by component; what
    # follows is judged like a relative path (".." physically), so in_root keeps it inside.
    Case(
        "abs-dotdot-out",
        ["outside/target"],
        "$ROOT/../outside/target",
        each(ESCAPE, ESCAPE, Lands("outside/target")),
    ),
    # -- the kernel's limit of 40 symlinks per resolution --------------------------------------
    Case(
        "chain-of-40",
        [*CHAIN_40, "target"],
        "l0",
        each(Lands("target"), LOOP, Lands("target")),
        final=every(Lands("l0")),
    ),
    Case("chain-of-41", [*CHAIN_41, "target"], "l0", every(LOOP), final=every(Lands("l0"))),
    # -- legitimate paths through links --------------------------------------------------------
    Case(
        "link-up-inside",
        ["target", "dir/link => ../target"],
        "dir/link",
        each(Lands("target"), LOOP, Lands("target")),
        final=every(Lands("dir/link")),
        per_op=PLANTS_ESCAPE,
    ),
    Case(
        "dangling-inside",
        ["link => missing"],
        "link",
        each(Lands("missing"), LOOP, Lands("missing")),
        final=every(Lands("link")),
    ),
    Case("dir", ["d/x", "d/e/"], "d", every(Lands("d"))),
    Case("empty-dir", ["d/"], "d", every(Lands("d"))),
    Case("new-name", [], "new", every(Lands("new"))),
    Case("new-in-dir", ["d/"], "d/new", every(Lands("d/new"))),
]


# -- the tree, before and after ------------------------------------------------------------------


def snapshot(top: Path, skip: Path | None = None) -> dict[str, Any]:
    return tree_snapshot(top, skip=skip, inodes=True)


def without_inodes(snap: dict[str, Any]) -> dict[str, Any]:
    return {k: v[:-1] for k, v in snap.items()}


@dataclass
class Trial:
    root: safefs.Root
    path: str
    host: Path  # the root's directory, inspected with plain os to check what happened
    ws: Workspace
    op: Operation
    after: dict[str, Any] | None = None  # the tree as last seen after the operation

    def do(self) -> Any:
        """The operation under test, on the case's path, as the registry calls it."""
        return self.op.call(self.root, self.path)

    def at(self, rel: str) -> Path:
        return self.host / rel

    def kind(self, rel: str) -> str:
        try:
            mode = os.lstat(self.at(rel)).st_mode
        except FileNotFoundError:
            return "missing"
        if stat.S_ISLNK(mode):
            return "link"
        return "dir" if stat.S_ISDIR(mode) else "file"


def expect_error(exc: type[BaseException], code: int | None, fn: Callable[[], object]) -> None:
    with pytest.raises(exc) as info:
        fn()
    if code is not None:
        assert isinstance(info.value, OSError) and info.value.errno == code, info.value


def changed_only(t: Trial, before: dict[str, Any], *rels: str) -> None:
    """Everything in the root is as before except the entries named."""
    after = t.after = snapshot(t.host)
    keep = set(rels)
    assert {k: v for k, v in after.items() if k not in keep} == {
        k: v for k, v in before.items() if k not in keep
    }


# -- what each operation must do to the entry it lands on -----------------------------------------
# Each checks the effect of ``t.do()`` on the landing entry ``rel`` (file, dir, link or missing).

Check = Callable[[Trial, str, str, dict[str, Any]], None]


def check_read(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "file":
        got = t.do()
        assert (got if isinstance(got, bytes) else got.encode()) == t.at(rel).read_bytes()
    elif kind == "dir":
        expect_error(IsADirectoryError, None, t.do)
    else:
        expect_error(FileNotFoundError, None, t.do)
    changed_only(t, before)


def check_open_x(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        t.do()
        assert t.at(rel).read_text() == TEXT
        changed_only(t, before, rel)
    else:
        expect_error(FileExistsError, None, t.do)
        changed_only(t, before)


def check_stat(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        expect_error(FileNotFoundError, None, t.do)
    else:
        want = os.lstat(t.at(rel))
        assert t.do() == (stat.S_IFMT(want.st_mode), want.st_size if stat.S_ISREG(want.st_mode) else None)


def check_exists(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    want = {"exists": kind != "missing", "is_file": kind == "file", "is_dir": kind == "dir"}
    assert t.do() is want[t.op.name]


def check_write(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "dir":
        expect_error(IsADirectoryError, None, t.do)
        changed_only(t, before)
        return
    t.do()
    assert t.at(rel).read_bytes() == DATA and not t.at(rel).is_symlink()
    changed_only(t, before, rel)


def check_open_w(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "dir":
        expect_error(IsADirectoryError, None, t.do)
        changed_only(t, before)
        return
    t.do()
    assert t.at(rel).read_text() == TEXT and not t.at(rel).is_symlink()
    changed_only(t, before, rel)


def check_touch(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "dir":
        expect_error(IsADirectoryError, None, t.do)
        changed_only(t, before)
        return
    t.do()
    assert t.at(rel).is_file()
    if kind == "file":
        changed_only(t, before)
    else:
        assert t.at(rel).read_bytes() == b""
        changed_only(t, before, rel)


def check_mkdir(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        t.do()
        assert t.kind(rel) == "dir"
        changed_only(t, before, rel)
    else:
        expect_error(FileExistsError, None, t.do)
        changed_only(t, before)


def _plain_entries(p: Path) -> list[tuple[str, bool, bool, bool]]:
    with os.scandir(p) as it:
        return sorted(
            (e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False), e.is_symlink())
            for e in it
        )


def check_listing(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "dir":
        got = t.do()
        if t.op.name == "walk":
            _top, dirs, files = got[0]
            assert sorted(dirs + files) == sorted(os.listdir(t.at(rel)))
            assert dirs == sorted(e.name for e in os.scandir(t.at(rel)) if e.is_dir(follow_symlinks=False))
        elif got and isinstance(got[0], tuple):
            assert got == _plain_entries(t.at(rel))
        else:
            assert got == sorted(os.listdir(t.at(rel)))
    elif kind == "file":
        expect_error(NotADirectoryError, None, t.do)
    else:
        expect_error(FileNotFoundError, None, t.do)
    changed_only(t, before)


def check_remove(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, t.do)
    elif kind in ("file", "link"):
        t.do()
        assert t.kind(rel) == "missing"
        changed_only(t, before, rel)
        return
    elif kind == "dir":
        expect_error(IsADirectoryError, None, t.do)
    else:
        expect_error(FileNotFoundError, None, t.do)
    changed_only(t, before)


def check_rmdir(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, t.do)
    elif kind == "dir" and not os.listdir(t.at(rel)):
        t.do()
        assert t.kind(rel) == "missing"
        changed_only(t, before, rel)
        return
    elif kind == "dir":
        expect_error(OSError, errno.ENOTEMPTY, t.do)
    elif kind in ("file", "link"):
        expect_error(NotADirectoryError, None, t.do)
    else:
        expect_error(FileNotFoundError, None, t.do)
    changed_only(t, before)


def check_rename_from(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, t.do)
    elif kind == "missing":
        expect_error(FileNotFoundError, None, t.do)
    else:
        ino = os.lstat(t.at(rel)).st_ino
        t.do()
        assert t.kind(rel) == "missing" and os.lstat(t.at(MOVED)).st_ino == ino
        return
    changed_only(t, before)


def check_rename_to(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, t.do)
    elif kind == "dir":
        expect_error(IsADirectoryError, None, t.do)
    else:
        ino = os.lstat(t.at(SRC)).st_ino
        t.do()
        assert t.kind(SRC) == "missing" and os.lstat(t.at(rel)).st_ino == ino
        changed_only(t, before, rel, SRC)
        return
    changed_only(t, before)


def check_rename_noreplace_to(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, t.do)
    elif kind == "missing":
        ino = os.lstat(t.at(SRC)).st_ino
        t.do()
        assert t.kind(SRC) == "missing" and os.lstat(t.at(rel)).st_ino == ino
        changed_only(t, before, rel, SRC)
        return
    else:
        expect_error(FileExistsError, None, t.do)
    changed_only(t, before)


def check_exchange_to(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, t.do)
    elif "/" in rel:  # not in the directory of SRC
        expect_error(OSError, errno.EXDEV, t.do)
    elif kind == "missing":
        expect_error(FileNotFoundError, None, t.do)
    elif kind != "file":  # only regular files are exchanged: a link or directory never moves
        expect_error(OSError, None, t.do)
    else:
        inodes = os.lstat(t.at(SRC)).st_ino, os.lstat(t.at(rel)).st_ino
        t.do()
        assert (os.lstat(t.at(rel)).st_ino, os.lstat(t.at(SRC)).st_ino) == inodes
        changed_only(t, before, rel, SRC)
        return
    changed_only(t, before)


def check_rmtree(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, t.do)
    elif kind == "dir":
        t.do()
        assert t.kind(rel) == "missing"
        changed_only(t, before, *[k for k in before if k == rel or k.startswith(rel + "/")])
        return
    elif kind == "missing":
        expect_error(FileNotFoundError, None, t.do)
    else:  # a file, or a symlink: never followed
        expect_error(NotADirectoryError, None, t.do)
    changed_only(t, before)


def check_is_symlink(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    assert t.do() is (kind == "link")


def check_link_from(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == "." or kind == "dir":
        expect_error(OSError, None, t.do)
    elif kind == "missing":
        expect_error(FileNotFoundError, None, t.do)
    else:
        t.do()
        assert os.lstat(t.at(MOVED)).st_ino == os.lstat(t.at(rel)).st_ino
        changed_only(t, before, MOVED, rel)  # rel's link count went up
        return
    changed_only(t, before)


def check_link_to(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, t.do)
    elif kind == "missing":
        t.do()
        assert os.lstat(t.at(rel)).st_ino == os.lstat(t.at(SRC)).st_ino
        changed_only(t, before, rel, SRC)
        return
    else:
        expect_error(FileExistsError, None, t.do)
    changed_only(t, before)


def check_readlink(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "link":
        assert t.do() == os.readlink(t.at(rel))
    elif kind == "missing":
        expect_error(FileNotFoundError, None, t.do)
    else:
        expect_error(OSError, errno.EINVAL, t.do)


def check_symlink(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        t.do()
        assert os.readlink(t.at(rel)) == LINK_TARGET
        changed_only(t, before, rel)
    else:
        expect_error(FileExistsError, None, t.do)
        changed_only(t, before)


def check_chmod(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        expect_error(FileNotFoundError, None, t.do)
        changed_only(t, before)
        return
    t.do()
    assert stat.S_IMODE(os.lstat(t.at(rel)).st_mode) == NEW_MODE
    changed_only(t, before, rel)


def _born_as_asked(t: Trial, rel: str, kind: str) -> None:
    """A node the operation created has the mode asked for (less the umask); one that existed
    kept its own."""
    if kind == "missing":
        assert stat.S_IMODE(os.lstat(t.at(rel)).st_mode) == born(), oct(os.lstat(t.at(rel)).st_mode)


def check_write_mode(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    check_write(t, rel, kind, before)
    if kind != "dir":
        _born_as_asked(t, rel, kind)


def check_touch_mode(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    check_touch(t, rel, kind, before)
    if kind != "dir":
        _born_as_asked(t, rel, kind)


def check_open_x_perm(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    check_open_x(t, rel, kind, before)
    _born_as_asked(t, rel, kind)


def check_mkdir_mode(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    check_mkdir(t, rel, kind, before)
    _born_as_asked(t, rel, kind)


def check_utime(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        expect_error(FileNotFoundError, None, t.do)
    else:
        t.do()
        got = os.lstat(t.at(rel))
        assert (got.st_atime_ns, got.st_mtime_ns) == TIMES_NS
    changed_only(t, before)


def check_remove_all(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, errno.EINVAL, t.do)
    elif kind == "missing" or rel == "":
        t.do()  # nothing to remove is no error (Go's RemoveAll)
    else:  # a tree, a file, or a symlink itself: never followed
        t.do()
        assert t.kind(rel) == "missing"
        changed_only(t, before, *[k for k in before if k == rel or k.startswith(rel + "/")])
        return
    changed_only(t, before)


def check_resolve(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    assert t.do() == os.path.normpath(rel)


def check_copy_to(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "dir":
        expect_error(IsADirectoryError, None, t.do)
        changed_only(t, before)
        return
    t.do()
    assert t.at(rel).read_bytes() == t.at(SRC).read_bytes() and not t.at(rel).is_symlink()
    changed_only(t, before, rel)


def check_copy_from(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind != "file":
        expect_error(IsADirectoryError if kind == "dir" else FileNotFoundError, None, t.do)
        changed_only(t, before)
        return
    t.do()
    assert t.at(MOVED).read_bytes() == t.at(rel).read_bytes()
    changed_only(t, before, MOVED)


def check_chown(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        expect_error(FileNotFoundError, None, t.do)
    else:
        t.do()
    changed_only(t, before)


CHECKS: dict[str, Check] = {
    "read_bytes": check_read,
    "read_text": check_read,
    "read_head": check_read,
    "read_heads": check_read,
    "open": check_read,
    "stat": check_stat,
    "lstat": check_stat,
    "exists": check_exists,
    "is_file": check_exists,
    "is_dir": check_exists,
    "is_symlink": check_is_symlink,
    "listdir": check_listing,
    "iterdir": check_listing,
    "scandir": check_listing,
    "opendir": check_listing,
    "walk": check_listing,
    "resolve": check_resolve,
    "readlink": check_readlink,
    "write_bytes": check_write,
    "write_text": check_write,
    "open_w": check_open_w,
    "open_x": check_open_x,
    "touch": check_touch,
    "touch_mode": check_touch_mode,
    "write_bytes_mode": check_write_mode,
    "open_x_perm": check_open_x_perm,
    "mkdir_mode": check_mkdir_mode,
    "utime": check_utime,
    "utime_nofollow": check_utime,
    "remove_all": check_remove_all,
    "chmod": check_chmod,
    "mkdir": check_mkdir,
    "rmdir": check_rmdir,
    "rmtree": check_rmtree,
    "remove": check_remove,
    "unlink": check_remove,
    "rename_from": check_rename_from,
    "rename_to": check_rename_to,
    "replace_to": check_rename_to,
    "rename_noreplace_to": check_rename_noreplace_to,
    "exchange_to": check_exchange_to,
    "link_from": check_link_from,
    "link_to": check_link_to,
    "symlink": check_symlink,
    "copy_to": check_copy_to,
    "copy_from": check_copy_from,
    "move_from": check_rename_from,
    "move_to": check_rename_to,
    "chown": check_chown,
    "lchown": check_chown,
    "open_root": check_listing,
}
OPS = [op for op in OPERATIONS if op.scenario]
# Answered False (never raised) for anything but an escape.
PREDICATES = {"exists", "is_file", "is_dir", "is_symlink"}


def expand(text: str, ws: Workspace) -> str:
    return (
        text.replace("$OUTSIDE", str(ws.outside))
        .replace("$HOSTOUTSIDE", str(ws.outside).lstrip("/"))
        .replace("$HOSTROOT", str(ws.root_path).lstrip("/"))
        .replace("$ROOT", str(ws.root_path))
    )


def outside_everything(ws: Workspace) -> dict[str, Any]:
    """All of the workspace's parent directory except the root: the bait, and the sibling."""
    return snapshot(ws.base, skip=ws.root_path)


def run_one(
    case: Case,
    op: Operation,
    mode: str,
    ws: Workspace,
    before: dict[str, Any],
    outside_before: dict[str, Any],
    open_root: Callable[[], safefs.Root],
) -> None:
    root = open_root()
    t = Trial(root, expand(case.path, ws), ws.root_path, ws, op)
    try:
        outcome = case.expected(op, mode)
        if isinstance(outcome, Lands):
            rel = expand(outcome.rel, ws)
            CHECKS[op.name](t, rel, t.kind(rel), before)
        elif op.name in PREDICATES and outcome != ESCAPE:
            assert t.do() is False
        else:
            with pytest.raises(outcome.exc) as info:
                t.do()
            err = info.value
            assert isinstance(err, OSError)
            if outcome.errno is not None:
                assert err.errno == outcome.errno, err
            assert t.path in (err.filename, err.filename2), (err.filename, err.filename2)
            if str(ws.root_path) not in t.path:
                assert str(ws.root_path) not in str(err)
            assert snapshot(ws.root_path) == before
        assert outside_everything(ws) == outside_before, "something outside the root changed"
    finally:
        root.close()


def test_the_table_is_complete() -> None:
    assert len({c.id for c in CASES}) == len(CASES)
    assert set(CHECKS) == {op.name for op in OPS}
    for case in CASES:
        for table in (case.follow, case.final or case.follow):
            assert set(table) == {"beneath", "none", "in_root"}, case.id
        assert set(case.per_op) <= {op.name for op in OPS}, case.id


# The operations also run through a Root made by opendir() on the parent of ROOT: there the
# bait directory is inside the parent root, so only the sub-root's own fd keeps it out.
THROUGH_OPENDIR = {
    "read_bytes",
    "open_x",
    "stat",
    "lstat",
    "write_bytes",
    "mkdir",
    "listdir",
    "remove",
    "rename_to",
    "symlink",
    "resolve",
}
RUNS = [(op, "Root") for op in OPS] + [(op, "opendir") for op in OPS if op.name in THROUGH_OPENDIR]


@dataclass
class Arena:
    """One case's tree, built once per session beside its own bait; put back after a change."""

    ws: Workspace
    spec: list[str]
    as_built: dict[str, Any]
    pristine: dict[str, Any] = field(default_factory=dict)
    outside: dict[str, Any] = field(default_factory=dict)

    def ready(self) -> None:
        now = snapshot(self.ws.root_path)
        if now != self.pristine:  # an operation changed the tree: put back what differs
            restore_tree(self.ws.root_path, self.spec, lambda rel: now.get(rel) != self.pristine.get(rel))
            self.pristine = snapshot(self.ws.root_path)
            assert without_inodes(self.pristine) == self.as_built


@pytest.fixture(scope="session")
def arenas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Arena]:
    out = {}
    for case in CASES:
        base = tmp_path_factory.mktemp(case.id)
        ws = make_workspace(base)
        sibling = base / "ROOT-other"
        sibling.mkdir()
        (sibling / "secret").write_text("sibling secret\n")
        spec = [expand(item, ws) for item in [*case.tree, SRC]]
        build_tree(ws.root_path, spec)
        pristine = snapshot(ws.root_path)
        out[case.id] = Arena(ws, spec, without_inodes(pristine), pristine, outside_everything(ws))
    return out


@pytest.mark.parametrize(("op", "via"), RUNS, ids=[f"{op.name}-{via}" for op, via in RUNS])
def test_scenario(op: Operation, via: str, flavour: Flavour, arenas: dict[str, Arena]) -> None:
    """One operation on every case, each from the tree as built; failures name their case."""
    failures = []
    for case in CASES:
        arena = arenas[case.id]
        arena.ready()
        ws = arena.ws

        def opener(ws: Workspace = ws) -> safefs.Root:
            if via == "Root":
                return flavour.open(ws.root_path)
            with flavour.open(ws.base) as parent:
                return parent.opendir("ROOT")

        try:
            run_one(case, op, flavour.symlinks, ws, arena.pristine, arena.outside, opener)
        except (AssertionError, OSError, ValueError, pytest.fail.Exception) as exc:
            want = case.expected(op, flavour.symlinks)
            failures.append(f"{case.id} (expected {want}): {type(exc).__name__}: {exc}")
            if outside_everything(ws) != arena.outside:
                arena.outside = outside_everything(ws)  # report each change once
    assert not failures, "\n".join(failures)
