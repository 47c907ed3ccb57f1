"""A stand-in for the Gemini API on 127.0.0.1: ``generateContent`` (and its streaming twin)
answered from a fixed list of turns. A turn is chosen by how many function responses the request
carries, so each tool result moves the conversation on by one; past the list the model answers
with ``final_text``. Each request is kept for the test to inspect; a request the server cannot
answer is HTTP 400, which the SDK raises."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

# (tool name, arguments) of each function call the model makes, in order.
Call = tuple[str, dict[str, Any]]


def _function_responses(body: dict[str, Any]) -> int:
    return sum(
        "functionResponse" in part for content in body.get("contents", []) for part in content["parts"]
    )


class FakeGemini:
    """``with FakeGemini(calls, final_text) as model:`` serves ``model.base_url`` until the block ends."""

    def __init__(self, calls: list[Call], final_text: str) -> None:
        self.calls = calls
        self.final_text = final_text
        self.requests: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-gemini", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def response(self, body: dict[str, Any]) -> dict[str, Any]:
        """The model's next turn for a ``generateContent`` request body."""
        self.requests.append(body)
        made = _function_responses(body)
        if made < len(self.calls):
            name, args = self.calls[made]
            part: dict[str, Any] = {"functionCall": {"name": name, "args": args, "id": f"call-{made}"}}
        else:
            part = {"text": self.final_text}
        usage = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
        candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "fake"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length))
                    if not self.path.split("?")[0].endswith(("generateContent", "streamGenerateContent")):
                        raise ValueError(f"unexpected path {self.path}")
                    answer = fake.response(body)
                except Exception as exc:
                    self._send(400, "application/json", json.dumps({"error": {"message": str(exc)}}).encode())
                    return
                if "streamGenerateContent" in self.path:
                    self._send(200, "text/event-stream", f"data: {json.dumps(answer)}\n\n".encode())
                else:
                    self._send(200, "application/json", json.dumps(answer).encode())

            def _send(self, status: int, content_type: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> FakeGemini:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
