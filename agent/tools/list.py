"""``list {path?, depth?}``: the entries of a workspace directory, down to ``depth`` levels.

One line per entry, with its kind and, for files, its size; directories end in ``/``; a
symlink shows where it leads (or that it leads outside, which is never followed). What git's
ignore rules exclude, and ``.git``, are left out unless ``include_ignored``. At most
``MAX_ENTRIES`` lines, then a line counting the rest; a walk that stopped early says so.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, error_output, object_schema
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import MAX_ENTRIES, join_capped
from safefs.workspace.listing import Listed, list_tree

MAX_DEPTH = 10


def format_entry(item: Listed) -> str:
    entry = item.entry
    if entry.kind == "dir":
        return f"{entry.path}/"
    if entry.kind == "link":
        return f"{entry.path} -> {item.link} [symlink]"
    if entry.kind == "other":
        return f"{entry.path} [special file, not read]"
    size = "?" if item.size is None else str(item.size)
    return f"{entry.path} ({size} bytes)"


class ListTool(Tool):
    name = "list"
    description = (
        "List a directory in the workspace: one line per entry, directories ending in '/', files "
        f"with their size in bytes, symlinks with their target. depth (default 1, at most "
        f"{MAX_DEPTH}) lists subdirectories too. Files git ignores are left out unless "
        f"include_ignored is true. At most {MAX_ENTRIES} entries are shown."
    )
    input_schema = object_schema(
        {
            "path": {
                "type": "string",
                "description": "Directory, relative to the workspace root (default '.').",
            },
            "depth": {"type": "integer", "description": "Levels to list (default 1)."},
            "include_ignored": {
                "type": "boolean",
                "description": "Also list what git ignores, and .git (default false).",
            },
        },
        required=[],
    )
    path_fields = {"path": "."}

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        path: str = args.get("path", ".")
        depth: int = args.get("depth", 1)
        if not 1 <= depth <= MAX_DEPTH:
            return ToolOutput(f"depth must be between 1 and {MAX_DEPTH}, got {depth}", is_error=True)
        try:
            listing = list_tree(
                self.root,
                path,
                depth,
                ignore=not args.get("include_ignored", False),
                hide=self.hide,
                cancel=cancel,
            )
        except WorkspaceError as exc:
            return error_output(exc)
        if not listing.items:
            empty = f"{path} is empty"
            return ToolOutput(f"{empty}\n{listing.note}" if listing.stopped_early else empty)
        text = join_capped(
            (format_entry(i) for i in listing.items),
            what="entries",
            more=listing.more,
            how_to_continue="list a subdirectory, lower depth, or use glob",
        )
        if listing.stopped_early:
            text += "\n" + listing.note
        return ToolOutput(text)
