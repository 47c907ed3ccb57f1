"""Races against a real attacker in another process (``safefs.testing.Swapper``).

While the attacker swaps names with ``renameat2(RENAME_EXCHANGE)`` as fast as it can, each test
runs operations for a bounded time and sorts every result into an allowed outcome (the inside
content, or a clean error) or a failure (outside content, an unexpected error). It prints the
counts (visible with ``pytest -s``), then asserts zero accesses outside (no outside content ever
returned, the outside tree unchanged, nothing created outside) and some successes.

Two control tests run naive guards under the same attacks and assert that they do leak (the usual
realpath-check-then-open guard, and an fd walk that takes ``..`` by name): the harness can see an
escape when there is one.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

import safefs
from safefs import _sys
from safefs.testing import Swapper
from tests.race_window import RACE_SECONDS
from tests.safefs.conftest import BACKENDS, Flavour, Workspace
from tests.safefs.registry import BY_NAME, DATA

pytestmark = pytest.mark.skipif(not _sys.have_renameat2(), reason="the attacker needs renameat2")


MAX_EXTENSION = 2.5
# A clean refusal: the escape itself, or what a lookup sees when a name changed under it.
# EAGAIN: openat2 gave up after its bounded retries against a rename storm (a clean error too).
CLEAN_ERRORS = {errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EAGAIN}

INSIDE_F = b"inside f\n"
OUTSIDE_F = b"OUTSIDE f: must never be read\n"
CLAMPED_F = b"ROOT/outside/f: inside, where in_root clamps ../outside\n"

FLAVOURS_BENEATH = [Flavour(b, "beneath") for b in BACKENDS]
FLAVOURS_IN_ROOT = [Flavour(b, "in_root") for b in BACKENDS]


def available(f: Flavour) -> Flavour:
    if f.backend == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("native extension not built")
    if f.backend == "walk-no-o-path" and not _sys.HAVE_O_PATH:
        pytest.skip("no O_PATH here: the plain walk already covers it")
    return f


class Tally:
    """Outcomes per operation. ``ESCAPE`` and ``unexpected:*`` are failures; ``ok`` (the inside
    content), ``ok:clamped`` (in_root's inside reading of ``../outside``) and clean errors are
    allowed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts: Counter[tuple[str, str]] = Counter()

    def run(self, op: str, attempt: Callable[[], str]) -> None:
        try:
            result = attempt()
        except safefs.PathEscapeError:
            result = "refused-escape"
        except OSError as exc:
            code = errno.errorcode.get(exc.errno or 0, str(exc.errno))
            result = code if exc.errno in CLEAN_ERRORS else f"unexpected:{code}:{exc}"
        self.counts[op, result] += 1

    def of(self, op: str, result: str) -> int:
        return self.counts[op, result]

    def failures(self) -> dict[tuple[str, str], int]:
        return {k: n for k, n in self.counts.items() if k[1] == "ESCAPE" or k[1].startswith("unexpected")}

    def report(self, swaps: int) -> None:
        lines = [f"[race] {self.name}: {swaps} attacker swaps"]
        for op in sorted({op for op, _ in self.counts}):
            parts = ", ".join(f"{r}={n}" for (o, r), n in sorted(self.counts.items()) if o == op)
            lines.append(f"    {op}: {parts}")
        print("\n".join(lines))

    def successes(self, op: str) -> int:
        return sum(n for (o, r), n in self.counts.items() if o == op and r.startswith("ok"))

    def assert_safe(self, ops: list[str]) -> None:
        assert not self.failures(), f"accesses outside or unclean errors: {self.failures()}"
        for op in ops:
            assert self.successes(op) > 0, f"{op}: no success at all in {RACE_SECONDS * MAX_EXTENSION}s"


def cycle_for(
    seconds: float, tally: Tally, ops: dict[str, Callable[[], str]], *, need_successes: bool = True
) -> None:
    """Run the operations round-robin until the time is up (the attacker runs meanwhile). On a
    loaded machine the scheduler can leave the attacker's state mostly one way for a while; then
    keep going, up to MAX_EXTENSION times as long, until every operation has succeeded at least
    once, so that "some successes" is asserted on evidence, not on luck."""
    start = time.monotonic()
    deadline = start + seconds
    while True:
        for op, attempt in ops.items():
            tally.run(op, attempt)
        now = time.monotonic()
        if now >= deadline and (
            not need_successes
            or now >= start + seconds * MAX_EXTENSION
            or all(tally.successes(op) for op in ops)
        ):
            return


@contextmanager
def attacked(a: Path, b: Path) -> Iterator[Swapper]:
    with Swapper(str(a), str(b)) as swapper:
        yield swapper


# -- a directory component swapped with a symlink to an outside directory --------------------


def make_dir_swap_tree(ws: Workspace) -> tuple[Path, Path]:
    """ROOT/d (real directory) and ROOT/evil -> ../outside, where outside holds bait with the
    same names. ROOT/outside is what ``in_root`` makes of ``../outside``: inside, so allowed."""
    d = ws.root_path / "d"
    d.mkdir()
    (d / "f").write_bytes(INSIDE_F)
    (d / "r0").write_bytes(b"renamed back and forth\n")
    (d / "INSIDE_ONLY").write_bytes(b"")
    (ws.outside / "f").write_bytes(OUTSIDE_F)
    (ws.outside / "r0").write_bytes(b"OUTSIDE r0\n")
    (ws.outside / "OUTSIDE_ONLY").write_bytes(b"")
    (ws.outside / "rm").write_bytes(b"OUTSIDE rm: must never be removed\n")
    (ws.outside / "victim").mkdir()
    (ws.outside / "victim" / "v").write_bytes(b"OUTSIDE victim/v: must never be removed\n")
    clamped = ws.root_path / "outside"
    clamped.mkdir()
    (clamped / "f").write_bytes(CLAMPED_F)
    (clamped / "r0").write_bytes(b"clamped r0\n")
    (clamped / "INSIDE_ONLY").write_bytes(b"")
    evil = ws.root_path / "evil"
    evil.symlink_to("../outside")
    return d, evil


# Registry operations run under the directory swap (names from tests/safefs/registry.py).
DIR_OPS = [
    "read_bytes",
    "stat",
    "listdir",
    "walk",
    "resolve",
    "write_bytes",
    "makedirs_exist_ok",
    "rename_from",
    "remove",
    "rmtree",
]


def run_dir_swap(flavour: Flavour, ws: Workspace) -> None:
    d, evil = make_dir_swap_tree(ws)
    clamped = ws.root_path / "outside"
    before = ws.snapshot_outside()
    beside = sorted(os.listdir(ws.base))  # ROOT's own parent: nothing may appear there either
    # The test's own handles on the two real inside directories, whatever their names become.
    homes = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in (d, clamped)]
    # stat through the registry gives (type, size): every bait file has a size of its own.
    assert len({len(INSIDE_F), len(CLAMPED_F), len(OUTSIDE_F)}) == 3
    inside_f = {(stat.S_IFREG, len(INSIDE_F)): "ok"}
    reads = {INSIDE_F: "ok"}
    resolved = {"d/f": "ok", "evil/f": "ok"}
    if flavour.symlinks == "in_root":
        reads[CLAMPED_F] = "ok:clamped"
        inside_f[stat.S_IFREG, len(CLAMPED_F)] = "ok:clamped"
        resolved["outside/f"] = "ok:clamped"
    tally = Tally(f"dir swap, {flavour}")
    n = 0

    def landed(name: str, check: Callable[[os.stat_result], bool]) -> bool:
        """Did ``name`` appear in one of the inside directories (the only allowed places)?"""
        for fd in homes:
            try:
                if check(os.stat(name, dir_fd=fd, follow_symlinks=False)):
                    return True
            except FileNotFoundError:
                pass
        return False

    with flavour.open(ws.root_path) as root:

        def read() -> str:
            return reads.get(BY_NAME["read_bytes"].call(root, "d/f"), "ESCAPE")

        def stat_f() -> str:
            return inside_f.get(BY_NAME["stat"].call(root, "d/f"), "ESCAPE")

        def listdir() -> str:
            names = BY_NAME["listdir"].call(root, "d")
            return "ok" if "INSIDE_ONLY" in names and "OUTSIDE_ONLY" not in names else "ESCAPE"

        def walk() -> str:
            _top, _dirs, files = BY_NAME["walk"].call(root, "d")[0]
            return "ok" if "INSIDE_ONLY" in files and "OUTSIDE_ONLY" not in files else "ESCAPE"

        def resolve() -> str:
            # The real directory may be named "evil" at that instant: still inside.
            return resolved.get(BY_NAME["resolve"].call(root, "d/f"), "ESCAPE")

        def write() -> str:
            nonlocal n
            n += 1
            name = f"w{n % 40}"
            os_unlink_quietly(name)
            BY_NAME["write_bytes"].call(root, f"d/{name}")
            found = landed(name, lambda s: stat.S_ISREG(s.st_mode) and s.st_size == len(DATA))
            return "ok" if found else "ESCAPE"

        def os_unlink_quietly(name: str) -> None:
            """The last write of that name must not pass for this one."""
            for fd in homes:
                try:
                    os.unlink(name, dir_fd=fd)
                except FileNotFoundError:
                    pass

        def mkdir_p() -> str:
            nonlocal n
            n += 1
            BY_NAME["makedirs_exist_ok"].call(root, f"d/mk{n}/sub")
            return "ok" if landed(f"mk{n}/sub", lambda s: stat.S_ISDIR(s.st_mode)) else "ESCAPE"

        def rename() -> str:
            nonlocal n
            n += 1
            src, dst = ("r0", "r1") if n % 2 else ("r1", "r0")
            BY_NAME["rename_from"].run(root, f"d/{src}", f"d/{dst}")
            return "ok" if landed(dst, lambda s: stat.S_ISREG(s.st_mode)) else "ESCAPE"

        def recreate(name: str, make: Callable[[], None]) -> None:
            """Put a victim back in the real directory (through the test's own handle) only when
            it is gone: creating takes the directory's lock, which the attacker's exchange also
            needs, and doing it every time would skew the timing of every other operation."""
            try:
                os.stat(name, dir_fd=homes[0], follow_symlinks=False)
            except FileNotFoundError:
                make()

        def remove() -> str:
            recreate("rm", lambda: os.close(os.open("rm", os.O_CREAT | os.O_WRONLY, dir_fd=homes[0])))
            BY_NAME["remove"].call(root, "d/rm")
            return "ok" if not landed("rm", lambda s: True) else "ESCAPE"

        def make_victim() -> None:
            os.mkdir("victim", dir_fd=homes[0])
            os.mkdir("victim/deeper", dir_fd=homes[0])
            os.close(os.open("victim/deeper/v", os.O_CREAT | os.O_WRONLY, dir_fd=homes[0]))

        def rmtree() -> str:
            recreate("victim", make_victim)
            BY_NAME["rmtree"].call(root, "d/victim")
            return "ok" if not landed("victim", lambda s: True) else "ESCAPE"

        attempts = dict(
            zip(
                DIR_OPS,
                [read, stat_f, listdir, walk, resolve, write, mkdir_p, rename, remove, rmtree],
                strict=True,
            )
        )
        with attacked(d, evil) as swapper:
            cycle_for(RACE_SECONDS, tally, attempts)
    for fd in homes:
        os.close(fd)
    tally.report(swapper.swaps)
    assert swapper.swaps > 1000, "the attacker hardly ran: the test proves nothing"
    assert ws.snapshot_outside() == before, "something outside the root changed"
    assert sorted(os.listdir(ws.base)) == beside, "something appeared beside the root"
    tally.assert_safe(DIR_OPS)


