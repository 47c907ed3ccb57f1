"""``edit {path, old_string, new_string, replace_all?}``: change exact text in a workspace file.

``old_string`` must occur exactly once (or, with ``replace_all``, at least once). Missing or
ambiguous text is an error result that says how to fix the call. The file is rewritten
atomically; the result is a short unified diff of the change.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, error_output, object_schema
from safefs.workspace.edits import Edit, edit_file
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import cut_text

DIFF_CHARS = 8000


class EditTool(Tool):
    name = "edit"
    description = (
        "Replace exact text in a UTF-8 file in the workspace. old_string must match the file "
        "exactly (whitespace included) and be unique, unless replace_all is true. Returns a "
        "unified diff of the change."
    )
    input_schema = object_schema(
        {
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default: false)."},
        },
        required=["path", "old_string", "new_string"],
    )
    path_fields = {"path": None}

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        path: str = args["path"]
        edit = Edit(args["old_string"], args["new_string"], args.get("replace_all", False))
        try:
            result = edit_file(self.root, path, [edit])
        except WorkspaceError as exc:
            return error_output(exc)
        s = "" if result.replacements == 1 else "s"
        diff = cut_text(result.diff, DIFF_CHARS, f"read {path} to see the rest")
        return ToolOutput(f"edited {path}: {result.replacements} replacement{s}\n{diff}")
