"""Running ``safefs-agent run`` against the loopback Messages API: in a process of its own
(:func:`run_cli`), or as ``main()`` in this one (the ``inline`` fixture in conftest), and reading
what it left behind."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.cli import main
from agent.messages import ToolResult
from agent.session import read_messages
from tests.agent.messages_api_server import LoopbackMessagesAPI

API_KEY = "sk-ant-test-9f8e7d6c5b4a-loopback"
REPO = Path(__file__).resolve().parents[2]


def cli_env(api: LoopbackMessagesAPI, key: str = API_KEY, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_API_KEY=key, ANTHROPIC_BASE_URL=api.url, ANTHROPIC_MODEL="loopback-model")
    env.update(extra)
    return env


def run_cli(
    api: LoopbackMessagesAPI, *args: str, key: str = API_KEY, stdin: str = "", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent", "run", *args],
        cwd=REPO,
        env=cli_env(api, key),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def inline_runner(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """``run_cli`` without a process of its own: ``main()`` here, with the same environment."""

    def run(
        api: LoopbackMessagesAPI, *args: str, key: str = API_KEY, stdin: str = ""
    ) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        for name in [n for n in os.environ if n.startswith("ANTHROPIC_")]:
            monkeypatch.delenv(name)
        for name, value in cli_env(api, key).items():
            if name.startswith("ANTHROPIC_"):
                monkeypatch.setenv(name, value)
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        rc = main(["run", *args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, rc, out, err)

    return run


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert lines, "nothing on stderr"
    assert lines[-1].startswith("safefs-agent: error: "), err
    assert sum(line.startswith("safefs-agent: error: ") for line in lines) == 1, err
    assert "Traceback" not in err
    return lines[-1]


def results(path: Path) -> list[ToolResult]:
    return [m for m in read_messages(path) if isinstance(m, ToolResult)]
