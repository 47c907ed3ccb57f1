"""``glob {pattern, path?}``: workspace paths matching a glob pattern (``**`` for any depth).

The pattern is matched against paths relative to ``path`` (default ``.``); ``.git`` is skipped;
symlinks match by name and are never followed. Results are capped, with a count of the rest.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, error_output, object_schema
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import MAX_ENTRIES, join_capped
from safefs.workspace.search import glob
from safefs.workspace.walk import Entry


def format_match(entry: Entry) -> str:
    if entry.kind == "dir":
        return f"{entry.path}/"
    if entry.kind == "link":
        return f"{entry.path} [symlink, not followed]"
    return entry.path


class GlobTool(Tool):
    name = "glob"
    description = (
        "Find paths in the workspace matching a glob pattern: '*' and '?' within one path "
        "component, '**' for any number of directories, '[abc]' and '{a,b}'. Example: "
        "'**/*.py'. Matched against paths relative to path (default '.'); .git is skipped. "
        f"At most {MAX_ENTRIES} results."
    )
    input_schema = object_schema(
        {
            "pattern": {"type": "string", "description": "Glob pattern, such as 'src/**/*.ts'."},
            "path": {"type": "string", "description": "Directory to search from (default '.')."},
        },
        required=["pattern"],
    )
    path_fields = {"path": "."}

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        pattern: str = args["pattern"]
        path: str = args.get("path", ".")
        try:
            result = glob(self.root, pattern, path, cancel=cancel)
        except WorkspaceError as exc:
            return error_output(exc)
        if not result.matches:
            return ToolOutput(f"no paths match {pattern!r} under {path}")
        text = join_capped(
            (format_match(e) for e in result.matches),
            what="matches",
            more=result.more,
            how_to_continue="narrow the pattern or the path",
        )
        if result.stopped_early:
            text += "\n[search stopped early: the tree is too large; narrow the path]"
        return ToolOutput(text)
