"""The bound on the work one call of the strands drop-ins does in a tree: at most
``MAX_VISITED`` (200,000) directory entries listed and ``SECONDS`` (30) seconds, so a glob or a
directory read in a huge or deeply nested tree ends (with what it found by then) where the
original would list the tree for as long as it takes."""

from __future__ import annotations

import time
from collections.abc import Iterator

import safefs
from safefs.workspace.walk import MAX_VISITED

SECONDS = 30.0


class Spent(Exception):
    """The budget of a call is spent: the caller keeps what it found so far."""


class Budget:
    def __init__(self, entries: int = MAX_VISITED, seconds: float = SECONDS) -> None:
        self.entries = entries
        self.deadline = time.monotonic() + seconds

    def charge(self, entries: int) -> None:
        """Count ``entries`` more listed; raise :class:`Spent` once the entries or the time
        run out."""
        self.entries -= entries
        if self.entries < 0 or time.monotonic() > self.deadline:
            raise Spent


def walk(root: safefs.Root, top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``root.walk(top)`` (``os.walk``'s triples beneath the root; the caller may prune
    ``dirs``), ending quietly once a :class:`Budget` is spent."""
    budget = Budget()
    try:
        for dirpath, dirs, files in root.walk(top):
            budget.charge(len(dirs) + len(files) + 1)
            yield dirpath, dirs, files
    except Spent:
        return
