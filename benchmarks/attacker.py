"""A real attacker: a separate process swapping two names with renameat2(RENAME_EXCHANGE).

It runs in its own process because a thread would be serialised with the victim by the GIL. The
usual use: ``a`` is a real directory inside the workspace and ``b`` a symlink to an outside
directory (or a file and a symlink to an outside file); each exchange makes the path that named
the directory name the symlink, and back.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from types import TracebackType
from typing import Any

from safefs import _sys


def _swap_forever(a: bytes, b: bytes, stop: Any, ready: Any, swaps: Any) -> None:
    dirfd = _sys.AT_FDCWD
    n = 0
    ready.set()
    while not stop.is_set():
        for _ in range(64):
            _sys.renameat2(dirfd, a, dirfd, b, _sys.RENAME_EXCHANGE)
            n += 1
        swaps.value = n


class Swapper:
    """``with Swapper(a, b) as s:`` swaps ``a`` and ``b`` until the block ends; ``s.swaps`` counts.

    On exit an even number of swaps is ensured, so ``a`` and ``b`` are as they were.
    """

    def __init__(self, a: str | bytes, b: str | bytes) -> None:
        if not _sys.have_renameat2():
            raise OSError("the attacker needs renameat2(RENAME_EXCHANGE), which this platform lacks")
        self.a = os.fsencode(a)
        self.b = os.fsencode(b)
        ctx = mp.get_context("spawn")
        self._stop = ctx.Event()
        self._ready = ctx.Event()
        self._swaps = ctx.Value("q", 0, lock=False)
        self._proc = ctx.Process(target=_swap_forever, daemon=True,
                                 args=(self.a, self.b, self._stop, self._ready, self._swaps))
        self.swaps = 0

    def __enter__(self) -> Swapper:
        self._proc.start()
        if not self._ready.wait(30):
            self._proc.kill()
            raise RuntimeError("attacker process did not start")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self.swaps = int(self._swaps.value)
        # Leave the tree as we found it: the loop may have stopped after an odd swap.
        if self._is_swapped():
            _sys.renameat2(_sys.AT_FDCWD, self.a, _sys.AT_FDCWD, self.b, _sys.RENAME_EXCHANGE)

    def _is_swapped(self) -> bool:
        return os.path.islink(self.a) and not os.path.islink(self.b)


def run_for(seconds: float, attempt: Any) -> int:
    """Call ``attempt()`` repeatedly for ``seconds``; returns how many times it ran."""
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        for _ in range(32):
            attempt()
        n += 32
    return n
