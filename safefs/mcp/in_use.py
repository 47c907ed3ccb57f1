"""Directories a session has served, closed once they are replaced and no call uses them.

A roots change replaces a session's directories while calls may still be running in them, so
they cannot be closed at once; kept until the session ends, every change would leak their fds.
Each call holds a lease (:meth:`DirectoriesInUse.lease`) for as long as it runs; replacing
(:meth:`DirectoriesInUse.retire`) closes the directories when their last lease ends, or at once
when there is none. The DIRs given on the command line (``keep``) are never closed here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from safefs.mcp.directories import Directories


class DirectoriesInUse:
    def __init__(self, keep: Directories) -> None:
        self.keep = keep
        self.lock = threading.Lock()
        self.leases: dict[int, tuple[Directories, int]] = {}  # id -> (directories, calls using them)
        self.retired: set[int] = set()

    def acquire(self, directories: Directories) -> None:
        with self.lock:
            held = self.leases.get(id(directories), (directories, 0))[1]
            self.leases[id(directories)] = (directories, held + 1)

    def release(self, directories: Directories) -> None:
        key = id(directories)
        with self.lock:
            held = self.leases[key][1] - 1
            if held:
                self.leases[key] = (directories, held)
                return
            del self.leases[key]
            closing = key in self.retired
            self.retired.discard(key)
        if closing:
            self._close(directories)

    @contextmanager
    def lease(self, directories: Directories) -> Iterator[Directories]:
        """``directories`` held open for the block (taken: the caller already holds them,
        or took them from where a retire could not run in between)."""
        self.acquire(directories)
        try:
            yield directories
        finally:
            self.release(directories)

    def retire(self, directories: Directories) -> None:
        """``directories`` are replaced: closed now, or when the last call using them ends."""
        with self.lock:
            if id(directories) in self.leases:
                self.retired.add(id(directories))
                return
        self._close(directories)

    def in_use(self) -> int:
        """How many directory sets calls are using now."""
        with self.lock:
            return len(self.leases)

    def close_all(self) -> None:
        """At the end of the session: close every set still held (their calls were cancelled)."""
        with self.lock:
            held = [d for d, _ in self.leases.values()]
            self.leases.clear()
            self.retired.clear()
        for directories in held:
            self._close(directories)

    def _close(self, directories: Directories) -> None:
        if directories is not self.keep:
            directories.close()
