"""safefs-agent run, through the real command in a subprocess, against the loopback Messages API.

Each test names the behaviour it pins down: stop reasons, signals, streaming, errors, sessions,
redaction, usage and progress. A few variants run ``main()`` in-process where a process of its
own adds nothing (the SDK takes seconds to import).
"""

from __future__ import annotations

import json
import os
import pty
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import safefs
from agent.cli import main
from agent.loop import BUDGET_SPENT, CANCELLED, CUT_OFF, LONE_SURROGATE
from agent.messages import AssistantMessage, ToolResult, UserMessage
from agent.session import read_messages
from tests.agent.cli_runs import cli_env, one_error_line, results, run_cli
from tests.agent.conftest import API_KEY, AgentWorkspace
from tests.agent.messages_api_server import (
    LoopbackMessagesAPI,
    Reply,
    error_body,
    message_reply,
    serve,
    text_reply,
    tool_reply,
)
from tests.agent.processes import running_with, survivors

REPO = Path(__file__).resolve().parents[2]
STREAM_MODES = pytest.mark.parametrize("mode", [[], ["--no-stream"]], ids=["streaming", "whole"])


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch, messages_api: LoopbackMessagesAPI) -> None:
    for name, value in cli_env(messages_api).items():
        if name.startswith("ANTHROPIC_"):
            monkeypatch.setenv(name, value)


# --- progress, prompt caching, usage -------------------------------------------------------


@pytest.mark.slow  # waits out timeouts or runs several agent processes
def test_progress_goes_to_stderr_and_only_the_answer_to_stdout(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path
) -> None:
    messages_api.queue(
        tool_reply("Let me look.", ("t1", "read", {"path": "hello.txt"}), ("t2", "bash", {"command": "env"}))
    )
    messages_api.queue(text_reply('{"greeting": "hello from inside"}'))
    session = tmp_path / "new" / "dirs" / "s.jsonl"  # parent directories are created
    proc = run_cli(
        messages_api, "--workspace", str(ws.path), "--session", str(session), "what", "is", "here?"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"greeting": "hello from inside"}  # `| jq` works
    *progress, audit_line = proc.stderr.splitlines()
    assert audit_line.startswith(f"audit log {session.parent / 's.audit.jsonl'}: 6 events, last hash ")
    assert progress == [
        "[turn 1/25]",
        "Let me look.",
        "  (tokens 11 in, 7 out, cache 0 read / 0 written; this run 18)",
        '  -> read {"path": "hello.txt"}  [allowed]',
        "     [ok] 1 hello from inside",
        '  -> bash {"command": "env"}  [refused: bash requires an explicit approval policy; '
        "--mode full allows it]",
        "     [error] bash requires an explicit approval policy; --mode full allows it",
        "[turn 2/25]",
        '{"greeting": "hello from inside"}',
        "  (tokens 11 in, 7 out, cache 0 read / 0 written; this run 36)",
    ]
    first, second = messages_api.requests
    assert first["messages"][0]["content"][0]["text"] == "what is here?"  # words joined
    assert first["stream"] is True
    # Prompt caching: the last tool, the system prompt and the conversation's last block.
    for request in (first, second):
        assert [t["name"] for t in request["tools"] if "cache_control" in t] == [
            "grep"
        ]  # no bash in edit mode
        assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" in request["messages"][-1]["content"][-1]
    stored = read_messages(session)
    usages = [m.usage for m in stored if isinstance(m, AssistantMessage)]
    assert [u.input_tokens if u else None for u in usages] == [11, 11]
    assert session.read_text().splitlines()[0] == '{"format":"safefs-agent-session","version":1}'


