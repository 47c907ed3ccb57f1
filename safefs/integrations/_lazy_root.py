"""A :class:`safefs.Root` opened on first use and kept: the frameworks build their tools without
I/O, and a tool may be closed and used again."""

from __future__ import annotations

import os
import posixpath
import threading

import safefs


def leaves_missing(path: str, top: str) -> bool:
    """Whether ``path`` (relative to ``top``, or absolute) leads out of ``top``, a directory that
    does not exist, so that no root can be opened on it: nothing in it can be a link, so only the
    spelling can lead out (a ``..`` above it, an absolute path not under ``top``, compared by whole
    components, as the originals compare their resolved paths). A relative ``top`` is taken from
    the current directory, as the originals take it."""
    if not path.startswith("/"):
        return posixpath.normpath(path).split("/")[0] == ".."
    parts = posixpath.normpath(posixpath.join(os.getcwd(), top)).split("/")
    return posixpath.normpath(path).split("/")[: len(parts)] != parts


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


class LazyRoots:
    """A :class:`LazyRoot` per directory name, made on its first ``on()``: for a tool whose
    directory is known only at the call (a directory replaced under the same name afterwards is
    not followed). Safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, LazyRoot] = {}

    def on(self, directory: str | os.PathLike[str]) -> safefs.Root:
        """The root on ``directory``, opened the first time it is asked for."""
        name = os.fspath(directory)
        with self._lock:
            lazy = self._held.get(name)
            if lazy is None:
                lazy = self._held[name] = LazyRoot(name)
        return lazy.get()

    def close(self) -> None:
        """Release every root's directory fd (the next ``on()`` opens it again)."""
        with self._lock:
            held = list(self._held.values())
            self._held.clear()
        for lazy in held:
            lazy.close()
