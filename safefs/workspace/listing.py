"""Directory listings and tree views, bounded, with symlinks described and never entered."""

from __future__ import annotations

import errno
import heapq
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import safefs
from safefs.workspace.errors import require_path
from safefs.workspace.json_text import dumps_indented
from safefs.workspace.limits import MAX_ENTRIES, MAX_RESULT_CHARS
from safefs.workspace.names import shown as shown_name
from safefs.workspace.patterns import glob_match
from safefs.workspace.walk import Entry, Hide, Walk


@dataclass(frozen=True)
class Listed:
    entry: Entry
    size: int | None  # bytes, for files
    link: str | None  # for symlinks: where it leads, in words a model may see


def describe_link(root: safefs.Root, path: str) -> str:
    """Where the symlink at ``path`` leads, without following it out of the workspace."""
    # Each lookup resolves beneath the root; the link may be swapped between them, so every
    # one of them may also find that it now leads out.
    try:
        target = root.resolve(path)
        suffix = "" if root.exists(path) else " (missing)"
    except safefs.PathEscapeError:
        return "outside the workspace (not followed)"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop"
        return "nowhere reachable"
    return f"{target}{suffix}"


def _listed(root: safefs.Root, entry: Entry) -> Listed:
    size = link = None
    if entry.kind == "file":
        try:
            size = root.lstat(entry.path).st_size
        except OSError:
            size = None  # vanished since the listing
    elif entry.kind == "link":
        link = describe_link(root, entry.path)
    return Listed(entry, size, link)


@dataclass
class Listing:
    items: list[Listed]
    more: int  # entries past ``max_entries``
    stopped_early: bool
    note: str = ""  # why the walk stopped, when it did
    seen: int = 0  # entries the walk yielded: ``len(items) + more``
    files_seen: int = 0
    dirs_seen: int = 0
    file_bytes: int | None = None  # the size of every file seen, when the listing was ordered


Order = Callable[[Listed], Any]


def list_tree(
    root: safefs.Root,
    path: str = ".",
    depth: int = 1,
    *,
    ignore: bool = True,
    hide: Hide | None = None,
    max_entries: int = MAX_ENTRIES,
    cancel: threading.Event | None = None,
    order: Order | None = None,
) -> Listing:
    """Entries under ``path`` down to ``depth`` levels, sorted. With ``ignore`` (the default)
    git's ignore rules apply and ``.git`` is left out; without, ``.git`` is listed, not entered.

    ``items`` holds the first ``max_entries`` in walk order, or, with ``order``, the first
    ``max_entries`` of every entry seen sorted by ``order`` (stable), with the size of every
    file summed in ``file_bytes``: a sort and a total that cover the whole listing."""
    require_path(path)
    walk = Walk(
        root,
        path,
        max_depth=depth,
        ignore=ignore,
        skip_git=False,
        hide=hide,
        descend=lambda e: e.name != ".git",
        cancel=cancel,
    )
    if order is not None:
        return _ordered(root, walk, max_entries, order)
    items: list[Listed] = []
    more = files = dirs = 0
    for entry in walk:
        if entry.kind == "dir":
            dirs += 1
        else:
            files += 1
        if len(items) < max_entries:
            items.append(_listed(root, entry))
        else:
            more += 1
    return Listing(items, more, walk.stopped_early, walk.note(), walk.visited, files, dirs)


def _ordered(root: safefs.Root, walk: Walk, max_entries: int, order: Order) -> Listing:
    """Every entry looked at, only the first ``max_entries`` by ``order`` kept (a heap: memory
    for those alone, time n log k)."""
    files = dirs = file_bytes = 0

    def every() -> Iterator[Listed]:
        nonlocal files, dirs, file_bytes
        for entry in walk:
            item = _listed(root, entry)
            if entry.kind == "dir":
                dirs += 1
            else:
                files += 1
                file_bytes += item.size or 0
            yield item

    items = heapq.nsmallest(max_entries, every(), key=order)
    seen = files + dirs
    return Listing(items, seen - len(items), walk.stopped_early, walk.note(), seen, files, dirs, file_bytes)


