"""The fake Messages API (:mod:`tests.integrations.fake_anthropic_messages`) answering as the
Claude Code binary asks: streamed, as server-sent events (``message_start``, one content block
at a time with its delta, ``message_delta``, ``message_stop``). ``POST /v1/messages/count_tokens``
gets a token count; the requests of either kind are kept in ``requests``, the counting ones apart
in ``counted``."""

from __future__ import annotations

import json
from typing import Any

from tests.integrations.fake_anthropic_messages import FakeMessages


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


def _delta(block: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the block as it starts, its one delta)."""
    if block["type"] == "text":
        return {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
    return start, {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}


class FakeStreamingMessages(FakeMessages):
    """``with FakeStreamingMessages(calls, final_text) as model:`` (calls name tools exactly, as
    the binary lists them: ``mcp__safefs__Read``)."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]], final_text: str) -> None:
        super().__init__(calls, final_text)
        self.counted: list[dict[str, Any]] = []

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if "/count_tokens" in path:
            self.counted.append(body)
            return {"input_tokens": 1}
        return super().answer(path.split("?", 1)[0], body)

    def encode(self, path: str, answer: dict[str, Any]) -> tuple[str, bytes]:
        if "/count_tokens" in path:
            return super().encode(path, answer)
        message = {**answer, "content": [], "stop_reason": None}
        out = [_event("message_start", {"type": "message_start", "message": message})]
        for index, block in enumerate(answer["content"]):
            start, delta = _delta(block)
            out.append(
                _event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            out.append(
                _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
            out.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
        out.append(
            _event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": answer["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": 1},
                },
            )
        )
        out.append(_event("message_stop", {"type": "message_stop"}))
        return "text/event-stream", b"".join(out)
