"""The kernel is the oracle: the walk must give openat2's answer for every tree and every path.

Hypothesis builds small random trees inside a fresh ``ROOT`` (directories, files, relative and
absolute symlinks, ``..`` chains, loops, dangling links, links to a sibling ``outside`` directory
that holds bait of the same names) and random paths over the same names plus ``.``, ``..``, empty
components, absolute spellings and trailing slashes. For each ``symlinks=`` mode, the walk with
and without O_PATH must reach the same inode (or the same bytes, or the same canonical path) as
the openat2 backend, or fail with the same class of error.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st

import safefs
from safefs import _sys
from tests.safefs.conftest import MODES, Backend, Flavour, tree_snapshot

pytestmark = pytest.mark.skipif(not _sys.HAVE_NATIVE, reason="the oracle needs openat2")

NAMES = ["a", "b", "c", "d"]
# Names that also exist one level up, so a ".." chain that escapes finds something real.
STEP_NAMES = [*NAMES, "outside", "ROOT", ".", "..", ""]
EXAMPLES_PER_MODE = 200

# The walks (in C, in C without O_PATH, in Python) and the kernel are compared.
ORACLE: Final = "openat2"
CANDIDATES: list[Backend] = ["walk", "walk-no-o-path", "walk-python"]

relative_paths = st.lists(st.sampled_from(STEP_NAMES), min_size=1, max_size=6).map("/".join)


@dataclass(frozen=True)
class Entry:
    path: str  # relative to ROOT, components from NAMES
    kind: str  # "dir", "file", "link" or "fifo"
    target: str = ""


def decorate(draw: st.DrawFn, path: str) -> str:
    """``path`` spelled differently: ``x/..`` detours, ``.`` and empty parts, a random tail."""
    parts = path.split("/") if path else []
    out: list[str] = []
    for part in parts:
        roll = draw(st.integers(0, 9))
        if roll == 0:
            out += [draw(st.sampled_from(STEP_NAMES)), ".."]
        elif roll == 1:
            out.append(draw(st.sampled_from([".", ""])))
        out.append(part)
    if draw(st.integers(0, 3)) == 0:
        out += draw(st.lists(st.sampled_from(STEP_NAMES), min_size=1, max_size=3))
    return "/".join(out) or "."


@st.composite
def link_targets(draw: st.DrawFn, link_dir: str, known: list[str]) -> str:
    """A symlink target: mostly at something that exists (relative, through the right number
    of ``..``, or absolute into ROOT), else random ``..`` chains, loops, absolute links out."""
    kind = draw(st.sampled_from(["known", "known", "known", "rel", "rel", "abs-root", "abs-out", "slash"]))
    if kind == "slash":
        return draw(st.sampled_from(["/", "/tmp", "/proc/self/cwd"]))
    if kind == "rel":
        return draw(relative_paths) or "."
    there = decorate(draw, draw(st.sampled_from(known)))
    if kind == "known":
        ups = link_dir.count("/") + 1 if link_dir else 0
        ups += draw(st.sampled_from([0, 0, 0, 1, -1]))  # sometimes one too many or too few
        return "/".join([".."] * max(ups, 0) + [there]) if ups > 0 else there
    return {"abs-root": "$ROOT/", "abs-out": "$OUT/"}[kind] + there


@st.composite
def trees(draw: st.DrawFn) -> list[Entry]:
    """Entries in creation order; each one's parent is a real directory created before it."""
    dirs = [""]
    taken: set[str] = set()
    entries: list[Entry] = []
    for _ in range(draw(st.integers(1, 14))):
        parent = draw(st.sampled_from(dirs))
        path = f"{parent}/{draw(st.sampled_from(NAMES))}".lstrip("/")
        kind = draw(st.sampled_from(["dir", "dir", "file", "file", "link", "link", "link", "fifo"]))
        if path in taken:
            continue
        taken.add(path)
        if kind == "link":
            # Targets may name entries made later (forward links, loops) or never (dangling).
            known = [*sorted(taken), *NAMES, "outside/a", "outside/b/c"]
            entries.append(Entry(path, kind, draw(link_targets(parent, known))))
        else:
            entries.append(Entry(path, kind))
            if kind == "dir":
                dirs.append(path)
    return entries


