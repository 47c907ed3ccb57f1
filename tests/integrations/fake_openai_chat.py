"""A stand-in for an OpenAI-compatible Chat Completions API on 127.0.0.1 (``POST
/v1/chat/completions``, not streamed), answered from a fixed list of tool calls. A turn is chosen
by how many tool results the request carries; each call names its tool by a word the
framework's tool name contains (frameworks rename tools for the API), or equals, matched
against the request's ``tools``. Past the list the model answers with ``final_text``. Requests are kept for
the test; one the server cannot answer is HTTP 400, which the SDK raises."""

from __future__ import annotations

import json
from typing import Any

from tests.integrations.fake_http import ScriptedModel


class FakeChat(ScriptedModel):
    """``with FakeChat(calls, final_text) as model:`` serves ``model.base_url`` until the block ends."""

    @property
    def base_url(self) -> str:
        return f"{self.address}/v1"

    def tool_results(self) -> list[str]:
        """The tool results the framework sent back, in order (from the last request)."""
        messages = self.requests[-1]["messages"] if self.requests else []
        return [m["content"] for m in messages if m.get("role") == "tool"]

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if not path.endswith("/chat/completions"):
            raise ValueError(f"unexpected path {path}")
        self.requests.append(body)
        made = sum(m.get("role") == "tool" for m in body.get("messages", []))
        message: dict[str, Any] = {"role": "assistant", "content": self.final_text}
        finish = "stop"
        if made < len(self.calls):
            word, args = self.calls[made]
            names = [t["function"]["name"] for t in body.get("tools", [])]
            # A name equal to the word, else the names containing it.
            matching = [n for n in names if n == word] or [n for n in names if word.lower() in n.lower()]
            if len(matching) != 1:
                raise ValueError(f"no single tool named like {word!r} among {names}")
            call = {
                "id": f"call-{made}",
                "type": "function",
                "function": {"name": matching[0], "arguments": json.dumps(args)},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return {
            "id": f"chat-{made}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [choice],
            "usage": usage,
        }
