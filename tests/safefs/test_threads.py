"""One Root used from several threads at once: each thread's results are its own, shared files
are always whole, and nothing leaks between threads (fds, temp names, directory state)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import safefs
from safefs._atomic import TEMP_SUFFIX
from tests.fds import new_fds, open_fds

THREADS = 6
ROUNDS = 60
SHARED = {b"A" * 1000, b"B" * 20000}  # different lengths: a torn read would show


def worker(root: safefs.Root, t: int, start: threading.Barrier) -> dict[str, int]:
    """Private files in ``t{t}/``, plus reads and writes of the shared file."""
    start.wait()
    mine = f"t{t}"
    root.mkdir(f"{mine}/sub", parents=True)
    counts = {"private": 0, "shared_reads": 0, "shared_writes": 0, "listdirs": 0}
    for i in range(ROUNDS):
        data = f"thread {t} round {i}\n".encode() * (i % 7 + 1)
        root.write_bytes(f"{mine}/f{i % 5}", data)
        assert root.read_bytes(f"{mine}/f{i % 5}") == data
        root.rename(f"{mine}/f{i % 5}", f"{mine}/sub/moved")
        assert root.read_bytes(f"{mine}/sub/moved") == data
        with root.open(f"{mine}/sub/moved", "ab") as f:
            f.write(b"tail")
        assert root.stat(f"{mine}/sub/moved").st_size == len(data) + 4
        counts["private"] += 1
        if i % 3 == t % 3:
            root.write_bytes("shared", b"A" * 1000 if (i + t) % 2 else b"B" * 20000)
            counts["shared_writes"] += 1
        assert root.read_bytes("shared") in SHARED
        counts["shared_reads"] += 1
        names = set(root.listdir(mine))
        assert {"sub"} <= names <= {"sub", "f0", "f1", "f2", "f3", "f4"}, names
        counts["listdirs"] += 1
        root.mkdir(f"{mine}/tmpdir/x", parents=True)
        root.rmtree(f"{mine}/tmpdir")
    return counts


def walker(root: safefs.Root, start: threading.Barrier, stop: threading.Event) -> int:
    """Walks the whole tree while the others change it: directories may vanish mid-walk (they are
    skipped), but the walk itself never fails."""
    start.wait()
    walks = 0
    while not stop.is_set():
        for _top, _dirs, _files in root.walk("."):
            pass
        walks += 1
    return walks


def test_one_root_from_many_threads(open_root: Callable[..., safefs.Root]) -> None:
    root = open_root(["shared => real-shared", "real-shared"])
    if root.symlinks == "none":  # no link may be followed: share a plain file instead
        root.remove("shared")
    root.write_bytes("shared", b"A" * 1000)  # elsewhere written through the link
    fds_before = open_fds()
    start = threading.Barrier(THREADS + 1)
    stop = threading.Event()
    with ThreadPoolExecutor(THREADS + 1) as pool:
        walking = pool.submit(walker, root, start, stop)
        results = [pool.submit(worker, root, t, start) for t in range(THREADS)]
        counts = [r.result(timeout=120) for r in results]
        stop.set()
        walks = walking.result(timeout=60)
    print(
        f"[threads] {root.resolver}/{root.symlinks}: {THREADS} threads x {ROUNDS} rounds, "
        f"{sum(c['shared_writes'] for c in counts)} shared writes, {walks} concurrent walks"
    )
    assert all(c["private"] == ROUNDS for c in counts)
    assert walks > 0
    # Each thread's directory holds exactly what it left; no temporary name survives anywhere.
    for t in range(THREADS):
        assert sorted(root.listdir(f"t{t}")) == ["sub"]
        assert root.listdir(f"t{t}/sub") == ["moved"]
    leftovers = [
        n for _top, _dirs, files in root.walk(".") for n in files if n.endswith(TEMP_SUFFIX.decode())
    ]
    assert leftovers == []
    assert root.read_bytes("shared") in SHARED
    assert new_fds(fds_before) == {}


def test_close_while_other_threads_read_never_reaches_a_reused_fd(flavour: Any, workspace: Any) -> None:
    """close() must not free the root fd under an operation in flight: the number would be
    reused by the next open (here: of the outside directory, holding a file of the same name)."""
    (workspace.root_path / "f").write_bytes(b"inside")
    (workspace.outside / "f").write_bytes(b"OUTSIDE")
    counts = {"inside": 0, "closed": 0, "outside": 0}
    for _ in range(40):
        root = flavour.open(workspace.root_path)
        deadline = time.monotonic() + 5

        def reader(root: safefs.Root = root, deadline: float = deadline) -> None:
            while time.monotonic() < deadline:
                try:
                    data = root.read_bytes("f")
                except ValueError:  # the Root is closed: the only acceptable failure
                    counts["closed"] += 1
                    return
                counts["inside" if data == b"inside" else "outside"] += 1

        thread = threading.Thread(target=reader)
        thread.start()
        while not counts["inside"]:
            time.sleep(0)
        root.close()
        # Take the freed number (and its neighbours) for a directory outside the root.
        squatters = [os.open(workspace.outside, os.O_RDONLY | os.O_DIRECTORY) for _ in range(4)]
        thread.join()
        for fd in squatters:
            os.close(fd)
    print(f"close race [{flavour}]: {counts}")
    assert counts["outside"] == 0
    assert counts["inside"] > 0 and counts["closed"] > 0
