"""The MCP SDK wiring: tool listing, calls run off the event loop, client roots, stdio.

Calls run in worker threads, so a slow one never stalls the connection. Every failure a client
can cause comes back as an error result (``isError``) whose text names only the path it gave;
an unexpected exception is reported by type, its traceback kept on the server's stderr.
"""

from __future__ import annotations

import sys
import traceback
import weakref
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession

import safefs
from safefs.mcp.directories import Directories
from safefs.mcp.stdio_transport import pipe_stdio_server
from safefs.mcp.tools import McpTool, Media, Reply, as_given, target_paths
from safefs.workspace.arguments import argument_problem
from safefs.workspace.errors import WorkspaceError

SERVER_NAME = "safefs-mcp"
ROOTS_TIMEOUT = 10.0  # seconds a client gets to answer roots/list; then the DIRs are used as given


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def reply_result(reply: Reply) -> types.CallToolResult:
    if isinstance(reply, str):
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=reply)], structured_content={"content": reply}
        )
    block = _media_block(reply)
    dumped = block.model_dump(by_alias=True, mode="json", exclude_none=True)
    return types.CallToolResult(content=[block], structured_content={"content": [dumped]})


def _media_block(media: Media) -> types.ImageContent | types.AudioContent | types.EmbeddedResource:
    if media.kind == "image":
        return types.ImageContent(type="image", data=media.data, mime_type=media.mime_type)
    if media.kind == "audio":
        return types.AudioContent(type="audio", data=media.data, mime_type=media.mime_type)
    return types.EmbeddedResource(
        type="resource",
        resource=types.BlobResourceContents(uri=media.uri, mime_type=media.mime_type, blob=media.data),
    )


def _tool_definition(tool: McpTool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema(),
        output_schema=tool.output_schema,
        annotations=types.ToolAnnotations(**_snake(tool.annotations)),
    )


def _snake(hints: dict[str, bool]) -> dict[str, Any]:
    names = {
        "readOnlyHint": "read_only_hint",
        "destructiveHint": "destructive_hint",
        "idempotentHint": "idempotent_hint",
        "openWorldHint": "open_world_hint",
    }
    return {names[k]: v for k, v in hints.items()}


def run_tool(tool: McpTool, directories: Directories, args: dict[str, Any]) -> types.CallToolResult:
    """Validate and run one call (blocking; called in a worker thread)."""
    problem = argument_problem(tool.input_schema(), args)
    if problem is not None:  # in the words of the MCP SDKs: jsonschema's sentence, and where
        return error_result(
            f"Input validation error: Invalid arguments for tool {tool.name}: "
            f"{problem.message} at {problem.where or 'arguments'}"
        )
    try:
        return reply_result(tool.run(directories, args))
    except WorkspaceError as exc:
        return error_result(as_given(str(exc), directories, target_paths(tool, args)))
    except Exception as exc:  # a bug: report the kind, keep the traceback for the operator
        traceback.print_exc(file=sys.stderr)
        return error_result(f"internal error in {tool.name}: {type(exc).__name__}")


class SafefsServer:
    """One set of directories and tools, served to any number of client sessions."""

    def __init__(self, directories: Directories, tools: list[McpTool]) -> None:
        self.directories = directories
        self.tools = {t.name: t for t in tools}
        self._per_session: weakref.WeakKeyDictionary[ServerSession, Directories] = weakref.WeakKeyDictionary()

    def build(self) -> Server[Any]:
        server: Server[Any] = Server(
            SERVER_NAME,
            version=safefs.__version__,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self._roots_changed
        )
        return server

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool_definition(t) for t in self.tools.values()])

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = self.tools.get(params.name)
        if tool is None:
            return error_result(f"Unknown tool: {params.name}")
        directories = await self._directories_for(ctx.session)
        return await anyio.to_thread.run_sync(run_tool, tool, directories, params.arguments or {})

    async def _directories_for(self, session: ServerSession) -> Directories:
        """The session's directories: the server's, narrowed by the client's roots if it has any."""
        known = self._per_session.get(session)
        if known is not None:
            return known
        narrowed = self.directories
        capabilities = session.client_capabilities
        if capabilities is not None and capabilities.roots is not None:
            try:
                with anyio.fail_after(ROOTS_TIMEOUT):
                    result = await session.list_roots()
            except Exception as exc:  # no back channel, no answer, or the client failed
                print(
                    f"{SERVER_NAME}: could not list the client's roots ({type(exc).__name__}); "
                    "using the directories given on the command line",
                    file=sys.stderr,
                )
            else:
                narrowed = self.directories.narrowed(str(r.uri) for r in result.roots)
        self._per_session[session] = narrowed
        return narrowed

    async def _roots_changed(self, ctx: Any, params: Any) -> None:
        old = self._per_session.pop(ctx.session, None)
        if old is not None and old is not self.directories:
            old.close()


async def serve_stdio(server: Server[Any]) -> None:
    async with pipe_stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(server: Server[Any]) -> None:
    anyio.run(serve_stdio, server, backend="asyncio")
