"""A :class:`safefs.Root` opened on first use and kept: the frameworks build their tools without
I/O, and a tool may be closed and used again."""

from __future__ import annotations

import threading

import safefs


class LazyRoot:
    """``get()`` opens the root on ``path`` the first time (its errors are the caller's to map)
    and returns the same one until ``close()``; safe to share between threads."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._root: safefs.Root | None = None
        self._lock = threading.Lock()

    def get(self) -> safefs.Root:
        with self._lock:
            if self._root is None:
                # Absolute links into the directory are followed, as the originals' realpath does.
                self._root = safefs.Root(self.path, absolute_links="anchored")
            return self._root

    def close(self) -> None:
        """Release the directory fd (the next ``get()`` opens it again)."""
        with self._lock:
            if self._root is not None:
                self._root.close()
                self._root = None
