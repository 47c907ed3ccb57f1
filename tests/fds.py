"""The process's open file descriptors, for tests that prove an operation leaves none behind.

A bare count of ``/proc/self/fd`` is not enough: an object of an earlier test (a subprocess pipe,
a generator in a reference cycle) may be collected while the test runs and close its fd, which
hides a leak of the same size, or fails a test that leaked nothing. So each fd is named by what it
is open on, after a collection, and a leak is an fd that is open afterwards on something it was
not open on before.
"""

from __future__ import annotations

import errno
import gc
import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager

FD_DIR = "/proc/self/fd"


def open_fds() -> dict[int, tuple[int, int]]:
    """Each open fd and the (device, inode) it refers to."""
    gc.collect()
    out = {}
    for name in os.listdir(FD_DIR):
        try:
            st = os.fstat(int(name))
        except OSError:  # the fd listdir itself used, closed by now
            continue
        out[int(name)] = (st.st_dev, st.st_ino)
    return out


def new_fds(before: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """The fds open now that were not open, on the same file, in ``before``."""
    return {fd: ident for fd, ident in open_fds().items() if before.get(fd) != ident}


@contextmanager
def fds_left(n: int) -> Iterator[None]:
    """Inside the block the process can open only ``n`` more fds (the soft limit lowered, every
    other number below it taken)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    taken: list[int] = []
    try:
        try:
            while True:
                taken.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
        except OSError as exc:
            assert exc.errno == errno.EMFILE
        for _ in range(min(n, len(taken))):
            os.close(taken.pop())
        yield
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