@st.composite
def caller_paths(draw: st.DrawFn, entries: list[Entry]) -> str:
    """What a caller might pass: mostly an existing entry respelled, else random steps;
    relative, absolute under ROOT or absolute elsewhere; sometimes with a trailing slash."""
    if entries and draw(st.integers(0, 3)) > 0:
        path = decorate(draw, draw(st.sampled_from(entries)).path)
    else:
        path = draw(relative_paths)
    prefix = draw(st.sampled_from(["", "", "", "", "", "", "$ROOT/", "$ROOT//", "$OUT/", "/"]))
    path = prefix + path
    if draw(st.integers(0, 4)) == 0:
        path += "/"
    return path or "."


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[Entry], list[str]]:
    entries = draw(trees())
    return entries, draw(st.lists(caller_paths(entries), min_size=1, max_size=8))


def build(base: str, entries: list[Entry]) -> tuple[str, str]:
    """ROOT and its sibling ``outside`` (bait with the same names, and a link back into ROOT)."""
    root = os.path.join(base, "ROOT")
    out = os.path.join(base, "outside")
    os.mkdir(root)
    os.mkdir(out)
    for name in NAMES:  # bait one level up too, for ".." chains that climb out of ROOT
        with open(os.path.join(base, name), "w") as f:
            f.write(f"BAIT {name} beside ROOT\n")
    os.mkdir(os.path.join(out, "b"))
    for rel in ("a", "c", "b/a", "b/c"):
        with open(os.path.join(out, rel), "w") as f:
            f.write(f"BAIT outside/{rel}\n")
    os.symlink("../ROOT", os.path.join(out, "d"))
    for e in entries:
        host = os.path.join(root, e.path)
        if e.kind == "dir":
            os.mkdir(host)
        elif e.kind == "file":
            with open(host, "w") as f:
                f.write(f"inside {e.path}\n")
        elif e.kind == "fifo":  # must never hang an operation, on any backend
            os.mkfifo(host)
        else:
            os.symlink(e.target.replace("$ROOT", root).replace("$OUT", out), host)
    return root, out


Outcome = tuple[Any, ...]


RACED = ("error", "EAGAIN")


def outcome(fn: Callable[[str], Any], path: str, base: str, other: str | None = None) -> Outcome:
    """What one call did: ("ok", value) or the class of error it raised.

    Every error must also name the caller's path (for a two-path operation, one of them) and
    never show the host path the caller did not give."""
    try:
        return ("ok", fn(path))
    except safefs.PathEscapeError as exc:
        err: OSError = exc
        kind: Outcome = ("escape",)
    except OSError as exc:
        err = exc
        kind = ("error", errno.errorcode.get(exc.errno or 0, exc.errno))
    if kind == RACED:
        return kind  # the oracle asks again; a scandir entry's own lookup names its own path
    given = (path,) if other is None else (path, other)
    assert err.filename in given, f"error names {err.filename!r}, not the caller's {given!r}"
    if not any(p.startswith(base) for p in given):
        assert base not in str(err), f"host path leaked in {err!s}"
    return kind


def oracle_outcome(
    fn: Callable[[str], Any], path: str, base: str, other: str | None = None
) -> Outcome | None:
    """The kernel's answer, or None when it has none to give. openat2 answers EAGAIN (after
    safefs's bounded retries) when any rename anywhere on the machine raced with a ".." step,
    and a shared CI machine renames a lot: ask again; still EAGAIN means "undetermined", never a
    verdict the walk should copy. A lookup that EAGAINs has changed nothing, so asking again
    is safe for changes too."""
    for _ in range(20):
        got = outcome(fn, path, base, other)
        if got != RACED:
            return got
        time.sleep(0.01)
    if currently_in_test_context():
        event("oracle undetermined: EAGAIN")
    return None


def stat_key(s: os.stat_result) -> tuple[int, int, int]:
    return (s.st_dev, s.st_ino, stat.S_IFMT(s.st_mode))


def operations(root: safefs.Root) -> dict[str, Callable[[str], Any]]:
    return {
        "stat": lambda p: stat_key(root.stat(p)),
        "lstat": lambda p: stat_key(root.lstat(p)),
        "read_bytes": root.read_bytes,
        "listdir": lambda p: sorted(root.listdir(p)),
        "resolve": root.resolve,
        "readlink": root.readlink,
        "scandir": lambda p: sorted(
            (e.name, e.is_dir(), e.is_file(), e.is_symlink()) for e in root.scandir(p)
        ),
        "opendir": lambda p: opened(root, p),
    }


