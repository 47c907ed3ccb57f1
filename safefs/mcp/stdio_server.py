"""The MCP server over stdio, in the standard library alone: newline-delimited JSON-RPC 2.0.

No MCP SDK is imported in stdio mode (it pulls in pydantic models for the whole protocol and
an HTTP stack, most of a second before the first answer), so the server answers ``tools/list``
as soon as Python has started. What the protocol needs from a filesystem server is small:
``initialize``, ``ping``, ``tools/list``, ``tools/call``, the client's roots (``roots/list``
and ``notifications/roots/list_changed``) and ``notifications/cancelled``.

- Tool calls run in up to :data:`MAX_RUNNING` worker threads, so a slow call never delays the
  next message, another call, or a cancel; every pattern is matched in linear time, in short
  steps, so no call holds the interpreter lock for long. Cancelling sets the call's event (the
  workspace operations stop at their next check) and no answer is sent for it, as the protocol
  asks.
- A call is in progress from the moment it is read until its answer is written
  (:mod:`safefs.mcp.outbox`): past :data:`MAX_PENDING` calls in progress, the next is refused
  with -32000. A client that stops reading its answers therefore meets the cap, then a full
  pipe, and the server stops reading it: its threads and memory stay bounded.
- A line that is not UTF-8 JSON, or whose JSON holds a lone surrogate (``"\\ud800"``), is
  answered with a JSON-RPC parse error (-32700); a message that is not a request, a
  notification or a response, or whose id is not a string or an integer, gets -32600
  (:mod:`safefs.mcp.jsonrpc`).
- Directories a roots change replaced are closed once no call uses them
  (:mod:`safefs.mcp.in_use`).
- As the SDK's transport does, fd 0 and fd 1 are moved to private descriptors and pointed at
  /dev/null and stderr, so stray output from a library cannot corrupt the protocol stream.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Any

from safefs.mcp import jsonrpc
from safefs.mcp.calls import error_result, run_guarded, tool_definition
from safefs.mcp.directories import Directories
from safefs.mcp.in_use import DirectoriesInUse
from safefs.mcp.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_BUSY,
    RequestId,
    error,
    is_request_id,
    parse_line,
    result,
)
from safefs.mcp.outbox import Outbox
from safefs.mcp.roots import RootsPolicy
from safefs.mcp.tool import McpTool

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MAX_LINE = 256 << 20  # one JSON-RPC message; a write_file of a large file is one line
MAX_RUNNING = 64  # tool calls running at once, each in a worker thread; more wait, in order
MAX_PENDING = 1024  # calls in progress (waiting, running or answered but not yet written)
ROOTS_TIMEOUT = 10.0  # seconds a client gets to answer roots/list; then its roots are not used
DRAIN_TIMEOUT = 10.0  # at end of input, seconds the running calls get to answer; then they are cancelled

BAD_ID = "Invalid Request: an id must be a string or an integer"


@dataclass(eq=False)
class Call:
    id: RequestId
    tool: McpTool
    args: dict[str, Any]
    cancel: threading.Event = field(default_factory=threading.Event)


class Session:
    """The one client session a stdio server has: its roots, its calls in progress."""

    def __init__(self, policy: RootsPolicy, tools: list[McpTool], outbox: Outbox):
        self.policy = policy
        self.tools = {t.name: t for t in tools}
        self.outbox = outbox
        self.write = outbox.send
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)  # notified when a call leaves ``in_progress``
        self.in_progress: dict[RequestId, Call] = {}
        self.waiting: deque[Call] = deque()
        self.workers = 0
        self.client_roots = False
        self.in_use = DirectoriesInUse(policy.given)
        self.directories = policy.without_roots()
        self.roots_ready = threading.Event()
        self.roots_ready.set()
        self.roots_request: int | None = None
        self.next_id = 0

    # -- messages from the client -------------------------------------------------------------

    def handle(self, line: bytes) -> None:
        try:
            message = parse_line(line)
        except jsonrpc.ParseError as exc:
            self.write(error(None, PARSE_ERROR, f"Parse error: {exc}"))
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.write(error(_id_of(message), INVALID_REQUEST, "Invalid Request"))
            return
        if "id" in message and not is_request_id(message["id"]):
            self.write(error(None, INVALID_REQUEST, BAD_ID))
            return
        method = message.get("method")
        if method is None:
            if "id" in message and ("result" in message or "error" in message):
                self._response(message)
            else:
                self.write(error(_id_of(message), INVALID_REQUEST, "Invalid Request"))
            return
        params = message.get("params")
        if not isinstance(method, str) or not isinstance(params, dict | None):
            self.write(error(_id_of(message), INVALID_REQUEST, "Invalid Request"))
            return
        if "id" not in message:
            self._notification(method, params or {})
            return
        self._request(message["id"], method, params or {})

    def _request(self, request_id: RequestId, method: str, params: dict[str, Any]) -> None:
        if method == "initialize":
            self.write(result(request_id, self._initialize(params)))
        elif method == "ping":
            self.write(result(request_id, {}))
        elif method == "tools/list":
            self.write(result(request_id, {"tools": [tool_definition(t) for t in self.tools.values()]}))
        elif method == "tools/call":
            self._start_call(request_id, params)
        else:
            self.write(error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}"))

    def _notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized" or method == "notifications/roots/list_changed":
            if self.client_roots:
                self._ask_roots()
        elif method == "notifications/cancelled":
            request_id = params.get("requestId")
            if not isinstance(request_id, str | int):
                return  # names no call; a notification is never answered
            with self.lock:
                call = self.in_progress.get(request_id)
            if call is not None:
                call.cancel.set()

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        from safefs import __version__

        capabilities = params.get("capabilities")
        self.client_roots = isinstance(capabilities, dict) and isinstance(capabilities.get("roots"), dict)
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "safefs-mcp", "version": __version__},
        }

    # -- the client's roots -------------------------------------------------------------------

    def _ask_roots(self) -> None:
        with self.lock:
            self.next_id += 1
            self.roots_request = self.next_id
            self.roots_ready.clear()
        self.write({"jsonrpc": "2.0", "id": self.roots_request, "method": "roots/list"})

    def _response(self, message: dict[str, Any]) -> None:
        with self.lock:
            if message["id"] != self.roots_request:
                return  # an answer to a request we gave up on
            self.roots_request = None
        answer = message.get("result")
        roots = answer.get("roots") if isinstance(answer, dict) else None
        if "error" in message:
            self._use(self.policy.unavailable("the client answered roots/list with an error"))
        elif not isinstance(roots, list) or not all(
            isinstance(r, dict) and isinstance(r.get("uri"), str) for r in roots
        ):
            self._use(self.policy.unavailable("the client's roots/list answer is not a list of roots"))
        else:
            self._use(self.policy.for_roots([r["uri"] for r in roots]))

    def _use(self, directories: Directories) -> None:
        with self.lock:
            self.in_use.retire(self.directories)  # closed once no call uses them
            self.directories = directories
            self.roots_ready.set()

    def _leased_directories(self) -> Directories:
        """The session's directories, leased to the calling call (release them after)."""
        if not self.roots_ready.wait(ROOTS_TIMEOUT):
            with self.lock:
                if not self.roots_ready.is_set():
                    self.roots_request = None
                    self.in_use.retire(self.directories)
                    self.directories = self.policy.unavailable(
                        f"the client did not answer roots/list within {ROOTS_TIMEOUT:g} s"
                    )
                    self.roots_ready.set()
        with self.lock:
            self.in_use.acquire(self.directories)  # under the lock: no retire in between
            return self.directories

    # -- tool calls ---------------------------------------------------------------------------

    def _start_call(self, request_id: RequestId, params: dict[str, Any]) -> None:
        name, args = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(args, dict):
            self.write(error(request_id, INVALID_PARAMS, "tools/call needs a name and an arguments object"))
            return
        tool = self.tools.get(name)
        if tool is None:
            self.write(result(request_id, error_result(f"Unknown tool: {name}")))
            return
        call = Call(request_id, tool, args)
        refusal: dict[str, Any] | None = None
        start_worker = False
        with self.lock:
            if request_id in self.in_progress:
                refusal = error(
                    request_id,
                    INVALID_REQUEST,
                    f"Invalid Request: id {request_id!r} is already used by a call in progress",
                )
            elif len(self.in_progress) >= MAX_PENDING:
                refusal = error(request_id, SERVER_BUSY, f"{MAX_PENDING} calls are in progress; try again")
            else:
                self.in_progress[request_id] = call
                self.waiting.append(call)
                start_worker = self.workers < MAX_RUNNING
                self.workers += start_worker
        if refusal is not None:
            self.write(refusal)
        elif start_worker:
            threading.Thread(target=self._work, name="mcp-call", daemon=True).start()

    def _work(self) -> None:
        """A worker: runs waiting calls in order until none is left, then ends."""
        while True:
            with self.lock:
                if not self.waiting:
                    self.workers -= 1
                    return
                call = self.waiting.popleft()
            try:
                answer = None if call.cancel.is_set() else self._run(call)
            except Exception as exc:  # a bug, or no fd left to import a module: the call still ends
                traceback.print_exc(file=sys.stderr)
                answer = error_result(f"internal error in {call.tool.name}: {type(exc).__name__}")
            if answer is None:
                self._finished(call)
            else:  # still in progress until the answer is written
                self.outbox.answer(
                    result(call.id, answer), done=partial(self._finished, call), cancel=call.cancel
                )

    def _run(self, call: Call) -> dict[str, Any] | None:
        directories = self._leased_directories()
        try:
            return run_guarded(call.tool, directories, call.args, call.cancel)
        finally:
            self.in_use.release(directories)

    def _finished(self, call: Call) -> None:
        with self.lock:
            if self.in_progress.get(call.id) is call:
                del self.in_progress[call.id]
            self.idle.notify_all()

    def drain(self) -> None:
        """At end of input: let the calls in progress answer (a client may close its end of the
        pipe right after its last request), cancelling those that take too long."""
        deadline = time.monotonic() + DRAIN_TIMEOUT
        with self.lock:
            while self.in_progress and self.idle.wait(max(0.0, deadline - time.monotonic())):
                pass
            for call in self.in_progress.values():
                call.cancel.set()

    def close(self) -> None:
        with self.lock:
            self.in_use.retire(self.directories)
            self.directories = self.policy.without_roots()
        self.in_use.close_all()


