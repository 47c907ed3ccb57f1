"""The agent loop: ask the model for the next step, run its tool calls one by one, repeat.

Invariants the loop keeps, so a stored session is always a valid conversation to resume:
- an assistant message is recorded (history and session) before any of its tool calls runs;
- every tool call id gets exactly one result, even when a hook or a tool raises, the reply was
  cut off, or the run is cancelled: a call that did not run gets a fixed ``not executed`` marker;
- the text of a raised exception never enters the messages: the model sees a fixed marker and
  the caller gets the original exception, re-raised unchanged.
A tool's *error result* (``is_error=True``) is a business failure the model sees and the loop
goes on; a *raised* exception is a system fault that stops the run.

How each ``stop_reason`` is handled (the API's documented meanings):
- ``end_turn``, ``stop_sequence``, ``tool_use``: the tool calls run; a reply without calls ends
  the run with its text as the answer.
- ``pause_turn``: the API paused a long turn; the conversation is sent back as it is so the
  model continues.
- ``max_tokens``: the reply is incomplete. Its tool calls never run (the last one's input is
  cut off); each gets ``not executed: the reply was cut off by max_tokens`` and the model is
  asked again, so it can retry smaller. A text-only reply is not an answer: :class:`ReplyCutOff`.
- ``refusal``: :class:`Refused`. ``model_context_window_exceeded``: :class:`ContextExhausted`.
  Any other value: :class:`AgentError`. Their tool calls never run either.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

from agent.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    lone_surrogate,
    unanswered_calls,
)
from agent.models.base import ModelClient, RequestCancelled
from agent.policy.approval import ALLOW, DEFAULT_DENIAL_REASON, Policy
from agent.session import Session
from agent.tools.base import Tool

DEFAULT_MAX_TURNS = 25

APPROVAL_FAILED = "tool approval failed"
EXECUTION_FAILED = "tool execution failed"
NOT_EXECUTED = "not executed after an earlier failure"
CANCELLED = "not executed: the run was cancelled"
INTERRUPTED = "not executed: the previous run stopped before this call finished"
CUT_OFF = "not executed: the reply was cut off by max_tokens"
REFUSED = "not executed: the model refused"
CONTEXT_FULL = "not executed: the reply was cut off at the end of the model's context window"
BUDGET_SPENT = "not executed: the run's token budget was used up"
UNKNOWN_STOP = "not executed: the reply stopped for an unknown reason"
LONE_SURROGATE = (
    "invalid input: a string holds a lone surrogate (an unpaired \\ud800-\\udfff escape), which is not text"
)

RUNS_CALLS = {None, "end_turn", "stop_sequence", "tool_use", "pause_turn"}


class AgentError(Exception):
    """The run stopped for a reason the caller should report."""


class TurnLimitExceeded(AgentError):
    pass


class Cancelled(AgentError):
    pass


class ReplyCutOff(AgentError):
    pass


class Refused(AgentError):
    pass


class ContextExhausted(AgentError):
    pass


class BudgetExceeded(AgentError):
    pass


class NothingToContinue(AgentError):
    pass


class EmptyReply(AgentError):
    pass


class RunObserver:
    """Progress hooks for a display; each does nothing unless overridden."""

    def turn(self, number: int, limit: int) -> None:
        """Model call ``number`` (from 1) of at most ``limit`` is about to be made."""

    def text(self, chunk: str) -> None:
        """Text of the reply, as it arrives."""

    def reply(self, message: AssistantMessage, total: Usage) -> None:
        """The reply is complete; ``total`` is this run's usage so far."""

    def decision(self, call: ToolCall, approved: bool, reason: str) -> None:
        """A call was approved (and is about to run) or refused, with the reason."""

    def result(self, call: ToolCall, result: ToolResult) -> None:
        """A call's result (or its ``not executed`` marker) was recorded."""


