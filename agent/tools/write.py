"""``write {path, content}``: replace or create a workspace file atomically, making parent dirs.

safefs writes to an anonymous file and links it into place, so a reader never sees half a file
and a refused or failed write leaves nothing behind.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, check_path, path_error, string_schema


class WriteTool(Tool):
    name = "write"
    description = (
        "Write a UTF-8 text file in the workspace, replacing it if it exists and creating missing "
        "parent directories. Paths are relative to the workspace."
    )
    input_schema = string_schema(
        path="File path, relative to the workspace root.",
        content="The complete new content of the file.",
    )

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        path: str = args["path"]
        content: str = args["content"]
        problem = check_path(path)
        if problem is not None:
            return ToolOutput(f"invalid path: {problem}", is_error=True)
        try:
            data = content.encode("utf-8", "strict")
        except UnicodeEncodeError:
            # A lone surrogate can arrive through JSON escapes; it has no UTF-8 form.
            return ToolOutput("content is not encodable as UTF-8", is_error=True)
        try:
            self.root.write_bytes(path, data, parents=True)
        except OSError as exc:
            return path_error(exc, path)
        return ToolOutput(f"wrote {len(data)} bytes to {path}")