@pytest.mark.parametrize("flavour", FLAVOURS_BENEATH, ids=str)
def test_dir_swap_beneath(flavour: Flavour, workspace: Workspace) -> None:
    run_dir_swap(available(flavour), workspace)


@pytest.mark.parametrize("flavour", FLAVOURS_IN_ROOT, ids=str)
def test_dir_swap_in_root(flavour: Flavour, workspace: Workspace) -> None:
    run_dir_swap(available(flavour), workspace)


@pytest.mark.parametrize("flavour", [Flavour("openat2", "none"), Flavour("walk-no-o-path", "none")], ids=str)
def test_dir_swap_no_symlinks(flavour: Flavour, workspace: Workspace) -> None:
    run_dir_swap(available(flavour), workspace)


# -- the final component: a file swapped with a symlink to an outside file --------------------


INSIDE_FF = b"inside ff\n"


@pytest.mark.parametrize("flavour", [*FLAVOURS_BENEATH, Flavour("openat2", "in_root")], ids=str)
def test_final_component_swap(flavour: Flavour, workspace: Workspace) -> None:
    available(flavour)
    ws = workspace
    ff = ws.root_path / "ff"
    ff.write_bytes(INSIDE_FF)
    (ws.outside / "ff").write_bytes(b"OUTSIDE ff: never read, never written\n")
    (ws.root_path / "outside").mkdir()
    (ws.root_path / "outside" / "ff").write_bytes(b"ROOT/outside/ff, where the in_root mode clamps\n")
    lf = ws.root_path / "lf"
    lf.symlink_to("../outside/ff")
    allowed = {INSIDE_FF: "ok"}
    # stat through the registry gives (type, size): every bait file has a size of its own.
    inside_ids = {(stat.S_IFREG, len(INSIDE_FF)): "ok"}
    if flavour.symlinks == "in_root":
        clamped = ws.root_path / "outside" / "ff"
        allowed[clamped.read_bytes()] = "ok:clamped"
        inside_ids[stat.S_IFREG, clamped.stat().st_size] = "ok:clamped"
    sizes = [
        len(INSIDE_FF),
        (ws.outside / "ff").stat().st_size,
        (ws.root_path / "outside" / "ff").stat().st_size,
    ]
    assert len(set(sizes)) == 3, sizes
    before = ws.snapshot_outside()
    tally = Tally(f"final component swap, {flavour}")

    with flavour.open(ws.root_path) as root:

        def read() -> str:
            return allowed.get(BY_NAME["read_bytes"].call(root, "ff"), "ESCAPE")

        def stat_ff() -> str:
            return inside_ids.get(BY_NAME["stat"].call(root, "ff"), "ESCAPE")

        def write_in_place() -> str:
            # Rewrites the same bytes through the followed name: any write that went outside
            # changes the outside snapshot.
            return allowed.get(BY_NAME["open_rewrite"].call(root, "ff"), "ESCAPE")

        ops = {"read_bytes": read, "stat": stat_ff, "open_rewrite": write_in_place}
        with attacked(ff, lf) as swapper:
            cycle_for(RACE_SECONDS, tally, ops)
    tally.report(swapper.swaps)
    assert swapper.swaps > 1000
    assert ws.snapshot_outside() == before, "something outside the root changed"
    tally.assert_safe(list(ops))


