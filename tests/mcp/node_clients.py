"""Real MCP clients from the npm registry, installed on first use into ``.bench-node/`` (git-ignored),
where the official server goes too; a test that needs one is skipped, with the reason, when npm
is missing or the package does not install or run here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from safefs_bench import mcp_client

GEMINI_CLI = ("@google/gemini-cli@0.61.0", "gemini")
CODEX = ("@openai/codex@0.171.0", "codex")
INSPECTOR = ("@modelcontextprotocol/inspector@0.15.0", "mcp-inspector")
CLAUDE_CODE = ("@anthropic-ai/claude-code@2.1.197", "claude")
# The current Inspector needs Node 22, which the npm registry has as the package ``node``: it and
# the Inspector get a prefix of their own, so the other clients keep the machine's Node.
NODE_22 = ("node@22.23.3", "node")
INSPECTOR_2 = ("@modelcontextprotocol/inspector@2.12.0", "mcp-inspector")
NODE_22_PREFIX = mcp_client.NODE_PREFIX / "node22"


def npm_binary(package: str, binary: str, prefix: Path = mcp_client.NODE_PREFIX) -> Path:
    """The client's binary; the test is skipped, with the reason, where it cannot be had."""
    installed, note = mcp_client.npm_binary(package, binary, prefix)
    if installed is None:
        pytest.skip(note)
    return installed


def client_env(home: Path, *private: str) -> dict[str, str]:
    """The environment a client runs with: this one, less the variables whose names start with
    one of ``private`` (the client's own keys and settings), with ``HOME`` at ``home``, so the
    client's configuration goes there, not into the user's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(private)}
    env["HOME"] = str(home)
    return env
