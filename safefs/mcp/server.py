"""The MCP SDK wiring for ``--http``: tool listing, calls run off the event loop, client roots.

(stdio needs no SDK: :mod:`safefs.mcp.stdio_server`.) Calls run in worker threads, so a slow one
never stalls the connection or another session (every pattern is matched in linear time, in
short steps); a call the client cancels has its event set, so the operation stops at its next
check, and its thread is abandoned at once. The
results are the plain JSON values of :mod:`safefs.mcp.calls`, validated into SDK types.

A session's directories are worked out once, from the roots its client sends, and kept until
the client says its roots changed. The SDK makes a new ``ctx.session`` object per request, so
they are kept under the session's ``Mcp-Session-Id``; a request without one (a stateless
client) asks for the roots each time. Directories that are replaced, forgotten or used for one
stateless call are closed once no call uses them (:mod:`safefs.mcp.in_use`).
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession

import safefs
from safefs.mcp.calls import error_result, run_guarded, tool_definition
from safefs.mcp.directories import Directories
from safefs.mcp.in_use import DirectoriesInUse
from safefs.mcp.roots import RootsPolicy
from safefs.mcp.tool import McpTool

SERVER_NAME = "safefs-mcp"
ROOTS_TIMEOUT = 10.0  # seconds a client gets to answer roots/list; then its roots are not used
MAX_SESSIONS_KEPT = 1024  # sessions whose directories are remembered; the oldest go first


def _session_key(ctx: Any) -> str | None:
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    key = headers.get("mcp-session-id")
    return key if isinstance(key, str) and key else None


class SafefsServer:
    """One set of directories and tools, served to any number of client sessions."""

    def __init__(self, policy: RootsPolicy, tools: list[McpTool]) -> None:
        self.policy = policy
        self.tools = {t.name: t for t in tools}
        self._per_session: OrderedDict[str, Directories] = OrderedDict()
        self._in_use = DirectoriesInUse(policy.given)

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
        return types.ListToolsResult.model_validate(
            {"tools": [tool_definition(t) for t in self.tools.values()]}
        )

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = self.tools.get(params.name)
        if tool is None:
            return types.CallToolResult.model_validate(error_result(f"Unknown tool: {params.name}"))
        directories = await self._directories_for(ctx)  # leased: released by whoever ends the call
        call = LeasedCall(self._in_use, directories)
        try:
            result = await anyio.to_thread.run_sync(
                call.run, tool, params.arguments or {}, abandon_on_cancel=True
            )
        except anyio.get_cancelled_exc_class():
            call.abandon()  # the client cancelled: the operation stops at its next check
            raise
        if result is None:  # cancelled between the thread's end and here: nobody waits for it
            return types.CallToolResult.model_validate(error_result("cancelled"))
        return types.CallToolResult.model_validate(result)

    async def _directories_for(self, ctx: Any) -> Directories:
        """The session's directories, from its client's roots the first time it calls, leased to
        the call (on the event loop, so no retire comes between finding and leasing them)."""
        key = _session_key(ctx)
        known = self._per_session.get(key) if key is not None else None
        if known is not None:
            self._in_use.acquire(known)
            return known
        directories = await self._from_roots(ctx.session)
        self._in_use.acquire(directories)
        if key is None:
            self._in_use.retire(directories)  # one stateless call: closed when it ends
            return directories
        replaced = self._per_session.get(key)  # another call of the session asked at the same time
        self._per_session[key] = directories
        if replaced is not None:
            self._in_use.retire(replaced)
        while len(self._per_session) > MAX_SESSIONS_KEPT:
            self._in_use.retire(self._per_session.popitem(last=False)[1])
        return directories

    async def _from_roots(self, session: ServerSession) -> Directories:
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return self.policy.without_roots()
        try:
            with anyio.fail_after(ROOTS_TIMEOUT):
                # send_request, not the list_roots wrapper, which warns on stderr of a deprecation
                result = await session.send_request(types.ListRootsRequest(), types.ListRootsResult)
        except TimeoutError:
            return self.policy.unavailable(f"the client did not answer roots/list within {ROOTS_TIMEOUT:g} s")
        except Exception as exc:  # no back channel, an error answer, or one that is not roots
            print(f"{SERVER_NAME}: could not list the client's roots ({type(exc).__name__})", file=sys.stderr)
            return self.policy.unavailable("the client's roots could not be listed")
        return self.policy.for_roots([str(r.uri) for r in result.roots])

    async def _roots_changed(self, ctx: Any, params: Any) -> None:
        key = _session_key(ctx)
        if key is not None and key in self._per_session:
            self._in_use.retire(self._per_session.pop(key))

    def close(self) -> None:
        for d in self._per_session.values():
            self._in_use.retire(d)
        self._per_session.clear()
        self._in_use.close_all()


class LeasedCall:
    """One HTTP call's run and its lease on the directories. The thread may outlive a cancelled
    request, so the lease ends when the operation does, not when the client stops waiting; and
    a call cancelled before its thread started (waiting for a thread) never runs, so the
    canceller ends the lease. Exactly one of the two ends it."""

    def __init__(self, in_use: DirectoriesInUse, directories: Directories) -> None:
        self.in_use = in_use
        self.directories = directories
        self.cancel = threading.Event()
        self.lock = threading.Lock()
        self.state = "waiting"  # then "running" or "abandoned"

    def run(self, tool: McpTool, args: dict[str, Any]) -> dict[str, Any] | None:
        with self.lock:
            if self.state == "abandoned":
                return None
            self.state = "running"
        try:
            return run_guarded(tool, self.directories, args, self.cancel)
        finally:
            self.in_use.release(self.directories)

    def abandon(self) -> None:
        self.cancel.set()
        with self.lock:
            never_ran = self.state == "waiting"
            self.state = "abandoned" if never_ran else self.state
        if never_ran:
            self.in_use.release(self.directories)