# -- ".." through a directory that is being renamed -------------------------------------------


DEEP_PATH = "base/a/a/a/a/../../../../a/f"
INSIDE_DEEP = b"inside base/a/f\n"
DEEP_BAIT = b"BAIT reached by '..' from a moved directory\n"


@contextmanager
def moving_deep_directory(ws: Workspace) -> Iterator[Swapper]:
    """``ROOT/base/a/a`` exchanged, again and again, with ``outside/m`` (same shape). A resolver
    doing ``..`` by name from deep inside the moved subtree climbs outside/m/a, outside/m,
    outside and the directory holding ROOT, then opens ``a/f`` there: bait."""
    (ws.root_path / "base/a/a/a/a").mkdir(parents=True)
    (ws.root_path / "base/a/f").write_bytes(INSIDE_DEEP)
    (ws.outside / "m/a/a/a").mkdir(parents=True)
    for bait in (ws.base / "a", ws.outside / "m" / "a", ws.outside / "a"):
        bait.mkdir(exist_ok=True)
        (bait / "f").write_bytes(DEEP_BAIT)
    moving = ws.root_path / "base/a/a"
    (moving / "INSIDE_MARK").write_bytes(b"")
    before = ws.snapshot_outside()
    with Swapper(str(moving), str(ws.outside / "m")) as swapper:
        yield swapper
    # Two directories: the Swapper cannot tell which way round they are; the marker can.
    if not (moving / "INSIDE_MARK").exists():
        _sys.renameat2(
            _sys.AT_FDCWD, bytes(moving), _sys.AT_FDCWD, bytes(ws.outside / "m"), _sys.RENAME_EXCHANGE
        )
    assert ws.snapshot_outside() == before, "something outside the root changed"


