"""The tools the model may call: file tools on safefs (read, write, edit, list, glob, grep) and
``bash`` (in a kernel sandbox). The file tools are thin front ends over :mod:`safefs.workspace`."""

from __future__ import annotations

from collections.abc import Iterable

import safefs
from agent.tools.base import Tool, ToolOutput
from agent.tools.bash import BashTool
from agent.tools.edit import EditTool
from agent.tools.glob import GlobTool
from agent.tools.grep import GrepTool
from agent.tools.list import ListTool
from agent.tools.read import ReadTool
from agent.tools.write import WriteTool
from safefs.sandbox import SandboxOptions


def file_tools(root: safefs.Root) -> list[Tool]:
    """The workspace tools, every one confined to ``root`` by safefs."""
    return [ReadTool(root), WriteTool(root), EditTool(root), ListTool(root), GlobTool(root), GrepTool(root)]


def default_tools(
    root: safefs.Root,
    *,
    secret_values: Iterable[str] = (),
    env_allow: Iterable[str] = (),
    sandbox: str = "auto",
    allow_network: bool = False,
    sandbox_options: SandboxOptions | None = None,
) -> list[Tool]:
    return [
        *file_tools(root),
        BashTool(
            root,
            secret_values=secret_values,
            env_allow=env_allow,
            sandbox=sandbox,
            allow_network=allow_network,
            sandbox_options=sandbox_options,
        ),
    ]


__all__ = [
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "ListTool",
    "ReadTool",
    "Tool",
    "ToolOutput",
    "WriteTool",
    "default_tools",
    "file_tools",
]
