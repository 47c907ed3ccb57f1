"""A model that plays back canned assistant turns: for tests and the offline demo.

A turn is an ``AssistantMessage`` or a function of the conversation so far returning one, so a
script can react to what its earlier tool calls returned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from agent.messages import AssistantMessage, Message
from agent.models.base import ModelError, RequestCancelled, TextSink

Turn = AssistantMessage | Callable[[Sequence[Message]], AssistantMessage]


class ScriptedModelClient:
    def __init__(self, turns: Sequence[Turn]) -> None:
        self._turns = list(turns)
        self.requests: list[list[Message]] = []  # the conversation as each call saw it
        self.tool_names: list[list[str]] = []

    @property
    def remaining(self) -> int:
        return len(self._turns) - len(self.requests)

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        cancel: threading.Event | None = None,
        on_text: TextSink | None = None,
    ) -> AssistantMessage:
        if cancel is not None and cancel.is_set():
            raise RequestCancelled("the request was cancelled")
        index = len(self.requests)
        if index >= len(self._turns):
            raise ModelError(f"scripted model has no turn left (it had {len(self._turns)})")
        self.requests.append(list(messages))
        self.tool_names.append([tool["name"] for tool in tools])
        turn = self._turns[index]
        reply = turn if isinstance(turn, AssistantMessage) else turn(messages)
        if on_text is not None and reply.text:
            on_text(reply.text)
        return reply
