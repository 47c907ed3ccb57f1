"""safefs-agent run: wiring, printing, sessions, and the one-line redacted error with exit 1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.cli import main
from agent.loop import CANCELLED
from agent.messages import ToolResult, dumps, loads
from tests.agent.conftest import API_KEY, AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, text_reply, tool_reply
from tests.agent.processes import survivors

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, messages_api: LoopbackMessagesAPI) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_api.url)
    monkeypatch.setenv("ANTHROPIC_MODEL", "loopback-model")


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("safefs-agent: error: ")
    return lines[0]


@pytest.mark.usefixtures("cli_env")
def test_run_prints_text_and_calls_and_denies_bash_by_default(
        ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    messages_api.queue(tool_reply("Let me look.", ("t1", "read", {"path": "hello.txt"}),
                                  ("t2", "bash", {"command": "env"})))
    messages_api.queue(text_reply("It greets you."))
    session = tmp_path / "session.jsonl"
    rc = main(["run", "--workspace", str(ws.path), "--session", str(session), "what is here?"])
    out, err = capsys.readouterr()
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "assistant: Let me look.",
        '  -> read {"path": "hello.txt"}',
        "     [ok] hello from inside",
        '  -> bash {"command": "env"}',
        "     [error] bash requires an explicit approval policy",
        "assistant: It greets you.",
    ]
    stored = [loads(line) for line in session.read_text().splitlines()]
    assert len(stored) == 5
    assert API_KEY not in session.read_text()
    assert messages_api.requests[0]["model"] == "loopback-model"


@pytest.mark.usefixtures("cli_env")
def test_allow_bash_runs_it_without_the_key_in_its_environment(
        ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    messages_api.queue(tool_reply("", ("t1", "bash", {"command": "env; echo marker-$((6*7))"})))
    messages_api.queue(text_reply("done"))
    session = tmp_path / "s.jsonl"
    rc = main(["run", "--workspace", str(ws.path), "--allow-bash", "--session", str(session),
               "show env"])
    out, _err = capsys.readouterr()
    assert rc == 0
    result = messages_api.requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] is False
    assert "marker-42" in result["content"]  # the command really ran
    assert "ANTHROPIC_API_KEY" not in result["content"]
    for text in (result["content"], session.read_text(), out):
        assert API_KEY not in text


@pytest.mark.usefixtures("cli_env")
def test_session_resumes_and_a_torn_line_is_reported(
        ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    session = tmp_path / "s.jsonl"
    messages_api.queue(text_reply("first answer"))
    assert main(["run", "--workspace", str(ws.path), "--session", str(session), "one"]) == 0
    with open(session, "a") as f:
        f.write('{"role":"user","te')  # a crash mid-write
    messages_api.queue(text_reply("second answer"))
    assert main(["run", "--workspace", str(ws.path), "--session", str(session), "two"]) == 0
    _out, err = capsys.readouterr()
    assert err.startswith("safefs-agent: warning: session ")
    assert "line 3 was cut off" in err
    sent = messages_api.requests[1]["messages"]
    assert [m["content"][0]["text"] for m in sent] == ["one", "first answer", "two"]
    assert [json.loads(line)["role"] for line in session.read_text().splitlines()] == [
        "user", "assistant", "user", "assistant"]


def test_missing_or_empty_key_is_named(ws: AgentWorkspace, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["run", "--workspace", str(ws.path), "hi"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "ANTHROPIC_API_KEY is not set" in line
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    assert main(["run", "--workspace", str(ws.path), "hi"]) == 1
    assert one_error_line(capsys.readouterr().err) == line  # an empty key garbles nothing


@pytest.mark.usefixtures("cli_env")
def test_error_line_redacts_the_exact_key(ws: AgentWorkspace, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    wrong = "sk-ant-wrong-key-1234567890"
    monkeypatch.setenv("ANTHROPIC_API_KEY", wrong)  # the server echoes the key it got in a 401
    assert main(["run", "--workspace", str(ws.path), "hi"]) == 1
    out, err = capsys.readouterr()
    line = one_error_line(err)
    assert wrong not in line and wrong not in out
    assert "HTTP 401" in line and "[REDACTED]" in line


@pytest.mark.usefixtures("cli_env")
@pytest.mark.parametrize("argv, expected", [
    (["run", "hi"], "the following arguments are required: --workspace"),
    (["run", "--workspace", "/nonexistent/ws", "hi"], "cannot use workspace '/nonexistent/ws'"),
    (["run", "--workspace", ".", "--max-turns", "0", "hi"], "--max-turns must be at least 1"),
    (["run", "--workspace", ".", "--max-turns", "x", "hi"], "invalid int value"),
    (["fly"], "invalid choice"),
    ([], "required"),
])
def test_user_mistakes_are_one_line_and_exit_1(argv: list[str], expected: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert expected in one_error_line(err)
    assert out == ""


@pytest.mark.usefixtures("cli_env")
def test_turn_limit_is_one_line(ws: AgentWorkspace, messages_api: LoopbackMessagesAPI,
                                tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for n in range(2):
        messages_api.queue(tool_reply("", (f"t{n}", "read", {"path": "hello.txt"})))
    session = tmp_path / "s.jsonl"
    assert main(["run", "--workspace", str(ws.path), "--max-turns", "2", "--session",
                 str(session), "loop"]) == 1
    assert "turn limit reached: 2" in one_error_line(capsys.readouterr().err)
    assert sum('"tool_result"' in line for line in session.read_text().splitlines()) == 2


def test_python_dash_m_agent_round_trip_in_a_real_process(
        ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path) -> None:
    messages_api.queue(tool_reply("", ("t1", "write", {"path": "out/new.txt", "content": "hi\n"}),
                                  ("t2", "read", {"path": str(ws.outside / "secret.txt")})))
    messages_api.queue(text_reply("wrote it"))
    session = tmp_path / "s.jsonl"
    env = dict(os.environ, ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=messages_api.url,
               ANTHROPIC_MODEL="loopback-model")
    proc = subprocess.run([sys.executable, "-m", "agent", "run", "--workspace", str(ws.path),
                           "--session", str(session), "write a file"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert "assistant: wrote it" in proc.stdout
    assert (ws.path / "out" / "new.txt").read_text() == "hi\n"
    text = session.read_text()
    assert "outside secret" not in text and API_KEY not in text
    assert str(ws.path) not in text
    assert dumps(loads(text.splitlines()[-1])) == text.splitlines()[-1]


def test_error_in_a_real_process_is_one_redacted_line(ws: AgentWorkspace,
                                                      messages_api: LoopbackMessagesAPI) -> None:
    wrong = "sk-ant-real-process-wrong-key"
    env = dict(os.environ, ANTHROPIC_API_KEY=wrong, ANTHROPIC_BASE_URL=messages_api.url)
    proc = subprocess.run([sys.executable, "-m", "agent", "run", "--workspace", str(ws.path), "x"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert wrong not in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
    assert "[REDACTED]" in one_error_line(proc.stderr)


def test_ctrl_c_cancels_a_running_command_and_leaves_a_valid_session(
        ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path) -> None:
    messages_api.queue(tool_reply("", ("t1", "bash", {"command": "echo $$ > pids; sleep 3161"}),
                                  ("t2", "read", {"path": "hello.txt"})))
    session = tmp_path / "s.jsonl"
    env = dict(os.environ, ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=messages_api.url,
               ANTHROPIC_MODEL="loopback-model")
    proc = subprocess.Popen([sys.executable, "-m", "agent", "run", "--workspace", str(ws.path),
                             "--allow-bash", "--session", str(session), "sleep"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    pidfile = ws.path / "pids"

    def started() -> bool:
        return pidfile.exists() and pidfile.read_text().strip() != ""

    try:
        deadline = time.monotonic() + 60
        while not started():
            assert time.monotonic() < deadline, "the command never started"
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)  # to the agent only: the command has its own session
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    assert one_error_line(err) == "safefs-agent: error: the run was cancelled"
    stored = [loads(line) for line in session.read_text().splitlines()]
    assert stored[-1] == ToolResult("t2", CANCELLED, is_error=True)
    assert stored[-2].is_error and stored[-2].content.startswith("command cancelled\n")
    assert "sleep 3161" in stored[-2].content  # named among the processes killed
    assert survivors("sleep 3161") == []


@pytest.mark.usefixtures("cli_env")
def test_env_allow_passes_a_named_credential_but_never_the_key(
        ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CI_JOB_TOKEN", "job-token-value")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-token-value")
    messages_api.queue(tool_reply("", ("t1", "bash", {"command": "env"})))
    messages_api.queue(text_reply("done"))
    assert main(["run", "--workspace", str(ws.path), "--allow-bash", "--env-allow", "CI_JOB_TOKEN",
                 "--env-allow", "ANTHROPIC_API_KEY", "env?"]) == 0
    capsys.readouterr()
    seen = messages_api.requests[1]["messages"][-1]["content"][0]["content"]
    assert "CI_JOB_TOKEN=job-token-value" in seen
    assert "gh-token-value" not in seen
    assert API_KEY not in seen and "ANTHROPIC_API_KEY" not in seen
