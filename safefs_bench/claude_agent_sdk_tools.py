"""Claude Code's file tools as contestants, Claude Code's own and safefs's for the Claude Agent
SDK (``safefs.integrations.claude_agent_sdk``). Each reads with ``Read``, writes with ``Write``
and lists with ``Glob`` (``*`` under the directory: files only); an error result is a refusal,
raised as ``PermissionError``.

- ``claude-agent-sdk-tools``: the built-in tools, run by the SDK's bundled Claude Code binary,
  one model turn per operation (:class:`ClaudeCodeTools`);
- ``safefs-claude-agent-sdk-tools``: the safefs tools, each call through the handler of the SDK
  tool object (``SdkMcpTool``) the in-process MCP server serves, on one event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import posixpath
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from safefs_bench.strategies import Strategy, StrategyUnavailable

READ_LINES = 2000  # the lines one Read returns when no limit is given, in both implementations


def _whole(numbered: str) -> bytes:
    """The file from ``Read``'s text (``1\t<line>`` per line; the empty line after a final
    newline shows as its number alone). A read that stopped at the line limit is refused, as a
    read cut at a size limit is: one call does not read the file whole."""
    lines = numbered.rstrip().split("\n")
    if len(lines) >= READ_LINES:
        raise OSError(f"Read returns at most {READ_LINES} lines a call")
    return "\n".join(line.partition("\t")[2] for line in lines).encode("utf-8")


class ClaudeAgentSdkTools(Strategy):
    """``Read``, ``Write`` and ``Glob`` of ``file_tools`` on a root on the workspace."""

    def __init__(self, root: str) -> None:
        try:
            from safefs.integrations.claude_agent_sdk import ToolError, file_tools
        except ImportError as exc:
            raise StrategyUnavailable(
                f"claude_agent_sdk is not installed (safefs[claude-agent-sdk]): {exc}"
            ) from None
        import safefs

        self._error = ToolError
        self._root = safefs.Root(root)
        self._tools = {t.name: t for t in file_tools(self._root, bash=False)}
        self._loop = asyncio.new_event_loop()

    def _call(self, name: str, args: dict[str, Any]) -> str:
        try:
            result = self._loop.run_until_complete(self._tools[name].handler(args))
        except self._error as exc:
            raise PermissionError(str(exc)) from None
        return str(result["content"][0]["text"])

    def read(self, rel: str) -> bytes:
        return _whole(self._call("Read", {"file_path": rel}))

    def write(self, rel: str, data: bytes) -> None:
        self._call("Write", {"file_path": rel, "content": data.decode("utf-8")})

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("Claude Code's tools have no stat")

    def listdir(self, rel: str) -> list[str]:
        text = self._call("Glob", {"pattern": "*", "path": rel})
        return [] if text == "No files found" else [posixpath.basename(p) for p in text.split("\n")]

    def makedirs(self, rel: str) -> None:
        raise OSError("Claude Code's tools make directories only as parents of a file they write")

    def close(self) -> None:
        self._loop.close()
        self._root.close()


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


def _streamed(block: dict[str, Any], stop: str) -> bytes:
    """One assistant message of one block, as the Messages API streams it."""
    message: dict[str, Any] = {
        "id": "msg_relay",
        "type": "message",
        "role": "assistant",
        "model": "relay",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    start: dict[str, Any]
    if block["type"] == "text":
        start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    else:
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    return b"".join(
        (
            _event("message_start", {"type": "message_start", "message": message}),
            _event(
                "content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}
            ),
            _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 1},
                },
            ),
            _event("message_stop", {"type": "message_stop"}),
        )
    )


class _Relay:
    """A model on 127.0.0.1 that answers the next request with the tool call it was handed
    (``pending``), and every other with the text ``ok``: each operation is one model turn."""

    def __init__(self) -> None:
        self.pending: tuple[str, dict[str, Any]] | None = None
        self.calls = 0
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if "/count_tokens" in self.path:
                    self._send("application/json", b'{"input_tokens": 1}')
                    return
                call, relay.pending = relay.pending, None
                if call is None:
                    self._send("text/event-stream", _streamed({"type": "text", "text": "ok"}, "end_turn"))
                    return
                relay.calls += 1
                block = {"type": "tool_use", "id": f"toolu_{relay.calls}", "name": call[0], "input": call[1]}
                self._send("text/event-stream", _streamed(block, "tool_use"))

            def _send(self, content_type: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="relay-model", daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(10)


class ClaudeCodeTools(Strategy):
    """Claude Code's own ``Read``, ``Write`` and ``Glob``, run by the SDK's bundled binary in one
    session (``ClaudeSDKClient``) against a relay model on 127.0.0.1: each operation is one model
    turn calling the tool. The tools are allowed as the SDK's examples allow them
    (``allowed_tools=["Read", "Write", "Glob"]``, every path), with ``permission_mode="dontAsk"``
    and the working directory the workspace. The binary gets a home and a config directory of
    its own (a temporary directory, removed on close)."""

    TURN_SECONDS = 60.0
    READ_FIRST = ("has not been read yet", "modified since read")

    def __init__(self, root: str) -> None:
        try:
            import claude_agent_sdk
        except ImportError as exc:
            raise StrategyUnavailable(
                f"claude_agent_sdk is not installed (safefs[claude-agent-sdk]): {exc}"
            ) from None
        self._sdk = claude_agent_sdk
        self._root = os.path.abspath(root)
        self._scratch = tempfile.mkdtemp(prefix="claude-code-")
        self._relay = _Relay()
        env = {
            "ANTHROPIC_BASE_URL": self._relay.address,
            "ANTHROPIC_API_KEY": "sk-ant-relay",
            "HOME": self._scratch,
            "CLAUDE_CONFIG_DIR": self._scratch,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        tools = ["Read", "Write", "Glob"]
        self._options = claude_agent_sdk.ClaudeAgentOptions(
            cwd=self._root,
            tools=tools,
            allowed_tools=tools,
            permission_mode="dontAsk",
            env=env,
            model="claude-sonnet-4-5",
        )
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, name="claude-code", daemon=True)
        self._loop_thread.start()
        self._client: Any = None
        self._closing: asyncio.Event | None = None
        self._session: concurrent.futures.Future[None] | None = None
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._session = asyncio.run_coroutine_threadsafe(self._hold(ready), self._loop)
        try:
            ready.result(self.TURN_SECONDS)
        except BaseException:
            self.close()
            raise

    async def _hold(self, ready: concurrent.futures.Future[None]) -> None:
        """The session, open until close()."""
        self._closing = asyncio.Event()
        try:
            async with self._sdk.ClaudeSDKClient(self._options) as client:
                self._client = client
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    async def _turn(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        self._relay.pending = (name, args)
        await self._client.query("Next.")
        found: tuple[str, bool] | None = None
        async for message in self._client.receive_response():
            if isinstance(message, self._sdk.UserMessage) and isinstance(message.content, list):
                for block in message.content:
                    if isinstance(block, self._sdk.ToolResultBlock):
                        content = block.content
                        text = (
                            content
                            if isinstance(content, str)
                            else "".join(part.get("text", "") for part in content or [])
                        )
                        found = (text, bool(block.is_error))
        if found is None:
            raise OSError(f"Claude Code made no {name} call")
        return found

    def _call(self, name: str, args: dict[str, Any]) -> str:
        text, error = asyncio.run_coroutine_threadsafe(self._turn(name, args), self._loop).result(
            self.TURN_SECONDS
        )
        if error:
            raise PermissionError(text)
        return text

    def _path(self, rel: str) -> str:
        return os.path.join(self._root, rel)

    def read(self, rel: str) -> bytes:
        return _whole(self._call("Read", {"file_path": self._path(rel)}))

    def write(self, rel: str, data: bytes) -> None:
        """``Write``; where the binary wants the file read first (an existing file it has not
        read, or one changed since), a ``Read`` and the ``Write`` again, as a model does."""
        args = {"file_path": self._path(rel), "content": data.decode("utf-8")}
        try:
            self._call("Write", args)
        except PermissionError as exc:
            if not any(phrase in str(exc) for phrase in self.READ_FIRST):
                raise
            self.read(rel)
            self._call("Write", args)

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("Claude Code's tools have no stat")

    def listdir(self, rel: str) -> list[str]:
        text = self._call("Glob", {"pattern": "*", "path": self._path(rel)})
        return [] if text == "No files found" else [posixpath.basename(p) for p in text.split("\n")]

    def makedirs(self, rel: str) -> None:
        raise OSError("Claude Code's tools make directories only as parents of a file they write")

    def close(self) -> None:
        if self._closing is not None:
            self._loop.call_soon_threadsafe(self._closing.set)
        if self._session is not None:
            with contextlib.suppress(BaseException):
                self._session.result(self.TURN_SECONDS)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join(self.TURN_SECONDS)
        self._loop.close()
        self._relay.close()
        shutil.rmtree(self._scratch, ignore_errors=True)
