"""The JSONL session: appended and flushed per message, resumed, a torn last line handled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.loop import run_agent
from agent.messages import AssistantMessage, Message, ToolCall, ToolResult, UserMessage, dumps
from agent.models.scripted import ScriptedModelClient
from agent.redact import FRAGMENT, JsonHider
from agent.session import Session, SessionError, read_messages
from agent.tools import ReadTool
from tests.agent.conftest import API_KEY, AgentWorkspace

CONVERSATION: list[Message] = [
    UserMessage("read hello"),
    AssistantMessage("sure", (ToolCall("r1", "read", {"path": "hello.txt"}),)),
    ToolResult("r1", "     1\thello from inside\n"),
    AssistantMessage("it says hello"),
]


def write_lines(path: Path, *lines: str, tail: str = "") -> None:
    path.write_text("".join(line + "\n" for line in lines) + tail, encoding="utf-8")


def test_each_message_is_a_flushed_line_and_resume_gets_them_back(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with Session.open(path) as session:
        for n, message in enumerate(CONVERSATION, start=1):
            session.append(message)
            assert len(path.read_text().splitlines()) == n + 1  # after the header, at once
    with Session.open(path) as resumed:
        assert resumed.messages == CONVERSATION
        assert resumed.truncated is None


def test_resumed_conversation_continues_in_the_same_file(ws: AgentWorkspace, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = ScriptedModelClient(
        [
            AssistantMessage("sure", (ToolCall("r1", "read", {"path": "hello.txt"}),)),
            AssistantMessage("it says hello"),
        ]
    )
    with Session.open(path) as session:
        run_agent(first, [ReadTool(ws.root)], session.messages, prompt="read hello", session=session)
    second = ScriptedModelClient([AssistantMessage("again: hello")])
    with Session.open(path) as session:
        assert session.messages == CONVERSATION
        run_agent(second, [ReadTool(ws.root)], session.messages, prompt="and again?", session=session)
    assert second.requests[0] == [*CONVERSATION, UserMessage("and again?")]
    with Session.open(path) as session:
        assert session.messages == [
            *CONVERSATION,
            UserMessage("and again?"),
            AssistantMessage("again: hello"),
        ]


def test_truncated_last_line_is_reported_set_aside_and_nothing_before_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [dumps(m) for m in CONVERSATION[:3]]
    torn = dumps(CONVERSATION[3])[:17]  # a crash mid-write
    write_lines(path, *lines, tail=torn)
    with Session.open(path) as session:
        assert session.messages == CONVERSATION[:3]
        assert session.truncated is not None
        assert session.truncated.line_number == 4
        assert session.truncated.kept_messages == 3
        report = session.truncated.describe(str(path))
        assert "line 4" in report and "cut off" in report and "3 complete messages" in report
        assert Path(session.truncated.saved_to).read_text() == torn  # even the fragment is kept
        session.append(CONVERSATION[3])
    assert path.read_text() == "".join(line + "\n" for line in [*lines, dumps(CONVERSATION[3])])
    with Session.open(path) as again:
        assert again.messages == CONVERSATION and again.truncated is None


def test_complete_last_line_missing_only_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_lines(path, dumps(CONVERSATION[0]), tail=dumps(CONVERSATION[1]))
    with Session.open(path) as session:
        assert session.messages == CONVERSATION[:2]
        assert session.truncated is None
        session.append(CONVERSATION[2])
    with Session.open(path) as session:
        assert session.messages == CONVERSATION[:3]


def test_a_bad_line_before_the_end_is_corruption_and_stops_the_resume(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_lines(path, dumps(CONVERSATION[0]), '{"role": "user"', dumps(CONVERSATION[1]))
    before = path.read_bytes()
    with pytest.raises(SessionError, match=r"line 2 is not a valid message"):
        Session.open(path)
    assert path.read_bytes() == before


def test_the_api_key_is_never_written_and_nothing_stored_changes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    stored: list[Message] = [
        ToolResult("x", f"found {API_KEY} in a file"),
        UserMessage(f'quoted "{API_KEY}"'),
    ]
    with Session.open(path, secrets=[API_KEY, ""]) as session:
        for message in stored:
            session.append(message)
    text = path.read_text()
    assert API_KEY not in text
    assert "[REDACTED]" not in text
    assert read_messages(path) == stored  # spelled differently, the same content


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from('ae"\\\n u0{}:,rolsk-\u00e9\ud83d'), max_size=40),
    key=st.text(alphabet=st.sampled_from('aeElrosk-"\\'), min_size=1, max_size=12),
)
def test_hiding_a_key_never_changes_what_json_reads_back(text: str, key: str) -> None:
    # Keys are printable ASCII (the CLI refuses others); the text may hold anything.
    value = {"role": "tool_result", "content": text, "list": [text, key], key: key}
    line = JsonHider([key]).dumps(value)
    assert json.loads(line) == value
    assert "\n" not in line
    spelled = json.dumps(key)[1:-1]
    run = spelled[:FRAGMENT]
    both_cases = bool(set(key) & set("abcdef")) and bool(set(key) & set("ABCDEF"))
    # Hideable: not a piece of the JSON around strings or of every escape.
    if not set(key) & set('u0"\\{}:,[]') and not both_cases:
        assert run not in line.replace("true", "").replace("false", "").replace("null", "")


def test_a_run_of_a_long_key_is_hidden_wherever_it_was_cut() -> None:
    key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"
    hider = JsonHider([key])
    for piece in (key[:12], key[-12:], key[5:30]):
        line = hider.dumps({"content": f"...{piece}..."})
        assert json.loads(line)["content"] == f"...{piece}..."
        assert not any(key[i : i + FRAGMENT] in line for i in range(len(key) - FRAGMENT + 1))
