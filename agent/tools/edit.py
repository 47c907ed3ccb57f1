"""``edit {path, old_string, new_string, replace_all?}`` or ``edit {path, edits: [...]}``: change
exact text in a workspace file.

``old_string`` must occur exactly once, overlapping occurrences included (or, with
``replace_all``, at least once). Missing or ambiguous text is an error result that says how to
fix the call. ``edits`` applies several replacements in turn, all or none. The file is rewritten
atomically, as a compare-and-swap against the content that was read (see
:mod:`safefs.workspace.edits`); the result is a unified diff of the changed region.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, error_output, object_schema
from safefs.workspace.edits import MAX_EDITS, Edit, edit_file
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import cut_text

DIFF_CHARS = 8000

_OLD = {"type": "string", "description": "The exact text to replace."}
_NEW = {"type": "string", "description": "The text to put in its place."}
_ALL = {"type": "boolean", "description": "Replace every occurrence (default: false)."}


class EditTool(Tool):
    name = "edit"
    description = (
        "Replace exact text in a UTF-8 file in the workspace. old_string must match the file "
        "exactly (whitespace included) and be unique, unless replace_all is true. To make "
        "several changes at once, give edits (a list of {old_string, new_string, replace_all}) "
        "instead: they apply in turn, all or none. Returns a unified diff of the change."
    )
    input_schema = object_schema(
        {
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "old_string": _OLD,
            "new_string": _NEW,
            "replace_all": _ALL,
            "edits": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_EDITS,
                "description": "Several replacements, applied in turn; all or none.",
                "items": object_schema(
                    {"old_string": _OLD, "new_string": _NEW, "replace_all": _ALL},
                    required=["old_string", "new_string"],
                ),
            },
        },
        required=["path"],
    )
    path_fields = {"path": None}

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        path: str = args["path"]
        single = "old_string" in args or "new_string" in args
        if "edits" in args and single:
            return ToolOutput("give either old_string/new_string or edits, not both", is_error=True)
        if "edits" in args:
            todo = [
                Edit(e["old_string"], e["new_string"], e.get("replace_all", False)) for e in args["edits"]
            ]
        elif "old_string" not in args:
            return ToolOutput("invalid input for edit: missing required field 'old_string'", is_error=True)
        elif "new_string" not in args:
            return ToolOutput("invalid input for edit: missing required field 'new_string'", is_error=True)
        else:
            todo = [Edit(args["old_string"], args["new_string"], args.get("replace_all", False))]
        try:
            result = edit_file(self.root, path, todo)
        except WorkspaceError as exc:
            return error_output(exc)
        s = "" if result.replacements == 1 else "s"
        diff = cut_text(result.diff, DIFF_CHARS, f"read {path} to see the rest")
        return ToolOutput(f"edited {path}: {result.replacements} replacement{s}\n{diff}")
