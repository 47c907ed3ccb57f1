"""Drop-in for ``anthropic.lib.tools.agent_toolset``: the ``agent_toolset_20260401`` tools on safefs.

Switch one import::

    from safefs.anthropic.agent_toolset import AgentToolContext, beta_agent_toolset_20260401

The names, the tool definitions (each tool's description and input schema, taken from the
installed SDK's own tools at run time, :mod:`safefs.anthropic.sdk`), the results and the
``ToolError`` texts are the SDK's. What changes: every file path is resolved beneath a directory fd
(:mod:`safefs.anthropic.context`), so a rename race cannot lead a tool outside the workdir and
the allowed directories, and ``bash`` runs each command in the kernel sandbox
(:mod:`safefs.anthropic.shell`) instead of an unrestricted ``/bin/bash``. The differences are
listed in docs/anthropic.md.

``beta_agent_toolset_20260401(ctx)`` returns async tools, as the SDK's does (like the SDK's, the
file tools do their short blocking calls on the event loop; ``bash`` runs in a worker thread), for the session
runner, the environment worker and the async Messages tool runner;
``beta_agent_toolset_20260401_sync(ctx)`` returns the same tools as sync ones, for the sync
``client.beta.messages.tool_runner``. ``ctx`` may be this module's context or the SDK's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import Any, cast

from anthropic.lib.tools import (
    BetaAsyncFunctionTool,
    BetaFunctionTool,
    BetaFunctionToolResultType,
    ToolError,
    beta_async_tool,
    beta_tool,
)
from anyio.to_thread import run_sync

from safefs.anthropic import file_ops, sdk
from safefs.anthropic.context import AgentToolContext
from safefs.anthropic.shell import keep_tail

__all__ = [
    "AgentToolContext",
    "beta_agent_toolset_20260401",
    "beta_agent_toolset_20260401_sync",
    "beta_bash_tool",
    "beta_bash_tool_sync",
    "beta_edit_tool",
    "beta_edit_tool_sync",
    "beta_glob_tool",
    "beta_glob_tool_sync",
    "beta_grep_tool",
    "beta_grep_tool_sync",
    "beta_read_tool",
    "beta_read_tool_sync",
    "beta_write_tool",
    "beta_write_tool_sync",
]


def _context(ctx: Any) -> AgentToolContext:
    """Ours as it is; the SDK's ``AgentToolContext`` turned into ours, with the same policy."""
    return ctx if isinstance(ctx, AgentToolContext) else AgentToolContext.from_sdk(ctx)


def _description(name: str) -> str:
    return sdk.tool_definitions()[name][0]


def _schema(name: str) -> dict[str, Any]:
    return sdk.tool_definitions()[name][1]


# -- bash --------------------------------------------------------------------------------------


def _timeout(timeout_ms: int | None) -> float:
    """The SDK's reading of ``timeout_ms``: zero, negative or absent is the default."""
    if timeout_ms is None or timeout_ms <= 0:
        return sdk.BASH_DEFAULT_TIMEOUT
    asked = timeout_ms / 1000.0
    return min(asked, sdk.BASH_DEFAULT_TIMEOUT) if sdk.behaviour().timeout_capped else asked


def _shaped_output(ctx: AgentToolContext, text: str) -> str:
    """A long output cut as the installed SDK cuts it (:class:`safefs.anthropic.sdk.Behaviour`)."""
    limit = sdk.BASH_OUTPUT_LIMIT
    if sdk.behaviour().long_output == "tail":
        return keep_tail(text, limit)
    # The first ``limit`` characters as the SDK counts them (UTF-16 code units), then the file
    # that holds all of it, which read (with view_range) and grep reach.
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * limit:
        return text.rstrip("\n")
    kept = units[: 2 * limit].decode("utf-16-le", errors="ignore")
    cut_lines = 1 + text.count("\n") - kept.count("\n")
    try:
        where = ctx.save_output(text)
    except OSError:
        saved = ""
    else:
        saved = f"Full output saved to: {where} \u2014 use read with view_range to read specific portions. "
    return f"{kept}\n\n... [{cut_lines} lines truncated] {saved}..."


def _bash(ctx: AgentToolContext, command: str | None, restart: bool | None, timeout_ms: int | None) -> str:
    if restart:
        ctx.shell().restart()
        if not (command and sdk.behaviour().restart_runs_command):
            return "bash session restarted"
    if not command:
        raise ToolError("bash: command is required")
    timeout = _timeout(timeout_ms)
    try:
        result = ctx.shell().run(command, timeout=timeout)
    except RuntimeError as exc:
        raise ToolError(f"bash: {exc}") from None
    if result.refusal is not None:
        raise ToolError(f"bash: refused: {result.refusal}")
    if result.timed_out:
        raise ToolError(f"bash: bash command timed out after {timeout:g}s")
    output = _shaped_output(ctx, result.output)
    if result.exit_code != 0:
        raise ToolError(output or sdk.behaviour().empty_failure_text)
    return output


def beta_bash_tool(ctx: Any) -> BetaAsyncFunctionTool[Any]:
    context = _context(ctx)

    @asynccontextmanager
    async def bash_tool() -> AsyncIterator[Callable[..., Awaitable[str]]]:
        """Run a command in a persistent bash shell."""

        async def bash(
            command: str | None = None, restart: bool | None = None, timeout_ms: int | None = None
        ) -> str:
            return await run_sync(partial(_bash, context, command, restart, timeout_ms))

        try:
            yield bash
        finally:
            context.close_shell()

    return beta_async_tool(name="bash", description=_description("bash"), input_schema=_schema("bash"))(
        cast(Any, bash_tool)
    )