class _Recorder:
    def __init__(
        self,
        history: list[Message],
        session: Session | None,
        on_message: Callable[[Message], None] | None,
        observer: RunObserver,
        on_refused: Callable[[ToolCall, str], None] | None = None,
    ) -> None:
        self.history = history
        self.session = session
        self.on_message = on_message
        self.observer = observer
        self.on_refused = on_refused

    def __call__(self, message: Message) -> None:
        self.history.append(message)
        if self.session is not None:
            self.session.append(message)
        if self.on_message is not None:
            self.on_message(message)

    def result(self, call: ToolCall, text: str, is_error: bool = True) -> None:
        result = ToolResult(call.id, text, is_error=is_error)
        self(result)
        self.observer.result(call, result)

    def refused(self, call: ToolCall, text: str) -> None:
        """A call answered without the hook being asked: told to ``on_refused`` (the audit
        log) before its result is recorded."""
        if self.on_refused is not None:
            self.on_refused(call, text)
        self.result(call, text)

    def fill(self, calls: Iterable[ToolCall], text: str) -> None:
        for call in calls:
            self.refused(call, text)


def can_continue(history: Sequence[Message]) -> bool:
    """Does this conversation end where the model has something to answer (a prompt, tool
    results, calls left unanswered, a paused turn), rather than with its final answer?"""
    if not history:
        return False
    last = history[-1]
    if not isinstance(last, AssistantMessage):
        return True
    return bool(last.tool_calls) or last.stop_reason == "pause_turn"


def run_agent(
    client: ModelClient,
    tools: Sequence[Tool],
    messages: Sequence[Message] = (),
    *,
    prompt: str | None = None,
    before_tool_call: Policy | None = None,
    session: Session | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    cancel: threading.Event | None = None,
    on_message: Callable[[Message], None] | None = None,
    observer: RunObserver | None = None,
    max_tokens_total: int | None = None,
    on_refused: Callable[[ToolCall, str], None] | None = None,
) -> list[Message]:
    """Run until a reply has no tool calls; returns the whole conversation.

    ``messages`` are the prior conversation (already stored, e.g. resumed from ``session``);
    ``prompt``, when given, is recorded as a new user message first, unless the conversation
    already ends with that very prompt (a run that failed before any reply). Without a prompt
    the conversation is continued (:class:`NothingToContinue` if it ends with an answer).
    ``before_tool_call``: no hook means every call is allowed. ``max_turns`` bounds the model
    calls of this run (:class:`TurnLimitExceeded`); ``max_tokens_total`` bounds the tokens this
    run's replies report (:class:`BudgetExceeded`, checked after each reply). Setting ``cancel``
    abandons a model request at once and stops before the next tool call (:class:`Cancelled`);
    a running ``bash`` command is killed by the tool itself. ``on_refused`` is told of every
    call answered without ``before_tool_call`` being asked (an invalid input, a cut-off reply,
    a cancelled run), before its result is recorded, so an audit log has a line for each.
    """
    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    by_name = {tool.name: tool for tool in tools}
    if len(by_name) != len(tools):
        raise ValueError("tool names must be unique")
    specs = [tool.spec() for tool in tools]
    observer = observer or RunObserver()
    history: list[Message] = list(messages)
    record = _Recorder(history, session, on_message, observer, on_refused)

    if prompt is None and not can_continue(history):
        raise NothingToContinue(
            "nothing to continue: the conversation ends with the model's answer; give a new prompt"
        )
    # A run that died between an assistant message and its results left calls unanswered.
    record.fill(unanswered_calls(history), INTERRUPTED)
    if prompt is not None and not (history and history[-1] == UserMessage(prompt)):
        record(UserMessage(prompt))

    used = Usage()
    for turn in range(1, max_turns + 1):
        if cancel is not None and cancel.is_set():
            raise Cancelled("the run was cancelled")
        observer.turn(turn, max_turns)
        try:
            reply = client.complete(history, specs, cancel=cancel, on_text=observer.text)
        except RequestCancelled:
            raise Cancelled("the run was cancelled") from None
        if not reply.text and not reply.tool_calls and reply.stop_reason is None:
            # Not an answer: a 200 whose message is empty. Stored, it would end the session as
            # if the model had replied.
            raise EmptyReply("the model's reply had no content and no stop reason; nothing was answered")
        record(reply)
        used += reply.usage or Usage()
        observer.reply(reply, used)
        over_budget = max_tokens_total is not None and used.total > max_tokens_total
        runs_calls = reply.stop_reason in RUNS_CALLS
        if not runs_calls:
            # Raises, except for max_tokens with calls: the markers tell the model; ask again.
            _stop_without_running(reply, record)
        elif not reply.tool_calls and reply.stop_reason != "pause_turn":
            return history  # the answer (complete even if it went over the budget)
        elif over_budget:
            record.fill(reply.tool_calls, BUDGET_SPENT)
        if over_budget:
            raise BudgetExceeded(
                f"token budget used up: this run used {used.total} tokens, the limit is {max_tokens_total}"
            )
        if runs_calls and reply.tool_calls:
            _run_calls(reply.tool_calls, by_name, before_tool_call, cancel, record)
    raise TurnLimitExceeded(f"turn limit reached: {max_turns} model turns without a final answer")


