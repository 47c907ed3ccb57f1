"""Showing a run on a terminal as it happens: assistant text, tool calls, outcomes, turns.

Everything printed has its control characters made visible first (``agent.display.visible``):
the model's text, a tool result's summary or a file name cannot clear the screen, move the
cursor, set a scroll region, retitle the window or write the clipboard. Nothing here raises
for what it prints: a lone surrogate from the model, a character the
stream's encoding lacks, or a closed or broken stream (a hung-up terminal) is shown as well as
possible or dropped. The API key is redacted (``agent.redact.Redactor``) before any shortening,
so a cut never shows part of it.
"""

from __future__ import annotations

import json
from typing import TextIO

from agent.display import visible
from agent.loop import RunObserver
from agent.messages import AssistantMessage, Message, ToolCall, ToolResult, Usage
from agent.redact import Redactor


def one_line(text: str) -> str:
    return " ".join(text.split())


def shorten(text: str, limit: int = 200) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def write_safely(stream: TextIO, text: str) -> bool:
    """Write and flush ``text`` with its control characters made visible (``agent.display``),
    so nothing printed can drive the terminal; False (never an exception) when the stream
    cannot take it."""
    text = visible(text)
    try:
        try:
            stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(stream, "encoding", None) or "utf-8"
            stream.write(text.encode(encoding, "replace").decode(encoding))
        stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _call_text(call: ToolCall) -> str:
    return f"{call.name} {json.dumps(call.input, ensure_ascii=False)}"


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
            self._print(f"     [{tag}] {shorten(self.redact(message.content))}")
            self._announce_next()

    def _announce_next(self) -> None:
        if self._upcoming:
            call = self._upcoming.pop(0)
            self._print(f"  -> {shorten(self.redact(_call_text(call)))}")

    def _print(self, text: str) -> None:
        for line in self.redact(text).splitlines() or [""]:
            write_safely(self.out, f"{self.indent}{line}\n")


def describe_usage(usage: Usage) -> str:
    return (
        f"{usage.input_tokens} in, {usage.output_tokens} out, cache "
        f"{usage.cache_read_input_tokens} read / {usage.cache_creation_input_tokens} written"
    )


class Progress(RunObserver):
    """The CLI's view of a run. Progress lines go to ``err``; the model's text is streamed to
    ``text_out`` word by word (a word is redacted whole before it is shown)."""

    def __init__(self, err: TextIO, text_out: TextIO, redact: Redactor | None = None) -> None:
        self.err = err
        self.text_out = text_out
        self.redact = redact or Redactor()
        self._pending = ""  # streamed text not shown yet: the last, maybe unfinished, word
        self._column = 0  # characters shown on the current text line
        self._announced: set[str] = set()

    def _line(self, text: str) -> None:
        self._end_text()
        write_safely(self.err, self.redact(text) + "\n")

    def _end_text(self) -> None:
        if self._pending:
            self._show(self._pending)
            self._pending = ""
        if self._column:
            write_safely(self.text_out, "\n")
            self._column = 0

    def _show(self, text: str) -> None:
        text = self.redact(text)
        if write_safely(self.text_out, text):
            tail = text.rsplit("\n", 1)
            self._column = len(tail[-1]) if len(tail) == 2 else self._column + len(text)

    def close(self) -> None:
        """End a text line left open (a run that stopped mid-reply), before an error line."""
        self._end_text()

    def turn(self, number: int, limit: int) -> None:
        self._line(f"[turn {number}/{limit}]")

    def text(self, chunk: str) -> None:
        self._pending += chunk
        cut = max(self._pending.rfind(" "), self._pending.rfind("\n"), self._pending.rfind("\t"))
        if cut >= 0:
            self._show(self._pending[: cut + 1])
            self._pending = self._pending[cut + 1 :]

    def reply(self, message: AssistantMessage, total: Usage) -> None:
        self._end_text()
        details = []
        if message.usage is not None:
            details.append(f"tokens {describe_usage(message.usage)}; this run {total.total}")
        if message.stop_reason not in (None, "end_turn", "tool_use"):
            details.append(f"stop_reason {message.stop_reason}")
        if details:
            self._line("  (" + "; ".join(details) + ")")

    def decision(self, call: ToolCall, approved: bool, reason: str) -> None:
        self._announced.add(call.id)
        verdict = "allowed" if approved else f"refused: {reason}"
        self._line(f"  -> {shorten(self.redact(_call_text(call)), 160)}  [{verdict}]")

    def result(self, call: ToolCall, result: ToolResult) -> None:
        if call.id not in self._announced:
            self._line(f"  -> {shorten(self.redact(_call_text(call)), 160)}")
        tag = "error" if result.is_error else "ok"
        self._line(f"     [{tag}] {shorten(self.redact(result.content))}")
