"""The walk in C (safefs/fastpath.c) against the walk in Python (safefs/_resolve/walk.py).

The Python walk is the reference. Both open the same path beneath the same root fd with the same
flags, in every ``symlinks=`` mode, with and without O_PATH, and must give the same answer: the
same inode (and the same kind of fd), or the same error. The trees are the scenario table's and
random ones (hypothesis, the differential test's trees and caller paths). A whole read_bytes is
compared too, and the C walk's flag-policy guard is exercised.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import safefs
from safefs import _fastpath, _sys
from safefs._paths import relative_to_root
from safefs._resolve import WalkResolver
from tests.fds import open_fds
from tests.safefs.conftest import MODES, build_tree, make_workspace
from tests.safefs.test_differential import Entry, build, scenarios
from tests.safefs.test_scenarios import CASES, expand

pytestmark = pytest.mark.skipif(not _fastpath.AVAILABLE, reason="native extension not built")

O_PATH_CHOICES = [True, False] if _sys.HAVE_O_PATH else [False]
READ = os.O_RDONLY | _sys.O_NONBLOCK
# (flags, follow): the opens the resolvers make for read, open(), opendir, stat and chmod.
OPENS: list[tuple[int, bool]] = [
    (READ, True),
    (READ, False),
    (os.O_RDONLY | _sys.O_DIRECTORY, True),
    (os.O_RDONLY | _sys.O_DIRECTORY, False),
    *([(_sys.O_PATH, True), (_sys.O_PATH, False)] if _sys.HAVE_O_PATH else []),
    (os.O_WRONLY | os.O_CREAT | os.O_EXCL, True),  # what each walk creates is removed again
]

Outcome = tuple[Any, ...]


def opened(open_fd: Callable[[], int]) -> Outcome:
    """What one open did: the inode and kind it reached, with its access mode; or the error."""
    try:
        fd = open_fd()
    except safefs.PathEscapeError:
        return ("escape",)
    except OSError as exc:
        return ("error", errno.errorcode.get(exc.errno or 0, exc.errno))
    try:
        st = os.fstat(fd)
        access = fcntl.fcntl(fd, fcntl.F_GETFL) & (os.O_ACCMODE | _sys.O_PATH)
        cloexec = bool(fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
        return ("ok", st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode), access, cloexec)
    finally:
        os.close(fd)


def read(fn: Callable[[], bytes]) -> Outcome:
    try:
        return ("ok", fn())
    except safefs.PathEscapeError:
        return ("escape",)
    except OSError as exc:
        return ("error", type(exc).__name__, errno.errorcode.get(exc.errno or 0, exc.errno))


def remove_created(base: str, outcome: Outcome) -> Outcome:
    """An exclusive create that succeeded made a new file: remove it (found by its inode), so
    the other walk meets the same tree. The inode number is left out of the comparison."""
    if outcome[0] != "ok":
        return outcome
    for dirpath, _dirs, files in os.walk(base):
        for name in files:
            if os.lstat(os.path.join(dirpath, name)).st_ino == outcome[2]:
                os.unlink(os.path.join(dirpath, name))
                return ("created", os.path.relpath(dirpath, base), name, *outcome[3:])
    raise AssertionError("an exclusive create succeeded, but its file is nowhere")


def compare(
    root_fd: int, mode: safefs.SymlinkMode, use_o_path: bool, rel: bytes, tree: str, base: str
) -> int:
    """Both walks on ``rel``: every open of OPENS and a whole read. Returns the comparisons made."""
    c_walk = WalkResolver(mode, use_o_path=use_o_path, native=True)
    py_walk = WalkResolver(mode, use_o_path=use_o_path, native=False)
    assert c_walk.native and not py_walk.native
    made = 0
    for flags, follow in OPENS:
        want = opened(partial(py_walk.open_python, root_fd, rel, flags, 0o600, follow=follow))
        if flags & os.O_CREAT:
            want = remove_created(base, want)
        got = opened(partial(c_walk.open, root_fd, rel, flags, 0o600, follow=follow))
        if flags & os.O_CREAT:
            got = remove_created(base, got)
        assert got == want, (
            f"open({rel!r}, flags={flags:#o}, follow={follow}) symlinks={mode} o_path={use_o_path}: "
            f"C walk {got}, Python walk {want}\ntree:\n{tree}"
        )
        made += 1
    want = read(lambda: py_walk.read_bytes(root_fd, rel))
    got = read(lambda: c_walk.read_bytes(root_fd, rel))
    assert got == want, f"read_bytes({rel!r}) symlinks={mode} o_path={use_o_path}: C {got}, Python {want}"
    return made + 1


def root_relative(path: str, root: str) -> bytes | None:
    raw = os.fsencode(path)
    if not raw:
        return None  # "": refused before any resolver sees it
    if not raw.startswith(b"/"):
        return raw
    try:
        return relative_to_root(raw, (os.fsencode(root),))
    except safefs.PathEscapeError:
        return None  # an absolute path elsewhere: refused before any resolver sees it


@pytest.mark.parametrize("use_o_path", O_PATH_CHOICES, ids=lambda v: "o-path" if v else "no-o-path")
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_scenario_table(tmp_path: Path, case: Any, use_o_path: bool) -> None:
    ws = make_workspace(tmp_path)
    build_tree(ws.root_path, [expand(item, ws) for item in case.tree])
    rel = root_relative(expand(case.path, ws), str(ws.root_path))
    if rel is None:
        pytest.skip("the path never reaches a resolver")
    fd = os.open(ws.root_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for mode in MODES:
            compare(fd, mode, use_o_path, rel, "\n".join(case.tree), str(tmp_path))
    finally:
        os.close(fd)


@pytest.mark.slow  # a long property run
@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario=scenarios())
def test_random_trees(scenario: tuple[list[Entry], list[str]]) -> None:
    entries, paths = scenario
    with tempfile.TemporaryDirectory(prefix="safefs-cwalk-") as base:
        root_path, out = build(base, entries)
        tree = "\n".join(f"  {e.path} {e.kind} {e.target}" for e in entries)
        fd = os.open(root_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for raw in paths:
                rel = root_relative(raw.replace("$ROOT", root_path).replace("$OUT", out), root_path)
                if rel is None:
                    continue
                for mode in MODES:
                    for use_o_path in O_PATH_CHOICES:
                        compare(fd, mode, use_o_path, rel, tree, base)
        finally:
            os.close(fd)


def test_deep_tree_and_long_link_chains(tmp_path: Path) -> None:
    """Past the C walk's 64 inline fds (it grows its stack), and the 40-link budget exactly."""
    deep = "/".join(f"d{i}" for i in range(150))
    (tmp_path / deep).mkdir(parents=True)
    (tmp_path / deep / "f").write_bytes(b"deep")
    for i in range(41):
        os.symlink(f"l{i + 1}" if i < 40 else deep, tmp_path / f"l{i}")
    ups = "/".join([".."] * 150)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        before = open_fds()
        made = 0
        for rel in [f"{deep}/f", f"{deep}/{ups}/{deep}/f", f"{deep}/{ups}/..", "l1/f", "l0/f", "l0", "l1"]:
            for mode in MODES:
                made += compare(fd, mode, True, rel.encode(), "deep", str(tmp_path))
        assert open_fds() == before, "the walks left fds open"
    finally:
        os.close(fd)
    print(f"[cwalk] deep tree: {made} comparisons")
    with safefs.Root(tmp_path, resolver="walk") as root:
        assert root.read_bytes(f"{deep}/f") == b"deep"
        assert root.read_bytes("l1/f") == b"deep"  # 40 links
        with pytest.raises(OSError) as info:
            root.read_bytes("l0/f")  # 41 links
        assert info.value.errno == errno.ELOOP


