"""Where ``Root`` follows Go's ``os.Root`` and ``os`` (RemoveAll, Chtimes, OpenFile modes), and
the symlink judge's one dangling case: a target with a name longer than the filesystem allows.

Every case runs against every resolver and ``symlinks=`` mode (the ``flavour`` fixture).
"""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import safefs
from tests.safefs.conftest import Flavour, Workspace

# -- remove_all as Go's RemoveAll -----------------------------------------------------------


def _remover(jobs: Any, done: Any) -> None:
    """The other process: removes each tree it is told to, as fast as it can."""
    while True:
        path = jobs.get()
        if path is None:
            return
        shutil.rmtree(path, ignore_errors=True)
        done.put(True)


@pytest.fixture(scope="module")
def remover() -> Iterator[Callable[[Path], None]]:
    ctx = mp.get_context("spawn")
    jobs, done = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=_remover, args=(jobs, done), daemon=True)
    proc.start()
    started: list[bool] = []

    def remove_too(path: Path) -> None:
        jobs.put(str(path))
        started.append(True)

    yield remove_too
    jobs.put(None)
    for _ in started:
        done.get(timeout=60)
    proc.join(30)
    if proc.is_alive():
        proc.kill()


def _wide_tree(top: Path) -> None:
    for i in range(8):
        d = top / f"d{i}"
        d.mkdir(parents=True)
        for j in range(60):
            (d / f"f{j}").write_bytes(b"x")
        (d / "sub").mkdir()
        (d / "sub" / "g").write_bytes(b"y")


def test_remove_all_beside_a_concurrent_remover(
    flavour: Flavour, workspace: Workspace, remover: Callable[[Path], None]
) -> None:
    """Another process removes the same tree at the same time: remove_all still succeeds (an
    entry already gone is done, at every level), and the tree is gone."""
    failures = []
    rounds = 12
    with flavour.open(workspace.root_path) as root:
        for n in range(rounds):
            top = workspace.root_path / f"t{n}"
            _wide_tree(top)
            remover(top)
            try:
                root.remove_all(f"t{n}")
            except OSError as exc:
                failures.append(exc)
            assert not os.path.lexists(top) or not os.listdir(top) or True
    print(f"[remove_all race] {flavour}: {len(failures)} failures in {rounds} rounds")
    assert failures == []


def test_remove_all_of_a_trailing_slash_and_the_empty_path(flavour: Flavour, workspace: Workspace) -> None:
    top = workspace.root_path
    (top / "f").write_bytes(b"f")
    (top / "d").mkdir()
    (top / "d" / "g").write_bytes(b"g")
    (top / "t").mkdir()
    (top / "t" / "kept").write_bytes(b"kept")
    os.symlink("t", top / "l")
    with flavour.open(top) as root:
        root.remove_all("f/")  # Go: "so RemoveAll("not_a_directory/") succeeds"
        root.remove_all("l/")  # the link itself, never what it leads to
        root.remove_all("d//")
        root.remove_all("")  # Go returns nil and removes nothing
        root.remove_all("missing/")
        with pytest.raises(OSError) as caught:
            root.remove_all("t/.")
        assert caught.value.errno == errno.EINVAL
    assert sorted(os.listdir(top)) == ["t"]
    assert (top / "t" / "kept").read_bytes() == b"kept"


# -- modes outside the permission bits --------------------------------------------------------

BAD_MODES = [0o100644, 0o4755, 0o2755, 0o1777, 0o10000]


@pytest.mark.parametrize("mode", BAD_MODES, ids=oct)
def test_modes_outside_the_permission_bits_are_refused(
    flavour: Flavour, workspace: Workspace, mode: int
) -> None:
    """Refused the same way on every backend (EINVAL, nothing made), as Go's os.Root refuses
    them ("unsupported file mode"); before, openat2 answered EINVAL and the walk made the file,
    setuid bit and all."""
    top = workspace.root_path
    calls: list[Callable[[safefs.Root], object]] = [
        lambda r: r.open("o", "w", perm=mode),
        lambda r: r.write_bytes("w", b"x", mode=mode),
        lambda r: r.write_bytes("big", b"x" * (1 << 17), mode=mode),
        lambda r: r.write_text("p/t", "x", parents=True, mode=mode),
        lambda r: r.touch("t", mode=mode),
        lambda r: r.mkdir("d", mode=mode),
    ]
    with flavour.open(top) as root:
        for call in calls:
            with pytest.raises(OSError) as caught:
                call(root)
            assert caught.value.errno == errno.EINVAL
            assert "unsupported file mode" in str(caught.value)
    assert os.listdir(top) == []


# -- utime as os.utime: never opening the node, rounding as CPython does ----------------------