def opened(root: safefs.Root, path: str) -> tuple[str, list[str]]:
    """Where opendir() lands, relative to the root, and what it lists there."""
    with root.opendir(path) as sub:
        return os.path.relpath(sub.path, root.path), sorted(sub.listdir("."))


def describe(entries: list[Entry]) -> str:
    return "\n".join(
        f"  {e.path}/"
        if e.kind == "dir"
        else f"  {e.path}"
        if e.kind == "file"
        else f"  {e.path} (fifo)"
        if e.kind == "fifo"
        else f"  {e.path} -> {e.target}"
        for e in entries
    )


def check_tree(mode: safefs.SymlinkMode, entries: list[Entry], paths: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="safefs-diff-") as base:
        root_path, out = build(base, entries)
        roots = {b: Flavour(b, mode).open(root_path) for b in [ORACLE, *CANDIDATES]}
        # The same paths again from a Root that opendir() made of the tree's first directory:
        # its ".." stops there, and absolute paths must lie under it.
        views = [("", roots)]
        sub = next((e.path for e in entries if e.kind == "dir"), None)
        if sub is not None:
            views.append((f"opendir({sub!r}).", {b: r.opendir(sub) for b, r in roots.items()}))
        try:
            for raw in paths:
                path = raw.replace("$ROOT", root_path).replace("$OUT", out)
                for view, view_roots in views:
                    compare_view(view, view_roots, mode, entries, raw, path, base)
                check_resolve_consistent(roots[ORACLE], path)
        finally:
            for _view, view_roots in views:
                for r in view_roots.values():
                    r.close()


def compare_view(
    view: str,
    roots: dict[Backend, safefs.Root],
    mode: safefs.SymlinkMode,
    entries: list[Entry],
    raw: str,
    path: str,
    base: str,
) -> None:
    for op in operations(roots[ORACLE]):
        want = oracle_outcome(operations(roots[ORACLE])[op], path, base)
        if want is None:
            continue
        if currently_in_test_context():
            event(f"{view}{op}: {want[0] if want[0] != 'error' else want[1]}")
        for b in CANDIDATES:
            got = outcome(operations(roots[b])[op], path, base)
            assert got == want, (
                f"{view}{op}({raw!r}) symlinks={mode!r}: {b} gave {got}, "
                f"openat2 gave {want}\ntree:\n{describe(entries)}"
            )


def check_resolve_consistent(root: safefs.Root, path: str) -> None:
    """resolve() is canonical and names what an operation reaches: no '.', '..' or empty parts,
    every directory along it a real directory (no symlink), and the same inode as stat(path) (or
    a missing name where stat(path) found nothing). Without ``strict`` it is the same answer
    wherever every directory on the way exists, and otherwise a real-directory prefix followed by
    the names a write with parents=True would create."""
    try:
        loose = root.resolve(path)
    except OSError:
        loose = None
    try:
        canonical = root.resolve(path, strict=True)
    except FileNotFoundError:
        if loose is not None:  # else past the missing name, the walk met another error
            check_canonical_prefix(root, path, loose)
        return
    except OSError:
        assert loose is None, (path, loose)
        return
    assert loose == canonical, (path, loose, canonical)
    check_canonical_prefix(root, path, canonical)
    try:
        reached = root.stat(path)
    except FileNotFoundError:
        with pytest.raises(FileNotFoundError):
            root.lstat(canonical)
        return
    except OSError:
        return
    assert stat_key(root.lstat(canonical)) == stat_key(reached), (path, canonical)


def check_canonical_prefix(root: safefs.Root, path: str, canonical: str) -> None:
    parts = [] if canonical == "." else canonical.split("/")
    assert all(c not in ("", ".", "..") for c in parts), canonical
    for i in range(1, len(parts)):
        try:
            st = root.lstat("/".join(parts[:i]))
        except FileNotFoundError:
            return  # the rest does not exist either
        assert stat.S_ISDIR(st.st_mode), (path, canonical)


@pytest.mark.slow  # a long property run against the kernel
@pytest.mark.parametrize("mode", MODES)
@settings(
    max_examples=EXAMPLES_PER_MODE,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario=scenarios())
def test_walk_agrees_with_openat2(mode: safefs.SymlinkMode, scenario: tuple[list[Entry], list[str]]) -> None:
    check_tree(mode, *scenario)


