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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import safefs
from tests.conftest import Flavour, Workspace, build_tree, restore_tree

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
    # Operation name -> outcome in every mode, where that operation differs (as in ``os``).
    per_op: dict[str, Outcome] = field(default_factory=dict)

    def expected(self, op: Op, mode: str) -> Outcome:
        if op.name in self.per_op:
            return self.per_op[op.name]
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
    "rmtree": ENOTDIR,
    # open(O_CREAT) of "name/" is EISDIR before the name is looked at.
    "open_x": EISDIR,
    "open_w": EISDIR,
    "write_bytes": EISDIR,
    "touch": EISDIR,
}
# ``file/``: not a directory, except where Linux reports that the name already exists.
FILE_WITH_SLASH: dict[str, Outcome] = {
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

HOP = "$HOSTOUTSIDE"
CHAIN_40 = [f"l{i} => l{i + 1}" for i in range(39)] + ["l39 => target"]
CHAIN_41 = [f"l{i} => l{i + 1}" for i in range(40)] + ["l40 => target"]
CASES = [
    # -- ATTACKS.md "Paths and symlinks" ------------------------------------------------------
    Case("1-file", ["target"], "target", every(Lands("target"))),
    Case("2-deep-file", ["a/b/c/target"], "a/b/c/target", every(Lands("a/b/c/target"))),
    Case("3-link-to-file", ["target", "link => target"], "link",
         each(Lands("target"), LOOP, Lands("target")), final=every(Lands("link"))),
    Case("4-link-to-parent", ["link => ../"], "link",
         each(ESCAPE, LOOP, Lands(".")), final=every(Lands("link")),
         per_op=PLANTS_ESCAPE),
    Case("5-link-to-dir", ["dir/target", "link => dir/"], "link/target",
         each(Lands("dir/target"), LOOP, Lands("dir/target"))),
    Case("6-link-reenters-slash", ["target", "link => ../ROOT/target"], "link/",
         each(ESCAPE, LOOP, ENOENT), per_op=LINK_WITH_SLASH),
    Case("7-nested-link-up-two", ["dir/link => ../../"], "dir/link",
         each(ESCAPE, LOOP, Lands(".")), final=every(Lands("dir/link")),
         per_op=PLANTS_ESCAPE),
    Case("8-link-chain-inside",
         ["link => a/b/c/target", "a/b => e", "a/e => ../f", "f => g/h/i", "g/h/i => ..",
          "g/c/target"], "link",
         each(Lands("g/c/target"), LOOP, Lands("g/c/target")), final=every(Lands("link"))),
    Case("9-dots", ["a/b/target"], "./a/./b/./target", every(Lands("a/b/target"))),
    Case("10-dotdots-inside", ["a/b/target"], "a/../a/b/../../a/b/../b/target",
         every(Lands("a/b/target"))),
    Case("11-parent", [], "../", each(ESCAPE, ESCAPE, Lands("."))),
    Case("11-parent-no-slash", [], "..", each(ESCAPE, ESCAPE, Lands("."))),
    Case("12-up-twice", ["a/"], "a/../../", each(ESCAPE, ESCAPE, Lands("."))),
    Case("13-up-inside", ["a/", "target"], "a/../target", every(Lands("target"))),
    Case("14-physical-dotdot", ["a => b/c", "b/c/", "b/target", "target"], "a/../target",
         each(Lands("b/target"), LOOP, Lands("b/target"))),
    Case("15-link-after-dotdot", ["a => b/c", "b/c/target"], "b/../a/target",
         each(Lands("b/c/target"), LOOP, Lands("b/c/target"))),
    Case("16-link-to-dot", ["a => b/.", "b/target"], "a/target",
         each(Lands("b/target"), LOOP, Lands("b/target"))),
    Case("17-missing-parent", [], "a/file", every(ENOENT)),
    Case("18-empty", [], "", every(ENOENT)),
    Case("19-self-loop", ["a => a"], "a", every(LOOP), final=every(Lands("a"))),
    Case("20-reenter-by-name", ["target", "ROOT/target"], "../ROOT/target",
         each(ESCAPE, ESCAPE, Lands("ROOT/target"))),
    Case("21-reenter-after-dir", ["a/", "target", "ROOT/target"], "a/../../ROOT/target",
         each(ESCAPE, ESCAPE, Lands("ROOT/target"))),
    Case("22-absolute-link-inside", ["target", "$HOSTROOT/target", "link => $ROOT/target"], "link",
         each(ESCAPE, LOOP, Lands("$HOSTROOT/target")), final=every(Lands("link")),
         per_op=PLANTS_ESCAPE),
    Case("23-link-reenters", ["target", "ROOT/target", "link => ../ROOT/target"], "link",
         each(ESCAPE, LOOP, Lands("ROOT/target")), final=every(Lands("link")),
         per_op=PLANTS_ESCAPE),
    Case("24-chain-escapes",
         ["link => a/b/c/target", "a/b => e", "a/e => ../../ROOT", "c/target", "ROOT/c/target"],
         "link", each(ESCAPE, LOOP, Lands("ROOT/c/target")), final=every(Lands("link")),
         per_op=PLANTS_ESCAPE),
    Case("25-file-slash", ["file"], "file/", every(ENOTDIR), per_op=FILE_WITH_SLASH),
    Case("25-file-dot", ["file"], "file/.", every(ENOTDIR)),
    Case("25-file-dotdot", ["file"], "file/..", every(ENOTDIR)),
    Case("26-link-up-then-new", ["d/d => .."], "d/d/new",
         each(Lands("new"), LOOP, Lands("new"))),
    Case("27-abs-link-dir-slash", ["link => $OUTSIDE/dir", f"{HOP}/dir/target"], "link/",
         each(ESCAPE, LOOP, Lands(f"{HOP}/dir")), per_op=LINK_WITH_SLASH),
    Case("27-abs-link-dir-file", ["link => $OUTSIDE/dir", f"{HOP}/dir/target"], "link/target",
         each(ESCAPE, LOOP, Lands(f"{HOP}/dir/target"))),
    Case("28-dangling-out", ["outside/", "link => ../outside/new"], "link",
         each(ESCAPE, LOOP, Lands("outside/new")), final=every(Lands("link")),
         per_op=PLANTS_ESCAPE),
    # -- ATTACKS.md "From the EscapeRoute advisories" -----------------------------------------
    Case("sibling-prefix-abs", ["target"], "$ROOT-other/secret", every(ESCAPE)),
    Case("sibling-prefix-rel", ["ROOT-other/secret"], "../ROOT-other/secret",
         each(ESCAPE, ESCAPE, Lands("ROOT-other/secret"))),
    Case("abs-root", ["a"], "$ROOT", every(Lands("."))),
    Case("abs-root-slash", ["a"], "$ROOT/", every(Lands("."))),
    Case("abs-double-slash", ["a"], "$ROOT//a", every(Lands("a"))),
    Case("abs-dot", ["a"], "$ROOT/./a", every(Lands("a"))),
    Case("abs-dotdot-inside", ["a/", "b"], "$ROOT/a/../b", every(Lands("b"))),
    Case("dotdot-sibling", ["a/", "b"], "a/../b", every(Lands("b"))),
    Case("last-link-out-abs", ["link => $OUTSIDE/target", f"{HOP}/target"], "link",
         each(ESCAPE, LOOP, Lands(f"{HOP}/target")), final=every(Lands("link")),
         per_op=PLANTS_ESCAPE),
    Case("last-link-out-rel", ["link => ../outside/target", "outside/target"], "link",
         each(ESCAPE, LOOP, Lands("outside/target")), final=every(Lands("link")),
         per_op=PLANTS_ESCAPE),
    Case("dir-link-out-rel", ["evil => ../outside/dir", "outside/dir/target"], "evil/target",
         each(ESCAPE, LOOP, Lands("outside/dir/target"))),
    Case("dir-link-out-new", ["evil => ../outside/dir", "outside/dir/"], "evil/new",
         each(ESCAPE, LOOP, Lands("outside/dir/new"))),
    Case("dir-link-out-abs", ["evil => $OUTSIDE/dir", f"{HOP}/dir/"], "evil/new",
         each(ESCAPE, LOOP, Lands(f"{HOP}/dir/new"))),
    Case("dangling-out-abs", ["dang => $OUTSIDE/new", f"{HOP}/"], "dang",
         each(ESCAPE, LOOP, Lands(f"{HOP}/new")), final=every(Lands("dang")),
         per_op=PLANTS_ESCAPE),
    Case("chain-in-in-out",
         ["l1 => l2", "l2 => d/l3", "d/l3 => ../../outside/target", "outside/target"], "l1",
         each(ESCAPE, LOOP, Lands("outside/target")), final=every(Lands("l1")),
         per_op=PLANTS_ESCAPE),
    Case("loop-pair", ["a => b", "b => a"], "a", every(LOOP), final=every(Lands("a"))),
    Case("loop-pair-inner", ["a => b", "b => a"], "a/x", every(LOOP)),
    Case("tilde-dir", ["~/x"], "~/x", every(Lands("~/x"))),
    Case("tilde", ["~/x"], "~", every(Lands("~"))),
    Case("file-uri", ["target"], "file://$ROOT/target", every(ENOENT)),
    Case("abs-through-link", ["evil => ../outside/dir", "outside/dir/target"], "$ROOT/evil/target",
         each(ESCAPE, LOOP, Lands("outside/dir/target"))),
    # An absolute path is matched against the root's spelling component by component; what
    # follows is judged like a relative path (".." physically), so in_root keeps it inside.
    Case("abs-dotdot-out", ["outside/target"], "$ROOT/../outside/target",
         each(ESCAPE, ESCAPE, Lands("outside/target"))),
    # -- the kernel's limit of 40 symlinks per resolution --------------------------------------
    Case("chain-of-40", [*CHAIN_40, "target"], "l0",
         each(Lands("target"), LOOP, Lands("target")), final=every(Lands("l0"))),
    Case("chain-of-41", [*CHAIN_41, "target"], "l0", every(LOOP), final=every(Lands("l0"))),
    # -- legitimate paths through links --------------------------------------------------------
    Case("link-up-inside", ["target", "dir/link => ../target"], "dir/link",
         each(Lands("target"), LOOP, Lands("target")), final=every(Lands("dir/link")),
         per_op=PLANTS_ESCAPE),
    Case("dangling-inside", ["link => missing"], "link",
         each(Lands("missing"), LOOP, Lands("missing")), final=every(Lands("link"))),
    Case("dir", ["d/x", "d/e/"], "d", every(Lands("d"))),
    Case("empty-dir", ["d/"], "d", every(Lands("d"))),
    Case("new-name", [], "new", every(Lands("new"))),
    Case("new-in-dir", ["d/"], "d/new", every(Lands("d/new"))),
]


# -- the tree, before and after ------------------------------------------------------------------


def snapshot(top: Path, skip: Path | None = None) -> dict[str, Any]:
    """Every entry under ``top``: kind, content or link target, mode and inode."""
    out: dict[str, Any] = {".": stat.S_IMODE(top.stat().st_mode)}
    for dirpath, dirnames, filenames in os.walk(top):
        if skip is not None:
            dirnames[:] = [d for d in dirnames if Path(dirpath, d) != skip]
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = p.lstat()
            rel = str(p.relative_to(top))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p), st.st_ino)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), st.st_ino)
            else:
                out[rel] = ("file", p.read_bytes(), stat.S_IMODE(st.st_mode), st.st_ino)
    return out


