"""``glob {pattern, path?, include_ignored?}``: workspace paths matching a glob pattern.

The pattern is matched against paths relative to ``path`` (default ``.``), by a linear-time
matcher; ``.git`` and what git's ignore rules exclude are skipped (``include_ignored`` keeps
them); the walk starts at the pattern's literal prefix; symlinks match by name and are never
followed. Results are capped, with a count of the rest, and a walk that stopped early says so,
also when nothing matched.
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
        "'**/*.py'. Matched against paths relative to path (default '.'); .git and files git "
        "ignores are skipped unless include_ignored is true. "
        f"At most {MAX_ENTRIES} results."
    )
    input_schema = object_schema(
        {
            "pattern": {"type": "string", "description": "Glob pattern, such as 'src/**/*.ts'."},
            "path": {"type": "string", "description": "Directory to search from (default '.')."},
            "include_ignored": {
                "type": "boolean",
                "description": "Also match files git ignores (default false).",
            },
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
            result = glob(
                self.root,
                pattern,
                path,
                ignore=not args.get("include_ignored", False),
                hide=self.hide,
                cancel=cancel,
            )
        except WorkspaceError as exc:
            return error_output(exc)
        if not result.matches:
            answer = f"no paths match {pattern!r} under {path}"
            return ToolOutput(f"{answer}\n{result.note}" if result.stopped_early else answer)
        text = join_capped(
            (format_match(e) for e in result.matches),
            what="matches",
            more=result.more,
            how_to_continue="narrow the pattern or the path",
        )
        if result.stopped_early:
            text += "\n" + result.note
        return ToolOutput(text)
