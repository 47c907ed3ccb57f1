"""``write {path, content}``: replace or create a workspace file atomically, making parent dirs.

safefs writes to an anonymous file and links it into place, so a reader never sees half a file
and a refused or failed write leaves nothing behind.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, error_output, string_schema
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.files import write_text


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
    path_fields = {"path": None}

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        path: str = args["path"]
        try:
            written = write_text(self.root, path, args["content"])
        except WorkspaceError as exc:
            return error_output(exc)
        return ToolOutput(f"wrote {written} bytes to {path}")