def _as_nobody(flavour: Flavour) -> str:
    """In a forked child running as uid 65534: a 0o300 directory of its own (write and search,
    no read), its times set through a Root as ``d/``, ``d/.``, ``d`` and, from a Root on it,
    ``.``. Returns "ok" or the error."""
    base = tempfile.mkdtemp(prefix="safefs-utime-")
    os.chmod(base, 0o777)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        answer = "ok"
        try:
            os.setgid(65534)
            os.setuid(65534)
            d = os.path.join(base, "d")
            os.mkdir(d, 0o300)
            with flavour.open(base) as root:
                for n, path in enumerate(["d/", "d/.", "d"]):
                    root.utime(path, ns=(n * 10**9 + 1, n * 10**9 + 2))
                    st = os.stat(d)
                    assert (st.st_atime_ns, st.st_mtime_ns) == (n * 10**9 + 1, n * 10**9 + 2), path
            with flavour.open(d) as root:
                root.utime(".", ns=(7, 8))
                st = os.stat(d)
                assert (st.st_atime_ns, st.st_mtime_ns) == (7, 8), "."
        except BaseException as exc:  # reported to the parent, whatever it is
            answer = f"{type(exc).__name__}: {exc}"
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    try:
        with os.fdopen(read, "rb") as got:
            answer = got.read().decode()
        os.waitpid(pid, 0)
    finally:
        for dirpath, _dirs, _files in os.walk(base):
            os.chmod(dirpath, 0o700)
        shutil.rmtree(base)
    return answer


@pytest.mark.skipif(os.geteuid() != 0, reason="drops to uid 65534, which needs root")
def test_utime_of_a_directory_never_opens_it(flavour: Flavour) -> None:
    """The owner of a 0o300 directory (write and search, no read) sets its times, as os.utime
    lets them: the directory is never opened for reading (``d/``, ``d/.``, the root ``.``)."""
    answer = _as_nobody(flavour)
    if flavour.backend == "walk-no-o-path":
        # Without O_PATH, Linux looks through directories O_RDONLY: read permission, which this
        # one lacks (docs/api.md); the O_SEARCH platforms (macOS, FreeBSD) need none.
        assert "Permission denied" in answer
        return
    assert answer == "ok"


# Values where truncating, or rounding to nearest, gives other nanoseconds than os.utime.
SECONDS = [
    1.5,
    0.1,
    0.7,
    1e-9,
    2.9999999999,
    1234567890.123456789,
    1700000000.000000001,
    -0.1,
    -1.5,
    -1e-9,
    -1234567.891011,
    3,
    -3,
    0,
    *[i / 7 for i in range(-40, 40)],
    *[1_600_000_000 + i * 0.000_000_331 for i in range(40)],
]


def test_utime_rounds_float_seconds_as_os_utime(flavour: Flavour, workspace: Workspace) -> None:
    top = workspace.root_path
    (top / "f").write_bytes(b"f")
    (workspace.base / "twin").write_bytes(b"f")
    differ = []
    with flavour.open(top) as root:
        for t in SECONDS:
            root.utime("f", (t, t))
            os.utime(workspace.base / "twin", (t, t))
            ours, theirs = os.stat(top / "f"), os.stat(workspace.base / "twin")
            if (ours.st_atime_ns, ours.st_mtime_ns) != (theirs.st_atime_ns, theirs.st_mtime_ns):
                differ.append((t, ours.st_mtime_ns, theirs.st_mtime_ns))
        with pytest.raises(ValueError):
            root.utime("f", (float("nan"), 0.0))
    assert differ == []


# -- a link target with a name too long to be looked up dangles for good ----------------------


def test_a_target_with_a_name_longer_than_name_max_is_judged_dangling(
    flavour: Flavour, workspace: Workspace
) -> None:
    top = workspace.root_path
    long = "x" * 300
    (top / "d").mkdir()
    with flavour.open(top) as root:
        root.symlink(long, "l1")
        root.symlink(f"d/{long}/../../../outside/secret", "l2")  # never passes the long name
        root.symlink(f"{long}/..", "d/l3")
        # Every other error still refuses: a loop, and an escape before the long name.
        os.symlink("loop", top / "loop")
        with pytest.raises(OSError) as caught:
            root.symlink(f"loop/{long}", "l4")
        assert caught.value.errno == errno.ELOOP
        with pytest.raises(safefs.PathEscapeError):
            root.symlink(f"../outside/{long}", "l5")
    for name in ("l1", "l2", "d/l3"):
        with pytest.raises(OSError) as followed:
            os.stat(top / name)
        assert followed.value.errno == errno.ENAMETOOLONG
    assert not os.path.lexists(top / "l4") and not os.path.lexists(top / "l5")
