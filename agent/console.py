"""Showing a conversation on a terminal as it happens: assistant text, tool calls, outcomes."""

from __future__ import annotations

import json
from typing import TextIO

from agent.messages import AssistantMessage, Message, ToolResult
from agent.redact import Redactor


def one_line(text: str) -> str:
    return " ".join(text.split())


def shorten(text: str, limit: int = 200) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Printer:
    """An ``on_message`` callback for :func:`agent.loop.run_agent`; secrets are redacted."""

    def __init__(self, out: TextIO, redact: Redactor | None = None, indent: str = "") -> None:
        self.out = out
        self.redact = redact or Redactor()
        self.indent = indent

    def __call__(self, message: Message) -> None:
        if isinstance(message, AssistantMessage):
            if message.text:
                self._print(f"assistant: {message.text}")
            for call in message.tool_calls:
                self._print(f"  -> {call.name} {shorten(json.dumps(call.input, ensure_ascii=False))}")
        elif isinstance(message, ToolResult):
            tag = "error" if message.is_error else "ok"
            self._print(f"     [{tag}] {shorten(message.content)}")

    def _print(self, text: str) -> None:
        for line in self.redact(text).splitlines() or [""]:
            print(f"{self.indent}{line}", file=self.out, flush=True)
