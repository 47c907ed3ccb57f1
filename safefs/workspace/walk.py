"""A bounded, iterative walk of a workspace directory through safefs.

Every directory is listed with ``Root.scandir``, which resolves its path beneath the root, so a
directory swapped for a symlink mid-walk is refused or stays inside. Only entries that were real
directories when listed are entered: symlinks are reported as ``"link"`` and never followed;
FIFOs, sockets and devices are reported as ``"other"`` and never opened. The walk is a loop over
an explicit stack (deep trees need no recursion) and stops after ``max_visited`` entries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import safefs
from safefs.workspace.errors import os_failure, require_path
from safefs.workspace.gitignore import GitIgnore

MAX_VISITED = 200_000


@dataclass(frozen=True)
class Entry:
    path: str  # the start path as given, joined with ``rel``: what the caller can pass back
    rel: str  # relative to the start directory, "/"-separated
    name: str
    kind: str  # "dir", "file", "link" or "other"
    depth: int  # 1 for an entry of the start directory itself


def _kind(entry: safefs.DirEntry) -> str:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


def join(start: str, rel: str) -> str:
    if start in (".", "./", ""):
        return rel
    return f"{start.rstrip('/')}/{rel}" if start.rstrip("/") else f"/{rel}"


class Walk:
    """``for entry in Walk(root, "src", max_depth=2): ...``, entries in sorted pre-order.

    ``skip_git`` leaves ``.git`` out entirely; ``gitignore`` honours ``.gitignore`` files;
    ``descend(entry)`` may refuse to enter a directory. After iterating, ``stopped_early`` says
    whether ``max_visited`` cut the walk short.
    """

    def __init__(
        self,
        root: safefs.Root,
        start: str = ".",
        *,
        max_depth: int | None = None,
        skip_git: bool = False,
        gitignore: bool = False,
        descend: Callable[[Entry], bool] | None = None,
        max_visited: int = MAX_VISITED,
        cancel: threading.Event | None = None,
    ) -> None:
        require_path(start)
        self.root = root
        self.start = start
        self.max_depth = max_depth
        self.skip_git = skip_git
        self.gitignore = gitignore
        self.descend = descend
        self.max_visited = max_visited
        self.cancel = cancel
        self.visited = 0
        self.stopped_early = False
        self.unreadable = 0  # directories that vanished or were refused while walking

    def _children(self, path: str, rel: str, depth: int, rules: GitIgnore) -> tuple[list[Entry], GitIgnore]:
        listing = sorted(self.root.scandir(path), key=lambda e: e.name)
        if self.gitignore:
            has_rules = any(e.name == ".gitignore" and _kind(e) == "file" for e in listing)
            rules = rules.enter(self.root, path, has_rules)
        out = []
        for e in listing:
            name = str(e.name)
            kind = _kind(e)
            if self.skip_git and name == ".git":
                continue
            child_rel = f"{rel}/{name}" if rel else name
            child_path = join(self.start, child_rel)
            if self.gitignore and rules.ignored(child_path, kind == "dir"):
                continue
            out.append(Entry(child_path, child_rel, name, kind, depth))
        return out, rules

    def _ancestor_rules(self) -> GitIgnore:
        """The rules of the start directory's ancestors, for a plain relative start path."""
        rules = GitIgnore()
        parts = [p for p in self.start.split("/") if p not in ("", ".")]
        if not self.gitignore or self.start.startswith("/") or ".." in parts or not parts:
            return rules
        for i in range(len(parts)):
            directory = "/".join(parts[:i]) or "."
            rules = rules.enter(self.root, directory, True)
        return rules

    def __iter__(self) -> Iterator[Entry]:
        try:
            first, rules = self._children(self.start, "", 1, self._ancestor_rules())
        except OSError as exc:
            raise os_failure(exc, self.start) from None
        frames: list[tuple[Iterator[Entry], GitIgnore]] = [(iter(first), rules)]
        while frames:
            entries, rules = frames[-1]
            entry = next(entries, None)
            if entry is None:
                frames.pop()
                continue
            self.visited += 1
            if self.visited > self.max_visited or (self.cancel is not None and self.cancel.is_set()):
                self.stopped_early = True
                return
            yield entry
            if entry.kind != "dir" or (self.max_depth is not None and entry.depth >= self.max_depth):
                continue
            if self.descend is not None and not self.descend(entry):
                continue
            try:
                children, child_rules = self._children(entry.path, entry.rel, entry.depth + 1, rules)
            except OSError:
                self.unreadable += 1  # vanished, replaced or unreadable since it was listed
                continue
            frames.append((iter(children), child_rules))
