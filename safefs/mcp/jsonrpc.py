"""JSON-RPC 2.0 messages as the stdio server reads and writes them: one line of UTF-8 JSON each.

A request id is a string or an integer (the MCP schema's ``RequestId``; JSON-RPC allows no
other kind of value but null, which MCP forbids). An id of another type (``[]``, ``{}``,
``true``, ``1.5``) is refused with -32600 before it is used anywhere: as a dictionary key it
could not even be hashed.
"""

from __future__ import annotations

import json
from typing import Any

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SERVER_BUSY = -32000  # the JSON-RPC range for server errors

RequestId = str | int


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


def is_request_id(value: object) -> bool:
    """Whether ``value`` is an id a request may carry: a string or an integer (not a boolean,
    which Python counts as an integer)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def result(request_id: RequestId | None, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: RequestId | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def encode(message: dict[str, Any]) -> bytes:
    """One line of UTF-8 JSON. A lone surrogate that slipped through is \\u-escaped: still JSON."""
    try:
        return json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(message).encode("ascii") + b"\n"
