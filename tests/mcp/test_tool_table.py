"""The MCP tool table without a server: which tools each flag set lists, and the paths each call
names (what a policy judges before a call runs)."""

from __future__ import annotations

import pytest

from safefs.mcp.tool import McpTool
from safefs.mcp.tools import all_tools, target_paths, tools_for


def test_every_tool_names_its_path_arguments() -> None:
    for tool in all_tools():
        declared = {
            name
            for name, spec in tool.properties.items()
            if spec.get("type") == "string" and name in ("path", "source", "destination")
        }
        assert declared <= set(tool.path_args), tool.name


@pytest.mark.parametrize(
    "name, args, paths",
    [
        ("read_text_file", {"path": "a.txt", "head": 3}, ["a.txt"]),
        ("read_multiple_files", {"paths": ["a", "/w/b"]}, ["a", "/w/b"]),
        ("move_file", {"source": "a", "destination": "b/c"}, ["a", "b/c"]),
        ("search_files", {"path": ".", "pattern": "**/*.py"}, ["."]),
        ("list_allowed_directories", {}, []),
    ],
)
def test_target_paths(name: str, args: dict[str, object], paths: list[str]) -> None:
    tool = {t.name: t for t in all_tools()}[name]
    assert target_paths(tool, args) == paths


def test_flags_select_the_tools() -> None:
    names = {t.name for t in tools_for(read_only=False, allow_delete=False)}
    assert "delete_file" not in names and "write_file" in names
    assert "delete_file" in {t.name for t in tools_for(read_only=False, allow_delete=True)}
    read_only = tools_for(read_only=True, allow_delete=True)
    assert read_only and all(t.read_only for t in read_only)


def test_a_tool_is_built_with_keywords_only() -> None:
    fields = {
        "name": "t",
        "title": "T",
        "description": "d",
        "properties": {},
        "annotations": {},
        "run": print,
    }
    with pytest.raises(TypeError):
        McpTool(*fields.values())  # type: ignore[call-arg]
    tool = McpTool(**fields)  # type: ignore[arg-type]
    assert tool.output_schema is not None and tool.output_schema["properties"] == {
        "content": {"type": "string"}
    }