def _id_of(message: Any) -> RequestId | None:
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if is_request_id(request_id) else None


def serve(policy: RootsPolicy, tools: list[McpTool], stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer the client on ``stdin``/``stdout`` until end of input."""
    outbox = Outbox(stdout)
    session = Session(policy, tools, outbox)
    try:
        while True:
            line = stdin.readline(MAX_LINE + 1)
            if not line:
                session.drain()
                return
            if len(line) > MAX_LINE:
                session.write(error(None, PARSE_ERROR, f"Parse error: a message over {MAX_LINE} bytes"))
                while line and not line.endswith(b"\n"):
                    line = stdin.readline(MAX_LINE)
                continue
            if line.strip():
                session.handle(line)
    finally:
        outbox.close(DRAIN_TIMEOUT)  # a client that reads nothing more does not hold the exit
        session.close()


def run(policy: RootsPolicy, tools: list[McpTool]) -> None:
    """Serve on the process's stdin and stdout, with fd 0 and fd 1 kept from everything else."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    # Unbuffered output: the writer thread may be blocked on a client that does not read, and
    # closing a buffered stream would wait for it.
    with os.fdopen(wire_in, "rb") as stdin, os.fdopen(wire_out, "wb", buffering=0) as stdout:
        serve(policy, tools, stdin, stdout)
    sys.stdout.flush()
