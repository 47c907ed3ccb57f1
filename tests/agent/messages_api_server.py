"""A small Messages-API-compatible HTTP server on 127.0.0.1, for exercising the real SDK.

It answers ``POST /v1/messages`` with replies queued by the test, records every request body,
and checks requests the way the real API would reject them: a wrong key (``x-api-key``, or
``Authorization: Bearer`` as newer SDKs send it) is a 401,
and a conversation whose ``tool_use`` blocks are not answered by ``tool_result`` blocks (same
ids) at the start of the next user message is a 400.

A request with ``"stream": true`` gets the reply as server-sent events, in the API's event
order (``message_start``, per block ``content_block_start`` / ``_delta`` / ``_stop``,
``message_delta`` carrying the ``stop_reason``, ``message_stop``); otherwise one JSON body.
A queued :class:`Reply` can also be delayed, be an HTTP error, fail mid-stream with an
``error`` event, or be a malformed body sent byte for byte.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHUNK = 12  # characters per streamed text or JSON delta


def text_reply(text: str, stop_reason: str = "end_turn") -> dict[str, Any]:
    return message_reply([{"type": "text", "text": text}] if text else [], stop_reason)


def tool_reply(
    text: str, *calls: tuple[str, str, dict[str, Any]], stop_reason: str = "tool_use"
) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    return message_reply(blocks, stop_reason)


def message_reply(
    content: list[dict[str, Any]], stop_reason: str | None, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": "loopback-model",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage
        or {
            "input_tokens": 11,
            "output_tokens": 7,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


@dataclass
class Reply:
    """One queued answer. ``body`` is a message (see :func:`message_reply`) or, with a
    ``status`` other than 200, an error body. ``partial_json`` maps a tool_use id to the raw
    JSON text streamed for its input (a cut-off input); ``stream_error`` is sent as an
    ``error`` event after the message has started; ``raw`` replaces the whole body. ``delay``
    holds the response back; ``stall`` holds a stream back after ``stall_after`` events."""

    body: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    delay: float = 0.0
    stall_after: int = 0
    stall: float = 0.0
    partial_json: dict[str, str] = field(default_factory=dict)
    stream_error: dict[str, Any] | None = None
    raw: bytes | None = None
    content_type: str = "application/json"


def sse_events(reply: Reply) -> Iterator[tuple[str, dict[str, Any]]]:
    """The streamed form of ``reply.body``, event by event."""
    message = reply.body
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    if reply.stream_error is not None:
        yield "error", reply.stream_error
        return
    for index, block in enumerate(message.get("content") or []):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            text = block["text"]
            for at in range(0, len(text), CHUNK):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": text[at : at + CHUNK]},
                    },
                )
        else:
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}},
            )
            raw = reply.partial_json.get(block["id"], json.dumps(block["input"]))
            for at in range(0, len(raw), CHUNK):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": raw[at : at + CHUNK]},
                    },
                )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": None},
            "usage": {"output_tokens": usage.get("output_tokens", 0)},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def conversation_problem(messages: Any) -> str | None:
    """Why the real API would refuse this ``messages`` list, or None."""
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    expected_role = "user"
    pending: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "system" and isinstance(message.get("content"), str):
            continue  # a system message among the turns (Claude Code 2.1 sends one) takes no turn
        if role != expected_role:
            return f"messages.{index}: roles must alternate, expected {expected_role}"
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        results = [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
        if pending:
            leading = [
                str(b.get("tool_use_id")) for b in blocks[: len(pending)] if b.get("type") == "tool_result"
            ]
            if sorted(leading) != sorted(pending):
                return f"messages.{index}: tool_use ids {pending} need tool_result blocks immediately after"
        elif results:
            return f"messages.{index}: tool_result without a preceding tool_use"
        if any(b.get("type") == "text" and not b.get("text") for b in blocks):
            return f"messages.{index}: text content blocks must be non-empty"
        pending = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        expected_role = "assistant" if role == "user" else "user"
    if pending:
        return "final assistant tool_use has no tool_result"
    return None


def cache_problem(body: dict[str, Any]) -> str | None:
    """The real API takes at most four ``cache_control`` breakpoints per request."""
    system = body.get("system")
    blocks = [*(system if isinstance(system, list) else []), *(body.get("tools") or [])]
    blocks += [
        b for m in body.get("messages") or [] if isinstance(m.get("content"), list) for b in m["content"]
    ]
    marked = sum(isinstance(b, dict) and "cache_control" in b for b in blocks)
    return f"a maximum of 4 blocks with cache_control may be provided, found {marked}" if marked > 4 else None


@dataclass
class LoopbackMessagesAPI:
    api_key: str
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""
    closing: threading.Event = field(default_factory=threading.Event)
    received: threading.Event = field(default_factory=threading.Event)

    def queue(self, body: dict[str, Any], status: int = 200, **options: Any) -> None:
        self.replies.append(Reply(body, status, **options))

    def queue_reply(self, reply: Reply) -> None:
        self.replies.append(reply)

    @staticmethod
    def presented_key(headers: dict[str, str]) -> str | None:
        """The key the client sent: ``x-api-key``, or ``Authorization: Bearer`` (newer SDKs)."""
        bearer = headers.get("authorization", "")
        if bearer.startswith("Bearer "):
            return bearer[len("Bearer ") :]
        return headers.get("x-api-key")

    def handle(self, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        self.requests.append(body)
        self.headers.append(headers)
        self.received.set()
        presented = self.presented_key(headers)
        if presented != self.api_key:
            return Reply(error_body("authentication_error", f"invalid x-api-key: {presented}"), 401)
        problem = conversation_problem(body.get("messages")) or cache_problem(body)
        if problem is not None:
            return Reply(error_body("invalid_request_error", problem), 400)
        if not self.replies:
            return Reply(error_body("api_error", "loopback server: no reply queued"), 500)
        return self.replies.pop(0)


def _handler_for(api: LoopbackMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length)
            body = json.loads(raw)
            if self.path.split("?")[0] != "/v1/messages":
                reply = Reply(error_body("not_found_error", f"no route {self.path}"), 404)
            else:
                reply = api.handle({k.lower(): v for k, v in self.headers.items()}, body)
            if reply.delay and api.closing.wait(reply.delay):
                return
            if reply.raw is not None:
                self._send(reply.status, reply.content_type, reply.raw)
            elif reply.status == 200 and body.get("stream"):
                self._stream(reply)
            else:
                self._send(reply.status, "application/json", json.dumps(reply.body).encode())

        def _send(self, status: int, content_type: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("request-id", "req_loopback")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, reply: Reply) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("request-id", "req_loopback")
            self.end_headers()  # no length: HTTP/1.0, the body ends when the connection closes
            for sent, (name, data) in enumerate(sse_events(reply), start=1):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                if sent == reply.stall_after and api.closing.wait(reply.stall):
                    return

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away mid-reply (a cancelled run) is expected


def serve(api_key: str) -> Iterator[LoopbackMessagesAPI]:
    """Run a server for the duration of a fixture; yields its state with ``url`` filled in."""
    api = LoopbackMessagesAPI(api_key)
    server = _Server(("127.0.0.1", 0), _handler_for(api))
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield api
    finally:
        api.closing.set()
        server.shutdown()
        server.server_close()
        thread.join()
