"""``--tools anthropic``: Anthropic's own client tools, the ones Claude is trained on, on safefs.

- ``str_replace_based_edit_tool`` (``text_editor_20250728``): view, create, str_replace, insert,
  by :class:`safefs.anthropic.TextEditor` on the workspace root.
- ``bash`` (``bash_20250124``): a persistent shell (working directory and exported variables kept
  between commands) whose every command runs in the same kernel sandbox, with the same scrubbed
  environment, as the agent's own ``bash`` tool: a cancel kills the running command, and each
  result that ran ends with the sandbox line, the processes killed and the sandbox's notes.

Both are schema-less for the model: :meth:`spec` sends only the type and the name. The
``input_schema`` here is what a call is validated against before it runs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput
from agent.tools.bash import BashTool, killed_line
from safefs.sandbox import SandboxOptions
from safefs.workspace.limits import truncate_middle

TOOL_SETS = ("safefs", "anthropic")


class TextEditorTool(Tool):
    name = "str_replace_based_edit_tool"
    description = "Anthropic's text editor tool (text_editor_20250728)."
    input_schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert"]},
            "path": {"type": "string"},
            "view_range": {"type": "array", "items": {"type": "integer"}},
            "file_text": {"type": "string"},
            "old_str": {"type": "string"},
            "new_str": {"type": "string"},
            "insert_line": {"type": "integer"},
            "insert_text": {"type": "string"},
        },
        "required": ["command", "path"],
    }
    path_fields = {"path": None}

    def __init__(self, root: safefs.Root, *, max_characters: int | None = None) -> None:
        from safefs.anthropic.text_editor import TextEditor

        self.editor = TextEditor(root, max_characters=max_characters)

    def spec(self) -> dict[str, Any]:
        return {"type": "text_editor_20250728", "name": self.name}

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        from anthropic.lib.tools import ToolError

        try:
            return ToolOutput(truncate_middle(self.editor.execute(args)))
        except ToolError as exc:
            return ToolOutput(str(exc), is_error=True)


class PersistentBashTool(BashTool):
    """The agent's ``bash`` (sandbox, environment, approval) as ``bash_20250124``, with a session."""

    input_schema = {
        "type": "object",
        "properties": {"command": {"type": "string"}, "restart": {"type": "boolean"}},
        "additionalProperties": False,
    }

    def __init__(self, root: safefs.Root, **options: Any) -> None:
        from safefs.anthropic.shell import ConfinedShell

        super().__init__(root, **options)
        self.session = ConfinedShell(root, env=self.child_environment(), sandbox=self.sandbox)

    def spec(self) -> dict[str, Any]:
        return {"type": "bash_20250124", "name": self.name}

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        """The call as the SDK's shell words it; a command that ran is followed by the sandbox
        line, the processes killed when it ended and the sandbox's notes, as the agent's own
        ``bash`` gives them. Setting ``cancel`` kills the command at once."""
        from safefs.anthropic.bash_tool import bash_call

        call = bash_call(self.session, args, self.timeout, cancel)
        result = call.result
        if result is None or result.refusal is not None:
            return ToolOutput(truncate_middle(call.text), is_error=call.is_error)
        if result.layers is not None:
            self.sandbox_layers = result.layers
        notes = "".join(f"\n{note}" for note in result.notes)
        return ToolOutput(
            f"{truncate_middle(call.text)}\n{self.sandbox_layers}\n{killed_line(result.killed)}{notes}",
            is_error=call.is_error,
        )

    def close(self) -> None:
        self.session.close()
        super().close()


def anthropic_tools(
    root: safefs.Root,
    *,
    secret_values: Iterable[str] = (),
    env_allow: Iterable[str] = (),
    sandbox: str = "auto",
    allow_network: bool = False,
    sandbox_options: SandboxOptions | None = None,
) -> list[Tool]:
    return [
        TextEditorTool(root),
        PersistentBashTool(
            root,
            secret_values=secret_values,
            env_allow=env_allow,
            sandbox=sandbox,
            allow_network=allow_network,
            sandbox_options=sandbox_options,
        ),
    ]