# Trees the random search is unlikely to hit by chance but that each pin down one rule.
KNOWN_TREES: list[tuple[list[Entry], list[str]]] = [
    # A chain of exactly 40 links resolves; one more is ELOOP, as in the kernel.
    (
        [Entry("a", "dir"), Entry("a/f", "file"), Entry("l0", "link", "a")]
        + [Entry(f"l{i}", "link", f"l{i - 1}") for i in range(1, 41)],
        ["l39/f", "l40/f", "l39", "l40", "l39/", "l40/"],
    ),
    # One budget for the whole operation: 30 links on the way to a directory and then 10 (or 11)
    # trailing links to a file make 40 (41, ELOOP), as the kernel counts them.
    (
        [Entry("a", "dir"), Entry("a/f", "file"), Entry("c0", "link", "a")]
        + [Entry(f"c{i}", "link", f"c{i - 1}") for i in range(1, 30)]
        + [Entry("a/t0", "link", "f")]
        + [Entry(f"a/t{i}", "link", f"t{i - 1}") for i in range(1, 11)],
        ["c29/t9", "c29/t10", "c29/t9/", "c29/t0", "c28/t10"],
    ),
    # Links whose target ends in "." or ".." designate directories, not "is a directory" errors.
    (
        [
            Entry("a", "dir"),
            Entry("a/b", "dir"),
            Entry("a/dot", "link", "."),
            Entry("a/up", "link", ".."),
            Entry("a/bup", "link", "b/.."),
            Entry("top", "link", "a/b/../.."),
        ],
        ["a/dot", "a/up", "a/bup", "top", "a/dot/", "a/up/b", "a/up/..", "a/dot/.."],
    ),
    # PATH_MAX: the kernel refuses 4096 bytes or more before any lookup; so must the walk.
    (
        [Entry("a", "dir"), Entry("a/f", "file"), Entry("l", "link", "a/" + "./" * 2040 + "f")],
        ["a/" + "./" * 2046 + "f", "a/" + "./" * 2046 + "/f", "a/" + "./" * 2047 + "f", "l"],
    ),
    # Loops, self links, dangling links and links out, as first or middle or last component.
    (
        [
            Entry("a", "dir"),
            Entry("s", "link", "s"),
            Entry("p", "link", "q"),
            Entry("q", "link", "p"),
            Entry("a/dang", "link", "../nowhere/x"),
            Entry("a/out", "link", "../../outside/a"),
            Entry("a/back", "link", "../../ROOT/a"),
            Entry("abs", "link", "$ROOT/a"),
        ],
        [
            "s",
            "s/",
            "p/x",
            "a/dang",
            "a/dang/",
            "a/out",
            "a/back",
            "abs",
            "abs/dang",
            "$ROOT/a/out",
            "a/../..",
            "$OUT/a",
            "../ROOT/a",
        ],
    ),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(KNOWN_TREES)))
def test_walk_agrees_with_openat2_on_known_trees(mode: safefs.SymlinkMode, case: int) -> None:
    entries, paths = KNOWN_TREES[case]
    check_tree(mode, entries, paths)


def test_differential_harness_notices_a_difference() -> None:
    """The comparison is not vacuous: an outcome differing between two trees is reported."""
    with tempfile.TemporaryDirectory() as base:
        root_path, _ = build(base, [Entry("a", "file")])
        with safefs.Root(root_path, resolver=ORACLE) as r:
            assert outcome(r.read_bytes, "a", base) == ("ok", b"inside a\n")
            assert outcome(r.read_bytes, "b", base) == ("error", "ENOENT")
            assert outcome(r.read_bytes, "../a", base) == ("escape",)
    shutil.rmtree(base, ignore_errors=True)


# -- changes: each backend on its own copy of the tree, compared by outcome and resulting tree --


MUTATIONS = [
    "write_bytes",
    "write_bytes parents",
    "open w",
    "open x",
    "open a",
    "touch",
    "mkdir",
    "mkdir -p",
    "remove",
    "rmdir",
    "rmtree",
    "rename",
    "rename no-clobber",
    "symlink",
    "link",
    "chmod",
    "lchmod",
]


