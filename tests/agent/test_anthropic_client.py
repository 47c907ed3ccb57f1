"""The real ``anthropic`` SDK against a Messages-API-compatible server on 127.0.0.1."""

from __future__ import annotations

import pytest

from agent.loop import run_agent
from agent.messages import AssistantMessage, Message, ToolCall, ToolResult, Usage, UserMessage
from agent.models.anthropic_client import AnthropicModelClient, to_api_messages
from agent.models.base import ModelError
from agent.policy.approval import deny_bash_by_default
from agent.tools import default_tools
from tests.agent.conftest import API_KEY, AgentWorkspace
from tests.agent.messages_api_server import (
    LoopbackMessagesAPI,
    error_body,
    text_reply,
    tool_reply,
)


def client_for(api: LoopbackMessagesAPI, key: str = API_KEY, stream: bool = True) -> AnthropicModelClient:
    return AnthropicModelClient(
        api_key=key, model="loopback-model", base_url=api.url, max_retries=0, timeout=10, stream=stream
    )


def bare(message: Message) -> Message:
    """The message without what only the API knows (stop_reason, usage)."""
    if isinstance(message, AssistantMessage):
        return AssistantMessage(message.text, message.tool_calls)
    return message


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
def test_tool_use_then_tool_result_then_final_text(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, stream: bool
) -> None:
    messages_api.queue(
        tool_reply(
            "Reading two files.",
            ("toolu_01", "read", {"path": "hello.txt"}),
            ("toolu_02", "read", {"path": "../outside/secret.txt"}),
        )
    )
    messages_api.queue(tool_reply("", ("toolu_03", "bash", {"command": "env"})))
    messages_api.queue(text_reply("The file says hello."))
    history = run_agent(
        client_for(messages_api, stream=stream),
        default_tools(ws.root),
        prompt="what's inside?",
        before_tool_call=deny_bash_by_default,
    )

    assert history[-1] == AssistantMessage("The file says hello.", (), "end_turn", Usage(11, 7, 0, 0))
    assert bare(history[1]) == AssistantMessage(
        "Reading two files.",
        (
            ToolCall("toolu_01", "read", {"path": "hello.txt"}),
            ToolCall("toolu_02", "read", {"path": "../outside/secret.txt"}),
        ),
    )

    first, second, third = messages_api.requests
    assert all(bool(r.get("stream")) is stream for r in messages_api.requests)
    assert first["model"] == "loopback-model"
    assert [t["name"] for t in first["tools"]] == ["read", "write", "edit", "list", "glob", "grep", "bash"]
    assert first["tools"][0]["input_schema"]["required"] == ["path"]
    assert first["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "what's inside?", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    # Both results in one user message, right after the assistant's tool_use turn.
    assert second["messages"][1]["content"][1]["type"] == "tool_use"
    assert second["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01",
                "is_error": False,
                "content": "     1\thello from inside\n",
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_02",
                "is_error": True,
                "content": "path escapes workspace: '../outside/secret.txt'",
                "cache_control": {"type": "ephemeral"},
            },
        ],
    }
    assert third["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_03",
                "is_error": True,
                "content": "bash requires an explicit approval policy; --mode full allows it",
                "cache_control": {"type": "ephemeral"},
            }
        ],
    }
    # The cached prefix: the last tool, the system prompt, the end of the conversation.
    for request in messages_api.requests:
        marked = [t["name"] for t in request["tools"] if "cache_control" in t]
        assert marked == ["bash"]
        assert request["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert sum("cache_control" in b for m in request["messages"] for b in m["content"]) == 1
    assert all(messages_api.presented_key(h) == API_KEY for h in messages_api.headers)
    for request in messages_api.requests:
        assert API_KEY not in str(request)
        assert str(ws.path) not in str(request)


def test_resumed_history_with_failure_markers_is_accepted_by_the_api(
    messages_api: LoopbackMessagesAPI,
) -> None:
    history: list[Message] = [
        UserMessage("go"),
        AssistantMessage("", (ToolCall("a", "read", {"path": "x"}), ToolCall("b", "read", {"path": "y"}))),
        ToolResult("a", "tool execution failed", True),
        ToolResult("b", "not executed after an earlier failure", True),
        UserMessage("try again"),
        AssistantMessage(""),  # an empty turn has no blocks to send
        UserMessage("still there?"),
    ]
    messages_api.queue(text_reply("yes"))
    reply = client_for(messages_api).complete(history, [])
    assert bare(reply) == AssistantMessage("yes")
    sent = messages_api.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [b["type"] for b in sent[2]["content"]] == ["tool_result", "tool_result", "text", "text"]
    assert "tools" not in messages_api.requests[0]


def test_http_errors_become_model_errors_without_the_key(messages_api: LoopbackMessagesAPI) -> None:
    messages_api.queue(error_body("overloaded_error", "Overloaded"), status=529)
    with pytest.raises(ModelError, match="HTTP 529") as raised:
        client_for(messages_api).complete([UserMessage("hi")], [])
    assert raised.value.__cause__ is None and raised.value.__context__ is None

    with pytest.raises(ModelError, match="HTTP 401"):
        client_for(messages_api, key="sk-wrong").complete([UserMessage("hi")], [])


def test_the_loopback_server_refuses_what_the_api_would(messages_api: LoopbackMessagesAPI) -> None:
    # Without this, a test passing against the loopback server would prove little.
    dangling: list[Message] = [
        UserMessage("go"),
        AssistantMessage("", (ToolCall("a", "read", {"path": "x"}),)),
        UserMessage("no result for a"),
    ]
    with pytest.raises(ModelError, match=r"HTTP 400.*tool_result"):
        client_for(messages_api).complete(dangling, [])


def test_the_sdks_phase_timeouts_are_kept() -> None:
    # A single number would replace the 5 s connect timeout too: a blackholed address would
    # then hang for the whole read timeout.
    default = AnthropicModelClient(api_key=API_KEY, base_url="http://127.0.0.1:9")
    assert default.timeout.connect == 5.0 and default.timeout.read == 600.0
    assert client_for_timeout(30.0).timeout.connect == 5.0


def client_for_timeout(seconds: float) -> AnthropicModelClient:
    return AnthropicModelClient(api_key=API_KEY, base_url="http://127.0.0.1:9", timeout=seconds)


def test_unreachable_server_is_a_model_error() -> None:
    client = AnthropicModelClient(api_key=API_KEY, base_url="http://127.0.0.1:9", max_retries=0, timeout=5)
    with pytest.raises(ModelError, match="could not reach the model API"):
        client.complete([UserMessage("hi")], [])


def test_the_key_is_not_in_the_clients_repr() -> None:
    client = AnthropicModelClient(api_key=API_KEY, base_url="http://127.0.0.1:9")
    assert API_KEY not in repr(client)
    with pytest.raises(ValueError):
        AnthropicModelClient(api_key="")


def test_empty_tool_result_content_is_omitted() -> None:
    sent = to_api_messages(
        [AssistantMessage("", (ToolCall("t", "bash", {"command": "true"}),)), ToolResult("t", "")]
    )
    assert sent[1]["content"] == [{"type": "tool_result", "tool_use_id": "t", "is_error": False}]
