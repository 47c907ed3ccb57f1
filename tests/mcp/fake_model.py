"""A stand-in for the model behind Codex: an OpenAI Responses API server on 127.0.0.1 that plays
a fixed script. Each turn is a function that checks the request Codex sent and returns the one
output item (a function call, a message) the model answers with, streamed as server-sent events.
A turn that fails answers HTTP 400 with the failure, so Codex stops at once, and :meth:`check`
raises it in the test."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Turn = Callable[[dict[str, Any]], dict[str, Any]]


def function_call(call_id: str, namespace: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A call of a namespaced tool, as Codex lists MCP tools (namespace ``mcp__<server>``)."""
    return {
        "type": "function_call",
        "call_id": call_id,
        "namespace": namespace,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def _events(turn: int, item: dict[str, Any]) -> bytes:
    response = {"id": f"response-{turn}"}
    usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    events = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.done", "item": {"id": f"item-{turn}", **item}},
        {"type": "response.completed", "response": {**response, "usage": usage}},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class FakeModel:
    """``with FakeModel(turns) as model:`` serves ``model.base_url`` until the block ends."""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = turns
        self.requests: list[dict[str, Any]] = []
        self.failure: BaseException | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-model", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _answer(self, path: str, body: bytes) -> tuple[int, str, bytes]:
        """(status, content type, body) for one request; the first failure is kept."""
        try:
            assert path == "/v1/responses", f"the model was asked {path}"
            request = json.loads(body)
            self.requests.append(request)
            turn = len(self.requests)
            assert turn <= len(self.turns), f"request {turn}, but the script has {len(self.turns)} turns"
            return 200, "text/event-stream", _events(turn, self.turns[turn - 1](request))
        except Exception as failure:
            self.failure = self.failure or failure
            error = {"error": {"type": "invalid_request_error", "message": f"fake model: {failure!r}"}}
            return 400, "application/json", json.dumps(error).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 30  # seconds a read from Codex may take

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status, kind, answer = model._answer(self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def check(self) -> None:
        """Raise the first failure a turn met, if any."""
        if self.failure is not None:
            raise self.failure
