"""One tool call, as plain JSON values: the definition a client lists, the result it receives,
and the run itself, with no MCP SDK involved (the stdio server uses no SDK at all).

A call runs in a worker thread with a :class:`threading.Event` the server sets when the client
cancels it (see :mod:`safefs.mcp.cancelling`). Every text that leaves is passed through
:func:`safefs.workspace.names.shown`, so a file name that is not UTF-8 is shown escaped instead
of breaking the JSON writer.
"""

from __future__ import annotations

import sys
import threading
import traceback
from typing import Any

from safefs.mcp.cancelling import cancellable
from safefs.mcp.directories import Directories
from safefs.mcp.tool import McpTool, Media, Reply
from safefs.workspace.arguments import argument_problem
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.names import shown


def tool_definition(tool: McpTool) -> dict[str, Any]:
    definition: dict[str, Any] = {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema(),
        "annotations": dict(tool.annotations),
    }
    if tool.output_schema is not None:
        definition["outputSchema"] = dict(tool.output_schema)
    return definition


def error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": shown(message)}], "isError": True}


def reply_result(reply: Reply) -> dict[str, Any]:
    if isinstance(reply, str):
        text = shown(reply)
        return {"content": [{"type": "text", "text": text}], "structuredContent": {"content": text}}
    block = media_block(reply)
    return {"content": [block], "structuredContent": {"content": [block]}}


def media_block(media: Media) -> dict[str, Any]:
    if media.kind in ("image", "audio"):
        return {"type": media.kind, "data": media.data, "mimeType": media.mime_type}
    resource = {"uri": media.uri, "mimeType": media.mime_type, "blob": media.data}
    return {"type": "resource", "resource": resource}


def invalid_arguments(tool: McpTool, args: dict[str, Any]) -> dict[str, Any] | None:
    """The error result for arguments that do not fit the tool's schema, or None."""
    problem = argument_problem(tool.input_schema(), args)
    if problem is None:
        return None
    return error_result(  # in the words of the MCP SDKs: jsonschema's sentence, and where
        f"Input validation error: Invalid arguments for tool {tool.name}: "
        f"{problem.message} at {problem.where or 'arguments'}"
    )


def run_validated(
    tool: McpTool, directories: Directories, args: dict[str, Any], cancel: threading.Event | None = None
) -> dict[str, Any]:
    """Run one call whose arguments fit the schema (blocking; called in a worker thread)."""
    try:
        with cancellable(cancel):
            return reply_result(tool.run(directories, args))
    except WorkspaceError as exc:
        # The message names each path in the spelling the client sent, not the directory-relative
        # one the workspace operation was given.
        return error_result(exc.spelled(directories.spellings(tool.target_paths(args)).get))
    except Exception as exc:  # a bug: report the kind, keep the traceback for the operator
        traceback.print_exc(file=sys.stderr)
        return error_result(f"internal error in {tool.name}: {type(exc).__name__}")


def run_guarded(
    tool: McpTool, directories: Directories, args: dict[str, Any], cancel: threading.Event
) -> dict[str, Any] | None:
    """Validate and run one call in this (worker) thread; None when the call was cancelled before
    it answered. Every pattern a client or the workspace supplies is matched in linear time, in
    steps between which the walk and the search look at ``cancel`` and their deadline, so no call
    holds the interpreter lock for long or outlives its cancel by more than one step."""
    invalid = invalid_arguments(tool, args)
    if invalid is not None:
        return invalid
    result = run_validated(tool, directories, args, cancel)
    return None if cancel.is_set() else result
