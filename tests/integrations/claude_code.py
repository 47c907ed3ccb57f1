"""Running the Claude Agent SDK's bundled Claude Code binary against the streaming fake Messages
API: a home and a config directory of the test's own (nothing lands in ``$HOME``), no traffic
but the fake server's, and the tool results the binary sent back, as text."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import claude_agent_sdk

from tests.integrations.fake_anthropic_stream import FakeStreamingMessages

MODEL = "claude-sonnet-4-5"
SESSION_SECONDS = 180
# What the binary adds after a result: the tokens left, a nudge to use its task tools.
ADDED = re.compile(
    r"\n*<system-reminder>\s*<total_tokens>[^<]*</total_tokens>\s*</system-reminder>"
    r"|\n\n<system-reminder>\nThe task tools haven't been used recently\..*?</system-reminder>",
    re.DOTALL,
)


def binary_env(base: Path, model: FakeStreamingMessages) -> dict[str, str]:
    """The binary's environment (beside this process's): the fake server, a fake key, and a home
    and config directory under ``base``."""
    for name in ("home", "config"):
        (base / name).mkdir(exist_ok=True)
    return {
        "ANTHROPIC_BASE_URL": model.address,
        "ANTHROPIC_API_KEY": "sk-ant-fake",
        "HOME": str(base / "home"),
        "CLAUDE_CONFIG_DIR": str(base / "config"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def run_session(options: claude_agent_sdk.ClaudeAgentOptions) -> list[Any]:
    """Every message of one ``query`` with ``options``."""

    async def go() -> list[Any]:
        return [m async for m in claude_agent_sdk.query(prompt="Work on the project.", options=options)]

    return asyncio.run(asyncio.wait_for(go(), SESSION_SECONDS))


def result_text(content: Any) -> str:
    """A tool result's text, whether sent as a string or as blocks, without the reminders the
    binary adds after some (``ADDED``)."""
    text = content if isinstance(content, str) else "".join(block.get("text", "") for block in content)
    return ADDED.sub("", text)


def results(model: FakeStreamingMessages) -> list[tuple[str, bool]]:
    """(text, is_error) of every tool result the binary sent back, in order."""
    return [
        (result_text(block.get("content", "")), bool(block.get("is_error")))
        for message in model.requests[-1]["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