def _stop_without_running(reply: AssistantMessage, record: _Recorder) -> None:
    """Answer the calls of a reply that stopped abnormally; raise unless the model should be
    asked again (a ``max_tokens`` reply with calls)."""
    stop = reply.stop_reason
    marker = {"max_tokens": CUT_OFF, "refusal": REFUSED, "model_context_window_exceeded": CONTEXT_FULL}.get(
        str(stop), UNKNOWN_STOP
    )
    record.fill(reply.tool_calls, marker)
    if stop == "max_tokens":
        if reply.tool_calls:
            return
        raise ReplyCutOff(
            "the reply was cut off by max_tokens before it was complete; raise "
            "--max-tokens, or ask for less at a time"
        )
    if stop == "refusal":
        raise Refused("the model refused to continue this conversation")
    if stop == "model_context_window_exceeded":
        raise ContextExhausted(
            "the conversation no longer fits the model's context window; start a new session"
        )
    raise AgentError(f"the model stopped for an unknown reason ({stop!r})")


def _run_calls(
    calls: Sequence[ToolCall],
    by_name: dict[str, Tool],
    hook: Policy | None,
    cancel: threading.Event | None,
    record: _Recorder,
) -> None:
    observer = record.observer
    for index, call in enumerate(calls):
        if cancel is not None and cancel.is_set():
            record.fill(calls[index:], CANCELLED)
            raise Cancelled("the run was cancelled")
        if lone_surrogate(call.input) is not None:
            # Valid JSON, but no path or command can hold it; checked before any hook sees it.
            observer.decision(call, False, "invalid input")
            record.refused(call, LONE_SURROGATE)
            continue
        try:
            decision = ALLOW if hook is None else hook(call)
            # Read inside the try: a hook returning something else is a hook failure too.
            approved, reason = bool(decision.approved), decision.reason
        except BaseException:
            record.result(call, APPROVAL_FAILED)  # the audit wrapper has written its line
            record.fill(calls[index + 1 :], NOT_EXECUTED)
            raise
        if not approved:
            text = str(reason or DEFAULT_DENIAL_REASON)
            observer.decision(call, False, text)
            record.result(call, text)
            continue
        tool = by_name.get(call.name)
        if tool is None:
            known = ", ".join(sorted(by_name)) or "none"
            observer.decision(call, False, "unknown tool")
            record.result(call, f"unknown tool {call.name!r} (available: {known})")
            continue
        observer.decision(call, True, str(reason or ""))
        try:
            output = tool.execute(call.input, cancel)
        except BaseException:
            record.result(call, EXECUTION_FAILED)
            record.fill(calls[index + 1 :], NOT_EXECUTED)
            raise
        record.result(call, output.content, bool(output.is_error))
