"""The HTTP side the fake model APIs share: a server on 127.0.0.1 that answers each POST with a
JSON body from ``answer(path, body)``; an exception there is HTTP 400 carrying its message, which
the SDK raises. ``with`` serves until the block ends."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class JsonServer:
    """Subclasses implement :meth:`answer`; ``content_type(path)`` may stream (SSE) instead."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-model", daemon=True)

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def encode(self, path: str, answer: dict[str, Any]) -> tuple[str, bytes]:
        """(content type, bytes) of an answer: JSON unless a subclass streams it."""
        return "application/json", json.dumps(answer).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    answer = server.answer(self.path, json.loads(self.rfile.read(length)))
                except Exception as exc:
                    self._send(400, "application/json", json.dumps({"error": {"message": str(exc)}}).encode())
                    return
                self._send(200, *server.encode(self.path, answer))

            def _send(self, status: int, content_type: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


# (a word of the tool's name, or its name; arguments) of each call the model makes, in order.
Call = tuple[str, dict[str, Any]]


class ScriptedModel(JsonServer):
    """A fake model that makes ``calls`` in order, then answers ``final_text``; every request
    body it got is kept in ``requests``."""

    def __init__(self, calls: list[Call], final_text: str) -> None:
        super().__init__()
        self.calls = calls
        self.final_text = final_text
        self.requests: list[dict[str, Any]] = []
