"""A handler for Anthropic's bash tool, ``bash_20250124``: a persistent shell in the sandbox.

Claude sends ``{"command": ...}`` or ``{"restart": true}``; the session keeps its working directory
and exported variables between commands (:class:`safefs.anthropic.shell.ConfinedShell`), and
every command runs in the kernel sandbox of :mod:`safefs.sandbox`: only the workspace and a
private temporary directory are writable, and there is no network. Where the sandbox cannot be
set up, commands are refused, never run unconfined.

:class:`BashTool` is the handler as an SDK tool, for ``client.beta.messages.tool_runner``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from anthropic.lib.tools import BetaBuiltinFunctionTool, BetaFunctionToolResultType, ToolError

import safefs
from safefs.anthropic.shell import BASH_DEFAULT_TIMEOUT, ConfinedShell, ShellResult, keep_tail
from safefs.sandbox import Sandbox

TOOL_TYPE = "bash_20250124"
TOOL_NAME = "bash"


@dataclass(frozen=True)
class BashCall:
    """One ``bash_20250124`` call's text for the model, whether it is an error, and what the shell
    said of the run (None for a restart or a call refused before it ran)."""

    text: str
    is_error: bool = False
    result: ShellResult | None = None


def bash_call(
    shell: ConfinedShell,
    args: Mapping[str, Any],
    timeout: float = BASH_DEFAULT_TIMEOUT,
    cancel: threading.Event | None = None,
) -> BashCall:
    """One ``bash_20250124`` call on ``shell``, as the SDK's shell words its outcome; setting
    ``cancel`` kills the command at once."""
    if args.get("restart"):
        shell.restart()
        return BashCall("tool has been restarted.")
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        return BashCall("Error: Parameter `command` is required and must be a non-empty string", True)
    if "\0" in command:
        return BashCall("Error: the command must not contain a NUL character", True)
    result = shell.run(command, timeout=timeout, cancel=cancel)
    if result.refusal is not None:
        return BashCall(f"Error: bash refused: {result.refusal}", True, result)
    if result.timed_out:
        return BashCall(
            f"Error: the command timed out after {timeout:g} s; the shell was restarted", True, result
        )
    output = keep_tail(result.output)
    if result.cancelled:
        return BashCall(f"{output}\n(the command was cancelled)".lstrip("\n"), True, result)
    if result.exit_code != 0:
        return BashCall(f"{output}\n(exit status {result.exit_code})".lstrip("\n"), True, result)
    return BashCall(output or "(no output)", False, result)


def run_bash(
    shell: ConfinedShell,
    args: Mapping[str, Any],
    timeout: float = BASH_DEFAULT_TIMEOUT,
    cancel: threading.Event | None = None,
) -> str:
    """One ``bash_20250124`` call on ``shell``: its output, or a ToolError for a failure. The
    sandbox's notes (low disk space, a repository disabled or one that could not be) end it."""
    call = bash_call(shell, args, timeout, cancel)
    notes = "".join(f"\n{note}" for note in call.result.notes) if call.result is not None else ""
    if call.is_error:
        raise ToolError(call.text + notes)
    return call.text + notes


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
