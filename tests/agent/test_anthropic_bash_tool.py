"""``--tools anthropic``: Anthropic's ``bash_20250124`` on the agent's sandbox honours cancel as the
agent's own ``bash`` does (SIGINT kills the running command at once, not after its timeout), and
its result keeps what the sandbox said: the sandbox line, the processes killed, every note."""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from agent.messages import ToolResult
from agent.session import read_messages
from agent.tools.anthropic_defined import PersistentBashTool
from safefs.anthropic.bash_tool import run_bash
from safefs.anthropic.shell import ConfinedShell
from safefs.sandbox import Sandbox, make_sandbox
from safefs.sandbox.process import CommandOutcome
from tests.agent.cli_runs import cli_env, one_error_line
from tests.agent.conftest import AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, tool_reply
from tests.agent.processes import running_with, survivors

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigint_cancels_the_running_command_at_once(
    ws: AgentWorkspace,
    messages_api: LoopbackMessagesAPI,
    tmp_path: Path,
    started: list[subprocess.Popen[str]],
) -> None:
    """A command that would run for a minute: SIGINT ends the run within about a second, the
    command and what it started are killed, and the recorded result names them beside the
    sandbox line."""
    marker = "sleep 3134"  # found by command line: the sandbox has its own pids
    messages_api.queue(tool_reply("", ("t1", "bash", {"command": f"{marker} & echo started > pids; wait"})))
    session = tmp_path / "s.jsonl"
    options = ["--tools", "anthropic", "--mode", "full", "--session", str(session)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "run", "--workspace", str(ws.path), *options, "sleep"],
        cwd=REPO,
        env=cli_env(messages_api),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(proc)
    pids = ws.path / "pids"
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text() == "started\n"):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.02)
    assert running_with(marker) != []
    sent_at = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    elapsed = time.monotonic() - sent_at
    print(f"exit {elapsed:.2f} s after SIGINT (--tools anthropic)")
    assert proc.returncode == 1
    assert one_error_line(err) == "safefs-agent: error: cancelled by SIGINT"
    assert elapsed < 5  # the command's timeout is 30 s; the agent's own bash takes about a second
    assert survivors(marker) == []
    result = read_messages(session)[-1]
    assert isinstance(result, ToolResult) and result.tool_call_id == "t1" and result.is_error
    assert "(the command was cancelled)" in result.content
    assert marker in result.content and "killed " in result.content  # the processes killed, named
    assert "no network" in result.content  # the sandbox line


@dataclasses.dataclass
class NotingSandbox:
    """The real sandbox, with a note added to each outcome as the Linux sandbox adds one when a
    repository a command made could not be disabled."""

    inner: Sandbox
    note: str

    def describe(self) -> str:
        return self.inner.describe()

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        timeout: float,
        output_cap: int,
        cancel: threading.Event | None,
    ) -> CommandOutcome:
        outcome = self.inner.run(argv, env, timeout=timeout, output_cap=output_cap, cancel=cancel)
        return dataclasses.replace(outcome, notes=(*outcome.notes, self.note))

    def close(self) -> None:
        self.inner.close()


NOTE = "note: a repository the last command made could not be disabled (test); no further command will run"


# The background sleep is waited for until it runs as sleep (a forked shell not yet exec'd is
# killed under the shell's own command line).
BACKGROUND = "sleep 3135 & until grep -q 3135 /proc/$!/cmdline 2>/dev/null; do :; done; echo bg"


@pytest.mark.parametrize("command", ["echo hello", "exit 3", BACKGROUND])
def test_every_note_and_the_sandbox_and_killed_lines_are_kept(ws: AgentWorkspace, command: str) -> None:
    tool = PersistentBashTool(ws.root, sandbox=NotingSandbox(make_sandbox(ws.root), NOTE))
    try:
        output = tool.execute({"command": command})
    finally:
        tool.close()
    assert output.content.endswith(NOTE)
    assert tool.sandbox.describe().split(",")[0] in output.content
    assert "killed" in output.content
    assert output.is_error == (command == "exit 3")
    if command.startswith("sleep"):
        assert "sleep 3135" in output.content  # named among the processes killed


def test_the_sdk_tool_keeps_the_notes_too(ws: AgentWorkspace) -> None:
    shell = ConfinedShell(ws.root, sandbox=NotingSandbox(make_sandbox(ws.root), NOTE))
    try:
        assert run_bash(shell, {"command": "echo hi"}) == f"hi\n{NOTE}"
    finally:
        shell.close()


def test_cancel_kills_the_command_of_the_sdk_shell(ws: AgentWorkspace) -> None:
    shell = ConfinedShell(ws.root)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    try:
        started = time.monotonic()
        result = shell.run("sleep 3136", timeout=60, cancel=cancel)
        elapsed = time.monotonic() - started
    finally:
        shell.close()
    print(f"cancelled after {elapsed:.2f} s")
    assert result.cancelled and elapsed < 5
    assert survivors("sleep 3136") == []
