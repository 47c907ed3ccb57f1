"""safefs's Claude Code file tools for the Claude Agent SDK (``safefs.integrations.claude_agent_sdk``)
as a contestant: ``safefs-claude-agent-sdk-tools`` reads with ``Read``, writes with ``Write`` and
lists with ``Glob`` (``*`` under the directory: files only), each call through the handler of the
SDK tool object (``SdkMcpTool``) the in-process MCP server serves, on one event loop. An error
result is a refusal, raised as ``PermissionError``.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
from typing import Any

from safefs_bench.strategies import Strategy, StrategyUnavailable


class ClaudeAgentSdkTools(Strategy):
    """``Read``, ``Write`` and ``Glob`` of ``file_tools`` on a root on the workspace."""

    def __init__(self, root: str) -> None:
        try:
            from safefs.integrations.claude_agent_sdk import ToolError, file_tools
        except ImportError as exc:
            raise StrategyUnavailable(
                f"claude_agent_sdk is not installed (safefs[claude-agent-sdk]): {exc}"
            ) from None
        import safefs

        self._error = ToolError
        self._root = safefs.Root(root)
        self._tools = {t.name: t for t in file_tools(self._root, bash=False)}
        self._loop = asyncio.new_event_loop()

    def _call(self, name: str, args: dict[str, Any]) -> str:
        try:
            result = self._loop.run_until_complete(self._tools[name].handler(args))
        except self._error as exc:
            raise PermissionError(str(exc)) from None
        return str(result["content"][0]["text"])

    def read(self, rel: str) -> bytes:
        numbered = self._call("Read", {"file_path": rel})  # "1\t<line>\n2": the last line is empty
        return "\n".join(line.partition("\t")[2] for line in numbered.split("\n")).encode("utf-8")

    def write(self, rel: str, data: bytes) -> None:
        self._call("Write", {"file_path": rel, "content": data.decode("utf-8")})

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("Claude Code's tools have no stat")

    def listdir(self, rel: str) -> list[str]:
        text = self._call("Glob", {"pattern": "*", "path": rel})
        return [] if text == "No files found" else [posixpath.basename(p) for p in text.split("\n")]

    def makedirs(self, rel: str) -> None:
        raise OSError("Claude Code's tools make directories only as parents of a file they write")

    def close(self) -> None:
        self._loop.close()
        self._root.close()
