"""Every file tool, the agent's and the MCP server's, answers any input with a result: a hostile
string (lone surrogate, NUL, 600 nested braces, ``a{4294967296}``, 2,000 nested groups, a
backtracking regex, 100,000 characters), a wrong type, a missing or unexpected field. Nothing
raises, and no answer is an internal error."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import safefs
from agent.tools import file_tools
from agent.tools.base import ToolOutput
from safefs.mcp.calls import invalid_arguments, run_validated
from safefs.mcp.directories import Directories
from safefs.mcp.tools import tools_for

HOSTILE = [
    "\ud800",
    "a\ud800b.py",
    "a\0b",
    "{" * 600 + "a" + "}" * 600,
    "{a," * 600 + "b" + "}" * 600,
    "a{4294967296}",
    "(" * 2000 + "a" + ")" * 2000,
    "(\\w+\\s?)+$",
    "*a" * 9 + "Z",
    "/".join(["**"] * 10) + "/x",
    "[[:nope:]]",
    "(a)\\1",
    "x" * 100_000,
    "../outside",
    "/",
    ".",
    "",
    "src/app.py",
    "src",
    "notes.txt",
]
strings = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=30))
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), strings
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(strings, inner, max_size=3),
    max_leaves=8,
)


def value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if kind == "string":
        declared: st.SearchStrategy[Any] = st.sampled_from(schema["enum"]) if "enum" in schema else strings
    elif kind in ("integer", "number"):
        declared = st.integers(-(2**70), 2**70) | st.integers(-3, 3000)
    elif kind == "boolean":
        declared = st.booleans()
    elif kind == "array":
        declared = st.lists(value_for(schema.get("items", {})), max_size=4)
    elif kind == "object":
        declared = arguments(schema)
    else:
        declared = json_values
    return st.one_of(declared, declared, declared, json_values)  # mostly the declared type


def arguments(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    chosen = st.fixed_dictionaries({}, optional={name: value_for(spec) for name, spec in properties.items()})
    extra = st.dictionaries(strings, json_values, max_size=1)
    return st.one_of(chosen, chosen, chosen, st.builds(lambda a, b: {**a, **b}, chosen, extra), json_values)


def workspace(base: Path) -> None:
    (base / "src").mkdir()
    (base / "src" / "app.py").write_text("def f():\n    return 41\n" * 20)
    (base / "notes.txt").write_text("a b c\n" * 50)
    (base / ".gitignore").write_text("*a" * 9 + "Z\nbuild/\n")


AGENT_TOOLS = [tool for tool in file_tools(safefs.Root(tempfile.gettempdir())) if tool.name != "bash"]
MCP_TOOLS = tools_for(read_only=False, allow_delete=True)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def _agent_case(index: int) -> Any:
    tool_class = type(AGENT_TOOLS[index])

    @SETTINGS
    @given(args=arguments(tool_class.input_schema))
    def case(args: Any) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            workspace(Path(scratch))
            with safefs.Root(scratch) as root:
                out = tool_class(root).execute(args)  # type: ignore[call-arg]
        assert isinstance(out, ToolOutput) and isinstance(out.content, str)
        assert "Traceback" not in out.content

    return case


def _mcp_case(index: int) -> Any:
    tool = MCP_TOOLS[index]

    @SETTINGS
    @given(args=arguments(tool.input_schema()))
    def case(args: Any) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            workspace(Path(scratch))
            directories = Directories.open([scratch])
            call = args if isinstance(args, dict) else {"_": args}
            try:
                # In this process, not in the server's forked child: the tool code itself must answer.
                result = invalid_arguments(tool, call) or run_validated(tool, directories, call)
            finally:
                directories.close()
        text = " ".join(str(block.get("text", "")) for block in result["content"])
        assert "internal error" not in text, text[:300]

    return case


for _i, _agent_tool in enumerate(AGENT_TOOLS):
    globals()[f"test_agent_{_agent_tool.name}_answers_any_input"] = _agent_case(_i)
for _i, _mcp_tool in enumerate(MCP_TOOLS):
    globals()[f"test_mcp_{_mcp_tool.name}_answers_any_input"] = _mcp_case(_i)
