"""No descriptor leaks, and every descriptor safefs opens is close-on-exec.

Thousands of operations of every kind, succeeding and failing (escapes, ENOENT, ELOOP, ENOTDIR,
EISDIR, not-a-regular-file, existing targets), run on every flavour; the process's fd count is the
same before and after.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from typing import Any

import safefs
from tests.fds import new_fds, open_fds
from tests.safefs.conftest import Workspace

REPEATS = 40

TREE = [
    "d/",
    "d/f",
    "d/sub/",
    "d/sub/g",
    "f",
    "loop => loop",
    "esc => ../outside/secret",
    "escdir => ../outside/dir",
    "abs => $ROOT/f",
    "dang => nowhere",
    "dl => d",
    "fl => f",
]

# Paths that fail in different ways in every mode (escape, missing, loop, not a directory...).
BAD_PATHS = [
    "../outside/secret",
    "missing",
    "missing/x",
    "loop",
    "loop/x",
    "esc",
    "escdir/target",
    "f/x",
    "d/f/",
    "dang",
    "abs",
    "/etc/passwd",
    "d/../../outside/secret",
]


def ignoring_errors(fn: Callable[[], Any]) -> Callable[[], None]:
    def run() -> None:
        try:
            fn()
        except (OSError, ValueError):
            pass

    return run


def operations(root: safefs.Root) -> tuple[list[Callable[[], Any]], list[Callable[[], Any]]]:
    """Every kind of operation, each one repeatable: (ones that must succeed every time, ones
    that may fail: failures are part of the point)."""

    def read_ops(p: str) -> list[Callable[[], Any]]:
        return [
            lambda: root.read_bytes(p),
            lambda: root.read_text(p),
            lambda: root.open(p, "rb").close(),
            lambda: root.stat(p),
            lambda: root.lstat(p),
            lambda: root.exists(p),
            lambda: root.is_dir(p),
            lambda: root.resolve(p),
            lambda: root.listdir(p),
            lambda: list(root.scandir(p)),
            lambda: list(root.walk(p)),
            lambda: root.opendir(p).close(),
            lambda: root.readlink(p),
            lambda: root.write_bytes(p + "/ro-w", b"x"),
            lambda: root.mkdir(p + "/ro-m"),
            lambda: root.rename(p, "missing/never"),
            lambda: root.remove(p + "/nothing"),
            lambda: root.rmtree(p + "/nothing"),
        ]

    def write_and_read() -> None:
        root.write_bytes("d/w", b"data")
        with root.open("d/w", "r+b") as f:
            f.write(b"DA")
        assert root.read_bytes("d/w") == b"DAta"
        if root.symlinks != "none":
            root.write_text("fl", "through the link\n")  # a link beneath the root: written through

    def mkdir_rmdir() -> None:
        root.mkdir("d/m")
        root.mkdir("d/m", exist_ok=True)
        root.rmdir("d/m")
        root.mkdir("p/q/r", parents=True)
        root.write_bytes("p/q/r/s/t", b"deep", parents=True)
        root.rmtree("p")

    def rename_back_and_forth() -> None:
        root.rename("d/f", "d/f2")
        root.rename("d/f2", "d/f", replace=False)
        root.link("d/f", "d/hard")
        root.remove("d/hard")
        root.symlink("sub/g", "d/ln")
        root.unlink("d/ln")

    def walk_partly() -> None:
        walker = root.walk(".")
        next(walker)
        next(walker)  # holds the root's and a subdirectory's fds
        del walker  # dropped mid-walk
        root.walk("d")  # never iterated

    def scandir_following() -> None:
        for entry in root.scandir("."):
            entry.is_dir()
            entry.is_file()
            try:
                entry.stat()
            except OSError:
                pass

    def opendir_and_use() -> None:
        with root.opendir("d") as sub:
            assert sub.read_bytes("f")
            sub.write_bytes("w2", b"in sub")
            sub.remove("w2")
            try:
                sub.read_bytes("../f")
            except OSError:
                pass

    def read_heads_of_everything() -> None:
        # One batch over every kind of path, failing and not, with sizes below and above the
        # files' (a head cut short leaves its fd to the C code to close).
        paths = [*BAD_PATHS, "d", "f", "dl", "fl", ".", "fifo", "d/f", "d/sub/g", ""]
        for size in (0, 3, 1 << 20):
            assert len(root.read_heads(paths, size)) == len(paths)

    must_succeed: list[Callable[[], Any]] = [
        write_and_read,
        read_heads_of_everything,
        mkdir_rmdir,
        rename_back_and_forth,
        walk_partly,
        scandir_following,
        opendir_and_use,
        lambda: root.touch("d/t"),
        lambda: root.open("d/new", "w").close(),
        lambda: root.chmod("f", 0o644),
    ]
    ops: list[Callable[[], Any]] = [
        lambda: root.open("d/new", "x"),  # FileExistsError
        lambda: root.open("fifo"),  # not a regular file
        lambda: root.read_bytes("fifo"),
        lambda: root.write_bytes("fifo", b"x"),
        lambda: root.read_bytes("d"),  # EISDIR
        lambda: root.write_bytes("d", b"x"),
        lambda: root.mkdir("d"),  # FileExistsError
        lambda: root.rmdir("d"),  # not empty
        lambda: root.rename("d/f", "d/sub/g", replace=False),  # FileExistsError
        lambda: root.symlink("../../x", "d/bad"),  # refused: climbs out
        lambda: root.read_bytes("d/f\0x"),  # ValueError
        lambda: root.write_text("fl", "ELOOP in 'none' mode\n"),
        lambda: root.read_bytes(""),
    ]
    for p in [*BAD_PATHS, "d", "f", "dl", "fl", "."]:
        ops += read_ops(p)
    return must_succeed, ops


def test_no_fd_leak_across_thousands_of_operations(
    open_root: Callable[..., safefs.Root], workspace: Workspace
) -> None:
    root = open_root(TREE)
    os.mkfifo(workspace.root_path / "fifo")
    good, may_fail = operations(root)
    ops = good + [ignoring_errors(op) for op in may_fail]
    for op in ops:  # warm up: caches, lazily created module state
        op()
    before = open_fds()
    for _ in range(REPEATS):
        for op in ops:
            op()
    leaked = new_fds(before)
    print(f"[fds] {len(ops) * REPEATS} operations: {len(before)} fds before, {len(leaked)} new after")
    assert leaked == {}
    # The tree is as it was: the successful operations really ran and undid themselves.
    assert root.read_bytes("d/f") == b"content of d/f\n"
    assert sorted(root.listdir("d")) == ["f", "new", "ro-m", "ro-w", "sub", "t", "w"]


def test_no_fd_leak_when_roots_are_opened_and_closed(flavour: Any, workspace: Workspace) -> None:
    before = open_fds()
    for _ in range(200):
        with flavour.open(workspace.root_path) as root:
            root.opendir(".").close()
        try:
            flavour.open(workspace.root_path / "missing")
        except FileNotFoundError:
            pass
    assert new_fds(before) == {}


def is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def cloexec(fd: int) -> bool:
    return bool(fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)


def test_every_fd_is_close_on_exec(open_root: Callable[..., safefs.Root]) -> None:
    root = open_root(TREE)
    assert cloexec(root.fileno())
    with root.opendir("d") as sub:
        assert cloexec(sub.fileno())
    for mode in ("rb", "r", "r+b", "ab", "w"):
        with root.open("d/f" if mode != "w" else "d/new", mode) as f:
            assert cloexec(f.fileno()), mode
    # The descriptors a walk holds while suspended in a subdirectory.
    before = set(os.listdir("/proc/self/fd"))
    walker = root.walk(".")
    next(walker)
    next(walker)
    new = {int(fd) for fd in set(os.listdir("/proc/self/fd")) - before}
    held = {fd for fd in new if is_open(fd)}  # not the fd listdir itself used meanwhile
    assert held, "the walk should hold directory fds while suspended"
    assert all(cloexec(fd) for fd in held)
    del walker
