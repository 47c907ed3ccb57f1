"""What one resolution hands back to an operation: a held directory fd and the final name in it.

The resolvers (:mod:`safefs._resolve.walk`, :mod:`safefs._resolve.openat2`) resolve everything
but the final component; the operation then acts on ``name`` relative to ``fd`` and never
re-resolves a path string.
"""

from __future__ import annotations

import os
from types import TracebackType


class DirectoryPath(Exception):
    """The path (or a trailing link's target) ends in ``/``, ``.`` or ``..``: it names a directory
    as a whole, with no final name to act on. ``rel`` is that path, root-relative."""

    def __init__(self, rel: bytes) -> None:
        super().__init__()
        self.rel = rel


class Resolved:
    """A directory fd (the root's own fd, or one this object owns), the final ``name`` in it,
    its lstat when asked for (None: it does not exist), and whether the path ended in ``/``.

    ``dir_rel`` is the directory's root-relative path: with ``physical`` it is canonical (made
    of the real names walked, no links and no ``..``)."""

    __slots__ = ("dir_rel", "fd", "name", "owned", "physical", "st", "trailing")

    def __init__(
        self,
        fd: int,
        owned: bool,
        name: bytes,
        st: os.stat_result | None,
        trailing: bool,
        dir_rel: bytes,
        physical: bool,
    ) -> None:
        self.fd = fd
        self.owned = owned
        self.name = name
        self.st = st
        self.trailing = trailing
        self.dir_rel = dir_rel
        self.physical = physical

    def release(self) -> None:
        """Close the directory fd if this object owns it (once: a second call does nothing)."""
        if self.owned:
            self.owned = False
            os.close(self.fd)

    def __enter__(self) -> Resolved:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
