"""Model requests in the audit log, recorded at the HTTP layer the SDK sends them through.

:func:`audited_http_client` gives the SDK an HTTP client (with the SDK's own defaults) whose
event hooks see every attempt, retries included: the destination host, the size and SHA-256 of
the request body, the status, and the token usage the reply reports, read from the response
bytes as they stream by (a JSON body or server-sent events alike), so streaming is not
delayed. Headers, and so the API key, are never looked at.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from agent.audit import AuditLog, digest

MAX_USAGE_SCAN_BYTES = 1 << 22  # usage is read from the first 4 MiB of a reply


def usage_from_body(body: bytes, content_type: str) -> dict[str, int]:
    """The token counts in a Messages API reply: JSON, or the ``data:`` lines of an event
    stream (``message_start`` carries the input count, ``message_delta`` the output count)."""
    usage: dict[str, int] = {}

    def take(obj: Any) -> None:
        if not isinstance(obj, dict):
            return
        for source in (
            obj.get("usage"),
            (obj.get("message") or {}).get("usage") if isinstance(obj.get("message"), dict) else None,
        ):
            if isinstance(source, dict):
                usage.update(
                    {k: v for k, v in source.items() if isinstance(v, int) and not isinstance(v, bool)}
                )

    text = body.decode("utf-8", "replace")
    if "event-stream" in content_type:
        for line in text.splitlines():
            if line.startswith("data:"):
                try:
                    take(json.loads(line[5:]))
                except ValueError:
                    continue
    else:
        try:
            take(json.loads(text))
        except ValueError:
            pass
    return usage


class _Recorder:
    """Passes the response bytes through unchanged and records the event when closed."""

    def __init__(self, inner: Any, audit: AuditLog, fields: dict[str, Any], content_type: str) -> None:
        self._inner = inner
        self._audit = audit
        self._fields = fields
        self._content_type = content_type
        self._kept = bytearray()
        self._size = 0
        self._recorded = False

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._size += len(chunk)
            if len(self._kept) < MAX_USAGE_SCAN_BYTES:
                self._kept += chunk
            yield chunk

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            if not self._recorded:
                self._recorded = True
                self._audit.record(
                    "model_request",
                    **self._fields,
                    response_bytes=self._size,
                    usage=usage_from_body(bytes(self._kept), self._content_type),
                )


@functools.cache
def _recording_stream(base: type) -> type:
    """The recorder as a byte stream of the HTTP library in use (httpx or its successor
    httpx2, whichever the SDK was built on): the library accepts only its own stream type."""
    return type("RecordingStream", (_Recorder, base), {})


def _http_library(response: Any) -> ModuleType:
    return sys.modules[type(response).__module__.partition(".")[0]]


def _request_fields(request: Any) -> dict[str, Any]:
    body = request.read()
    return {
        "host": request.url.host,
        "port": request.url.port,
        "method": request.method,
        "path": request.url.path,
        "bytes": len(body),
        "sha256": digest(body),
    }


def audit_hooks(audit: AuditLog) -> dict[str, list[Any]]:
    """``event_hooks`` for an httpx client: each response records one ``model_request``."""

    def on_response(response: Any) -> None:
        http = _http_library(response)
        fields = _request_fields(response.request)
        fields["status"] = response.status_code
        content_type = response.headers.get("content-type", "")
        try:
            body = response.content  # already in memory (a transport that is not streaming)
        except http.ResponseNotRead:
            pass
        else:
            audit.record(
                "model_request",
                **fields,
                response_bytes=len(body),
                usage=usage_from_body(body[:MAX_USAGE_SCAN_BYTES], content_type),
            )
            return
        if isinstance(response.stream, http.SyncByteStream):
            response.stream = _recording_stream(http.SyncByteStream)(
                response.stream, audit, fields, content_type
            )
        else:
            audit.record("model_request", **fields, response_bytes=None, usage={})

    return {"response": [on_response]}


def audited_http_client(audit: AuditLog) -> Any:
    """An HTTP client with the Anthropic SDK's defaults that audits every model request."""
    import anthropic

    return anthropic.DefaultHttpxClient(event_hooks=audit_hooks(audit))