def without_inodes(snap: dict[str, Any]) -> dict[str, Any]:
    return {k: v[:-1] if isinstance(v, tuple) else v for k, v in snap.items()}


@dataclass
class Trial:
    root: safefs.Root
    path: str
    host: Path  # the root's directory, inspected with plain os to check what happened
    ws: Workspace
    after: dict[str, Any] | None = None  # the tree as last seen after the operation

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


NEW_DATA = b"new bytes from the test\n"
SRC = "zz_src"  # a file made in every tree, for rename/link *to* the case path
MOVED = "zz_moved"
TARGET_OF_NEW_LINK = "zz_tgt"
NEW_MODE = 0o751


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
        k: v for k, v in before.items() if k not in keep}


# -- the operations ------------------------------------------------------------------------------
# Each checks its effect on the landing entry ``rel`` (of kind file, dir, link or missing).


@dataclass(frozen=True)
class Op:
    name: str
    follows: bool
    check: Callable[[Trial, str, str, dict[str, Any]], None]
    call: Callable[[Trial], object]

    def __str__(self) -> str:
        return self.name


def _read_check(read: Callable[[Trial], bytes]) -> Callable[[Trial, str, str, dict[str, Any]], None]:
    def check(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
        if kind == "file":
            assert read(t) == t.at(rel).read_bytes()
        elif kind == "dir":
            expect_error(IsADirectoryError, None, lambda: read(t))
        else:
            expect_error(FileNotFoundError, None, lambda: read(t))
        changed_only(t, before)
    return check


def _open_read(t: Trial) -> bytes:
    with t.root.open(t.path, "rb") as f:
        data: bytes = f.read()
    return data


def _open_x(t: Trial) -> None:
    with t.root.open(t.path, "x") as f:
        f.write("made exclusively\n")


def check_open_x(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        _open_x(t)
        assert t.at(rel).read_text() == "made exclusively\n"
        changed_only(t, before, rel)
    else:
        expect_error(FileExistsError, None, lambda: _open_x(t))
        changed_only(t, before)


def _stat_check(follow: bool) -> Callable[[Trial, str, str, dict[str, Any]], None]:
    def check(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
        call: Callable[[], os.stat_result] = (
            (lambda: t.root.stat(t.path)) if follow else (lambda: t.root.lstat(t.path)))
        if kind == "missing":
            expect_error(FileNotFoundError, None, call)
        else:
            got = call()
            want = os.lstat(t.at(rel))
            assert (got.st_ino, got.st_mode) == (want.st_ino, want.st_mode)
    return check


def check_exists(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    assert t.root.exists(t.path) is (kind != "missing")


def check_write(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "dir":
        expect_error(IsADirectoryError, None, lambda: t.root.write_bytes(t.path, NEW_DATA))
        changed_only(t, before)
        return
    assert t.root.write_bytes(t.path, NEW_DATA) == len(NEW_DATA)
    assert t.at(rel).read_bytes() == NEW_DATA and not t.at(rel).is_symlink()
    changed_only(t, before, rel)


def _open_w(t: Trial) -> None:
    with t.root.open(t.path, "w") as f:
        f.write("opened for writing\n")


def check_open_w(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "dir":
        expect_error(IsADirectoryError, None, lambda: _open_w(t))
        changed_only(t, before)
        return
    _open_w(t)
    assert t.at(rel).read_text() == "opened for writing\n" and not t.at(rel).is_symlink()
    changed_only(t, before, rel)


def check_touch(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "dir":
        expect_error(IsADirectoryError, None, lambda: t.root.touch(t.path))
        changed_only(t, before)
        return
    t.root.touch(t.path)
    assert t.at(rel).is_file()
    if kind == "file":
        changed_only(t, before)
    else:
        assert t.at(rel).read_bytes() == b""
        changed_only(t, before, rel)


def check_mkdir(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        t.root.mkdir(t.path)
        assert t.kind(rel) == "dir"
        changed_only(t, before, rel)
    else:
        expect_error(FileExistsError, None, lambda: t.root.mkdir(t.path))
        changed_only(t, before)


def _listing_check(names: Callable[[Trial], list[Any]], detailed: bool = True
                   ) -> Callable[[Trial, str, str, dict[str, Any]], None]:
    def check(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
        if kind == "dir":
            want = [(e.name, e.is_dir(follow_symlinks=False), e.is_symlink()) if detailed
                    else e.name for e in os.scandir(t.at(rel))]
            assert sorted(names(t)) == sorted(want)
        elif kind == "file":
            expect_error(NotADirectoryError, None, lambda: names(t))
        else:
            expect_error(FileNotFoundError, None, lambda: names(t))
        changed_only(t, before)
    return check


def _scan(t: Trial) -> list[Any]:
    return [(e.name, e.is_dir(follow_symlinks=False), e.is_symlink())
            for e in t.root.scandir(t.path)]


def _opendir_names(t: Trial) -> list[Any]:
    with t.root.opendir(t.path) as sub:
        return [(e.name, e.is_dir(follow_symlinks=False), e.is_symlink()) for e in sub.scandir()]


def check_remove(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, lambda: t.root.remove(t.path))
    elif kind in ("file", "link"):
        t.root.remove(t.path)
        assert t.kind(rel) == "missing"
        changed_only(t, before, rel)
        return
    elif kind == "dir":
        expect_error(IsADirectoryError, None, lambda: t.root.remove(t.path))
    else:
        expect_error(FileNotFoundError, None, lambda: t.root.remove(t.path))
    changed_only(t, before)


def check_rmdir(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if rel == ".":
        expect_error(OSError, None, lambda: t.root.rmdir(t.path))
    elif kind == "dir" and not os.listdir(t.at(rel)):
        t.root.rmdir(t.path)
        assert t.kind(rel) == "missing"
        changed_only(t, before, rel)
        return
    elif kind == "dir":
        expect_error(OSError, errno.ENOTEMPTY, lambda: t.root.rmdir(t.path))
    elif kind in ("file", "link"):
        expect_error(NotADirectoryError, None, lambda: t.root.rmdir(t.path))
    else:
        expect_error(FileNotFoundError, None, lambda: t.root.rmdir(t.path))
    changed_only(t, before)


def check_rename_from(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    call: Callable[[], object] = lambda: t.root.rename(t.path, MOVED)  # noqa: E731
    if rel == ".":
        expect_error(OSError, None, call)
    elif kind == "missing":
        expect_error(FileNotFoundError, None, call)
    else:
        ino = os.lstat(t.at(rel)).st_ino
        call()
        assert t.kind(rel) == "missing" and os.lstat(t.at(MOVED)).st_ino == ino
        return
    changed_only(t, before)


def check_rename_to(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    call: Callable[[], object] = lambda: t.root.rename(SRC, t.path)  # noqa: E731
    if rel == ".":
        expect_error(OSError, None, call)
    elif kind == "dir":
        expect_error(IsADirectoryError, None, call)
    else:
        ino = os.lstat(t.at(SRC)).st_ino
        call()
        assert t.kind(SRC) == "missing" and os.lstat(t.at(rel)).st_ino == ino
        changed_only(t, before, rel, SRC)
        return
    changed_only(t, before)


def check_rename_noreplace_to(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    call: Callable[[], object] = lambda: t.root.rename(SRC, t.path, replace=False)  # noqa: E731
    if rel == ".":
        expect_error(OSError, None, call)
    elif kind == "missing":
        ino = os.lstat(t.at(SRC)).st_ino
        call()
        assert t.kind(SRC) == "missing" and os.lstat(t.at(rel)).st_ino == ino
        changed_only(t, before, rel, SRC)
        return
    else:
        expect_error(FileExistsError, None, call)
    changed_only(t, before)


def check_rmtree(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    call: Callable[[], object] = lambda: t.root.rmtree(t.path)  # noqa: E731
    if rel == ".":
        expect_error(OSError, None, call)
    elif kind == "dir":
        call()
        assert t.kind(rel) == "missing"
        changed_only(t, before, *[k for k in before if k == rel or k.startswith(rel + "/")])
        return
    elif kind == "missing":
        expect_error(FileNotFoundError, None, call)
    else:  # a file, or a symlink: never followed
        expect_error(NotADirectoryError, None, call)
    changed_only(t, before)


def check_is_symlink(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    assert t.root.is_symlink(t.path) is (kind == "link")


def _walk_top(t: Trial) -> list[Any]:
    _top, dirs, files = next(iter(t.root.walk(t.path)))
    return [(n, True) for n in dirs] + [(n, False) for n in files]


def check_walk(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "dir":
        assert sorted(_walk_top(t)) == sorted(
            (e.name, e.is_dir(follow_symlinks=False)) for e in os.scandir(t.at(rel)))
    elif kind == "file":
        expect_error(NotADirectoryError, None, lambda: _walk_top(t))
    else:
        expect_error(FileNotFoundError, None, lambda: _walk_top(t))
    changed_only(t, before)


def check_link_from(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    call: Callable[[], object] = lambda: t.root.link(t.path, MOVED)  # noqa: E731
    if rel == "." or kind == "dir":
        expect_error(OSError, None, call)
    elif kind == "missing":
        expect_error(FileNotFoundError, None, call)
    else:
        call()
        assert os.lstat(t.at(MOVED)).st_ino == os.lstat(t.at(rel)).st_ino
        changed_only(t, before, MOVED, rel)  # rel's link count went up
        return
    changed_only(t, before)


def check_link_to(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    call: Callable[[], object] = lambda: t.root.link(SRC, t.path)  # noqa: E731
    if rel == ".":
        expect_error(OSError, None, call)
    elif kind == "missing":
        call()
        assert os.lstat(t.at(rel)).st_ino == os.lstat(t.at(SRC)).st_ino
        changed_only(t, before, rel, SRC)
        return
    else:
        expect_error(FileExistsError, None, call)
    changed_only(t, before)


def check_readlink(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "link":
        assert t.root.readlink(t.path) == os.readlink(t.at(rel))
    elif kind == "missing":
        expect_error(FileNotFoundError, None, lambda: t.root.readlink(t.path))
    else:
        expect_error(OSError, errno.EINVAL, lambda: t.root.readlink(t.path))


def check_symlink(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    call: Callable[[], object] = lambda: t.root.symlink(TARGET_OF_NEW_LINK, t.path)  # noqa: E731
    if kind == "missing":
        call()
        assert os.readlink(t.at(rel)) == TARGET_OF_NEW_LINK
        changed_only(t, before, rel)
    else:
        expect_error(FileExistsError, None, call)
        changed_only(t, before)


def check_chmod(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    if kind == "missing":
        expect_error(FileNotFoundError, None, lambda: t.root.chmod(t.path, NEW_MODE))
        changed_only(t, before)
        return
    t.root.chmod(t.path, NEW_MODE)
    assert stat.S_IMODE(os.lstat(t.at(rel)).st_mode) == NEW_MODE
    changed_only(t, before, rel)


def check_resolve(t: Trial, rel: str, kind: str, before: dict[str, Any]) -> None:
    assert t.root.resolve(t.path) == os.path.normpath(rel)


OPS = [
    Op("read_bytes", True, _read_check(lambda t: t.root.read_bytes(t.path)),
       lambda t: t.root.read_bytes(t.path)),
    Op("open", True, _read_check(_open_read), _open_read),
    Op("open_x", False, check_open_x, _open_x),
    Op("stat", True, _stat_check(True), lambda t: t.root.stat(t.path)),
    Op("lstat", False, _stat_check(False), lambda t: t.root.lstat(t.path)),
    Op("exists", True, check_exists, lambda t: t.root.exists(t.path)),
    Op("write_bytes", True, check_write, lambda t: t.root.write_bytes(t.path, NEW_DATA)),
    Op("open_w", True, check_open_w, _open_w),
    Op("touch", True, check_touch, lambda t: t.root.touch(t.path)),
    Op("mkdir", False, check_mkdir, lambda t: t.root.mkdir(t.path)),
    Op("listdir", True, _listing_check(lambda t: t.root.listdir(t.path), detailed=False),
       lambda t: t.root.listdir(t.path)),
    Op("scandir", True, _listing_check(_scan), _scan),
    Op("opendir", True, _listing_check(_opendir_names), _opendir_names),
    Op("remove", False, check_remove, lambda t: t.root.remove(t.path)),
    Op("rmdir", False, check_rmdir, lambda t: t.root.rmdir(t.path)),
    Op("rename_from", False, check_rename_from, lambda t: t.root.rename(t.path, MOVED)),
    Op("rename_to", False, check_rename_to, lambda t: t.root.rename(SRC, t.path)),
    Op("rename_noreplace_to", False, check_rename_noreplace_to,
       lambda t: t.root.rename(SRC, t.path, replace=False)),
    Op("rmtree", False, check_rmtree, lambda t: t.root.rmtree(t.path)),
    Op("is_symlink", False, check_is_symlink, lambda t: t.root.is_symlink(t.path)),
    Op("walk", True, check_walk, _walk_top),
    Op("link_from", False, check_link_from, lambda t: t.root.link(t.path, MOVED)),
    Op("link_to", False, check_link_to, lambda t: t.root.link(SRC, t.path)),
    Op("readlink", False, check_readlink, lambda t: t.root.readlink(t.path)),
    Op("symlink", False, check_symlink, lambda t: t.root.symlink(TARGET_OF_NEW_LINK, t.path)),
    Op("chmod", True, check_chmod, lambda t: t.root.chmod(t.path, NEW_MODE)),
    Op("resolve", True, check_resolve, lambda t: t.root.resolve(t.path)),
]


def expand(text: str, ws: Workspace) -> str:
    return (text.replace("$OUTSIDE", str(ws.outside))
            .replace("$HOSTOUTSIDE", str(ws.outside).lstrip("/"))
            .replace("$HOSTROOT", str(ws.root_path).lstrip("/"))
            .replace("$ROOT", str(ws.root_path)))


def outside_everything(ws: Workspace) -> dict[str, Any]:
    """All of the workspace's parent directory except the root: the bait, and the sibling."""
    return snapshot(ws.base, skip=ws.root_path)


def run_one(case: Case, op: Op, mode: str, ws: Workspace, before: dict[str, Any],
            outside_before: dict[str, Any], open_root: Callable[[], safefs.Root]
            ) -> dict[str, Any] | None:
    root = open_root()
    t = Trial(root, expand(case.path, ws), ws.root_path, ws)
    try:
        outcome = case.expected(op, mode)
        if isinstance(outcome, Lands):
            rel = expand(outcome.rel, ws)
            op.check(t, rel, t.kind(rel), before)
        elif op.name in ("exists", "is_symlink") and outcome != ESCAPE:
            assert getattr(root, op.name)(t.path) is False
        else:
            with pytest.raises(outcome.exc) as info:
                op.call(t)
            err = info.value
            assert isinstance(err, OSError)
            if outcome.errno is not None:
                assert err.errno == outcome.errno, err
            assert t.path in (err.filename, err.filename2), (err.filename, err.filename2)
            if str(ws.root_path) not in t.path:
                assert str(ws.root_path) not in str(err)
            t.after = snapshot(ws.root_path)
            assert t.after == before
        assert outside_everything(ws) == outside_before, "something outside the root changed"
    finally:
        root.close()
    return t.after


def test_the_table_is_complete() -> None:
    assert len({c.id for c in CASES}) == len(CASES)
    for case in CASES:
        for table in (case.follow, case.final or case.follow):
            assert set(table) == {"beneath", "none", "in_root"}, case.id
        assert set(case.per_op) <= {op.name for op in OPS}, case.id


# The operations also run through a Root made by opendir() on the parent of ROOT: there the
# bait directory is inside the parent root, so only the sub-root's own fd keeps it out.
THROUGH_OPENDIR = {"read_bytes", "open_x", "stat", "lstat", "write_bytes", "mkdir", "listdir",
                   "remove", "rename_to", "symlink", "resolve"}


@pytest.mark.parametrize("via", ["Root", "opendir"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_scenario(case: Case, via: str, flavour: Flavour, workspace: Workspace,
                  open_root: Callable[..., safefs.Root]) -> None:
    """Every operation on one case, each starting from the tree as built."""

    def sub_root() -> safefs.Root:
        with flavour.open(workspace.base) as parent:
            return parent.opendir("ROOT")

    opener: Callable[[], safefs.Root] = open_root if via == "Root" else sub_root
    ops = OPS if via == "Root" else [op for op in OPS if op.name in THROUGH_OPENDIR]
    sibling = workspace.base / "ROOT-other"
    sibling.mkdir()
    (sibling / "secret").write_text("sibling secret\n")
    failures = []
    spec = [expand(item, workspace) for item in [*case.tree, SRC]]
    build_tree(workspace.root_path, spec)
    pristine = snapshot(workspace.root_path)
    as_built = without_inodes(pristine)
    outside = outside_everything(workspace)
    last: dict[str, Any] | None = None
    for op in ops:
        now = snapshot(workspace.root_path) if last is None else last
        if now != pristine:  # the last operation changed the tree: put it back
            restore_tree(workspace.root_path, spec,
                         lambda rel: now.get(rel) != pristine.get(rel))  # noqa: B023
            pristine = snapshot(workspace.root_path)
            assert without_inodes(pristine) == as_built
        try:
            last = run_one(case, op, flavour.symlinks, workspace, pristine, outside, opener)
        except (AssertionError, OSError, ValueError, pytest.fail.Exception) as exc:
            want = case.expected(op, flavour.symlinks)
            failures.append(f"{op.name} (expected {want}): {type(exc).__name__}: {exc}")
            outside = outside_everything(workspace)  # report each change once
            last = None
    assert not failures, "\n".join(failures)