def beta_bash_tool_sync(ctx: Any) -> BetaFunctionTool[Any]:
    context = _context(ctx)

    @contextmanager
    def bash_tool() -> Iterator[Callable[..., str]]:
        """Run a command in a persistent bash shell."""

        def bash(
            command: str | None = None, restart: bool | None = None, timeout_ms: int | None = None
        ) -> str:
            return _bash(context, command, restart, timeout_ms)

        try:
            yield bash
        finally:
            context.close_shell()

    return beta_tool(name="bash", description=_description("bash"), input_schema=_schema("bash"))(
        cast(Any, bash_tool)
    )


# -- the file tools ----------------------------------------------------------------------------


def beta_read_tool(ctx: Any) -> BetaAsyncFunctionTool[Any]:
    context = _context(ctx)

    @beta_async_tool(name="read", description=_description("read"), input_schema=_schema("read"))
    async def read(file_path: str, view_range: list[int] | None = None) -> BetaFunctionToolResultType:
        """Read a file rooted at the working directory."""
        return cast(BetaFunctionToolResultType, file_ops.read(context, file_path, view_range))

    return read


def beta_read_tool_sync(ctx: Any) -> BetaFunctionTool[Any]:
    context = _context(ctx)

    @beta_tool(name="read", description=_description("read"), input_schema=_schema("read"))
    def read(file_path: str, view_range: list[int] | None = None) -> BetaFunctionToolResultType:
        """Read a file rooted at the working directory."""
        return cast(BetaFunctionToolResultType, file_ops.read(context, file_path, view_range))

    return read


def beta_write_tool(ctx: Any) -> BetaAsyncFunctionTool[Any]:
    context = _context(ctx)

    @beta_async_tool(name="write", description=_description("write"), input_schema=_schema("write"))
    async def write(file_path: str, content: str) -> str:
        """Write a file, creating parent directories as needed."""
        return file_ops.write(context, file_path, content)

    return write


def beta_write_tool_sync(ctx: Any) -> BetaFunctionTool[Any]:
    context = _context(ctx)

    @beta_tool(name="write", description=_description("write"), input_schema=_schema("write"))
    def write(file_path: str, content: str) -> str:
        """Write a file, creating parent directories as needed."""
        return file_ops.write(context, file_path, content)

    return write


def beta_edit_tool(ctx: Any) -> BetaAsyncFunctionTool[Any]:
    context = _context(ctx)

    @beta_async_tool(name="edit", description=_description("edit"), input_schema=_schema("edit"))
    async def edit(file_path: str, old_string: str, new_string: str, replace_all: bool | None = None) -> str:
        """Replace text in a file by exact string match."""
        return file_ops.edit(context, file_path, old_string, new_string, replace_all)

    return edit


def beta_edit_tool_sync(ctx: Any) -> BetaFunctionTool[Any]:
    context = _context(ctx)

    @beta_tool(name="edit", description=_description("edit"), input_schema=_schema("edit"))
    def edit(file_path: str, old_string: str, new_string: str, replace_all: bool | None = None) -> str:
        """Replace text in a file by exact string match."""
        return file_ops.edit(context, file_path, old_string, new_string, replace_all)

    return edit


def beta_glob_tool(ctx: Any) -> BetaAsyncFunctionTool[Any]:
    context = _context(ctx)

    @beta_async_tool(name="glob", description=_description("glob"), input_schema=_schema("glob"))
    async def glob(pattern: str, path: str | None = None) -> str:
        """List files matching a glob pattern, newest first."""
        return file_ops.glob(context, pattern, path)

    return glob


def beta_glob_tool_sync(ctx: Any) -> BetaFunctionTool[Any]:
    context = _context(ctx)

    @beta_tool(name="glob", description=_description("glob"), input_schema=_schema("glob"))
    def glob(pattern: str, path: str | None = None) -> str:
        """List files matching a glob pattern, newest first."""
        return file_ops.glob(context, pattern, path)

    return glob


def beta_grep_tool(ctx: Any) -> BetaAsyncFunctionTool[Any]:
    context = _context(ctx)

    @beta_async_tool(name="grep", description=_description("grep"), input_schema=_schema("grep"))
    async def grep(pattern: str, path: str | None = None) -> str:
        """Search file contents for a regular expression."""
        return file_ops.grep(context, pattern, path)

    return grep


def beta_grep_tool_sync(ctx: Any) -> BetaFunctionTool[Any]:
    context = _context(ctx)

    @beta_tool(name="grep", description=_description("grep"), input_schema=_schema("grep"))
    def grep(pattern: str, path: str | None = None) -> str:
        """Search file contents for a regular expression."""
        return file_ops.grep(context, pattern, path)

    return grep


def beta_agent_toolset_20260401(ctx: Any) -> list[BetaAsyncFunctionTool[Any]]:
    """The six tools bound to ``ctx``, async, in the SDK's order."""
    context = _context(ctx)
    return [
        beta_bash_tool(context),
        beta_read_tool(context),
        beta_write_tool(context),
        beta_edit_tool(context),
        beta_glob_tool(context),
        beta_grep_tool(context),
    ]


def beta_agent_toolset_20260401_sync(ctx: Any) -> list[BetaFunctionTool[Any]]:
    """The same six tools, sync, for ``client.beta.messages.tool_runner`` on a sync client."""
    context = _context(ctx)
    return [
        beta_bash_tool_sync(context),
        beta_read_tool_sync(context),
        beta_write_tool_sync(context),
        beta_edit_tool_sync(context),
        beta_glob_tool_sync(context),
        beta_grep_tool_sync(context),
    ]