def list_directory(
    root: safefs.Root,
    path: str,
    *,
    ignore: bool = False,
    order: Order | None = None,
    max_entries: int = MAX_ENTRIES * 100,
) -> Listing:
    """The entries of one directory (sorted by name, or by ``order``), with sizes of files."""
    return list_tree(root, path, 1, ignore=ignore, max_entries=max_entries, order=order)


def excluded_by(patterns: Sequence[str], rel: str) -> bool:
    """The MCP filesystem server's ``excludePatterns`` rule: a pattern with ``*`` is a glob on
    the relative path; any other pattern also matches that name at any depth, and below it."""
    for pattern in patterns:
        if "*" in pattern:
            if glob_match(pattern, rel):
                return True
        elif (
            glob_match(pattern, rel)
            or glob_match(f"**/{pattern}", rel)
            or glob_match(f"**/{pattern}/**", rel)
        ):
            return True
    return False


def tree_json(
    root: safefs.Root,
    path: str,
    *,
    exclude: Sequence[str] = (),
    max_depth: int | None = None,
    max_entries: int = MAX_ENTRIES,
    limit: int = MAX_RESULT_CHARS,
    ignore: bool = True,
    cancel: threading.Event | None = None,
) -> str:
    """A JSON tree (``name``, ``type``, ``children``) of ``path``. Directories whose contents
    are not shown, for the depth limit or the size cap, carry ``"truncated": true``."""
    require_path(path)
    while True:
        text = _tree_once(root, path, exclude, max_depth, max_entries, ignore, cancel)
        if len(text) <= limit or max_entries <= 1:
            return text
        max_entries //= 2


def _tree_once(
    root: safefs.Root,
    path: str,
    exclude: Sequence[str],
    max_depth: int | None,
    max_entries: int,
    ignore: bool,
    cancel: threading.Event | None,
) -> str:
    walk = Walk(
        root,
        path,
        max_depth=max_depth,
        ignore=ignore,
        skip_git=False,
        hide=(lambda e: excluded_by(exclude, e.rel)) if exclude else None,
        cancel=cancel,
    )
    top: list[dict[str, Any]] = []
    stack: list[list[dict[str, Any]]] = [top]  # stack[d - 1]: the children list for depth d
    parents: list[dict[str, Any]] = []  # parents[d - 2]: the directory node holding depth d
    shown = 0
    cut_at_top = 0
    for entry in walk:
        del stack[entry.depth :]
        del parents[entry.depth - 1 :]
        if shown >= max_entries:
            if parents:
                parents[-1]["truncated"] = True
            else:
                cut_at_top += 1
            continue
        # A name that is not UTF-8 is given as shown (``caf\\xe9.txt``) before it is JSON-encoded:
        # the tree stays JSON, and the name as decoded is the spelling a client passes back.
        node: dict[str, Any] = {
            "name": shown_name(entry.name),
            "type": "directory" if entry.kind == "dir" else "file",
        }
        shown += 1
        stack[-1].append(node)
        if entry.kind == "dir":
            node["children"] = []
            if max_depth is not None and entry.depth >= max_depth:
                if _has_entries(root, entry.path):
                    node["truncated"] = True
            else:
                stack.append(node["children"])
                parents.append(node)
    if walk.stopped_early:
        for node in parents:
            node["truncated"] = True
    if cut_at_top:
        top.append({"name": f"[{cut_at_top} more entries not shown]", "type": "truncated"})
    if walk.stopped_early:
        top.append({"name": walk.note(), "type": "truncated"})
    return dumps_indented(top)  # iterative: a deep tree must not exhaust the stack


def _has_entries(root: safefs.Root, path: str) -> bool:
    try:
        return next(iter(root.scandir(path)), None) is not None
    except OSError:
        return False
