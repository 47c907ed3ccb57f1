"""The README's Claude Code line, run with the real Claude Code CLI: the server it adds connects.

``claude mcp add`` writes the server into the client's configuration and ``claude mcp list``
starts it and does the MCP handshake (its health check), so this needs no model and no key. The
CLI comes from the npm registry into ``.bench-node/`` (git-ignored), as the official server does;
without npm the test is skipped with the reason.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.node_clients import CLAUDE_CODE, npm_binary

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_line() -> list[str]:
    for line in README.read_text().splitlines():
        if line.startswith("claude mcp add "):
            return shlex.split(line)
    pytest.fail("the README has no 'claude mcp add' line")


def test_the_readme_line_adds_a_server_claude_code_connects_to(tmp_path: Path) -> None:
    claude = npm_binary(*CLAUDE_CODE)
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("hello\n")
    script = Path(sys.executable).with_name("safefs-mcp")
    words = [
        w.replace("/abs/path/.venv/bin/safefs-mcp", str(script)).replace("/abs/path/project", str(project))
        for w in readme_line()
    ]
    assert words[:3] == ["claude", "mcp", "add"] and str(script) in words and str(project) in words
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env["HOME"] = str(tmp_path / "home")  # the client's configuration goes there, not the user's

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
