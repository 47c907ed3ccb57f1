"""Messages serialise to one JSON line each and come back equal; bad shapes are refused."""

from __future__ import annotations

import pytest

from agent.messages import (
    AssistantMessage,
    Message,
    MessageFormatError,
    ToolCall,
    ToolResult,
    UserMessage,
    dumps,
    loads,
    unanswered_calls,
)

SAMPLES: list[Message] = [
    UserMessage("hello\nworld ✓"),
    AssistantMessage("", ()),
    AssistantMessage(
        "thinking",
        (ToolCall("t1", "read", {"path": "a"}), ToolCall("t2", "write", {"path": "b", "content": "x\ny"})),
    ),
    ToolResult("t1", "contents", False),
    ToolResult("t2", "path escapes workspace: '../b'", True),
]


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_round_trip_on_one_line(message: Message) -> None:
    line = dumps(message)
    assert "\n" not in line
    assert loads(line) == message


@pytest.mark.parametrize(
    "line, problem",
    [
        ("{", "not valid JSON"),
        ("[]", "JSON object"),
        ('{"role": "system", "text": "x"}', "unknown message role"),
        ('{"role": "user"}', "'text'"),
        ('{"role": "assistant", "text": "", "tool_calls": [{"id": "a", "name": "b"}]}', "'input'"),
        ('{"role": "tool_result", "tool_call_id": "a", "content": "x", "is_error": "no"}', "'is_error'"),
    ],
)
def test_bad_shapes_are_refused_with_a_reason(line: str, problem: str) -> None:
    with pytest.raises(MessageFormatError, match=problem):
        loads(line)


def test_unanswered_calls_are_those_of_the_last_assistant_message_without_result() -> None:
    history: list[Message] = [SAMPLES[2], ToolResult("t1", "x")]
    assert [c.id for c in unanswered_calls(history)] == ["t2"]
    assert unanswered_calls([*history, ToolResult("t2", "y")]) == []
    assert unanswered_calls([UserMessage("hi")]) == []
