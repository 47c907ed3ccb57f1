"""The one bounded, iterative walk every listing and search uses, with git's ignore rules.

Every directory is listed with ``Root.scandir``, which resolves its path beneath the root, so a
directory swapped for a symlink mid-walk is refused or stays inside. Only entries that were real
directories when listed are entered: symlinks are reported as ``"link"`` and never followed;
FIFOs, sockets and devices are reported as ``"other"`` and never opened. The walk is a loop over
an explicit stack (deep trees need no recursion).

By default (``ignore=True``) the walk applies the ignore rules git applies
(:mod:`safefs.workspace.gitignore`) and skips ``.git``: an ignored entry is neither yielded nor
counted, and an ignored directory is never entered. The start path itself is walked even when a
rule ignores it: a path the caller names is searched, as ripgrep does. ``hide`` is the one hook
for paths a policy keeps from the caller: a hidden entry is treated exactly as an ignored one.

A walk stops after ``max_visited`` entries, at its ``deadline`` or on ``cancel``; ``stop`` then
says which, so every tool can say that its answer is partial, also when it found nothing.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import NamedTuple

import safefs
from safefs.workspace.errors import os_failure, require_path
from safefs.workspace.gitignore import GitIgnore, NameFilter, repository_rules

MAX_VISITED = 200_000


class Entry(NamedTuple):  # a tuple: a walk makes one per entry, and tuples are made fastest
    path: str  # the start path as given, joined with ``rel``: what the caller can pass back
    rel: str  # relative to the start directory, "/"-separated
    name: str
    kind: str  # "dir", "file", "link" or "other"
    depth: int  # 1 for an entry of the start directory itself
    real: str = ""  # root-relative path of the entry (the start's canonical path joined with rel)


Hide = Callable[[Entry], bool]
_by_name = attrgetter("name")
_tuple_new = tuple.__new__  # an Entry from the tuple of its fields, in C (Entry() is a Python call)


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


STOP_ENTRIES = "entry limit"
STOP_TIME = "time limit"
STOP_CANCELLED = "cancelled"


def stop_note(stop: str | None, visited: int, max_visited: int = MAX_VISITED) -> str:
    """The line a tool shows when its walk stopped: why, and what was seen."""
    if stop is None:
        return ""
    if stop == STOP_ENTRIES:
        why = f"stopped after {max_visited} entries"
    elif stop == STOP_TIME:
        why = "stopped at its time limit"
    else:
        why = "cancelled"
    return f"[walk {why}, {visited} entries seen; the answer is partial: narrow the path or the pattern]"


class Walk:
    """``for entry in Walk(root, "src", max_depth=2): ...``, entries in sorted pre-order.

    ``ignore`` applies git's ignore rules and skips ``.git``; ``skip_git`` skips ``.git`` even
    without them. ``descend(entry)`` may refuse to enter a directory. After iterating, ``stop``
    (None, or one of the ``STOP_*`` reasons) says whether the walk was cut short, ``visited``
    how many entries it yielded, ``ignored`` how many it left out for rules or ``hide``.
    """

    def __init__(
        self,
        root: safefs.Root,
        start: str = ".",
        *,
        max_depth: int | None = None,
        ignore: bool = True,
        skip_git: bool = True,
        hide: Hide | None = None,
        descend: Callable[[Entry], bool] | None = None,
        max_visited: int = MAX_VISITED,
        deadline: float | None = None,
        cancel: threading.Event | None = None,
        user_excludes: bool = True,
    ) -> None:
        require_path(start)
        self.root = root
        self.start = start
        self.max_depth = max_depth
        self.ignore = ignore
        self.skip_git = skip_git or ignore
        self.hide = hide
        self.descend = descend
        self.max_visited = max_visited
        self.deadline = deadline
        self.cancel = cancel
        self.user_excludes = user_excludes
        self.visited = 0
        self.ignored = 0
        self.stop: str | None = None
        self.unreadable = 0  # directories that vanished or were refused while walking
        self._path_prefix = join(start, "")  # an entry's path is this and its ``rel``

    @property
    def stopped_early(self) -> bool:
        return self.stop is not None

    def note(self) -> str:
        return stop_note(self.stop, self.visited, self.max_visited)

    def _children(
        self, path: str, rel: str, real: str, depth: int, rules: GitIgnore
    ) -> tuple[list[Entry], GitIgnore]:
        listing = sorted(self.root.scandir(path), key=_by_name)
        ignore = self.ignore
        quick: NameFilter | None = None
        if ignore:
            at = bisect_left(listing, ".gitignore", key=_by_name)  # sorted: no loop over them all
            found = listing[at] if at < len(listing) else None
            has_rules = found is not None and found.name == ".gitignore" and _kind(found) == "file"
            rules = rules.enter(self.root, real, has_rules)
            quick = rules.name_filter()
            # No rule can match any name here: none is asked about (the common case).
            ignore = quick is None or quick.may_match_any([e.name for e in listing])
        hide = self.hide
        skip_git = self.skip_git
        # The prefixes every child's paths share, worked out once per directory.
        rel_prefix = f"{rel}/" if rel else ""
        real_prefix = f"{real}/" if real not in ("", ".") else ""
        path_prefix = self._path_prefix
        out = []
        for e in listing:
            name = e.name
            if skip_git and name == ".git":
                continue
            # Not following links, a link is neither a file nor a directory: the common kinds
            # first, one call for most entries.
            if e.is_file(follow_symlinks=False):
                kind = "file"
            elif e.is_dir(follow_symlinks=False):
                kind = "dir"
            elif e.is_symlink():
                kind = "link"
            else:
                kind = "other"
            child_rel = rel_prefix + name
            entry = _tuple_new(
                Entry, (path_prefix + child_rel, child_rel, name, kind, depth, real_prefix + name)
            )
            if (ignore and rules.ignored(entry.real, kind == "dir")) or (hide is not None and hide(entry)):
                self.ignored += 1
                continue
            out.append(entry)
        return out, rules

    def _start_rules(self, real: str) -> GitIgnore:
        """The rules in force in the start directory's parent: the repository's, then each
        ancestor's ``.gitignore``."""
        if not self.ignore:
            return GitIgnore()
        rules = repository_rules(self.root, user_excludes=self.user_excludes)
        parts = [p for p in real.split("/") if p not in ("", ".")]
        for i in range(len(parts)):
            rules = rules.enter(self.root, "/".join(parts[:i]) or ".", True)
        return rules

    def _should_stop(self) -> bool:
        if self.cancel is not None and self.cancel.is_set():
            self.stop = STOP_CANCELLED
        elif self.visited >= self.max_visited:
            self.stop = STOP_ENTRIES
        elif self.deadline is not None and time.monotonic() > self.deadline:
            self.stop = STOP_TIME
        return self.stop is not None

    def __iter__(self) -> Iterator[Entry]:
        try:
            real = self.root.resolve(self.start, strict=True)
            first, rules = self._children(self.start, "", real, 1, self._start_rules(real))
        except OSError as exc:
            raise os_failure(exc, self.start) from None
        frames: list[tuple[Iterator[Entry], GitIgnore]] = [(iter(first), rules)]
        cancel, deadline, monotonic = self.cancel, self.deadline, time.monotonic
        max_visited, max_depth, descend = self.max_visited, self.max_depth, self.descend
        while frames:
            entries, rules = frames[-1]
            for entry in entries:  # the same iterator goes on where it stopped, after a subtree
                # _should_stop, inlined: this runs once per entry.
                if (
                    (cancel is not None and cancel.is_set())
                    or self.visited >= max_visited
                    or (deadline is not None and monotonic() > deadline)
                ):
                    self._should_stop()
                    return
                self.visited += 1
                yield entry
                if entry.kind != "dir" or (max_depth is not None and entry.depth >= max_depth):
                    continue
                if descend is not None and not descend(entry):
                    continue
                try:
                    children, child_rules = self._children(
                        entry.path, entry.rel, entry.real, entry.depth + 1, rules
                    )
                except OSError:
                    self.unreadable += 1  # vanished, replaced or unreadable since it was listed
                    continue
                frames.append((iter(children), child_rules))
                break  # into the subtree first: pre-order
            else:
                frames.pop()


def leads_to_directory(root: safefs.Root, entry: Entry) -> bool:
    """Whether ``entry`` is a symlink leading to a directory beneath the root: one ``os.walk``
    lists with the directories (a link it cannot follow is not one)."""
    if entry.kind != "link":
        return False
    try:
        return root.is_dir(entry.path)
    except OSError:
        return False


def is_ignored(root: safefs.Root, path: str, is_dir: bool, *, user_excludes: bool = True) -> bool:
    """Would a walk from the top leave ``path`` (root-relative) out? An ancestor that is ignored
    makes it ignored, as git decides."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    rules = repository_rules(root, user_excludes=user_excludes)
    for i, part in enumerate(parts):
        if part == ".git":
            return True
        directory = "/".join(parts[:i]) or "."
        rules = rules.enter(root, directory, True)
        last = i == len(parts) - 1
        if rules.ignored("/".join(parts[: i + 1]), is_dir if last else True):
            return True
    return False