def test_c_code_refuses_flags_that_skipped_the_policy(tmp_path: Path) -> None:
    """The C side adds no flag: it refuses flags without O_CLOEXEC, or without O_NOFOLLOW where
    nothing may be followed, so a caller that bypassed open_flags() cannot leak or follow."""
    (tmp_path / "f").write_bytes(b"x")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    lib = _fastpath.lib
    try:
        walk = _fastpath.walk_params("beneath", _sys.open_flags(_sys.dir_flags(True)))
        good = _sys.open_flags(os.O_RDONLY)
        ok = lib.safefs_open(walk, fd, b"f", good, 0, 1)
        assert ok >= 0
        os.close(ok)
        assert lib.safefs_open(walk, fd, b"f", os.O_RDONLY, 0, 1) == lib.SAFEFS_EPOLICY
        assert lib.safefs_open(walk, fd, b"f", os.O_RDONLY | os.O_CLOEXEC, 0, 1) == lib.SAFEFS_EPOLICY
        lax_walk = _fastpath.walk_params("beneath", _sys.dir_flags(True))  # no O_CLOEXEC
        assert lib.safefs_open(lax_walk, fd, b"f", good, 0, 1) == lib.SAFEFS_EPOLICY
        if _sys.HAVE_NATIVE:
            kernel = _fastpath.openat2_params(_sys.RESOLVE_BENEATH)
            assert lib.safefs_open(kernel, fd, b"f", os.O_RDONLY, 0, 1) == lib.SAFEFS_EPOLICY
        with pytest.raises(OSError) as info:
            _fastpath.open_path(walk, fd, b"f", os.O_RDONLY, 0, True)
        assert info.value.errno == errno.EINVAL
        bad_create = os.O_WRONLY | os.O_CREAT | os.O_EXCL
        good_dir = _sys.open_flags(os.O_RDONLY | _sys.O_DIRECTORY)
        args = (fd, b"g", b"tok", b".safefs-tmp", b"x", 1, -1, 0o600, 0)
        assert lib.safefs_write_named(*args, bad_create, good_dir) == lib.SAFEFS_EPOLICY
        assert lib.safefs_write_named(*args, _sys.open_flags(bad_create), 0) == lib.SAFEFS_EPOLICY
        assert sorted(os.listdir(tmp_path)) == ["f"]  # nothing was created
        assert lib.safefs_write_named(*args, _sys.open_flags(bad_create), good_dir) == 0
        assert sorted(os.listdir(tmp_path)) == ["f", "g"]
    finally:
        os.close(fd)


