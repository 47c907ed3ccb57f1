"""The Anthropic SDK's own file tools as contestants, and safefs's drop-ins for them.

- ``anthropic-toolset``: ``anthropic.lib.tools.agent_toolset`` (``read`` and ``write`` of
  ``agent_toolset_20260401``), whose ``resolve_path`` canonicalises a path and then operates on
  the resulting path string.
- ``anthropic-memory``: the SDK's ``BetaLocalFilesystemMemoryTool`` (``view`` and ``create``),
  the same check-then-use pattern on ``/memories`` paths.
- ``safefs-anthropic-toolset`` and ``safefs-anthropic-memory``: :mod:`safefs.anthropic`, the same
  calls resolved beneath a directory fd.

Each operation is one real tool call, as a model's would be (the async tools driven on one event
loop), so the cost includes the SDK's argument validation of the call.
A ``ToolError`` is a refusal, raised as ``PermissionError``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from safefs_bench.strategies import Strategy, StrategyUnavailable

MEMORY_PREFIX = "/memories/"


def _anthropic() -> Any:
    try:
        import anthropic.lib.tools as tools
    except ImportError as exc:
        raise StrategyUnavailable(f"the anthropic SDK is not installed ({exc})") from None
    return tools


class _ToolCalls(Strategy):
    """Calls of SDK-shaped tools, a ToolError turned into a PermissionError."""

    def __init__(self) -> None:
        self._tool_error: type[Exception] = _anthropic().ToolError
        self._loop = asyncio.new_event_loop()

    def _call(self, tool: Any, args: dict[str, Any]) -> Any:
        try:
            result = tool.call(args)
            if asyncio.iscoroutine(result):
                result = self._loop.run_until_complete(result)
            return result
        except self._tool_error as exc:
            raise PermissionError(str(exc)) from None

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("these tools have no stat of their own")

    def listdir(self, rel: str) -> list[str]:
        raise OSError("these tools have no directory listing of their own")

    def makedirs(self, rel: str) -> None:
        raise OSError("these tools make directories only as parents of a file they write")

    def close(self) -> None:
        self._loop.close()


class AgentToolset(_ToolCalls):
    """``read`` and ``write`` of ``agent_toolset_20260401``: the SDK's, or safefs's."""

    def __init__(self, root: str, implementation: str) -> None:
        super().__init__()
        if implementation == "sdk":
            from anthropic.lib.tools import agent_toolset as module
        else:
            from safefs.anthropic import agent_toolset as module  # type: ignore[no-redef]
        self._ctx = module.AgentToolContext(workdir=root, max_file_bytes=None)
        tools = {
            t.name: t for t in module.beta_agent_toolset_20260401(self._ctx) if t.name in ("read", "write")
        }
        self._read, self._write = tools["read"], tools["write"]

    def read(self, rel: str) -> bytes:
        return str(self._call(self._read, {"file_path": rel})).encode("utf-8")

    def write(self, rel: str, data: bytes) -> None:
        self._call(self._write, {"file_path": rel, "content": data.decode("utf-8")})

    def close(self) -> None:
        closer = getattr(self._ctx, "close", None)
        if closer is not None:
            result = closer()
            if asyncio.iscoroutine(result):
                self._loop.run_until_complete(result)
        super().close()


def _unnumbered(view: str) -> bytes:
    """The file content back from a memory ``view``: the header line dropped, each line's number
    and tab cut off."""
    lines = view.split("\n")[1:]
    return "\n".join(line.split("\t", 1)[1] for line in lines).encode("utf-8")


class MemoryTool(_ToolCalls):
    """``view`` and ``create`` of the memory tool on the workspace as ``/memories``: the SDK's,
    or safefs's. ``write`` of an existing file is ``view`` then ``str_replace`` of its whole
    content (the tool has no overwrite)."""

    def __init__(self, root: str, implementation: str) -> None:
        super().__init__()
        if implementation == "sdk":
            from anthropic.tools import BetaLocalFilesystemMemoryTool
        else:
            from safefs.anthropic import BetaLocalFilesystemMemoryTool  # type: ignore[assignment]
        # Each tool keeps its memories in base_path/memories; it is pointed at the workspace itself
        # by its public memory_root, which every command starts from (safefs's reopens its root
        # there on the next command once closed).
        self._base = tempfile.mkdtemp(prefix="safefs-bench-memory-")
        self._tool: Any = BetaLocalFilesystemMemoryTool(self._base)
        self._tool.memory_root = Path(root)
        closer = getattr(self._tool, "close", None)
        if closer is not None:
            closer()

    def read(self, rel: str) -> bytes:
        return _unnumbered(str(self._call(self._tool, {"command": "view", "path": MEMORY_PREFIX + rel})))

    def write(self, rel: str, data: bytes) -> None:
        create = {"command": "create", "path": MEMORY_PREFIX + rel, "file_text": data.decode("utf-8")}
        try:
            self._call(self._tool, create)
        except PermissionError as exc:
            if "already exists" not in str(exc):
                raise
            # Replaced in place of the old content, by the tool's own str_replace: deleting the name
            # first would remove the very name the attacker is swapping.
            old = self.read(rel).decode("utf-8")
            replace = {"command": "str_replace", "path": MEMORY_PREFIX + rel, "old_str": old}
            self._call(self._tool, {**replace, "new_str": data.decode("utf-8")})

    def close(self) -> None:
        closer = getattr(self._tool, "close", None)
        if closer is not None:
            closer()
        shutil.rmtree(self._base, ignore_errors=True)
        super().close()
