"""A stand-in for Anthropic's Messages API on 127.0.0.1 (``POST /v1/messages``, not streamed),
answered from a fixed list of tool calls. A turn is chosen by how many ``tool_result`` blocks the
request carries; each call names its tool exactly, and the tool must be among the request's
``tools``. Past the list the model answers with ``final_text``. Requests are kept for the test;
one the server cannot answer is HTTP 400, which the SDK raises."""

from __future__ import annotations

from typing import Any

from tests.integrations.fake_http import ScriptedModel


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body.get("messages", [])
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


class FakeMessages(ScriptedModel):
    """``with FakeMessages(calls, final_text) as model:`` serves ``model.address`` until the block ends."""

    def tool_results(self) -> list[Any]:
        """The tool results the framework sent back, in order (from the last request)."""
        return [block.get("content") for block in _tool_results(self.requests[-1])] if self.requests else []

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if not path.endswith("/v1/messages"):
            raise ValueError(f"unexpected path {path}")
        self.requests.append(body)
        made = len(_tool_results(body))
        content: list[dict[str, Any]] = [{"type": "text", "text": self.final_text}]
        stop = "end_turn"
        if made < len(self.calls):
            name, args = self.calls[made]
            names = [t.get("name") for t in body.get("tools", [])]
            if name not in names:
                raise ValueError(f"no tool {name!r} among {names}")
            content = [{"type": "tool_use", "id": f"toolu_{made}", "name": name, "input": args}]
            stop = "tool_use"
        return {
            "id": f"msg_{made}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
