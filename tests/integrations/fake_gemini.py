"""A stand-in for the Gemini API on 127.0.0.1: ``generateContent`` (and its streaming twin)
answered from a fixed list of turns. A turn is chosen by how many function responses the request
carries, so each tool result moves the conversation on by one; past the list the model answers
with ``final_text``. Each request is kept for the test to inspect; a request the server cannot
answer is HTTP 400, which the SDK raises."""

from __future__ import annotations

import json
from typing import Any

from tests.integrations.fake_http import ScriptedModel


def _function_responses(body: dict[str, Any]) -> int:
    return sum(
        "functionResponse" in part for content in body.get("contents", []) for part in content["parts"]
    )


class FakeGemini(ScriptedModel):
    """``with FakeGemini(calls, final_text) as model:`` serves ``model.base_url`` until the block ends."""

    @property
    def base_url(self) -> str:
        return self.address

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The model's next turn for a ``generateContent`` request body."""
        if not path.split("?")[0].endswith(("generateContent", "streamGenerateContent")):
            raise ValueError(f"unexpected path {path}")
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

    def encode(self, path: str, answer: dict[str, Any]) -> tuple[str, bytes]:
        if "streamGenerateContent" in path:
            return "text/event-stream", f"data: {json.dumps(answer)}\n\n".encode()
        return super().encode(path, answer)
