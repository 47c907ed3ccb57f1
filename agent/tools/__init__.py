"""The tools the model may call: ``read`` and ``write`` through safefs, and ``bash`` (in a kernel
sandbox)."""

from __future__ import annotations

from collections.abc import Iterable

import safefs
from agent.tools.base import Tool, ToolOutput
from agent.tools.bash import BashTool
from agent.tools.read import ReadTool
from agent.tools.write import WriteTool


def default_tools(root: safefs.Root, *, secret_values: Iterable[str] = (),
                  env_allow: Iterable[str] = (), sandbox: str = "auto",
                  allow_network: bool = False) -> list[Tool]:
    return [ReadTool(root), WriteTool(root),
            BashTool(root, secret_values=secret_values, env_allow=env_allow, sandbox=sandbox,
                     allow_network=allow_network)]


__all__ = ["BashTool", "ReadTool", "Tool", "ToolOutput", "WriteTool", "default_tools"]
