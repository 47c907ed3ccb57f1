"""``read {path, offset?, limit?}``: a workspace file as UTF-8 text, every part of it reachable.

Without ``offset``/``limit`` the file is shown whole up to 16,000 characters; past that, the
first and last 8,000 around a line that says how many characters were cut and in which lines.
With them, that line range (1-based), under a header saying which lines of how many were shown
and which ``offset`` continues. Reading streams the file (see :mod:`safefs.workspace.text`):
memory stays bounded whatever its size, invalid UTF-8 is reported with its byte offset.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, check_path, error_output, object_schema
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.text import (
    CHUNK_BYTES,
    DEFAULT_LINE_LIMIT,
    HEAD_CHARS,
    LIMIT,
    TAIL_CHARS,
    describe_range,
    read_bounded,
    read_lines,
    read_whole,
)


class ReadTool(Tool):
    name = "read"
    description = (
        "Read a UTF-8 text file in the workspace. Paths are relative to the workspace. Without "
        f"offset/limit, files over {LIMIT} characters are shown as the first {HEAD_CHARS} and last "
        f"{TAIL_CHARS} characters with a line saying what was cut. With offset (1-based line) "
        f"and/or limit (lines, default {DEFAULT_LINE_LIMIT}), that range is shown under a header "
        "giving the line numbers and the file's line count."
    )
    input_schema = object_schema(
        {
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "offset": {"type": "integer", "description": "First line to show (1-based)."},
            "limit": {"type": "integer", "description": "How many lines to show."},
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
            if "offset" not in args and "limit" not in args:
                return ToolOutput(read_whole(self.root, path, cancel))
            lines = read_lines(
                self.root, path, args.get("offset", 1), args.get("limit", DEFAULT_LINE_LIMIT), cancel=cancel
            )
        except WorkspaceError as exc:
            return error_output(exc)
        return ToolOutput(f"{describe_range(lines, 'read with')}\n{lines.text}")


__all__ = ["CHUNK_BYTES", "ReadTool", "read_bounded"]
