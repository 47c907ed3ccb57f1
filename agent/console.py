"""Showing a conversation on a terminal as it happens: assistant text, tool calls, outcomes."""

from __future__ import annotations

import json
from typing import TextIO

from agent.messages import AssistantMessage, Message, ToolCall, ToolResult
from agent.redact import Redactor


def one_line(text: str) -> str:
    return " ".join(text.split())


def shorten(text: str, limit: int = 200) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Printer:
    """An ``on_message`` callback for :func:`agent.loop.run_agent`; secrets are redacted.

    The loop runs calls one at a time, so each call is shown when it is about to start (with
    its assistant message, or when the previous call's result arrives) and then its outcome.
    """

    def __init__(self, out: TextIO, redact: Redactor | None = None, indent: str = "") -> None:
        self.out = out
        self.redact = redact or Redactor()
        self.indent = indent
        self._upcoming: list[ToolCall] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, AssistantMessage):
            if message.text:
                self._print(f"assistant: {message.text}")
            self._upcoming = list(message.tool_calls)
            self._announce_next()
        elif isinstance(message, ToolResult):
            tag = "error" if message.is_error else "ok"
            self._print(f"     [{tag}] {shorten(message.content)}")
            self._announce_next()

    def _announce_next(self) -> None:
        if self._upcoming:
            call = self._upcoming.pop(0)
            self._print(f"  -> {call.name} {shorten(json.dumps(call.input, ensure_ascii=False))}")

    def _print(self, text: str) -> None:
        for line in self.redact(text).splitlines() or [""]:
            print(f"{self.indent}{line}", file=self.out, flush=True)