def mutations(root: safefs.Root, other: str) -> dict[str, Callable[[str], Any]]:
    return {
        "write_bytes": lambda p: root.write_bytes(p, b"written\n"),
        "write_bytes parents": lambda p: root.write_bytes(p, b"written\n", parents=True),
        "open w": lambda p: root.open(p, "w").close(),
        "open x": lambda p: root.open(p, "x").close(),
        "open a": lambda p: root.open(p, "a").close(),
        "touch": root.touch,
        "mkdir": root.mkdir,
        "mkdir -p": lambda p: root.mkdir(p, parents=True, exist_ok=True),
        "remove": root.remove,
        "rmdir": root.rmdir,
        "rmtree": root.rmtree,
        "rename": lambda p: root.rename(p, other),
        "rename no-clobber": lambda p: root.rename(p, other, replace=False),
        "symlink": lambda p: root.symlink("a/b", p),
        "link": lambda p: root.link(p, other),
        "chmod": lambda p: root.chmod(p, 0o700),
        "lchmod": lambda p: root.chmod(p, 0o700, follow_symlinks=False),
    }


def snapshot(base: str) -> dict[str, Any]:
    """Everything under ``base`` (ROOT, outside and the bait beside them), by content. Each
    backend's copy has its own ``base``: an in_root link spelled with it creates directories
    named after it, so it is written ``$BASE`` here."""
    return tree_snapshot(base, spell_base=base)


@st.composite
def change_paths(draw: st.DrawFn, entries: list[Entry]) -> str:
    """Half the time a plain existing path or a new name in an existing directory (so changes
    succeed often), else any caller path."""
    roll = draw(st.integers(0, 3))
    if roll == 0 and entries:
        return draw(st.sampled_from(entries)).path
    if roll == 1:
        parent = draw(st.sampled_from(["", *(e.path for e in entries)]))
        return f"{parent}/{draw(st.sampled_from([*NAMES, 'new']))}".lstrip("/")
    return draw(caller_paths(entries))


@st.composite
def change_scenarios(draw: st.DrawFn) -> tuple[list[Entry], list[tuple[str, str, str]]]:
    entries = draw(trees())
    steps = draw(
        st.lists(
            st.tuples(st.sampled_from(MUTATIONS), change_paths(entries), change_paths(entries)),
            min_size=1,
            max_size=4,
        )
    )
    return entries, steps


def check_changes(mode: safefs.SymlinkMode, entries: list[Entry], steps: list[tuple[str, str, str]]) -> None:
    with tempfile.TemporaryDirectory(prefix="safefs-diff-") as tmp:
        trees_by_backend: dict[Backend, tuple[str, safefs.Root]] = {}
        try:
            for b in [ORACLE, *CANDIDATES]:
                base = os.path.join(tmp, b)
                os.mkdir(base)
                root_path, _out = build(base, entries)
                trees_by_backend[b] = (base, Flavour(b, mode).open(root_path))
            for op, raw, raw_other in steps:
                results: dict[Backend, Outcome | None] = {}
                for b, (base, root) in trees_by_backend.items():
                    path, other = (
                        r.replace("$ROOT", root.path).replace("$OUT", base + "/outside")
                        for r in (raw, raw_other)
                    )
                    ops = mutations(root, other)
                    assert list(ops) == MUTATIONS
                    results[b] = (oracle_outcome if b == ORACLE else outcome)(ops[op], path, base, other)
                want = results[ORACLE]
                if want is None:
                    # The trees may now differ (the walk made the change): nothing more to compare.
                    return
                if currently_in_test_context():
                    event(f"{op}: {want[0]}")
                for b in CANDIDATES:
                    got = results[b]
                    assert got is not None
                    assert got == want, (
                        f"{op}({raw!r}, {raw_other!r}) symlinks={mode!r}: {b} gave {got}, "
                        f"openat2 gave {want}\\ntree:\\n{describe(entries)}"
                    )
            final = snapshot(trees_by_backend[ORACLE][0])
            for b in CANDIDATES:
                assert snapshot(trees_by_backend[b][0]) == final, (
                    f"{b} left a different tree than openat2 after {steps}, symlinks={mode!r}"
                    f"\\ntree:\\n{describe(entries)}"
                )
        finally:
            for _base, root in trees_by_backend.values():
                root.close()


@pytest.mark.slow  # a long property run against the kernel
@pytest.mark.parametrize("mode", MODES)
@settings(
    max_examples=EXAMPLES_PER_MODE // 2,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario=change_scenarios())
def test_walk_changes_the_same_things_as_openat2(
    mode: safefs.SymlinkMode, scenario: tuple[list[Entry], list[tuple[str, str, str]]]
) -> None:
    check_changes(mode, *scenario)