@pytest.mark.parametrize("flavour", [*FLAVOURS_BENEATH, Flavour("walk", "in_root")], ids=str)
def test_dotdot_through_moving_directory(flavour: Flavour, workspace: Workspace) -> None:
    """The walk pops the directory fds it already holds; openat2 notices the rename (EAGAIN)
    and retries. Either way the inside file, or a clean error, never the bait."""
    available(flavour)
    tally = Tally(f"'..' through a moving directory, {flavour}")
    with flavour.open(workspace.root_path) as root:

        def read() -> str:
            return "ok" if root.read_bytes(DEEP_PATH) == INSIDE_DEEP else "ESCAPE"

        def resolve() -> str:
            return "ok" if root.resolve(DEEP_PATH) == "base/a/f" else "ESCAPE"

        ops = {"read_bytes": read, "resolve": resolve}
        with moving_deep_directory(workspace) as swapper:
            cycle_for(RACE_SECONDS, tally, ops)
    tally.report(swapper.swaps)
    assert swapper.swaps > 1000
    tally.assert_safe(list(ops))


# -- controls: the usual guards leak under the same attacks -----------------------------------


def naive_read(root_real: str, rel: str) -> bytes:
    """What the reference servers do: realpath, check containment, then open the path string.
    (Under the attack realpath itself sometimes fails with EINVAL: a link that lstat saw is a
    directory by the time readlink runs. Tally counts that as an unclean error of the guard.)"""
    full = os.path.realpath(os.path.join(root_real, rel))
    if not Path(full).is_relative_to(root_real):
        raise safefs.PathEscapeError(rel)
    with open(full, "rb") as f:
        return f.read()


