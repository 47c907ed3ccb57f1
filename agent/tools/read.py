"""``read {path, offset?, limit?}``: a workspace file as UTF-8 text, numbered as ``cat -n`` does.

Every line is shown after its number (``     1\\t...``). ``offset`` (1-based) and ``limit`` are in
lines; without them the first ``DEFAULT_LINE_LIMIT`` lines are shown, or as many as fit in the
character cap, and a last line says which ``offset`` continues. Reading streams the file (see
:mod:`safefs.workspace.text`): only the bytes up to the end of the range are decoded, the rest is
counted, so memory is bounded by the range; invalid UTF-8 is reported with its byte offset.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, check_path, error_output, object_schema
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import MAX_RESULT_CHARS, NOTE_CHARS
from safefs.workspace.text import CHUNK_BYTES, DEFAULT_LINE_LIMIT, LineRange, read_bounded, read_lines


def continuation(r: LineRange) -> str:
    """The last line of a read that did not reach the end, or "" when it did."""
    if r.total == 0:
        return "[empty file: 0 lines]"
    if r.first > r.total and r.total_known:
        return f"[offset {r.first} is past the end: the file has {r.total} lines]"
    if r.line_cut:
        return f"[line {r.last} is longer than {MAX_RESULT_CHARS} characters and was cut" + (
            f"; read with offset={r.last + 1} to continue]" if r.last < r.total or not r.total_known else "]"
        )
    if r.last < r.total or not r.total_known:
        why = f"; stopped at {MAX_RESULT_CHARS} characters" if r.cut_at_budget else ""
        return (
            f"[lines {r.first}-{r.last} of {r.total_text} shown{why}; "
            f"read with offset={r.last + 1} to continue]"
        )
    return ""


class ReadTool(Tool):
    name = "read"
    description = (
        "Read a UTF-8 text file in the workspace, each line after its number (cat -n style). "
        "Paths are relative to the workspace. offset is the first line (1-based, default 1) and "
        f"limit the number of lines (default {DEFAULT_LINE_LIMIT}); at most about "
        f"{MAX_RESULT_CHARS} characters are shown, and a last line says which offset continues."
    )
    input_schema = object_schema(
        {
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based)."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"How many lines to show (default {DEFAULT_LINE_LIMIT}).",
            },
        },
        required=["path"],
    )
    path_fields = {"path": None}

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        path: str = args["path"]
        problem = check_path(path)
        if problem is not None:
            return ToolOutput(f"invalid path: {problem}", is_error=True)
        try:
            lines = read_lines(
                self.root,
                path,
                args.get("offset", 1),
                args.get("limit", DEFAULT_LINE_LIMIT),
                budget=MAX_RESULT_CHARS - NOTE_CHARS,
                numbered=True,
                cancel=cancel,
            )
        except WorkspaceError as exc:
            return error_output(exc)
        note = continuation(lines)
        if not note:
            return ToolOutput(lines.text)
        return ToolOutput(
            f"{lines.text}{'' if lines.text.endswith(chr(10)) or not lines.text else chr(10)}{note}"
        )


__all__ = ["CHUNK_BYTES", "ReadTool", "read_bounded"]
