"""Real MCP clients from the npm registry, installed on first use into ``.bench-node/`` (git-ignored),
where the official server goes too; a test that needs one is skipped, with the reason, when npm
is missing or the package does not install or run here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from safefs.contest.mcp_client import NODE_PREFIX

GEMINI_CLI = ("@google/gemini-cli@0.61.0", "gemini")
CODEX = ("@openai/codex@0.171.0", "codex")
INSPECTOR = ("@modelcontextprotocol/inspector@0.15.0", "mcp-inspector")


def npm_binary(package: str, binary: str) -> Path:
    installed = NODE_PREFIX / "node_modules" / ".bin" / binary
    if installed.exists():
        return installed
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip(f"node/npm not installed: {package} cannot be had here")
    done = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(NODE_PREFIX),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            package,
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0 or not installed.exists():
        pytest.skip(f"npm install {package} failed: {done.stderr.strip()[-300:]}")
    return installed