@pytest.mark.parametrize("via", ["plain", "cffi"])
@pytest.mark.parametrize("backend", ["openat2", "walk"])
def test_every_read_path_closes_its_fd_once(
    tmp_path: Path, backend: safefs.ResolverName, via: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each way out of the native read (a file in the scratch buffer, one that exactly fills it,
    a larger one, an empty one, a directory, a FIFO, a missing name, an escape, a loop) leaves
    no fd open and closes none it does not own (the root's fd still works afterwards). ``via``:
    the plain CPython function of safefs/fastread.c, or the cffi call of the same C."""
    if backend == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("openat2 needs Linux")
    if via == "plain" and _fastpath._native_read is None:
        pytest.skip("safefs._native_read not built")
    if via == "cffi":
        monkeypatch.setattr(_fastpath, "_native_read", None)
    sizes = {
        "empty": 0,
        "small": 4096,
        "exact": _fastpath.SCRATCH_SIZE,
        "large": 3 * _fastpath.SCRATCH_SIZE + 5,
    }
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(b"z" * size)
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    os.symlink("loop", tmp_path / "loop")
    bad = ["dir", "fifo", "missing", "../x", "loop", "small/x"]
    with safefs.Root(tmp_path, resolver=backend) as root:
        kind = type(root._resolver.read_bytes).__name__
        assert kind == ("builtin_function_or_method" if via == "plain" else "function")
        before = open_fds()
        outcomes: dict[str, int] = {}
        for _ in range(50):
            for name, size in sizes.items():
                assert root.read_bytes(name) == b"z" * size
                outcomes["ok"] = outcomes.get("ok", 0) + 1
            for name in bad:
                with pytest.raises(OSError) as info:
                    root.read_bytes(name)
                kind = type(info.value).__name__
                outcomes[kind] = outcomes.get(kind, 0) + 1
        assert open_fds() == before, "a read left an fd open"
        assert root.read_bytes("small") == b"z" * 4096  # the root's own fd was never closed
    print(f"[native-read] {backend}: {outcomes}")
    assert set(outcomes) == {
        "ok",
        "IsADirectoryError",
        "NotRegularFileError",
        "FileNotFoundError",
        "PathEscapeError",
        "OSError",
        "NotADirectoryError",
    }


def test_the_comparison_notices_a_difference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """compare() is not vacuous: a C walk that resolves differently (here: one that refuses
    every link, while the Python walk follows it) fails it."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"f")
    os.symlink("d", tmp_path / "l")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        assert compare(fd, "beneath", True, b"l/f", "l -> d", str(tmp_path)) > 0
        real = _fastpath.walk_params
        monkeypatch.setattr(_fastpath, "walk_params", lambda mode, flags: real("none", flags))
        with pytest.raises(AssertionError, match="C walk"):
            compare(fd, "beneath", True, b"l/f", "l -> d", str(tmp_path))
    finally:
        os.close(fd)


@pytest.mark.skipif(_fastpath._native_read is None, reason="safefs._native_read not built")
def test_plain_read_function(tmp_path: Path) -> None:
    """safefs/fastread.c's read: the same scratch size as the cffi path, arguments checked before
    any system call (a NUL in the path would cut it short in C), errors without a path, and each
    thread its own scratch buffer."""
    assert _fastpath._native_read.SCRATCH_SIZE == _fastpath.SCRATCH_SIZE
    for i in range(4):
        (tmp_path / f"f{i}").write_bytes(bytes([65 + i]) * (1000 + i))
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        read = _fastpath.reader(
            _fastpath.walk_params("beneath", _sys.open_flags(_sys.dir_flags(True))),
            _sys.open_flags(os.O_RDONLY | os.O_NONBLOCK),
        )
        assert read(fd, b"f1") == b"B" * 1001
        with pytest.raises(ValueError, match="null"):
            read(fd, b"f1\0x")
        with pytest.raises(TypeError):
            read(fd, "f1")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            read(fd)  # type: ignore[call-arg]
        with pytest.raises(OverflowError):
            read(2**40, b"f1")
        with pytest.raises(FileNotFoundError) as info:
            read(fd, b"missing")
        assert info.value.filename is None and str(tmp_path) not in str(info.value)
        errors: list[BaseException] = []

        def reads(i: int) -> None:
            try:
                for _ in range(2000):
                    assert read(fd, f"f{i}".encode()) == bytes([65 + i]) * (1000 + i)
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        threads = [threading.Thread(target=reads, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
    finally:
        os.close(fd)
