"""A small Messages-API-compatible HTTP server on 127.0.0.1, for exercising the real SDK.

It answers ``POST /v1/messages`` with replies queued by the test, records every request body,
and checks requests the way the real API would reject them: a wrong key (``x-api-key``, or
``Authorization: Bearer`` as newer SDKs send it) is a 401,
and a conversation whose ``tool_use`` blocks are not answered by ``tool_result`` blocks (same
ids) at the start of the next user message is a 400.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def text_reply(text: str) -> dict[str, Any]:
    return message_reply([{"type": "text", "text": text}], "end_turn")


def tool_reply(text: str, *calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    return message_reply(blocks, "tool_use")


def message_reply(content: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": "loopback-model",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 11, "output_tokens": 7},
    }


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def conversation_problem(messages: Any) -> str | None:
    """Why the real API would refuse this ``messages`` list, or None."""
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    expected_role = "user"
    pending: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role != expected_role:
            return f"messages.{index}: roles must alternate, expected {expected_role}"
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        results = [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
        if pending:
            leading = [str(b.get("tool_use_id")) for b in blocks[: len(pending)]
                       if b.get("type") == "tool_result"]
            if sorted(leading) != sorted(pending):
                return (f"messages.{index}: tool_use ids {pending} need tool_result blocks "
                        f"immediately after")
        elif results:
            return f"messages.{index}: tool_result without a preceding tool_use"
        pending = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        expected_role = "assistant" if role == "user" else "user"
    if pending:
        return "final assistant tool_use has no tool_result"
    return None


@dataclass
class LoopbackMessagesAPI:
    api_key: str
    replies: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""

    def queue(self, body: dict[str, Any], status: int = 200) -> None:
        self.replies.append((status, body))

    @staticmethod
    def presented_key(headers: dict[str, str]) -> str | None:
        """The key the client sent: ``x-api-key``, or ``Authorization: Bearer`` (newer SDKs)."""
        bearer = headers.get("authorization", "")
        if bearer.startswith("Bearer "):
            return bearer[len("Bearer "):]
        return headers.get("x-api-key")

    def handle(self, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        self.headers.append(headers)
        presented = self.presented_key(headers)
        if presented != self.api_key:
            return 401, error_body("authentication_error", f"invalid x-api-key: {presented}")
        problem = conversation_problem(body.get("messages"))
        if problem is not None:
            return 400, error_body("invalid_request_error", problem)
        if not self.replies:
            return 500, error_body("api_error", "loopback server: no reply queued")
        return self.replies.pop(0)


def _handler_for(api: LoopbackMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length)
            if self.path.split("?")[0] != "/v1/messages":
                status, reply = 404, error_body("not_found_error", f"no route {self.path}")
            else:
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, reply = api.handle(headers, json.loads(raw))
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("request-id", "req_loopback")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


def serve(api_key: str) -> Iterator[LoopbackMessagesAPI]:
    """Run a server for the duration of a fixture; yields its state with ``url`` filled in."""
    api = LoopbackMessagesAPI(api_key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(api))
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
