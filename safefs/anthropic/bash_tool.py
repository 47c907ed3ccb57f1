"""A handler for Anthropic's bash tool, ``bash_20250124``: a persistent shell in the sandbox.

Claude sends ``{"command": ...}`` or ``{"restart": true}``; the session keeps its working directory
and exported variables between commands (:class:`safefs.anthropic.shell.ConfinedShell`), and
every command runs in the kernel sandbox of :mod:`safefs.sandbox`: only the workspace and a
private temporary directory are writable, and there is no network. Where the sandbox cannot be
set up, commands are refused, never run unconfined.

:class:`BashTool` is the handler as an SDK tool, for ``client.beta.messages.tool_runner``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from anthropic.lib.tools import BetaBuiltinFunctionTool, BetaFunctionToolResultType, ToolError

import safefs
from safefs.anthropic.shell import BASH_DEFAULT_TIMEOUT, ConfinedShell, keep_tail
from safefs.sandbox import Sandbox

TOOL_TYPE = "bash_20250124"
TOOL_NAME = "bash"


def run_bash(shell: ConfinedShell, args: Mapping[str, Any], timeout: float = BASH_DEFAULT_TIMEOUT) -> str:
    """One ``bash_20250124`` call on ``shell``: its output, or a ToolError for a failure."""
    if args.get("restart"):
        shell.restart()
        return "tool has been restarted."
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ToolError("Error: Parameter `command` is required and must be a non-empty string")
    if "\0" in command:
        raise ToolError("Error: the command must not contain a NUL character")
    result = shell.run(command, timeout=timeout)
    if result.refusal is not None:
        raise ToolError(f"Error: bash refused: {result.refusal}")
    if result.timed_out:
        raise ToolError(f"Error: the command timed out after {timeout:g} s; the shell was restarted")
    output = keep_tail(result.output)
    if result.exit_code != 0:
        raise ToolError(f"{output}\n(exit status {result.exit_code})".lstrip("\n"))
    return output or "(no output)"


class BashTool(BetaBuiltinFunctionTool):
    """``bash_20250124`` as a tool of the SDK's tool runner: ``tools=[BashTool(safefs.Root("project"))]``."""

    def __init__(
        self,
        root: safefs.Root,
        *,
        env: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
        timeout: float = BASH_DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__()
        self.shell = ConfinedShell(root, env=env, sandbox=sandbox)
        self.timeout = timeout

    def to_dict(self) -> Any:
        return {"type": TOOL_TYPE, "name": TOOL_NAME}

    def call(self, input: object) -> BetaFunctionToolResultType:
        if not isinstance(input, dict):
            raise ToolError("Error: the tool input must be an object")
        return run_bash(self.shell, input, self.timeout)

    def close(self) -> None:
        self.shell.close()