def naive_dotdot_read(root_fd: int, rel: str) -> bytes:
    """An fd walk that checks the path lexically (``base/a/f``: inside) and never follows a
    symlink, but takes ``..`` by name: the kernel's parent of a directory that moved away."""
    if os.path.normpath(rel).startswith(".."):
        raise safefs.PathEscapeError(rel)
    *dirs, last = rel.split("/")
    fd = os.dup(root_fd)
    try:
        for name in dirs:
            step = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = step
        with open(os.open(last, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd), "rb") as f:
            return f.read()
    finally:
        os.close(fd)


def show_leak(
    name: str, attack: Callable[[], AbstractContextManager[Swapper]], read: Callable[[], bytes], inside: bytes
) -> None:
    escapes = 0
    for window in range(3):  # a slow machine may need more than one window to show it
        tally = Tally(f"CONTROL {name}, window {window + 1}")
        with attack() as swapper:
            cycle_for(
                RACE_SECONDS,
                tally,
                {"read": lambda: "ok" if read() == inside else "ESCAPE"},
                need_successes=False,
            )
        tally.report(swapper.swaps)
        escapes += tally.of("read", "ESCAPE")
        if escapes:
            break
    assert escapes > 0, f"the harness never saw {name} leak: it could not see an escape"


def test_control_realpath_guard_leaks(workspace: Workspace) -> None:
    d, evil = make_dir_swap_tree(workspace)
    root_real = os.path.realpath(workspace.root_path)
    show_leak(
        "realpath-check-then-open guard",
        lambda: attacked(d, evil),
        lambda: naive_read(root_real, "d/f"),
        INSIDE_F,
    )


def test_control_dotdot_by_name_leaks(workspace: Workspace) -> None:
    root_fd = os.open(workspace.root_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        show_leak(
            "'..' by name in an fd walk",
            lambda: moving_deep_directory(workspace),
            lambda: naive_dotdot_read(root_fd, DEEP_PATH),
            INSIDE_DEEP,
        )
    finally:
        os.close(root_fd)
