"""The conversation: user text, assistant turns (text plus tool calls) and tool results.

Each message serialises to one flat JSON object (one line of a session file). The shapes are our
own, not the Messages API's: a model client translates them, so the session format does not
change when the wire format does.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, astuple, dataclass, field
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
class Usage:
    """Tokens one model reply cost, as the API counts them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


@dataclass(frozen=True)
class AssistantMessage:
    """One model reply. ``stop_reason`` is the API's (None for a scripted turn: it stopped
    for its tool calls if it has any, else at the end of its turn); ``usage`` when known."""

    text: str
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    stop_reason: str | None = None
    usage: Usage | None = None


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
        data: dict[str, Any] = {
            "role": "assistant",
            "text": message.text,
            "tool_calls": [{"id": c.id, "name": c.name, "input": c.input} for c in message.tool_calls],
        }
        if message.stop_reason is not None:
            data["stop_reason"] = message.stop_reason
        if message.usage is not None:
            data["usage"] = asdict(message.usage)
        return data
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


def _usage_from(raw: Any) -> Usage | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise MessageFormatError("field 'usage' must be a dict")
    counts = {}
    for name in Usage.__dataclass_fields__:
        value = raw.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise MessageFormatError(f"usage field {name!r} must be a non-negative int")
        counts[name] = value
    return Usage(**counts)


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
            calls.append(
                ToolCall(_field(raw, "id", str), _field(raw, "name", str), _field(raw, "input", dict))
            )
        stop_reason = data.get("stop_reason")
        if stop_reason is not None and not isinstance(stop_reason, str):
            raise MessageFormatError("field 'stop_reason' must be a str")
        return AssistantMessage(
            _field(data, "text", str), tuple(calls), stop_reason, _usage_from(data.get("usage"))
        )
    if role == "tool_result":
        return ToolResult(
            _field(data, "tool_call_id", str), _field(data, "content", str), _field(data, "is_error", bool)
        )
    raise MessageFormatError(f"unknown message role {role!r}")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any) -> str | None:
    """The first string in ``value`` (nested dicts and lists) holding a lone surrogate: valid
    in JSON (``"\\ud83d"``), but no character, so it has no UTF-8 form."""
    if isinstance(value, str):
        return value if _LONE_SURROGATE.search(value) else None
    if isinstance(value, dict):
        items: list[Any] = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        return None
    for item in items:
        found = lone_surrogate(item)
        if found is not None:
            return found
    return None


def printable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so any UTF-8 stream accepts it."""
    return _LONE_SURROGATE.sub("\ufffd", text)


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
            answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolResult)}
            return [c for c in message.tool_calls if c.id not in answered]
    return []
