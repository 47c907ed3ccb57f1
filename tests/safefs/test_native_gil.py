"""The native calls release the GIL: another thread makes progress while one is inside them.

With the switch interval raised far above a read's duration, the interpreter never takes the GIL
from a thread between bytecodes during the test, so the second thread (which lets go of the GIL
itself after each loop) runs only while the first has released it, which the first does only
inside a native call. The second thread counts its loops while the first says it is inside the
call; no timing is asserted, only that progress was seen.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import safefs
from safefs import _fastpath, _sys
from safefs_bench.machine import filesystem_of

pytestmark = pytest.mark.skipif(not _fastpath.AVAILABLE, reason="native extension not built")

SIZE = 16 * 1024 * 1024  # long enough to read that the other thread is surely scheduled
ATTEMPTS = 10


@pytest.fixture
def big_file(tmp_path: Path) -> Iterator[Path]:
    """A large file, on tmpfs where there is one (no disk in the way: the read is pure copying)."""
    base = Path(tempfile.mkdtemp(dir="/dev/shm")) if filesystem_of("/dev/shm") == "tmpfs" else tmp_path
    path = base / "big"
    path.write_bytes(b"b" * SIZE)
    yield path
    path.unlink()
    if base != tmp_path:
        base.rmdir()


def overlap(call: Callable[[], object], prepare: Callable[[], object] = lambda: None) -> tuple[int, int]:
    """Run ``call`` (after ``prepare``, outside the window) in one thread while another counts
    its own loops whenever the first is inside the call. Returns (loops seen inside, calls)."""
    state = {"inside": False, "done": False}
    seen = [0]
    calls = 0

    def counter() -> None:
        while not state["done"]:
            if state["inside"]:
                seen[0] += 1
            time.sleep(0)  # lets go of the GIL: the first thread never waits for a switch

    old = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    try:
        t = threading.Thread(target=counter)
        t.start()
        try:
            while calls < ATTEMPTS and not seen[0]:
                prepare()
                state["inside"] = True
                call()
                state["inside"] = False
                calls += 1
        finally:
            state["inside"] = False
            state["done"] = True
            t.join()
    finally:
        sys.setswitchinterval(old)
    return seen[0], calls


@pytest.mark.parametrize("backend", ["openat2", "walk"])
def test_another_thread_runs_during_read_bytes(big_file: Path, backend: safefs.ResolverName) -> None:
    if backend == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("openat2 needs Linux")
    with safefs.Root(big_file.parent, resolver=backend) as root:
        seen, calls = overlap(lambda: root.read_bytes("big"))
    print(f"[gil] read_bytes {backend}: the other thread looped {seen} times inside {calls} calls")
    assert seen > 0, "no other thread ran while read_bytes was reading a large file"


def test_another_thread_runs_inside_the_read_call_itself(big_file: Path) -> None:
    """The C read itself (not only a system call Python makes around it) lets go of the GIL."""
    data = bytearray(SIZE)
    target = _fastpath.ffi.from_buffer(data)
    fd = os.open(big_file, os.O_RDONLY | os.O_CLOEXEC)
    try:

        def read_all() -> None:
            assert _fastpath.lib.safefs_read_fd(fd, target, SIZE) == SIZE

        seen, calls = overlap(read_all, prepare=lambda: os.lseek(fd, 0, os.SEEK_SET))
    finally:
        os.close(fd)
    print(f"[gil] safefs_read_fd: the other thread looped {seen} times inside {calls} calls")
    assert seen > 0, "no other thread ran while safefs_read_fd was reading"


@pytest.mark.parametrize("backend", ["openat2", "walk"])
def test_another_thread_runs_during_small_reads(tmp_path: Path, backend: safefs.ResolverName) -> None:
    """A small file is read by the C call alone (no os.read after it): that call lets go of the
    GIL. Each window holds many reads of a file in the scratch buffer, nothing else."""
    if backend == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("openat2 needs Linux")
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "small").write_bytes(b"s" * 4096)
    with safefs.Root(tmp_path, resolver=backend) as root:
        read = root.read_bytes

        def many() -> None:
            for _ in range(5000):
                read("d/e/small")

        seen, calls = overlap(many)
    print(f"[gil] small read_bytes {backend}: the other thread looped {seen} times inside {calls} calls")
    assert seen > 0, "no other thread ran while read_bytes was reading small files"


@pytest.mark.parametrize("backend", ["openat2", "walk"])
def test_another_thread_runs_during_a_batch_of_read_heads(
    tmp_path: Path, backend: safefs.ResolverName
) -> None:
    """One read_heads call lets go of the GIL for a whole batch of small files."""
    if backend == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("openat2 needs Linux")
    names = [f"d{i % 10}/f{i}" for i in range(2000)]
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"small file\n" * 20)
    with safefs.Root(tmp_path, resolver=backend) as root:
        seen, calls = overlap(lambda: root.read_heads(names, 4096))
    print(f"[gil] read_heads {backend}: the other thread looped {seen} times inside {calls} calls")
    assert seen > 0, "no other thread ran while read_heads was reading a batch"
