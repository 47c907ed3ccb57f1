"""The same inputs to the SDK's implementation and to safefs's, on twin trees: the results are
equal, except for the differences docs/anthropic.md lists (each one checked here as it is)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools import agent_toolset as sdk_toolset
from anthropic.tools import BetaAsyncLocalFilesystemMemoryTool as SdkAsyncMemory
from anthropic.tools import BetaLocalFilesystemMemoryTool as SdkMemory

from safefs.anthropic import BetaAsyncLocalFilesystemMemoryTool, BetaLocalFilesystemMemoryTool
from safefs.anthropic import agent_toolset as our_toolset

MEMORY_COMMANDS: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/notes/todo.txt", "file_text": "one\r\ntwo\nthree\n"},
    {"command": "create", "path": "/memories/notes/todo.txt", "file_text": "again"},
    {"command": "create", "path": "/memories/.hidden", "file_text": "not listed"},
    {"command": "create", "path": "/memories/deep/a/b/c.txt", "file_text": "three levels down"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/notes/todo.txt"},
    {"command": "view", "path": "/memories/notes/todo.txt", "view_range": [2, -1]},
    {"command": "view", "path": "/memories/notes/todo.txt", "view_range": [1, 2]},
    {"command": "view", "path": "/memories/missing.txt"},
    {"command": "str_replace", "path": "/memories/notes/todo.txt", "old_str": "two", "new_str": "2"},
    {"command": "str_replace", "path": "/memories/notes/todo.txt", "old_str": "e", "new_str": "E"},
    {"command": "str_replace", "path": "/memories/notes/todo.txt", "old_str": "absent", "new_str": "x"},
    {"command": "str_replace", "path": "/memories/notes", "old_str": "a", "new_str": "b"},
    {"command": "str_replace", "path": "/memories/nope.txt", "old_str": "a", "new_str": "b"},
    {"command": "insert", "path": "/memories/notes/todo.txt", "insert_line": 1, "insert_text": "inserted\n"},
    {"command": "insert", "path": "/memories/notes/todo.txt", "insert_line": 0, "insert_text": "first"},
    {"command": "insert", "path": "/memories/notes/todo.txt", "insert_line": 99, "insert_text": "x"},
    {"command": "view", "path": "/memories/notes/todo.txt"},
    {"command": "view", "path": "/elsewhere/file"},
    {"command": "view", "path": "/memories/../outside"},
    {"command": "create", "path": "/memories/../../escape.txt", "file_text": "x"},
    {"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/archive/notes"},
    {"command": "rename", "old_path": "/memories/deep", "new_path": "/memories/archive"},
    {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
    {"command": "rename", "old_path": "/memories/gone", "new_path": "/memories/new"},
    {"command": "view", "path": "/memories"},
    {"command": "delete", "path": "/memories"},
    {"command": "delete", "path": "/memories/archive/notes/todo.txt"},
    {"command": "delete", "path": "/memories/deep"},
    {"command": "delete", "path": "/memories/gone"},
    {"command": "view", "path": "/memories"},
]


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except ToolError as exc:
        return ("error", str(exc))


def test_memory_tool_matches_the_sdk_command_by_command(tmp_path: Path) -> None:
    sdk = SdkMemory(str(tmp_path / "sdk"))
    ours = BetaLocalFilesystemMemoryTool(str(tmp_path / "ours"))
    compared = 0
    for command in MEMORY_COMMANDS:
        expected = outcome(partial(sdk.call, command))
        got = outcome(partial(ours.call, command))
        assert got == expected, command
        compared += 1
    assert outcome(sdk.clear_all_memory) == outcome(ours.clear_all_memory)
    assert os.listdir(tmp_path / "ours" / "memories") == []
    print(f"memory tool: {compared} commands, results equal")


def test_async_memory_tool_matches_the_sdk(tmp_path: Path) -> None:
    async def run_all(tool: Any) -> list[tuple[str, Any]]:
        results = []
        for command in MEMORY_COMMANDS:
            try:
                results.append(("ok", await tool.call(command)))
            except ToolError as exc:
                results.append(("error", str(exc)))
        return results

    sdk = asyncio.run(run_all(SdkAsyncMemory(str(tmp_path / "sdk"))))
    ours = asyncio.run(run_all(BetaAsyncLocalFilesystemMemoryTool(str(tmp_path / "ours"))))
    assert ours == sdk


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o777])
def test_memory_directories_are_0700_under_any_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        tool = BetaLocalFilesystemMemoryTool(str(tmp_path / "base"))
        tool.call({"command": "create", "path": "/memories/a/b/c.txt", "file_text": "x"})
    finally:
        os.umask(old)
    for d in (tmp_path / "base", tmp_path / "base/memories", tmp_path / "base/memories/a/b"):
        assert d.stat().st_mode & 0o777 == 0o700, d
    assert (tmp_path / "base/memories/a/b/c.txt").stat().st_mode & 0o777 == 0o600


def test_memory_symlinks_that_stay_inside_work_as_in_the_sdk(tmp_path: Path) -> None:
    tools = {
        "sdk": SdkMemory(str(tmp_path / "sdk")),
        "ours": BetaLocalFilesystemMemoryTool(str(tmp_path / "ours")),
    }
    results = {}
    for name, tool in tools.items():
        mem = tmp_path / name / "memories"
        (mem / "real").mkdir()
        (mem / "real" / "f.txt").write_text("through a link\n")
        os.symlink("real", mem / "alias")  # relative, stays inside
        os.symlink(tmp_path, mem / "out")  # leads outside
        results[name] = [
            outcome(partial(tool.call, {"command": "view", "path": "/memories/alias/f.txt"})),
            outcome(partial(tool.call, {"command": "view", "path": "/memories/out"})),
            outcome(partial(tool.call, {"command": "create", "path": "/memories/out/x", "file_text": "x"})),
        ]
    assert results["ours"] == results["sdk"]
    assert results["ours"][0][0] == "ok"
    assert results["ours"][1] == ("error", "Path /memories/out would escape /memories directory")
    assert not (tmp_path / "x").exists()


# -- the agent toolset -------------------------------------------------------------------------


def build_tree(top: Path) -> None:
    (top / "src").mkdir(parents=True)
    (top / "src" / "main.py").write_text("print('hello')\nprint('world')\n")
    (top / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (top / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (top / "binary.bin").write_bytes(b"\xff\xfe\x00")
    (top / "big.txt").write_text("x" * 100 + "\n" + "short\n")
    (top / "link_in").symlink_to("src")  # relative, stays inside
    (top / "link_out").symlink_to(top.parent / "secret")
    (top.parent / "secret").mkdir(exist_ok=True)
    (top.parent / "secret" / "key").write_text("outside\n")


TOOLSET_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read", {"file_path": "notes.txt"}),
    ("read", {"file_path": "notes.txt", "view_range": [2, 3]}),
    ("read", {"file_path": "notes.txt", "view_range": [2, 0]}),
    ("read", {"file_path": "notes.txt", "view_range": [1]}),
    ("read", {"file_path": "crlf.txt"}),
    ("read", {"file_path": "binary.bin"}),
    ("read", {"file_path": "src"}),
    ("read", {"file_path": "missing.txt"}),
    ("read", {"file_path": "../secret/key"}),
    ("read", {"file_path": "link_out/key"}),
    ("read", {"file_path": "link_in/main.py"}),
    ("read", {"file_path": "big.txt"}),
    ("read", {"file_path": "big.txt", "view_range": [2, 2]}),
    ("read", {"file_path": "big.txt", "view_range": [1, 1]}),
    ("read", {"file_path": "big.txt", "view_range": [1, 2]}),
    ("write", {"file_path": "new/dir/file.txt", "content": "fresh\n"}),
    ("read", {"file_path": "new/dir/file.txt"}),
    ("write", {"file_path": "link_out/planted", "content": "x"}),
    ("write", {"file_path": "../planted", "content": "x"}),
    ("edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}),
    ("edit", {"file_path": "notes.txt", "old_string": "a", "new_string": "A"}),
    ("edit", {"file_path": "notes.txt", "old_string": "a", "new_string": "A", "replace_all": True}),
    ("edit", {"file_path": "notes.txt", "old_string": "zzz", "new_string": "y"}),
    ("edit", {"file_path": "binary.bin", "old_string": "a", "new_string": "b"}),
    ("edit", {"file_path": "big.txt", "old_string": "short", "new_string": "b"}),
    ("edit", {"file_path": "link_out/key", "old_string": "outside", "new_string": "pwned"}),
    ("read", {"file_path": "notes.txt"}),
    ("glob", {"pattern": "/etc/*"}),
    ("glob", {"pattern": "../*"}),
    ("glob", {"pattern": "*.nothing"}),
    ("glob", {"pattern": "src/*.py"}),
    ("glob", {"pattern": "*.py", "path": "src"}),
    ("glob", {"pattern": "*", "path": "../secret"}),
    ("grep", {"pattern": "world", "path": "src/main.py"}),
    ("grep", {"pattern": "nothing-matches-this"}),
    ("grep", {"pattern": "hello", "path": "src"}),
    ("grep", {"pattern": "x", "path": "../secret"}),
]


def call_sync(tool: Any, args: dict[str, Any]) -> tuple[str, Any]:
    async def run() -> Any:
        return await tool.call(args)

    return outcome(lambda: asyncio.run(run()))


def test_agent_toolset_matches_the_sdk_call_by_call(tmp_path: Path) -> None:
    results: dict[str, list[tuple[str, Any]]] = {}
    for name, module in (("sdk", sdk_toolset), ("ours", our_toolset)):
        top = tmp_path / name / "work"
        build_tree(top)
        ctx = module.AgentToolContext(workdir=str(top), max_file_bytes=64)
        tools = {t.name: t for t in module.beta_agent_toolset_20260401(ctx) if t.name != "bash"}
        shown = str(top.resolve())
        results[name] = [
            (kind, value.replace(shown, "<work>") if isinstance(value, str) else value)
            for kind, value in (call_sync(tools[tool], args) for tool, args in TOOLSET_CALLS)
        ]
    for call, sdk, ours in zip(TOOLSET_CALLS, results["sdk"], results["ours"], strict=True):
        assert ours == sdk, call
    assert not (tmp_path / "sdk" / "planted").exists() and not (tmp_path / "ours" / "planted").exists()
    print(f"agent toolset: {len(TOOLSET_CALLS)} calls, results equal")


def test_an_absolute_symlink_that_stays_inside_is_refused_where_the_sdk_follows_it(tmp_path: Path) -> None:
    """The listed difference: RESOLVE_BENEATH refuses every absolute symlink, even one that lands
    inside the workdir, because an absolute target is resolved from the host's /."""
    results = {}
    for name, module in (("sdk", sdk_toolset), ("ours", our_toolset)):
        top = tmp_path / name
        build_tree(top)
        (top / "abs_in").symlink_to(top / "notes.txt")
        ctx = module.AgentToolContext(workdir=str(top))
        (read,) = [t for t in module.beta_agent_toolset_20260401(ctx) if t.name == "read"]
        results[name] = call_sync(read, {"file_path": "abs_in"})
    assert results["sdk"] == ("ok", "alpha\nbeta\ngamma\n")
    assert results["ours"] == ("error", "read: path 'abs_in' is outside the session's working directory")
