"""Directory listings and tree views, bounded, with symlinks described and never entered."""

from __future__ import annotations

import errno
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import safefs
from safefs.workspace.errors import require_path
from safefs.workspace.json_text import dumps_indented
from safefs.workspace.limits import MAX_ENTRIES, MAX_RESULT_CHARS
from safefs.workspace.patterns import glob_match
from safefs.workspace.walk import Entry, Walk


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


def list_tree(
    root: safefs.Root,
    path: str = ".",
    depth: int = 1,
    *,
    max_entries: int = MAX_ENTRIES,
    cancel: threading.Event | None = None,
) -> Listing:
    """Entries under ``path`` down to ``depth`` levels, sorted, ``.git`` listed but not entered."""
    require_path(path)
    walk = Walk(root, path, max_depth=depth, descend=lambda e: e.name != ".git", cancel=cancel)
    items: list[Listed] = []
    more = 0
    for entry in walk:
        if len(items) < max_entries:
            items.append(_listed(root, entry))
        else:
            more += 1
    return Listing(items, more, walk.stopped_early)


def list_directory(root: safefs.Root, path: str) -> list[Listed]:
    """The entries of one directory (sorted by name), with sizes of files."""
    return list_tree(root, path, 1, max_entries=MAX_ENTRIES * 100).items


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
    cancel: threading.Event | None = None,
) -> str:
    """A JSON tree (``name``, ``type``, ``children``) of ``path``. Directories whose contents
    are not shown, for the depth limit or the size cap, carry ``"truncated": true``."""
    require_path(path)
    while True:
        text = _tree_once(root, path, exclude, max_depth, max_entries, cancel)
        if len(text) <= limit or max_entries <= 1:
            return text
        max_entries //= 2


def _tree_once(
    root: safefs.Root,
    path: str,
    exclude: Sequence[str],
    max_depth: int | None,
    max_entries: int,
    cancel: threading.Event | None,
) -> str:
    walk = Walk(
        root, path, max_depth=max_depth, descend=lambda e: not excluded_by(exclude, e.rel), cancel=cancel
    )
    top: list[dict[str, Any]] = []
    stack: list[list[dict[str, Any]]] = [top]  # stack[d - 1]: the children list for depth d
    parents: list[dict[str, Any]] = []  # parents[d - 2]: the directory node holding depth d
    shown = 0
    cut_at_top = 0
    for entry in walk:
        if excluded_by(exclude, entry.rel):
            continue
        del stack[entry.depth :]
        del parents[entry.depth - 1 :]
        if shown >= max_entries:
            if parents:
                parents[-1]["truncated"] = True
            else:
                cut_at_top += 1
            continue
        node: dict[str, Any] = {"name": entry.name, "type": "directory" if entry.kind == "dir" else "file"}
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
    return dumps_indented(top)  # iterative: a deep tree must not exhaust the stack


def _has_entries(root: safefs.Root, path: str) -> bool:
    try:
        return next(iter(root.scandir(path)), None) is not None
    except OSError:
        return False
