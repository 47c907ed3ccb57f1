"""The conversation: user text, assistant turns (text plus tool calls) and tool results.

Each message serialises to one flat JSON object (one line of a session file). The shapes are our
own, not the Messages API's: a model client translates them, so the session format does not
change when the wire format does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


class MessageFormatError(ValueError):
    """A serialised message that does not have the expected shape."""


@dataclass(frozen=True)
class UserMessage:
    text: str


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class AssistantMessage:
    text: str
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call; ``is_error`` results are shown to the model as failures."""

    tool_call_id: str
    content: str
    is_error: bool = False


Message = UserMessage | AssistantMessage | ToolResult


def message_to_dict(message: Message) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"role": "user", "text": message.text}
    if isinstance(message, AssistantMessage):
        return {
            "role": "assistant",
            "text": message.text,
            "tool_calls": [{"id": c.id, "name": c.name, "input": c.input} for c in message.tool_calls],
        }
    return {
        "role": "tool_result",
        "tool_call_id": message.tool_call_id,
        "content": message.content,
        "is_error": message.is_error,
    }


def _field(data: dict[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise MessageFormatError(f"field {key!r} must be a {kind.__name__}")
    return value


def message_from_dict(data: Any) -> Message:
    if not isinstance(data, dict):
        raise MessageFormatError("a message must be a JSON object")
    role = data.get("role")
    if role == "user":
        return UserMessage(_field(data, "text", str))
    if role == "assistant":
        calls = []
        for raw in _field(data, "tool_calls", list):
            if not isinstance(raw, dict):
                raise MessageFormatError("a tool call must be a JSON object")
            calls.append(ToolCall(_field(raw, "id", str), _field(raw, "name", str),
                                  _field(raw, "input", dict)))
        return AssistantMessage(_field(data, "text", str), tuple(calls))
    if role == "tool_result":
        return ToolResult(_field(data, "tool_call_id", str), _field(data, "content", str),
                          _field(data, "is_error", bool))
    raise MessageFormatError(f"unknown message role {role!r}")


def dumps(message: Message) -> str:
    """One line of JSON (non-ASCII escaped, so a line never contains a raw newline)."""
    return json.dumps(message_to_dict(message), ensure_ascii=True, separators=(",", ":"))


def loads(line: str) -> Message:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise MessageFormatError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    return message_from_dict(data)


def unanswered_calls(messages: list[Message]) -> list[ToolCall]:
    """Tool calls of the last assistant message that have no result yet (an interrupted run)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            answered = {m.tool_call_id for m in messages[index + 1:] if isinstance(m, ToolResult)}
            return [c for c in message.tool_calls if c.id not in answered]
    return []
