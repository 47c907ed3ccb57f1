"""``grep {pattern, path?, glob?, ignore_case?}``: lines of workspace files matching a regex.

Output lines are ``path:line:text``. Binary files, ``.git`` and whatever ``.gitignore`` files
exclude are skipped; symlinks are never followed; a long line is shortened. Results are capped,
and a last line counts what was left out or skipped.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, error_output, object_schema
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import MAX_ENTRIES, join_capped
from safefs.workspace.search import GrepResult, grep


def summary(result: GrepResult) -> str:
    parts = [
        f"{len(result.lines) + result.more} matching lines in {result.files_matched} of "
        f"{result.files_searched} files searched"
    ]
    if result.binary_skipped:
        parts.append(f"{result.binary_skipped} binary files skipped")
    if result.large_skipped:
        parts.append(f"{result.large_skipped} files over 32 MiB skipped")
    if result.unreadable:
        parts.append(f"{result.unreadable} files unreadable")
    if result.stopped_early:
        parts.append("search stopped early; narrow the path")
    return "[" + "; ".join(parts) + "]"


class GrepTool(Tool):
    name = "grep"
    description = (
        "Search file contents in the workspace with a regular expression (Python syntax). "
        "Prints path:line:text for each matching line. Skips binary files, .git and files "
        "excluded by .gitignore. glob limits the files searched (such as '*.py'). At most "
        f"{MAX_ENTRIES} lines."
    )
    input_schema = object_schema(
        {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {"type": "string", "description": "File or directory to search (default '.')."},
            "glob": {"type": "string", "description": "Only search files matching this glob."},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive (default false)."},
        },
        required=["pattern"],
    )
    path_fields = {"path": "."}

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        path: str = args.get("path", ".")
        try:
            result = grep(
                self.root,
                args["pattern"],
                path,
                file_glob=args.get("glob"),
                ignore_case=args.get("ignore_case", False),
                cancel=cancel,
            )
        except WorkspaceError as exc:
            return error_output(exc)
        if not result.lines:
            return ToolOutput(f"no matches\n{summary(result)}")
        text = join_capped(
            result.lines,
            what="matching lines",
            more=result.more,
            how_to_continue="narrow the pattern, path or glob",
        )
        return ToolOutput(f"{text}\n{summary(result)}")
