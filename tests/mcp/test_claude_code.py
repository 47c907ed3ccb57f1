"""The README's Claude Code line, run with the real Claude Code CLI.

``claude mcp add`` writes the server into the client's configuration and ``claude mcp list``
starts it and does the MCP handshake (its health check), so the first test needs no model and no
key. The second runs a model session, ``claude -p``, started from a folder outside the served
DIR, so the root Claude Code sends lies outside it; its model is a fake Messages API on
127.0.0.1 (``tests/agent/messages_api_server.py``) that calls ``list_allowed_directories``, which
must list the DIR and end with the note that the client's roots lie outside (the root is
ignored, the DIR stays), then ``read_text_file`` on ``a.txt``, which must give ``hello``. Claude
Code's other traffic (telemetry, updates, error reports) is switched off by its environment
variables, so only 127.0.0.1 is contacted. The CLI comes from the npm registry into
``.bench-node/`` (git-ignored), as the official server does; without npm the tests are skipped
with the reason.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent.messages_api_server import LoopbackMessagesAPI, serve, text_reply, tool_reply
from tests.mcp.node_clients import CLAUDE_CODE, client_env, npm_binary

pytestmark = pytest.mark.slow  # Claude Code from npm, driven through whole sessions

README = Path(__file__).resolve().parents[2] / "README.md"
API_KEY = "sk-ant-loopback-claude-code"
LIST = "mcp__safefs__list_allowed_directories"
READ = "mcp__safefs__read_text_file"
NOTE = (
    "Note: none of the client's roots lies inside a served directory; "
    "the directories given on the command line are served"
)
# Claude Code's own traffic besides the model (telemetry, auto-update, error reports) is off.
QUIET = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


def readme_line() -> list[str]:
    for line in README.read_text().splitlines():
        if line.startswith("claude mcp add "):
            return shlex.split(line)
    pytest.fail("the README has no 'claude mcp add' line")


def readme_words(project: Path) -> list[str]:
    """The README's line with its placeholder paths replaced by this checkout's and ``project``."""
    script = Path(sys.executable).with_name("safefs-mcp")
    words = [
        w.replace("/abs/path/.venv/bin/safefs-mcp", str(script)).replace("/abs/path/project", str(project))
        for w in readme_line()
    ]
    assert words[:3] == ["claude", "mcp", "add"] and str(script) in words and str(project) in words
    return words


def claude_env(home: Path) -> dict[str, str]:
    return client_env(home, "ANTHROPIC_", "CLAUDE")


def test_the_readme_line_adds_a_server_claude_code_connects_to(tmp_path: Path, project: Path) -> None:
    claude = npm_binary(*CLAUDE_CODE)
    words = readme_words(project)
    env = claude_env(tmp_path / "home")

    def run(*args: str) -> str:
        done = subprocess.run(
            [str(claude), *args],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    run(*words[1:])
    listed = run("mcp", "list")
    line = next((x for x in listed.splitlines() if x.startswith("safefs:")), "")
    assert "Connected" in line, listed


@pytest.fixture
def messages_api() -> Iterator[LoopbackMessagesAPI]:
    yield from serve(API_KEY)


def run_bounded(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """(exit status, stdout and stderr) of a command in a session of its own, whose process group
    (the client and the server it started) is killed afterwards whatever happened."""
    process = subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
        return process.returncode, out + err
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the group had already ended
        process.communicate(timeout=10)


def numbered(reply: dict[str, Any], turn: int) -> dict[str, Any]:
    """``reply`` with a message id of its own: Claude Code joins assistant messages sharing one."""
    return {**reply, "id": f"msg_loopback_{turn}"}


def tool_result_text(request: dict[str, Any], tool_use_id: str) -> str:
    """The text of the ``tool_result`` for ``tool_use_id`` in the request's last message.
    Claude Code sends a result with structured content as that content in JSON; the safefs tools'
    structured content is ``{"content": text}``."""
    blocks = request["messages"][-1]["content"]
    result = next(b for b in blocks if b.get("type") == "tool_result" and b["tool_use_id"] == tool_use_id)
    content = result["content"]
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content)
    try:
        structured = json.loads(content)
    except ValueError:
        return str(content)
    return str(structured["content"]) if isinstance(structured, dict) else str(content)


def test_a_claude_code_session_from_another_folder_reads_through_safefs(
    tmp_path: Path, project: Path, messages_api: LoopbackMessagesAPI
) -> None:
    """Claude Code in a folder outside the DIR: its root is ignored, the DIR is served and says so."""
    claude = npm_binary(*CLAUDE_CODE)
    elsewhere = tmp_path / "elsewhere"  # the folder Claude Code works in, the root it sends
    elsewhere.mkdir()
    env = claude_env(tmp_path / "home")
    # the README's line, run where Claude Code will be started: its default scope is that folder
    done = subprocess.run(
        [str(claude), *readme_words(project)[1:]],
        cwd=elsewhere,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    messages_api.queue(numbered(tool_reply("", ("toolu_list", LIST, {})), 1))
    messages_api.queue(numbered(tool_reply("", ("toolu_read", READ, {"path": "a.txt"})), 2))
    messages_api.queue(numbered(text_reply("a.txt says hello."), 3))
    env |= QUIET | {"ANTHROPIC_BASE_URL": messages_api.url, "ANTHROPIC_API_KEY": API_KEY}
    status, output = run_bounded(
        [str(claude), "-p", "What does a.txt say?", "--allowedTools", f"{LIST},{READ}"],
        cwd=elsewhere,
        env=env,
        timeout=120,
    )

    requests = messages_api.requests
    summary = [(r.get("model"), json.dumps(r.get("messages"))[-300:]) for r in requests]
    assert status == 0, (output, summary)
    assert len(requests) == 3, summary  # the three turns; nonessential traffic is off
    first, second, third = requests
    assert {LIST, READ} <= {t["name"] for t in first.get("tools") or []}
    assert "What does a.txt say?" in json.dumps(first["messages"][0])
    allowed = tool_result_text(second, "toolu_list")
    assert allowed == f"Allowed directories:\n{project}\n\n{NOTE}", allowed
    assert str(elsewhere) not in allowed
    assert tool_result_text(third, "toolu_read") == "hello\n"
    assert "a.txt says hello." in output, output
