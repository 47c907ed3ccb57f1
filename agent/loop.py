"""The agent loop: ask the model for the next step, run its tool calls one by one, repeat.

Invariants the loop keeps, so a stored session is always a valid conversation to resume:
- an assistant message is recorded (history and session) before any of its tool calls runs;
- every tool call id gets exactly one result, even when a hook or a tool raises;
- the text of a raised exception never enters the messages: the model sees a fixed marker and
  the caller gets the original exception, re-raised unchanged.
A tool's *error result* (``is_error=True``) is a business failure the model sees and the loop
goes on; a *raised* exception is a system fault that stops the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

from agent.approval import ALLOW, DEFAULT_DENIAL_REASON, Policy
from agent.messages import (
    Message,
    ToolCall,
    ToolResult,
    UserMessage,
    unanswered_calls,
)
from agent.models.base import ModelClient
from agent.redact import Redactor
from agent.session import Session
from agent.tools.base import Tool

DEFAULT_MAX_TURNS = 25

APPROVAL_FAILED = "tool approval failed"
EXECUTION_FAILED = "tool execution failed"
NOT_EXECUTED = "not executed after an earlier failure"
CANCELLED = "not executed: the run was cancelled"
INTERRUPTED = "not executed: the previous run stopped before this call finished"


class AgentError(Exception):
    """The run stopped for a reason the caller should report."""


class TurnLimitExceeded(AgentError):
    pass


class Cancelled(AgentError):
    pass


class _Recorder:
    def __init__(self, history: list[Message], session: Session | None,
                 on_message: Callable[[Message], None] | None) -> None:
        self.history = history
        self.session = session
        self.on_message = on_message

    def __call__(self, message: Message) -> None:
        self.history.append(message)
        if self.session is not None:
            self.session.append(message)
        if self.on_message is not None:
            self.on_message(message)

    def fill(self, calls: Iterable[ToolCall], text: str) -> None:
        for call in calls:
            self(ToolResult(call.id, text, is_error=True))


def run_agent(client: ModelClient, tools: Sequence[Tool], messages: Sequence[Message] = (), *,
              prompt: str | None = None, before_tool_call: Policy | None = None,
              session: Session | None = None, max_turns: int = DEFAULT_MAX_TURNS,
              cancel: threading.Event | None = None,
              on_message: Callable[[Message], None] | None = None,
              secrets: Iterable[str] = ()) -> list[Message]:
    """Run until an assistant message has no tool calls; returns the whole conversation.

    ``messages`` are the prior conversation (already stored, e.g. resumed from ``session``);
    ``prompt``, when given, is recorded as a new user message first. ``before_tool_call``:
    no hook means every call is allowed. ``max_turns`` bounds the model calls of this run
    (exceeding it raises :class:`TurnLimitExceeded`); setting ``cancel`` stops the run at the
    next step (:class:`Cancelled`), killing a running ``bash`` command. ``secrets`` are replaced
    in tool results before the model or the session sees them.
    """
    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    by_name = {tool.name: tool for tool in tools}
    if len(by_name) != len(tools):
        raise ValueError("tool names must be unique")
    specs = [tool.spec() for tool in tools]
    redact = Redactor(secrets)
    history: list[Message] = list(messages)
    record = _Recorder(history, session, on_message)

    # A run that died between an assistant message and its results left calls unanswered.
    record.fill(unanswered_calls(history), INTERRUPTED)
    if prompt is not None:
        record(UserMessage(prompt))

    for _turn in range(max_turns):
        if cancel is not None and cancel.is_set():
            raise Cancelled("the run was cancelled")
        reply = client.complete(history, specs)
        record(reply)
        if not reply.tool_calls:
            return history
        _run_calls(reply.tool_calls, by_name, before_tool_call, cancel, record, redact)
    raise TurnLimitExceeded(f"turn limit reached: {max_turns} model turns without a final answer")


def _run_calls(calls: Sequence[ToolCall], by_name: dict[str, Tool], hook: Policy | None,
               cancel: threading.Event | None, record: _Recorder, redact: Redactor) -> None:
    for index, call in enumerate(calls):
        if cancel is not None and cancel.is_set():
            record.fill(calls[index:], CANCELLED)
            raise Cancelled("the run was cancelled")
        try:
            decision = ALLOW if hook is None else hook(call)
            # Read inside the try: a hook returning something else is a hook failure too.
            approved, reason = bool(decision.approved), decision.reason
        except BaseException:
            record(ToolResult(call.id, APPROVAL_FAILED, is_error=True))
            record.fill(calls[index + 1:], NOT_EXECUTED)
            raise
        if not approved:
            record(ToolResult(call.id, str(reason or DEFAULT_DENIAL_REASON), is_error=True))
            continue
        tool = by_name.get(call.name)
        if tool is None:
            known = ", ".join(sorted(by_name)) or "none"
            record(ToolResult(call.id, f"unknown tool {call.name!r} (available: {known})",
                              is_error=True))
            continue
        try:
            output = tool.execute(call.input, cancel)
            result = ToolResult(call.id, redact(output.content), is_error=bool(output.is_error))
        except BaseException:
            record(ToolResult(call.id, EXECUTION_FAILED, is_error=True))
            record.fill(calls[index + 1:], NOT_EXECUTED)
            raise
        record(result)
