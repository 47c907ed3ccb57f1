"""Drop-in for strands-agents-tools' ``file_write``::

    from safefs.integrations.strands import file_write

The installed version's ``TOOL_SPEC`` (name, description, input schema), its consent prompt
(skipped with ``BYPASS_TOOL_CONSENT=true``, as the original's) and its results; the parent
directories made and the file written (truncated in place, as ``open(path, "w")``) beneath the
working directory's :class:`safefs.Root`. A path or a symlink leading outside gets the original's
error result (``Error writing file: path escapes workspace: '...'``).
"""

from __future__ import annotations

import os
from typing import Any

from rich import box
from rich.panel import Panel
from rich.text import Text
from strands_tools import file_write as _upstream
from strands_tools.utils import console_util
from strands_tools.utils.user_input import get_user_input

from safefs.integrations.strands import _workspace

__all__ = ["TOOL_SPEC", "file_write"]

TOOL_SPEC: dict[str, Any] = _upstream.TOOL_SPEC
_panel = _upstream.create_rich_panel
_language = _upstream.detect_language


def _confirm(console: Any, path: str, content: str) -> str | None:
    """None when the user agrees; else the original's cancellation message."""
    language = _language(path)
    console.print(_panel(content, title=f"File Content ({language})", syntax_language=language))
    user_input = get_user_input("<red><bold>Do you want to proceed with the file write?</bold> [y/*]</red>")
    if user_input.lower().strip() == "y":
        return None
    reason = (
        user_input
        if user_input.strip() != "n"
        else get_user_input("Please provide a reason for cancellation:")
    )
    message = f"File write cancelled by the user. Reason: {reason}"
    console.print(
        Panel(
            Text(message, style="bold blue"),
            title="[bold blue]Operation Cancelled",
            border_style="blue",
            box=box.HEAVY,
            expand=False,
        )
    )
    return message


def file_write(tool: Any, **kwargs: Any) -> dict[str, Any]:
    """strands-agents-tools' ``file_write`` beneath the working directory's root."""
    console = _workspace.console(console_util)
    tool_use_id = tool["toolUseId"]
    tool_input = tool["input"]
    path = _workspace.spelled(tool_input["path"])
    content = tool_input["content"]
    console.print(
        Panel(
            Text.assemble(
                ("Path: ", "cyan"),
                (path, "yellow"),
                ("\nSize: ", "cyan"),
                (f"{len(content)} characters", "yellow"),
            ),
            title="[bold blue]File Write Operation",
            border_style="blue",
            box=box.DOUBLE,
            expand=False,
            padding=(1, 1),
        )
    )
    if not _workspace.bypass_consent():
        cancelled = _confirm(console, path, content)
        if cancelled is not None:
            return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": cancelled}]}
    try:
        with _workspace.refusing(path):
            return _write(console, tool_use_id, path, content)
    except Exception as e:
        message = f"Error writing file: {e!s}"
        console.print(
            Panel(Text(message, style="bold red"), title="[bold red]Write Failed", border_style="red")
        )
        return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": message}]}


def _write(console: Any, tool_use_id: str, path: str, content: str) -> dict[str, Any]:
    """Make the parents and write the file, beneath the root (the original's steps)."""
    root = _workspace.root()
    directory = os.path.dirname(path)
    if directory and not root.exists(directory):
        root.mkdir(directory, parents=True)
        console.print(
            Panel(
                Text(f"Created directory: {directory}", style="bold blue"),
                title="[bold blue]Directory Created",
            )
        )
    with root.open(path, "w") as file:
        file.write(content)
    message = f"File written successfully to {path}"
    console.print(
        Panel(Text(message, style="bold green"), title="[bold green]Write Successful", border_style="green")
    )
    return {
        "toolUseId": tool_use_id,
        "status": "success",
        "content": [{"text": f"File write success: {message}"}],
    }
