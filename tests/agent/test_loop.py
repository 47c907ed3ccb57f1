"""The loop's contract: approval, failure markers, recording order, turn limit, cancel, resume."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agent.loop import (
    APPROVAL_FAILED,
    BUDGET_SPENT,
    CANCELLED,
    CUT_OFF,
    EXECUTION_FAILED,
    INTERRUPTED,
    NOT_EXECUTED,
    AgentError,
    BudgetExceeded,
    Cancelled,
    ContextExhausted,
    NothingToContinue,
    Refused,
    ReplyCutOff,
    TurnLimitExceeded,
    run_agent,
)
from agent.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    loads,
)
from agent.models.scripted import ScriptedModelClient
from agent.policy.approval import Decision, deny
from agent.session import Session, read_messages
from agent.tools.base import Tool, ToolOutput, string_schema


class Echo(Tool):
    """Returns its input; remembers what ran, in order."""

    name = "echo"
    description = "echo the text"
    input_schema = string_schema(text="what to echo")

    def __init__(self) -> None:
        self.ran: list[str] = []

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        self.ran.append(args["text"])
        if args["text"].startswith("fail:"):
            return ToolOutput(args["text"], is_error=True)
        return ToolOutput(f"echo {args['text']}")


class Exploding(Tool):
    name = "explode"
    description = "raises"
    input_schema = string_schema(text="ignored")

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        raise RuntimeError("top-secret-token leaked in a traceback")


def calls(*specs: tuple[str, str]) -> AssistantMessage:
    return AssistantMessage(
        "working",
        tuple(ToolCall(f"call_{i}_{text}", name, {"text": text}) for i, (name, text) in enumerate(specs)),
    )


FINAL = AssistantMessage("all done")


def results(messages: Sequence[Message]) -> list[ToolResult]:
    return [m for m in messages if isinstance(m, ToolResult)]


def test_no_hook_runs_every_call_in_order_and_ends_on_a_message_without_calls() -> None:
    echo = Echo()
    client = ScriptedModelClient([calls(("echo", "a"), ("echo", "b")), calls(("echo", "c")), FINAL])
    history = run_agent(client, [echo], prompt="go")
    assert echo.ran == ["a", "b", "c"]
    assert isinstance(history[0], UserMessage) and history[0].text == "go"
    assert [(r.content, r.is_error) for r in results(history)] == [
        ("echo a", False),
        ("echo b", False),
        ("echo c", False),
    ]
    assert history[-1] == FINAL
    assert client.remaining == 0
    # The model saw each result before its next turn.
    assert results(client.requests[1]) == results(history)[:2]


def test_denial_is_recorded_with_its_reason_and_the_loop_goes_on() -> None:
    echo = Echo()

    def hook(call: ToolCall) -> Decision:
        if call.input["text"] == "no":
            return deny("not this one")
        if call.input["text"] == "quiet":
            return deny()
        return Decision(True)

    client = ScriptedModelClient([calls(("echo", "no"), ("echo", "quiet"), ("echo", "yes")), FINAL])
    history = run_agent(client, [echo], prompt="go", before_tool_call=hook)
    assert echo.ran == ["yes"]
    assert [(r.content, r.is_error) for r in results(history)] == [
        ("not this one", True),
        ("tool call rejected", True),
        ("echo yes", False),
    ]
    assert history[-1] == FINAL


def test_error_result_is_a_business_failure_the_loop_continues_after() -> None:
    echo = Echo()
    client = ScriptedModelClient([calls(("echo", "fail:disk full"), ("echo", "next")), FINAL])
    history = run_agent(client, [echo], prompt="go")
    assert [(r.content, r.is_error) for r in results(history)] == [
        ("fail:disk full", True),
        ("echo next", False),
    ]


def test_hook_that_raises_marks_calls_and_reraises_the_same_exception(tmp_path: Path) -> None:
    echo = Echo()
    boom = ValueError("top-secret-token in the hook")

    def hook(call: ToolCall) -> Decision:
        if call.input["text"] == "second":
            raise boom
        return Decision(True)

    client = ScriptedModelClient(
        [calls(("echo", "first"), ("echo", "second"), ("echo", "third"), ("echo", "fourth")), FINAL]
    )
    session_file = tmp_path / "s.jsonl"
    with Session.open(session_file) as session, pytest.raises(ValueError) as raised:
        run_agent(client, [echo], prompt="go", before_tool_call=hook, session=session)
    assert raised.value is boom
    assert echo.ran == ["first"]
    stored = read_messages(session_file)
    assert [(r.content, r.is_error) for r in results(stored)] == [
        ("echo first", False),
        (APPROVAL_FAILED, True),
        (NOT_EXECUTED, True),
        (NOT_EXECUTED, True),
    ]
    assert "top-secret-token" not in session_file.read_text()


def test_tool_that_raises_marks_calls_and_reraises_without_leaking_its_text(tmp_path: Path) -> None:
    echo = Echo()
    client = ScriptedModelClient([calls(("echo", "before"), ("explode", "x"), ("echo", "after")), FINAL])
    session_file = tmp_path / "s.jsonl"
    history: list[Message] = []
    with Session.open(session_file) as session, pytest.raises(RuntimeError) as raised:
        run_agent(client, [echo, Exploding()], prompt="go", session=session, on_message=history.append)
    assert str(raised.value) == "top-secret-token leaked in a traceback"
    assert echo.ran == ["before"]
    assert [(r.content, r.is_error) for r in results(history)] == [
        ("echo before", False),
        (EXECUTION_FAILED, True),
        (NOT_EXECUTED, True),
    ]
    text = session_file.read_text()
    assert "top-secret-token" not in text
    assert all("top-secret-token" not in repr(m) for m in history)


def test_every_tool_call_id_gets_exactly_one_result_when_a_run_fails(tmp_path: Path) -> None:
    client = ScriptedModelClient([calls(("explode", "1"), ("echo", "2"), ("echo", "3"))])
    session_file = tmp_path / "s.jsonl"
    with Session.open(session_file) as session, pytest.raises(RuntimeError):
        run_agent(client, [Echo(), Exploding()], prompt="go", session=session)
    stored = read_messages(session_file)
    assistant = next(m for m in stored if isinstance(m, AssistantMessage))
    ids = [r.tool_call_id for r in results(stored)]
    assert sorted(ids) == sorted(c.id for c in assistant.tool_calls)
    assert len(ids) == len(set(ids))


def test_assistant_message_is_recorded_before_its_calls_run(tmp_path: Path) -> None:
    session_file = tmp_path / "s.jsonl"
    seen_at_run_time: list[list[str]] = []

    class Peek(Tool):
        name = "peek"
        description = "looks at the session file"
        input_schema = string_schema(text="ignored")

        def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
            seen_at_run_time.append(session_file.read_text().splitlines())
            return ToolOutput("peeked")

    turn = AssistantMessage(
        "look", (ToolCall("p1", "peek", {"text": ""}), ToolCall("p2", "peek", {"text": ""}))
    )
    with Session.open(session_file) as session:
        run_agent(ScriptedModelClient([turn, FINAL]), [Peek()], prompt="go", session=session)
    first, second = seen_at_run_time
    assert [loads(line) for line in first[1:]] == [UserMessage("go"), turn]
    assert loads(second[-1]) == ToolResult("p1", "peeked")  # flushed as produced


def test_unknown_tool_and_invalid_input_are_error_results() -> None:
    turn = AssistantMessage(
        "",
        (
            ToolCall("u1", "nope", {}),
            ToolCall("u2", "echo", {"txt": "x"}),
            ToolCall("u3", "echo", {"text": 5}),
        ),
    )
    history = run_agent(ScriptedModelClient([turn, FINAL]), [Echo()], prompt="go")
    contents = [(r.content, r.is_error) for r in results(history)]
    assert contents == [
        ("unknown tool 'nope' (available: echo)", True),
        ("invalid input for echo: missing required field 'text'", True),
        ("invalid input for echo: field 'text' must be of type string", True),
    ]


def test_turn_limit_is_a_clear_error_and_the_history_stays_valid(tmp_path: Path) -> None:
    forever = [calls(("echo", str(i))) for i in range(10)]
    session_file = tmp_path / "s.jsonl"
    with Session.open(session_file) as session, pytest.raises(TurnLimitExceeded) as raised:
        run_agent(ScriptedModelClient(forever), [Echo()], prompt="go", max_turns=3, session=session)
    assert "3" in str(raised.value) and "turn" in str(raised.value)
    stored = read_messages(session_file)
    assert sum(isinstance(m, AssistantMessage) for m in stored) == 3
    assert len(results(stored)) == 3
    with pytest.raises(ValueError):
        run_agent(ScriptedModelClient([FINAL]), [Echo()], max_turns=0)


def test_cancel_before_a_call_records_remaining_calls_and_stops() -> None:
    cancel = threading.Event()

    def hook(call: ToolCall) -> Decision:
        cancel.set()  # someone pressed Ctrl-C while the first call was being approved
        return Decision(True)

    echo = Echo()
    client = ScriptedModelClient([calls(("echo", "a"), ("echo", "b")), FINAL])
    history: list[Message] = []
    with pytest.raises(Cancelled):
        run_agent(
            client, [echo], prompt="go", before_tool_call=hook, cancel=cancel, on_message=history.append
        )
    assert echo.ran == ["a"]
    assert [(r.content, r.is_error) for r in results(history)] == [("echo a", False), (CANCELLED, True)]
    assert client.remaining == 1  # the model was not asked again


def test_resume_answers_calls_an_interrupted_run_left_open() -> None:
    interrupted = AssistantMessage(
        "half way", (ToolCall("old1", "echo", {"text": "x"}), ToolCall("old2", "echo", {"text": "y"}))
    )
    prior: list[Message] = [UserMessage("go"), interrupted, ToolResult("old1", "echo x")]
    client = ScriptedModelClient([FINAL])
    history = run_agent(client, [Echo()], prior, prompt="continue")
    assert history[3] == ToolResult("old2", INTERRUPTED, is_error=True)
    assert history[4] == UserMessage("continue")
    assert client.requests[0][:5] == history[:5]


def test_tool_results_are_never_rewritten(tmp_path: Path) -> None:
    # A dummy key such as "test" must not turn "def test_add" into "def [REDACTED]_add".
    turn = AssistantMessage("", (ToolCall("s1", "echo", {"text": "def test_add(): pass"}),))
    session_file = tmp_path / "s.jsonl"
    with Session.open(session_file, secrets=["test"]) as session:
        client = ScriptedModelClient([turn, FINAL])
        history = run_agent(client, [Echo()], prompt="go", session=session)
    assert results(history)[0].content == "echo def test_add(): pass"
    assert results(client.requests[1])[0].content == "echo def test_add(): pass"
    assert results(read_messages(session_file))[0].content == "echo def test_add(): pass"
    assert "test" not in session_file.read_text()


def test_a_hook_returning_a_non_decision_counts_as_a_hook_failure() -> None:
    def sloppy(call: ToolCall) -> Decision:
        return None  # type: ignore[return-value]

    history: list[Message] = []
    with pytest.raises(AttributeError):
        run_agent(
            ScriptedModelClient([calls(("echo", "a"), ("echo", "b"))]),
            [Echo()],
            prompt="go",
            before_tool_call=sloppy,
            on_message=history.append,
        )
    assert [(r.content, r.is_error) for r in results(history)] == [
        (APPROVAL_FAILED, True),
        (NOT_EXECUTED, True),
    ]


def test_a_cut_off_reply_never_runs_its_calls_and_the_model_is_asked_again() -> None:
    echo = Echo()
    cut = AssistantMessage(
        "", (ToolCall("c1", "echo", {"text": "a"}), ToolCall("c2", "echo", {"text": "trunc"})), "max_tokens"
    )
    client = ScriptedModelClient([cut, FINAL])
    history = run_agent(client, [echo], prompt="go")
    assert echo.ran == []
    assert [(r.tool_call_id, r.content) for r in results(history)] == [("c1", CUT_OFF), ("c2", CUT_OFF)]
    assert results(client.requests[1]) == results(history)  # the model was told
    assert history[-1] == FINAL


@pytest.mark.parametrize(
    "stop, error",
    [
        ("refusal", Refused),
        ("model_context_window_exceeded", ContextExhausted),
        ("max_tokens", ReplyCutOff),
        ("something_new", AgentError),
    ],
)
def test_a_reply_that_stopped_abnormally_raises_after_answering_its_calls(
    stop: str, error: type[Exception]
) -> None:
    echo = Echo()
    calls_ = () if stop == "max_tokens" else (ToolCall("r1", "echo", {"text": "x"}),)
    history: list[Message] = []
    with pytest.raises(error):
        run_agent(
            ScriptedModelClient([AssistantMessage("no", calls_, stop)]),
            [echo],
            prompt="go",
            on_message=history.append,
        )
    assert echo.ran == []
    assert len(results(history)) == len(calls_)
    assert all(r.is_error and r.content.startswith("not executed: ") for r in results(history))


def test_pause_turn_asks_again_with_the_conversation_as_it_is() -> None:
    paused = AssistantMessage("thinking...", (), "pause_turn")
    client = ScriptedModelClient([paused, FINAL])
    history = run_agent(client, [Echo()], prompt="go")
    assert client.requests[1] == [UserMessage("go"), paused]
    assert history[-1] == FINAL


def test_the_same_prompt_after_a_failed_run_is_not_recorded_twice() -> None:
    prior: list[Message] = [UserMessage("go")]  # the previous run failed before any reply
    client = ScriptedModelClient([FINAL])
    history = run_agent(client, [Echo()], prior, prompt="go")
    assert history == [UserMessage("go"), FINAL]
    with pytest.raises(NothingToContinue):
        run_agent(ScriptedModelClient([FINAL]), [Echo()], history)


def test_the_token_budget_is_checked_after_each_reply() -> None:
    spend = Usage(input_tokens=10, output_tokens=5)
    turn = AssistantMessage("", (ToolCall("b1", "echo", {"text": "a"}),), "tool_use", spend)
    second = AssistantMessage("", (ToolCall("b2", "echo", {"text": "b"}),), "tool_use", spend)
    echo = Echo()
    history: list[Message] = []
    with pytest.raises(BudgetExceeded, match="used 30 tokens"):
        run_agent(
            ScriptedModelClient([turn, second, FINAL]),
            [echo],
            prompt="go",
            max_tokens_total=20,
            on_message=history.append,
        )
    assert echo.ran == ["a"]
    assert results(history)[-1] == ToolResult("b2", BUDGET_SPENT, is_error=True)