@pytest.mark.usefixtures("in_process")
def test_token_budget_stops_the_run_and_answers_the_calls(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for n in range(3):
        messages_api.queue(tool_reply("", (f"t{n}", "write", {"path": f"f{n}", "content": "x"})))
    session = tmp_path / "s.jsonl"
    rc = main(
        ["run", "--workspace", str(ws.path), "--session", str(session), "--max-tokens-total", "30", "go"]
    )
    line = one_error_line(capsys.readouterr().err)
    assert rc == 1
    assert "token budget used up: this run used 36 tokens" in line
    assert [(r.tool_call_id, r.content) for r in results(session)] == [
        ("t0", "wrote 1 bytes to f0"),
        ("t1", BUDGET_SPENT),
    ]
    assert not (ws.path / "f1").exists()
    assert len(messages_api.requests) == 2


# --- stop reasons --------------------------------------------------------------------------


@pytest.mark.slow  # an agent process per case
@STREAM_MODES
def test_a_tool_call_cut_off_by_max_tokens_is_never_executed(
    mode: list[str], ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    truncated = {"path": "main.py", "content": "def main():\n    pri"}
    messages_api.queue_reply(
        Reply(
            tool_reply("Writing it.", ("w1", "write", truncated), stop_reason="max_tokens"),
            partial_json={"w1": '{"path": "main.py", "content": "def main():\\n    pri'},
        )
    )
    messages_api.queue(text_reply("I will write it in smaller parts."))
    session = tmp_path / "s.jsonl"
    run = inline if mode else run_cli  # one variant in a process of its own is enough
    proc = run(
        messages_api,
        "--workspace",
        str(ws.path),
        "--session",
        str(session),
        "--max-tokens",
        "64",
        *mode,
        "write",
        "main.py",
    )
    assert proc.returncode == 0, proc.stderr
    assert not (ws.path / "main.py").exists()
    assert results(session) == [ToolResult("w1", CUT_OFF, is_error=True)]
    asked = next(m for m in read_messages(session) if isinstance(m, AssistantMessage))
    assert asked.tool_calls[0].input == truncated  # stored as far as it was sent
    assert messages_api.requests[0]["max_tokens"] == 64
    told = messages_api.requests[1]["messages"][-1]["content"][0]
    assert (told["tool_use_id"], told["content"], told["is_error"]) == ("w1", CUT_OFF, True)
    assert "stop_reason max_tokens" in proc.stderr
    assert proc.stdout == "I will write it in smaller parts.\n"


@pytest.mark.slow  # an agent process per case
@STREAM_MODES
@pytest.mark.parametrize(
    "reply, expected",
    [
        (message_reply([], "refusal"), "the model refused"),
        (text_reply("The answer is", "max_tokens"), "cut off by max_tokens"),
        (text_reply("", "model_context_window_exceeded"), "context window"),
    ],
    ids=["refusal", "max_tokens-text", "context-window"],
)
def test_a_reply_that_is_not_an_answer_exits_1_and_says_why(
    mode: list[str],
    reply: dict[str, Any],
    expected: str,
    ws: AgentWorkspace,
    messages_api: LoopbackMessagesAPI,
    inline: Any,
) -> None:
    messages_api.queue(reply)
    in_a_process = not mode and reply["stop_reason"] == "refusal"
    proc = (run_cli if in_a_process else inline)(messages_api, "--workspace", str(ws.path), *mode, "hi")
    rc, out, err = proc.returncode, proc.stdout, proc.stderr
    assert rc == 1
    assert expected in one_error_line(err)
    assert out == ""  # a cut-off text is not shown as the answer


@pytest.mark.slow  # an agent process per case
def test_pause_turn_continues_with_the_conversation_as_it_is(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path
) -> None:
    messages_api.queue(text_reply("Searching the docs...", "pause_turn"))
    messages_api.queue(text_reply("Found it."))
    proc = run_cli(messages_api, "--workspace", str(ws.path), "find", "it")
    assert (proc.returncode, proc.stdout) == (0, "Found it.\n"), proc.stderr
    resent = messages_api.requests[1]["messages"]
    assert [m["role"] for m in resent] == ["user", "assistant"]
    assert resent[1]["content"][0]["text"] == "Searching the docs..."
    assert "[turn 2/25]" in proc.stderr


# --- signals and cancel ------------------------------------------------------------------


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _start(api: LoopbackMessagesAPI, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent", "run", *args],
        cwd=REPO,
        env=cli_env(api),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(condition: Any, proc: subprocess.Popen[str], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert proc.poll() is None, f"exited before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.02)


@pytest.mark.slow  # waits out timeouts or runs several agent processes
@pytest.mark.parametrize(
    "signum, status",
    [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGHUP, 128 + signal.SIGHUP), (signal.SIGINT, 1)],
    ids=["SIGTERM", "SIGHUP", "SIGINT"],
)
def test_a_signal_kills_the_running_command_and_answers_every_call(
    signum: int,
    status: int,
    ws: AgentWorkspace,
    messages_api: LoopbackMessagesAPI,
    tmp_path: Path,
    started: list[subprocess.Popen[str]],
) -> None:
    pidfile = ws.path / "pids"
    marker = f"sleep {3100 + signum}"  # found by command line: the sandbox has its own pids
    messages_api.queue(
        tool_reply(
            "",
            ("t1", "bash", {"command": f"{marker} & echo started > pids; wait"}),
            ("t2", "read", {"path": "hello.txt"}),
        )
    )
    session = tmp_path / "s.jsonl"
    proc = _start(
        messages_api, "--workspace", str(ws.path), "--allow-bash", "--session", str(session), "sleep"
    )
    started.append(proc)
    _wait_for(lambda: pidfile.exists() and pidfile.read_text() == "started\n", proc, "started the command")
    assert running_with(marker) != []  # the marker does find the command's process
    proc.send_signal(signum)  # to the agent only: the command has its own session
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == status
    line = one_error_line(err)
    assert "cancelled" in line and signal.Signals(signum).name in line
    stored = read_messages(session)
    assert isinstance(stored[-2], ToolResult) and stored[-2].tool_call_id == "t1"
    assert stored[-2].is_error and stored[-2].content.startswith("command cancelled")
    assert marker in stored[-2].content  # named among the processes killed
    assert stored[-1] == ToolResult("t2", CANCELLED, is_error=True)
    assert survivors(marker) == []


@pytest.mark.slow  # an agent process per case
@pytest.mark.parametrize("how", ["mid-stream", "before-the-reply"])
def test_ctrl_c_during_a_model_call_aborts_it_at_once(
    how: str,
    ws: AgentWorkspace,
    messages_api: LoopbackMessagesAPI,
    tmp_path: Path,
    started: list[subprocess.Popen[str]],
) -> None:
    session = tmp_path / "s.jsonl"
    if how == "mid-stream":
        # Four events (start, block start, two deltas), then the server stalls for a minute.
        messages_api.queue_reply(
            Reply(text_reply("First words arrive early, the rest never."), stall_after=4, stall=60)
        )
        args = ["--session", str(session)]
    else:
        messages_api.queue_reply(Reply(text_reply("too late"), delay=60))
        args = ["--session", str(session), "--no-stream"]
    proc = _start(messages_api, "--workspace", str(ws.path), *args, "hello")
    started.append(proc)
    assert proc.stderr is not None
    if how == "mid-stream":
        # Streamed text is shown as it arrives, word by word, before the reply is complete.
        seen = b""
        deadline = time.monotonic() + 60
        while b"First words" not in seen:
            assert time.monotonic() < deadline, seen
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, f"stderr closed early: {seen!r}"
            seen += chunk
    else:
        _wait_for(messages_api.received.is_set, proc, "sent the request")
    sent_at = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    elapsed = time.monotonic() - sent_at
    print(f"exit {elapsed:.2f} s after SIGINT ({how})")
    assert proc.returncode == 1
    assert one_error_line(err) == "safefs-agent: error: cancelled by SIGINT"
    assert elapsed < 10  # the reply was due in 60 s
    assert read_messages(session) == [UserMessage("hello")]


# --- lone surrogates ---------------------------------------------------------------------


@pytest.mark.slow  # an agent process per case
@STREAM_MODES
def test_a_lone_surrogate_from_the_model_is_an_error_result_not_a_crash(
    mode: list[str], ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    messages_api.queue(
        tool_reply(
            "Saving notes\ud83d now.",
            ("s1", "write", {"path": "notes\ud83d.txt", "content": "x"}),
            ("s2", "read", {"path": "hello.txt"}),
        )
    )
    messages_api.queue(text_reply("Could not save \ud83d."))
    session = tmp_path / "s.jsonl"
    proc = (inline if mode else run_cli)(
        messages_api, "--workspace", str(ws.path), "--session", str(session), *mode, "save"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Could not save \\ud83d.\n"  # shown as an escape
    assert [(r.tool_call_id, r.content) for r in results(session)] == [
        ("s1", LONE_SURROGATE),
        ("s2", "     1\thello from inside\n"),
    ]
    assert os.listdir(ws.path) == ["hello.txt"]
    session.read_bytes().decode("utf-8")  # valid UTF-8
    messages_api.queue(text_reply("resumed"))
    again = inline(messages_api, "--workspace", str(ws.path), "--session", str(session), *mode, "again")
    assert (again.returncode, again.stdout) == (0, "resumed\n"), again.stderr


# --- failed runs, --continue --------------------------------------------------------------


@pytest.mark.slow  # waits out timeouts or runs several agent processes
def test_failed_runs_leave_one_prompt_and_continue_resumes_it(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    session = tmp_path / "s.jsonl"
    args = ["--workspace", str(ws.path), "--session", str(session)]
    proc = subprocess.run(
        [sys.executable, "-m", "agent", "run", *args, "fix", "it"],
        cwd=REPO,
        env=cli_env(messages_api, ANTHROPIC_BASE_URL="http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = one_error_line(proc.stderr)
    assert proc.returncode == 1
    assert "could not reach the model API" in line and "ANTHROPIC_BASE_URL" in line
    messages_api.queue(error_body("overloaded_error", "Overloaded"), status=400)
    assert inline(messages_api, *args, "fix", "it").returncode == 1
    assert read_messages(session) == [UserMessage("fix it")]  # once, not twice
    messages_api.queue(text_reply("fixed"))
    resumed = inline(messages_api, *args, "--continue")
    assert (resumed.returncode, resumed.stdout) == (0, "fixed\n"), resumed.stderr
    assert messages_api.requests[-1]["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "fix it", "cache_control": {"type": "ephemeral"}}],
        }
    ]


@pytest.mark.usefixtures("in_process")
@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--continue", "more"], "without a new prompt"),
        (["--continue"], "nothing to continue"),
    ],
    ids=["with-a-prompt", "after-an-answer"],
)
def test_continue_refuses_what_it_cannot_do(
    extra: list[str],
    expected: str,
    ws: AgentWorkspace,
    messages_api: LoopbackMessagesAPI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    session = tmp_path / "s.jsonl"
    messages_api.queue(text_reply("done"))
    assert main(["run", "--workspace", str(ws.path), "--session", str(session), "go"]) == 0
    capsys.readouterr()
    assert main(["run", "--workspace", str(ws.path), "--session", str(session), *extra]) == 1
    assert expected in one_error_line(capsys.readouterr().err)
    assert len(messages_api.requests) == 1


# --- redaction -----------------------------------------------------------------------------


@pytest.mark.slow  # waits out timeouts or runs several agent processes
def test_a_short_key_changes_nothing_the_model_sees_or_the_session_holds(
    ws: AgentWorkspace, tmp_path: Path
) -> None:
    (ws.path / "lib.py").write_text("def test_add():\n    assert add(1, 2) == 3\n")
    session = tmp_path / "s.jsonl"
    for api in serve("test"):
        api.queue(tool_reply("", ("r1", "read", {"path": "lib.py"})))
        api.queue(text_reply("def test_add checks add()."))
        proc = run_cli(api, "--workspace", str(ws.path), "--session", str(session), "test", "it", key="test")
        assert proc.returncode == 0, proc.stderr
        seen = api.requests[1]["messages"][-1]["content"][0]["content"]
        assert seen == "     1\tdef test_add():\n     2\t    assert add(1, 2) == 3\n"
        assert api.requests[0]["messages"][0]["content"][0]["text"] == "test it"  # the prompt
    assert proc.stdout == "def test_add checks add().\n"
    assert "test" not in session.read_text()
    assert read_messages(session)[0] == UserMessage("test it")
    assert results(session)[0].content == seen


@pytest.mark.slow  # waits out timeouts or runs several agent processes
def test_a_one_letter_key_keeps_the_session_resumable(
    ws: AgentWorkspace, tmp_path: Path, inline: Any
) -> None:
    session = tmp_path / "s.jsonl"
    for api in serve("e"):
        api.queue(tool_reply("here", ("r1", "read", {"path": "hello.txt"})))
        api.queue(text_reply("seen"))
        first = run_cli(api, "--workspace", str(ws.path), "--session", str(session), "see", key="e")
        assert first.returncode == 0, first.stderr
        api.queue(text_reply("again"))
        second = inline(api, "--workspace", str(ws.path), "--session", str(session), "more", key="e")
        assert (second.returncode, second.stdout) == (0, "again\n"), second.stderr
        resent = api.requests[-1]["messages"]
        assert resent[1]["content"][0]["text"] == "here"
        assert resent[2]["content"][0]["content"] == "     1\thello from inside\n"
    text = session.read_text()
    assert all(isinstance(json.loads(line), dict) for line in text.splitlines())
    assert '"rol' in text and '"role"' not in text  # spelled "rol\u0065", structure intact


@pytest.mark.slow  # waits out timeouts or runs several agent processes
def test_a_key_cut_by_the_read_boundary_leaves_no_part_of_it_stored_or_shown(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path
) -> None:
    # One line longer than a read shows: the key straddles the cut (29,800 characters, prefix included).
    (ws.path / "big.txt").write_text("x" * 29_783 + API_KEY + "y" * 9000)
    messages_api.queue(tool_reply("", ("r1", "read", {"path": "big.txt"})))
    messages_api.queue(text_reply("read it"))
    session = tmp_path / "s.jsonl"
    proc = run_cli(messages_api, "--workspace", str(ws.path), "--session", str(session), "read")
    assert proc.returncode == 0, proc.stderr
    content = results(session)[0].content
    assert content.startswith(
        "     1\t" + "x" * 29_783 + API_KEY[:10] + "\n[line 1 is longer"
    )  # stored unchanged
    text = session.read_text()
    assert API_KEY[:10] not in text and API_KEY[-10:] not in text
    for out in (proc.stdout, proc.stderr):
        assert API_KEY[:8] not in out


# --- clear errors -------------------------------------------------------------------------


def test_a_key_with_a_newline_is_named_before_any_request(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI
) -> None:
    proc = run_cli(messages_api, "--workspace", str(ws.path), "hi", key=API_KEY + "\n")
    assert proc.returncode == 1
    line = one_error_line(proc.stderr)
    assert "ANTHROPIC_API_KEY contains a newline" in line and API_KEY not in line
    assert messages_api.requests == []


@pytest.mark.slow  # waits out timeouts or runs several agent processes
def test_a_401_is_one_line_with_what_to_do(ws: AgentWorkspace, messages_api: LoopbackMessagesAPI) -> None:
    wrong = "sk-ant-real-process-wrong-key"
    proc = run_cli(messages_api, "--workspace", str(ws.path), "hi", key=wrong)
    assert proc.returncode == 1
    line = one_error_line(proc.stderr)
    assert line == (
        "safefs-agent: error: the model API refused the request (HTTP 401 "
        "authentication_error: invalid x-api-key: [REDACTED]); check ANTHROPIC_API_KEY"
    )
    assert wrong not in proc.stderr + proc.stdout


@pytest.mark.slow  # waits out timeouts or runs several agent processes
def test_a_server_that_never_accepts_fails_on_the_connect_timeout(ws: AgentWorkspace) -> None:
    # A listener with a full accept queue drops further SYNs: to a client this is a blackholed
    # address, made on loopback. The SDK's 5 s connect timeout (three attempts) ends the run; a
    # single 600 s timeout for every phase would hang past this test's limit.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):  # fills the queue, never accepted
            env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
            env.update(
                ANTHROPIC_API_KEY=API_KEY,
                ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
                ANTHROPIC_MODEL="loopback-model",
            )
            proc = subprocess.run(
                [sys.executable, "-m", "agent", "run", "--workspace", str(ws.path), "hi"],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=150,
                stdin=subprocess.DEVNULL,
            )
    assert proc.returncode == 1
    line = one_error_line(proc.stderr)
    assert "did not answer in time" in line and "ANTHROPIC_BASE_URL" in line, line


@pytest.mark.slow  # an agent process per case
@STREAM_MODES
def test_a_malformed_reply_is_one_clear_line(
    mode: list[str], ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, inline: Any
) -> None:
    if mode:
        messages_api.queue_reply(Reply(raw=b'{"type": "message", "content": null}'))
    else:
        messages_api.queue_reply(
            Reply(raw=b"event: message_start\ndata: {not json\n\n", content_type="text/event-stream")
        )
    proc = (inline if mode else run_cli)(messages_api, "--workspace", str(ws.path), *mode, "hi")
    assert proc.returncode == 1
    line = one_error_line(proc.stderr)
    assert "the model API sent a" in line and "ANTHROPIC_BASE_URL" in line
    assert "NoneType" not in line


def test_an_error_event_mid_stream_is_one_line(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, inline: Any
) -> None:
    messages_api.queue_reply(
        Reply(text_reply("never"), stream_error=error_body("overloaded_error", "Overloaded"))
    )
    proc = inline(messages_api, "--workspace", str(ws.path), "hi")
    assert proc.returncode == 1
    assert "overloaded_error: Overloaded" in one_error_line(proc.stderr)


def test_an_empty_prompt_is_refused_before_any_request(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI
) -> None:
    proc = run_cli(messages_api, "--workspace", str(ws.path), "-", stdin="  \n")
    assert proc.returncode == 1
    assert "the prompt is empty" in one_error_line(proc.stderr)
    assert messages_api.requests == []


@pytest.mark.usefixtures("in_process")
@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run", "hi"], "the following arguments are required: --workspace"),
        (["run", "--workspace", "/nonexistent/ws", "hi"], "cannot use workspace '/nonexistent/ws'"),
        (["run", "--workspace", ".", "--max-turns", "0", "hi"], "--max-turns must be at least 1"),
        (["run", "--workspace", ".", "--max-turns", "x", "hi"], "invalid int value"),
        (["run", "--workspace", ".", "--max-tokens", "0", "hi"], "must be at least 1"),
        (["run", "--workspace", ".", ""], "the prompt is empty"),
        (["run", "--workspace", "."], "no prompt given"),
        (["run", "--workspace", ".", "--continue"], "--continue needs --session"),
        (
            ["run", "--workspace", ".", "--session", "/nonexistent/new.jsonl", "--continue"],
            "--continue: no session at '/nonexistent/new.jsonl' to resume",
        ),
        (
            ["run", "--workspace", ".", "--session", "/proc/nonexistent/s.jsonl", "hi"],
            "cannot write the audit log '/proc/nonexistent/s.audit.jsonl': No such file or directory",
        ),
        (["fly"], "invalid choice"),
        ([], "required"),
    ],
)
def test_user_mistakes_are_one_line_and_exit_1(
    argv: list[str], expected: str, messages_api: LoopbackMessagesAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert expected in one_error_line(err)
    assert out == ""
    assert messages_api.requests == []


@pytest.mark.usefixtures("in_process")
def test_continue_without_a_session_file_creates_nothing(
    ws: AgentWorkspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "typo.jsonl"
    assert main(["run", "--workspace", str(ws.path), "--session", str(session), "--continue"]) == 1
    assert "no session at" in one_error_line(capsys.readouterr().err)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("typo")] == []


def test_missing_or_empty_key_is_named(
    ws: AgentWorkspace, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["run", "--workspace", str(ws.path), "hi"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "ANTHROPIC_API_KEY is not set" in line
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    assert main(["run", "--workspace", str(ws.path), "hi"]) == 1
    assert one_error_line(capsys.readouterr().err) == line  # an empty key garbles nothing


@pytest.mark.usefixtures("in_process")
def test_turn_limit_is_one_line(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for n in range(2):
        messages_api.queue(tool_reply("", (f"t{n}", "read", {"path": "hello.txt"})))
    session = tmp_path / "s.jsonl"
    assert (
        main(["run", "--workspace", str(ws.path), "--max-turns", "2", "--session", str(session), "loop"]) == 1
    )
    assert "turn limit reached: 2" in one_error_line(capsys.readouterr().err)
    assert len(results(session)) == 2


# --- command-line edges --------------------------------------------------------------------


def test_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agent", "--version"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"safefs-agent {safefs.__version__}\n"


@pytest.mark.slow  # waits out timeouts or runs several agent processes
def test_the_prompt_from_stdin_and_a_reader_that_goes_away(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path
) -> None:
    messages_api.queue(text_reply("".join(f"line {n}\n" for n in range(20000))))
    with open(tmp_path / "stderr", "w+") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent", "run", "--workspace", str(ws.path), "-"],
            cwd=REPO,
            env=cli_env(messages_api),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write("a prompt\nover two lines\n")
            proc.stdin.close()
            assert proc.stdout.readline() == "line 0\n"
            proc.stdout.close()  # as `| head -1` does
            status = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        stderr.seek(0)
        err = stderr.read()
    assert status == 0, err
    assert "Broken pipe" not in err and "error" not in err
    assert messages_api.requests[0]["messages"][0]["content"][0]["text"] == "a prompt\nover two lines\n"


@pytest.mark.usefixtures("in_process")
def test_a_session_with_a_bom_resumes_and_an_unknown_version_is_refused(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with_bom = tmp_path / "bom.jsonl"
    with_bom.write_bytes(
        b"\xef\xbb\xbf"
        + b'{"role":"user","text":"earlier"}\n'
        + b'{"role":"assistant","text":"ok","tool_calls":[]}\n'
    )
    messages_api.queue(text_reply("resumed"))
    assert main(["run", "--workspace", str(ws.path), "--session", str(with_bom), "now"]) == 0
    assert [m["role"] for m in messages_api.requests[0]["messages"]] == ["user", "assistant", "user"]
    newer = tmp_path / "newer.jsonl"
    newer.write_text('{"format":"safefs-agent-session","version":99}\n')
    capsys.readouterr()
    assert main(["run", "--workspace", str(ws.path), "--session", str(newer), "now"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "format version 99 is not supported" in line and "version 1" in line
    assert len(messages_api.requests) == 1


def test_allow_bash_runs_it_without_the_key_in_its_environment(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    messages_api.queue(tool_reply("", ("t1", "bash", {"command": "env; echo marker-$((6*7))"})))
    messages_api.queue(text_reply("done"))
    session = tmp_path / "s.jsonl"
    proc = inline(
        messages_api, "--workspace", str(ws.path), "--allow-bash", "--session", str(session), "show env"
    )
    assert proc.returncode == 0, proc.stderr
    result = messages_api.requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] is False
    assert "marker-42" in result["content"]  # the command really ran
    assert "ANTHROPIC_API_KEY" not in result["content"]
    for text in (result["content"], session.read_text(), proc.stdout, proc.stderr):
        assert API_KEY not in text


@pytest.mark.usefixtures("in_process")
def test_env_allow_passes_a_named_credential_but_never_the_key(
    ws: AgentWorkspace,
    messages_api: LoopbackMessagesAPI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CI_JOB_TOKEN", "job-token-value")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-token-value")
    messages_api.queue(tool_reply("", ("t1", "bash", {"command": "env"})))
    messages_api.queue(text_reply("done"))
    assert (
        main(
            [
                "run",
                "--workspace",
                str(ws.path),
                "--allow-bash",
                "--env-allow",
                "CI_JOB_TOKEN",
                "env?",
            ]
        )
        == 0
    )
    capsys.readouterr()
    seen = messages_api.requests[1]["messages"][-1]["content"][0]["content"]
    assert "CI_JOB_TOKEN=job-token-value" in seen
    assert "gh-token-value" not in seen
    assert API_KEY not in seen and "ANTHROPIC_API_KEY" not in seen


def test_session_resumes_and_a_torn_line_is_reported(
    ws: AgentWorkspace,
    messages_api: LoopbackMessagesAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in cli_env(messages_api).items():
        if name.startswith("ANTHROPIC_"):
            monkeypatch.setenv(name, value)
    session = tmp_path / "s.jsonl"
    messages_api.queue(text_reply("first answer"))
    assert main(["run", "--workspace", str(ws.path), "--session", str(session), "one"]) == 0
    with open(session, "a") as f:
        f.write('{"role":"user","te')  # a crash mid-write
    messages_api.queue(text_reply("second answer"))
    assert main(["run", "--workspace", str(ws.path), "--session", str(session), "two"]) == 0
    _out, err = capsys.readouterr()
    assert "safefs-agent: warning: session " in err
    assert "line 4 was cut off" in err
    sent = messages_api.requests[1]["messages"]
    assert [m["content"][0]["text"] for m in sent] == ["one", "first answer", "two"]
    assert [type(m).__name__ for m in read_messages(session)] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
    ]


@pytest.mark.slow  # an agent process per case
def test_on_a_terminal_the_answer_streams_to_stdout_once(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI
) -> None:
    messages_api.queue(text_reply("Streamed straight to the terminal."))
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent", "run", "--workspace", str(ws.path), "hi"],
            cwd=REPO,
            env=cli_env(messages_api),
            stdin=subprocess.DEVNULL,
            stdout=terminal,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(terminal)
        _out, err = proc.communicate(timeout=60)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the terminal's other side is closed
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    assert proc.returncode == 0, err
    assert shown.decode().replace("\r\n", "\n") == "Streamed straight to the terminal.\n"
    assert "Streamed" not in err and "[turn 1/25]" in err


# --- replies that are not answers, modes, refused options ------------------------------------


@STREAM_MODES
def test_an_empty_reply_without_a_stop_reason_is_an_error(
    mode: list[str], ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    messages_api.queue(message_reply([], None))
    session = tmp_path / "s.jsonl"
    proc = inline(messages_api, "--workspace", str(ws.path), "--session", str(session), *mode, "hi")
    assert proc.returncode == 1
    assert "no content and no stop reason" in one_error_line(proc.stderr)
    assert proc.stdout == ""
    assert [type(m).__name__ for m in read_messages(session)] == ["UserMessage"]  # not stored


def test_edit_mode_offers_no_bash_and_its_refusal_names_mode_full(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, inline: Any
) -> None:
    messages_api.queue(tool_reply("", ("b1", "bash", {"command": "echo hi > x"})))
    messages_api.queue(text_reply("done"))
    proc = inline(messages_api, "--workspace", str(ws.path), "--mode", "edit", "go")
    assert proc.returncode == 0, proc.stderr
    first, second = messages_api.requests
    assert "bash" not in [tool["name"] for tool in first["tools"]]
    assert "the bash tool is not available" in json.dumps(first["system"])
    told = second["messages"][-1]["content"][0]
    assert told["is_error"] and "--mode full" in told["content"]
    assert not (ws.path / "x").exists()


def test_env_allow_of_the_api_key_is_refused(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, inline: Any
) -> None:
    proc = inline(
        messages_api, "--workspace", str(ws.path), "--env-allow", "ANTHROPIC_API_KEY", "--allow-bash", "go"
    )
    assert proc.returncode == 1
    assert "--env-allow ANTHROPIC_API_KEY: the API key is never passed to bash" in one_error_line(proc.stderr)
    assert messages_api.requests == []
