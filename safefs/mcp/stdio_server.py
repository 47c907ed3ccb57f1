"""The MCP server over stdio, in the standard library alone: newline-delimited JSON-RPC 2.0.

No MCP SDK is imported in stdio mode (it pulls in pydantic models for the whole protocol and
an HTTP stack, most of a second before the first answer), so the server answers ``tools/list``
as soon as Python has started. What the protocol needs from a filesystem server is small:
``initialize``, ``ping``, ``tools/list``, ``tools/call``, the client's roots (``roots/list``
and ``notifications/roots/list_changed``) and ``notifications/cancelled``.

- Every tool call runs in a thread of its own, so a slow call never delays the next message,
  another call, or a cancel; every pattern is matched in linear time, in short steps, so no
  call holds the interpreter lock for long. Cancelling sets the call's event (the workspace
  operations stop at their next check) and no answer is sent for it, as the protocol asks.
- A line that is not UTF-8 JSON, or whose JSON holds a lone surrogate (``"\\ud800"``), is
  answered with a JSON-RPC parse error (-32700); a message that is not a request, a
  notification or a response gets -32600.
- As the SDK's transport does, fd 0 and fd 1 are moved to private descriptors and pointed at
  /dev/null and stderr, so stray output from a library cannot corrupt the protocol stream.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from safefs.mcp.calls import error_result, run_guarded, tool_definition
from safefs.mcp.directories import Directories
from safefs.mcp.roots import RootsPolicy
from safefs.mcp.tools import McpTool

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MAX_LINE = 256 << 20  # one JSON-RPC message; a write_file of a large file is one line
MAX_RUNNING = 64  # tool calls running at once; more wait for a slot, in order
MAX_PENDING = 1024  # calls running or waiting; past this a call is refused, not given a thread
ROOTS_TIMEOUT = 10.0  # seconds a client gets to answer roots/list; then its roots are not used
DRAIN_TIMEOUT = 10.0  # at end of input, seconds the running calls get to answer; then they are cancelled

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SERVER_BUSY = -32000  # the JSON-RPC range for server errors


class ParseError(ValueError):
    pass


def parse_line(line: bytes) -> Any:
    """One message; ParseError for bytes that are not UTF-8 JSON free of lone surrogates."""
    try:
        text = line.decode("utf-8")
        message = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ParseError(str(exc)) from None
    if "\\u" in text or "\\U" in text:  # only an escape can carry a lone surrogate
        try:
            json.dumps(message, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ParseError("a string holds a lone surrogate") from None
    return message


class Session:
    """The one client session a stdio server has: its roots, its running calls."""

    def __init__(self, policy: RootsPolicy, tools: list[McpTool], write: Callable[[dict[str, Any]], None]):
        self.policy = policy
        self.tools = {t.name: t for t in tools}
        self.write = write
        self.lock = threading.Lock()
        self.running: dict[Any, threading.Event] = {}  # request id -> cancel event
        self.threads: list[threading.Thread] = []
        self.slots = threading.BoundedSemaphore(MAX_RUNNING)
        self.client_roots = False
        self.directories = policy.without_roots()
        self.roots_ready = threading.Event()
        self.roots_ready.set()
        self.roots_request: int | None = None
        self.next_id = 0
        self.old: list[Directories] = []  # replaced by a roots change; closed at exit

    # -- messages from the client -------------------------------------------------------------

    def handle(self, line: bytes) -> None:
        try:
            message = parse_line(line)
        except ParseError as exc:
            self.write(_error(None, PARSE_ERROR, f"Parse error: {exc}"))
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.write(_error(_id_of(message), INVALID_REQUEST, "Invalid Request"))
            return
        method = message.get("method")
        if method is None:
            if "id" in message and ("result" in message or "error" in message):
                self._response(message)
            else:
                self.write(_error(_id_of(message), INVALID_REQUEST, "Invalid Request"))
            return
        params = message.get("params")
        if not isinstance(method, str) or not isinstance(params, dict | None):
            self.write(_error(_id_of(message), INVALID_REQUEST, "Invalid Request"))
            return
        if "id" not in message:
            self._notification(method, params or {})
            return
        self._request(message["id"], method, params or {})

    def _request(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        if method == "initialize":
            self.write(_result(request_id, self._initialize(params)))
        elif method == "ping":
            self.write(_result(request_id, {}))
        elif method == "tools/list":
            self.write(_result(request_id, {"tools": [tool_definition(t) for t in self.tools.values()]}))
        elif method == "tools/call":
            self._start_call(request_id, params)
        else:
            self.write(_error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}"))

    def _notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized" or method == "notifications/roots/list_changed":
            if self.client_roots:
                self._ask_roots()
        elif method == "notifications/cancelled":
            with self.lock:
                event = self.running.get(params.get("requestId"))
            if event is not None:
                event.set()

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
        result = message.get("result")
        roots = result.get("roots") if isinstance(result, dict) else None
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
            self.old.append(self.directories)  # a call may still be using them
            self.directories = directories
            self.roots_ready.set()

    def current_directories(self) -> Directories:
        if not self.roots_ready.wait(ROOTS_TIMEOUT):
            with self.lock:
                if not self.roots_ready.is_set():
                    self.roots_request = None
                    self.old.append(self.directories)
                    self.directories = self.policy.unavailable(
                        f"the client did not answer roots/list within {ROOTS_TIMEOUT:g} s"
                    )
                    self.roots_ready.set()
        with self.lock:
            return self.directories

    # -- tool calls ---------------------------------------------------------------------------

    def _start_call(self, request_id: Any, params: dict[str, Any]) -> None:
        name, args = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(args, dict):
            self.write(_error(request_id, INVALID_PARAMS, "tools/call needs a name and an arguments object"))
            return
        tool = self.tools.get(name)
        if tool is None:
            self.write(_result(request_id, error_result(f"Unknown tool: {name}")))
            return
        cancel = threading.Event()
        with self.lock:
            busy = len(self.running) >= MAX_PENDING
            if not busy:
                self.running[request_id] = cancel
        if busy:
            self.write(_error(request_id, SERVER_BUSY, f"{MAX_PENDING} calls are in progress; try again"))
            return
        thread = threading.Thread(
            target=self._call, args=(request_id, tool, args, cancel), name=f"call-{name}", daemon=True
        )
        thread.start()
        self.threads = [t for t in self.threads if t.is_alive()]
        self.threads.append(thread)

    def _call(self, request_id: Any, tool: McpTool, args: dict[str, Any], cancel: threading.Event) -> None:
        try:
            with self.slots:
                result = (
                    None if cancel.is_set() else run_guarded(tool, self.current_directories(), args, cancel)
                )
        finally:
            with self.lock:
                self.running.pop(request_id, None)
        if result is not None:
            self.write(_result(request_id, result))

    def drain(self) -> None:
        """At end of input: let the running calls answer (a client may close its end of the pipe
        right after its last request), cancelling those that take too long."""
        deadline = time.monotonic() + DRAIN_TIMEOUT
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self.lock:
            for event in self.running.values():
                event.set()

    def close(self) -> None:
        with self.lock:
            kept = {id(self.policy.given)}
            for d in [*self.old, self.directories]:
                if id(d) not in kept:
                    kept.add(id(d))
                    d.close()


def _id_of(message: Any) -> Any:
    return message.get("id") if isinstance(message, dict) else None


def _result(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class LineWriter:
    """Whole messages, one per line, from any thread."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.lock = threading.Lock()

    def __call__(self, message: dict[str, Any]) -> None:
        try:
            data = json.dumps(message, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate slipped through: \\u-escaped, still JSON
            data = json.dumps(message).encode("ascii")
        with self.lock:
            try:
                self.stream.write(data + b"\n")
                self.stream.flush()
            except (BrokenPipeError, ValueError):
                pass  # the client has gone; the read loop ends at end of input


def serve(policy: RootsPolicy, tools: list[McpTool], stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer the client on ``stdin``/``stdout`` until end of input."""
    session = Session(policy, tools, LineWriter(stdout))
    try:
        while True:
            line = stdin.readline(MAX_LINE + 1)
            if not line:
                session.drain()
                return
            if len(line) > MAX_LINE:
                session.write(_error(None, PARSE_ERROR, f"Parse error: a message over {MAX_LINE} bytes"))
                while line and not line.endswith(b"\n"):
                    line = stdin.readline(MAX_LINE)
                continue
            if line.strip():
                session.handle(line)
    finally:
        session.close()


def run(policy: RootsPolicy, tools: list[McpTool]) -> None:
    """Serve on the process's stdin and stdout, with fd 0 and fd 1 kept from everything else."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    with os.fdopen(wire_in, "rb") as stdin, os.fdopen(wire_out, "wb") as stdout:
        serve(policy, tools, stdin, stdout)
    sys.stdout.flush()
