"""bash: status and combined output, timeout and cap as error results, no process left behind,
and a child environment without the API key or anything that looks like a credential."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from agent.tools import BashTool
from agent.tools.base import ToolOutput
from agent.tools.bash import DEFAULT_OUTPUT_CAP, DEFAULT_TIMEOUT
from tests.agent.conftest import API_KEY, AgentWorkspace


def alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_until_gone(pids: list[int]) -> list[int]:
    """The pids still alive after giving init a bounded while to reap the killed ones."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.02)
    return [p for p in pids if alive(p)]


def pids_in(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()]


def test_defaults() -> None:
    assert DEFAULT_TIMEOUT == 30
    assert DEFAULT_OUTPUT_CAP == 1 << 20


def test_reports_exit_status_and_combined_output_in_the_workspace(ws: AgentWorkspace) -> None:
    bash = BashTool(ws.root)
    assert bash.execute({"command": "cat hello.txt; echo err >&2"}) == \
        ToolOutput("exit status 0\nhello from inside\nerr\n")
    assert bash.execute({"command": "echo out; echo oops >&2; exit 3"}) == \
        ToolOutput("exit status 3\nout\noops\n", is_error=True)
    assert bash.execute({"command": "kill -TERM $$"}) == \
        ToolOutput("killed by signal SIGTERM\n", is_error=True)


def test_runs_in_the_directory_the_root_holds_even_after_a_rename(ws: AgentWorkspace) -> None:
    moved = ws.base / "moved"
    os.rename(ws.path, moved)
    ws.path.mkdir()  # an impostor at the old name
    (ws.path / "hello.txt").write_text("impostor\n")
    out = BashTool(ws.root).execute({"command": "cat hello.txt"})
    assert out == ToolOutput("exit status 0\nhello from inside\n")


def test_timeout_is_an_error_result_and_the_whole_group_is_killed(ws: AgentWorkspace) -> None:
    pidfile = ws.path / "pids"
    bash = BashTool(ws.root, timeout=0.5)
    out = bash.execute({"command": "sleep 300 & echo $! > pids; echo $$ >> pids; echo started; "
                                   "sleep 300"})
    assert out.is_error
    assert out.content == "command timed out after 0.5 s; its process group was killed\nstarted\n"
    pids = pids_in(pidfile)
    assert len(pids) == 2
    assert wait_until_gone(pids) == []


def test_background_process_does_not_outlive_a_finished_command(ws: AgentWorkspace) -> None:
    out = BashTool(ws.root).execute({"command": "sleep 300 >/dev/null 2>&1 & echo $! > pids"})
    assert out == ToolOutput("exit status 0\n")
    assert wait_until_gone(pids_in(ws.path / "pids")) == []


def test_output_cap_is_an_error_result_and_kills_the_producer(ws: AgentWorkspace) -> None:
    bash = BashTool(ws.root, output_cap=100_000)
    out = bash.execute({"command": "echo $$ > pids; yes 0123456789"})
    assert out.is_error
    header = "command output exceeded 100000 bytes; its process group was killed\n"
    assert out.content.startswith(header)
    body = out.content[len(header):]
    assert len(body) == 100_000
    assert set(body.split("\n")[:-1]) == {"0123456789"}
    assert wait_until_gone(pids_in(ws.path / "pids")) == []


def test_output_at_the_cap_exactly_is_kept_whole(ws: AgentWorkspace) -> None:
    out = BashTool(ws.root, output_cap=1000).execute({"command": "head -c 1000 /dev/zero"})
    assert out == ToolOutput("exit status 0\n" + "\0" * 1000)


def test_cancel_kills_a_running_command(ws: AgentWorkspace) -> None:
    cancel = threading.Event()

    def press_ctrl_c_once_started() -> None:
        deadline = time.monotonic() + 20
        while not (ws.path / "pids").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        cancel.set()

    threading.Thread(target=press_ctrl_c_once_started, daemon=True).start()
    out = BashTool(ws.root).execute({"command": "echo $$ > pids; sleep 300"}, cancel)
    assert out == ToolOutput("command cancelled; its process group was killed\n", is_error=True)
    assert wait_until_gone(pids_in(ws.path / "pids")) == []


def test_environment_is_scrubbed_of_the_key_and_credentials(ws: AgentWorkspace) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "ANTHROPIC_API_KEY": API_KEY,
        "GITHUB_TOKEN": "ghp-1",
        "db_password": "hunter2",
        "MY_SECRET_X": "s3",
        "AWS_ACCESS_KEY_ID": "AKIA1",
        "CI_JOB_TOKEN": "allowed-token-value",
        "COPY_OF_MODEL_CRED": f"prefix-{API_KEY}",
        "HARMLESS": "visible",
    }
    bash = BashTool(ws.root, base_env=env, env_allow=["CI_JOB_TOKEN", "ANTHROPIC_API_KEY"],
                    secret_values=[API_KEY])
    out = bash.execute({"command": "env"})
    assert not out.is_error
    names = {line.split("=", 1)[0] for line in out.content.splitlines()[1:] if "=" in line}
    assert "HARMLESS" in names
    assert "CI_JOB_TOKEN" in names  # explicitly allowed
    for gone in ("ANTHROPIC_API_KEY", "GITHUB_TOKEN", "db_password", "MY_SECRET_X",
                 "AWS_ACCESS_KEY_ID", "COPY_OF_MODEL_CRED"):
        assert gone not in names
    assert API_KEY not in out.content


def test_real_process_environment_key_does_not_reach_the_child(
        ws: AgentWorkspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("SOME_API_TOKEN", "tok")
    out = BashTool(ws.root).execute({"command": "env; cat /proc/$$/environ | tr '\\0' '\\n'"})
    assert API_KEY not in out.content
    assert "SOME_API_TOKEN" not in out.content


def test_bad_input_is_an_error_result(ws: AgentWorkspace) -> None:
    bash = BashTool(ws.root)
    assert bash.execute({"cmd": "ls"}).is_error
    assert bash.execute({"command": "echo \0"}) == ToolOutput(
        "command must not contain a NUL character", is_error=True)
    with pytest.raises(ValueError):
        BashTool(ws.root, timeout=0)
