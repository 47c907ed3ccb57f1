"""google-adk's own tests of ``LocalEnvironment`` (``tests/unittests/environment/
test_local_environment.py``) and of the environment tools that run on it
(``tests/unittests/tools/environment/test_read_file_tool.py`` and ``test_edit_file_tool.py``, the
tests built on a ``LocalEnvironment``), with the import of ``LocalEnvironment`` switched to
``safefs.integrations.google_adk`` and every expected result unchanged. Run with anyio's pytest
plugin in place of pytest-asyncio.

Two of the edit tool's tests come from a later google-adk than some installed versions: they test
the tool, not the environment, so they run where the installed tool has the rule (checked on the
tool's source) and are skipped elsewhere. Two of ``LocalEnvironment``'s come from a later version
too (a failed write leaves the file as it was): google-adk 2.13's original fails them, the drop-in
passes them (its writes are atomic replacements).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

pytest.importorskip("google.adk.environment")

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.environment import EnvironmentToolset

from safefs.integrations.google_adk import LocalEnvironment

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::UserWarning")]


async def _tool(env: LocalEnvironment, name: str) -> BaseTool:
    """The toolset's tool ``name`` on ``env`` (the tests build ``ReadFileTool(env)`` and
    ``EditFileTool(env)`` from modules private to google-adk, whose names change between versions:
    the toolset builds the same tools)."""
    tools = await EnvironmentToolset(environment=env).get_tools()
    return next(tool for tool in tools if tool.name == name)


def _edit_keeps_bytes() -> bool:
    """Whether the installed edit tool writes back bytes it could not decode (surrogateescape)."""
    module = sys.modules[EnvironmentToolset.__module__]
    source = inspect.getsource(sys.modules[module.EditFileTool.__module__])
    return "surrogateescape" in source


LATER_EDIT_TOOL = pytest.mark.skipif(
    not _edit_keeps_bytes(), reason="the installed EditFileTool predates this rule of google-adk's tests"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(name="env")
async def _env(tmp_path: Path) -> AsyncIterator[LocalEnvironment]:
    """Create and initialize a LocalEnvironment backed by a temp directory."""
    environment = LocalEnvironment(working_dir=tmp_path)
    await environment.initialize()
    yield environment
    await environment.close()


# -- test_local_environment.py --------------------------------------------------------------------


class TestReadFileWriteFile:
    """Verify read_file and write_file accept both str and Path arguments."""

    async def test_write_and_read_with_str(self, env: LocalEnvironment) -> None:
        await env.write_file("hello.txt", "hello world")
        data = await env.read_file("hello.txt")
        assert data == b"hello world"

    async def test_write_and_read_with_path(self, env: LocalEnvironment) -> None:
        await env.write_file(Path("path_obj.txt"), "path content")
        data = await env.read_file(Path("path_obj.txt"))
        assert data == b"path content"

    async def test_write_str_read_path(self, env: LocalEnvironment) -> None:
        await env.write_file("mixed.txt", "mixed")
        data = await env.read_file(Path("mixed.txt"))
        assert data == b"mixed"

    async def test_write_path_read_str(self, env: LocalEnvironment) -> None:
        await env.write_file(Path("mixed2.txt"), "mixed2")
        data = await env.read_file("mixed2.txt")
        assert data == b"mixed2"

    async def test_write_bytes_content(self, env: LocalEnvironment) -> None:
        raw = b"\x00\x01\x02\xff"
        await env.write_file(Path("binary.bin"), raw)
        data = await env.read_file("binary.bin")
        assert data == raw

    async def test_write_preserves_explicit_crlf(self, env: LocalEnvironment) -> None:
        await env.write_file("crlf.txt", "first\r\nsecond\r\n")
        data = await env.read_file("crlf.txt")
        assert data == b"first\r\nsecond\r\n"

    async def test_unencodable_text_does_not_truncate_existing_file(self, env: LocalEnvironment) -> None:
        original = b"keep these bytes\n"
        await env.write_file("existing.txt", original)
        with pytest.raises(UnicodeEncodeError):
            await env.write_file("existing.txt", "replacement \ud800")
        assert await env.read_file("existing.txt") == original

    async def test_invalid_content_does_not_truncate_existing_file(self, env: LocalEnvironment) -> None:
        original = b"keep these bytes\n"
        await env.write_file("existing.txt", original)
        with pytest.raises(TypeError, match="content must be str or bytes"):
            await env.write_file("existing.txt", 123)  # type: ignore[arg-type]
        assert await env.read_file("existing.txt") == original

    async def test_write_creates_parent_dirs(self, env: LocalEnvironment) -> None:
        await env.write_file(Path("sub/dir/file.txt"), "nested")
        data = await env.read_file("sub/dir/file.txt")
        assert data == b"nested"

    async def test_absolute_path_inside_working_dir(self, env: LocalEnvironment) -> None:
        path = env.working_dir / "absolute.txt"
        await env.write_file(path, "absolute")
        data = await env.read_file(path)
        assert data == b"absolute"

    async def test_rejects_relative_path_escape(self, env: LocalEnvironment) -> None:
        outside = env.working_dir.parent / "outside.txt"
        outside.write_text("secret", encoding="utf-8")
        with pytest.raises(ValueError, match="escapes working directory"):
            await env.read_file(Path("..") / outside.name)
        with pytest.raises(ValueError, match="escapes working directory"):
            await env.write_file(Path("..") / "write-outside.txt", "nope")
        assert not (env.working_dir.parent / "write-outside.txt").exists()

    async def test_rejects_absolute_path_outside_working_dir(self, env: LocalEnvironment) -> None:
        outside = env.working_dir.parent / "outside-absolute.txt"
        outside.write_text("secret", encoding="utf-8")
        with pytest.raises(ValueError, match="escapes working directory"):
            await env.read_file(outside)

    async def test_read_nonexistent_raises(self, env: LocalEnvironment) -> None:
        with pytest.raises(FileNotFoundError):
            await env.read_file(Path("does_not_exist.txt"))


class TestExecuteTimeout:
    """Timeout and cancellation must reach the whole process tree."""

    _HEARTBEAT = "while true; do echo x >> beat; sleep 0.05; done\n"
    _COMMAND = "sh heartbeat.sh & sleep 60"

    @pytest.fixture(name="spawning_command")
    def _spawning_command(self, env: LocalEnvironment) -> str:
        (env.working_dir / "heartbeat.sh").write_text(self._HEARTBEAT)
        return self._COMMAND

    @staticmethod
    async def _wait_for_beat(env: LocalEnvironment) -> Path:
        beat = env.working_dir / "beat"
        for _ in range(200):
            if beat.exists() and beat.stat().st_size:
                return beat
            await asyncio.sleep(0.05)
        pytest.fail("the background command never started")

    @staticmethod
    async def _assert_stopped(beat: Path) -> None:
        before = beat.stat().st_size
        await asyncio.sleep(0.5)
        size = beat.stat().st_size
        assert size == before, f"still running: {before} -> {size} bytes"

    @pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX process groups")
    async def test_timeout_returns_and_reaps_descendants(
        self, env: LocalEnvironment, spawning_command: str
    ) -> None:
        try:
            result = await asyncio.wait_for(env.execute(spawning_command, timeout=0.5), timeout=30)
        except TimeoutError:
            pytest.fail("execute() hung well past its own 0.5s deadline")
        assert result.timed_out
        await self._assert_stopped(env.working_dir / "beat")

    @pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX process groups")
    async def test_cancellation_reaps_descendants(self, env: LocalEnvironment, spawning_command: str) -> None:
        task = asyncio.create_task(env.execute(spawning_command))
        beat = await self._wait_for_beat(env)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=30)
        await self._assert_stopped(beat)


# -- test_read_file_tool.py (the tests on a LocalEnvironment) -------------------------------------


class TestReadFileTool:
    async def test_read_file_with_line_range_returns_selected_lines(self, env: LocalEnvironment) -> None:
        await env.write_file("sample.txt", "line1\nline2\nline3\n")
        tool = await _tool(env, "ReadFile")
        result = await tool.run_async(
            args={"path": "sample.txt", "start_line": 2, "end_line": 3},
            tool_context=None,  # type: ignore[arg-type]
        )
        assert result == {
            "status": "ok",
            "content": "     2\tline2\n     3\tline3\n",
            "total_lines": 3,
        }

    async def test_read_file_with_line_range_missing_file_returns_error(self, env: LocalEnvironment) -> None:
        tool = await _tool(env, "ReadFile")
        result = await tool.run_async(
            args={"path": "missing.txt", "start_line": 2},
            tool_context=None,  # type: ignore[arg-type]
        )
        assert result == {"status": "error", "error": "File not found: missing.txt"}

    async def test_read_file_rejects_non_integer_end_line(self, env: LocalEnvironment) -> None:
        await env.write_file("sample.txt", "line1\nline2\n")
        marker = env.working_dir / "marker.txt"
        injected_end_line = f"1'; touch {marker}; echo '"
        tool = await _tool(env, "ReadFile")
        result = await tool.run_async(
            args={"path": "sample.txt", "end_line": injected_end_line},
            tool_context=None,  # type: ignore[arg-type]
        )
        assert result == {"status": "error", "error": "`end_line` must be an integer if provided."}
        assert not marker.exists()

    async def test_read_file_rejects_boolean_line_numbers(self, env: LocalEnvironment) -> None:
        await env.write_file("sample.txt", "line1\nline2\n")
        tool = await _tool(env, "ReadFile")
        res_start = await tool.run_async(
            args={"path": "sample.txt", "start_line": True},
            tool_context=None,  # type: ignore[arg-type]
        )
        res_end = await tool.run_async(
            args={"path": "sample.txt", "end_line": False},
            tool_context=None,  # type: ignore[arg-type]
        )
        assert res_start == {"status": "error", "error": "`start_line` must be an integer if provided."}
        assert res_end == {"status": "error", "error": "`end_line` must be an integer if provided."}


# -- test_edit_file_tool.py -----------------------------------------------------------------------


class TestEditFileTool:
    async def _edit(self, env: LocalEnvironment, old: str, new: str) -> dict[str, object]:
        args = {"path": "test.txt", "old_string": old, "new_string": new}
        tool = await _tool(env, "EditFile")
        result: dict[str, object] = await tool.run_async(args=args, tool_context=None)  # type: ignore[arg-type]
        return result

    async def test_edit_file_handles_line_breaks_linux_file_windows_search(
        self, env: LocalEnvironment
    ) -> None:
        await env.write_file("test.txt", "line1\nline2\nline3")
        result = await self._edit(env, "line1\r\nline2", "line1_replaced\nline2_replaced")
        assert result["status"] == "ok"
        assert await env.read_file("test.txt") == b"line1_replaced\nline2_replaced\nline3"

    async def test_edit_file_handles_line_breaks_windows_file_linux_search(
        self, env: LocalEnvironment
    ) -> None:
        await env.write_file("test.txt", "line1\r\nline2\r\nline3")
        result = await self._edit(env, "line1\nline2", "line1_replaced\r\nline2_replaced")
        assert result["status"] == "ok"
        assert await env.read_file("test.txt") == b"line1_replaced\r\nline2_replaced\r\nline3"

    async def test_edit_file_fails_on_multiple_matches(self, env: LocalEnvironment) -> None:
        await env.write_file("test.txt", "line1\nline2\nline1\nline2")
        result = await self._edit(env, "line1\nline2", "replaced")
        assert result["status"] == "error"
        assert "appears 2 times" in str(result["error"])

    async def test_edit_file_exact_match_works(self, env: LocalEnvironment) -> None:
        await env.write_file("test.txt", "line1\nline2\nline3")
        result = await self._edit(env, "line1\nline2", "replaced")
        assert result["status"] == "ok"
        assert await env.read_file("test.txt") == b"replaced\nline3"

    async def test_edit_file_handles_special_regex_chars(self, env: LocalEnvironment) -> None:
        await env.write_file("test.txt", "line1.content\nline2")
        result = await self._edit(env, "line1.content", "replaced")
        assert result["status"] == "ok"
        assert await env.read_file("test.txt") == b"replaced\nline2"

    @LATER_EDIT_TOOL
    async def test_edit_file_preserves_non_utf8_bytes(self, env: LocalEnvironment) -> None:
        tool = await _tool(env, "EditFile")
        await env.write_file("notes.py", b"# header \xe9\nOLD\n")
        args = {"path": "notes.py", "old_string": "OLD", "new_string": "NEW"}
        result = await tool.run_async(args=args, tool_context=None)  # type: ignore[arg-type]
        assert result["status"] == "ok"
        assert await env.read_file("notes.py") == b"# header \xe9\nNEW\n"

    @LATER_EDIT_TOOL
    async def test_edit_file_reports_unencodable_new_string(self, env: LocalEnvironment) -> None:
        tool = await _tool(env, "EditFile")
        original = b"# header \xe9\nOLD\n"
        await env.write_file("notes.py", original)
        args = {"path": "notes.py", "old_string": "OLD", "new_string": "\ud800"}
        result = await tool.run_async(args=args, tool_context=None)  # type: ignore[arg-type]
        assert result["status"] == "error"
        assert await env.read_file("notes.py") == original
