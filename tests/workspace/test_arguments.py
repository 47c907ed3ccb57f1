"""The one argument validator: which problem is reported, in which words, and what ``integer``
means. The agent's tools and safefs-mcp both call it; their own tests pin the texts each shows."""

from __future__ import annotations

from typing import Any

import pytest

from safefs.mcp.tools import all_tools
from safefs.workspace.arguments import ArgumentProblem, argument_problem

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "offset": {"type": "integer"},
        "size": {"type": "number"},
        "sortBy": {"type": "string", "enum": ["name", "size"]},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"oldText": {"type": "string"}},
                "required": ["oldText"],
            },
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "args, plain",
    [
        ("a.txt", "input must be a JSON object"),
        ({}, "missing required field 'path'"),
        ({"path": "a", "zz": 1, "yy": 2}, "unexpected field 'zz'"),
        ({"path": 3}, "field 'path' must be of type string"),
        ({"path": "a", "sortBy": "date"}, "field 'sortBy': 'date' is not one of ['name', 'size']"),
        ({"path": "a", "edits": [{"oldText": "x"}, {}]}, "missing required field 'edits/1/oldText'"),
    ],
)
def test_each_problem_is_one_plain_line(args: Any, plain: str) -> None:
    problem = argument_problem(SCHEMA, args)
    assert problem is not None
    assert str(problem) == plain and "\n" not in problem.message


def test_the_problem_nearest_the_top_is_the_one_reported() -> None:
    # Wrong type, unexpected and missing all at once: the missing field is named first.
    problem = argument_problem(SCHEMA, {"offset": "3", "zz": 1})
    assert problem == ArgumentProblem("", "required", "'path' is a required property", field="path")
    problem = argument_problem(SCHEMA, {"path": "a", "offset": "3", "zz": 1})
    assert problem is not None and str(problem) == "unexpected field 'zz'"


@pytest.mark.parametrize(
    "value, ok", [(3, True), (0, True), (2.0, False), (2.5, False), (True, False), ("3", False)]
)
def test_integer_means_an_int_and_never_a_bool(value: object, ok: bool) -> None:
    problem = argument_problem(SCHEMA, {"path": "a", "offset": value})
    assert (problem is None) == ok
    if not ok:
        assert str(problem) == "field 'offset' must be of type integer"


@pytest.mark.parametrize("value, ok", [(3, True), (2.5, True), (True, False), ("3", False)])
def test_number_takes_ints_and_floats_but_not_a_bool(value: object, ok: bool) -> None:
    assert (argument_problem(SCHEMA, {"path": "a", "size": value}) is None) == ok


def test_where_and_message_are_what_the_mcp_server_reports() -> None:
    problem = argument_problem(SCHEMA, {"path": "a", "edits": [{"oldText": 1}]})
    assert problem is not None
    assert (problem.where, problem.keyword, problem.message) == (
        "edits/0/oldText",
        "type",
        "1 is not of type 'string'",
    )


def test_an_empty_call_of_each_mcp_tool_names_its_first_required_field() -> None:
    for tool in all_tools():
        problem = argument_problem(tool.input_schema(), {})
        if tool.required:
            assert str(problem) == f"missing required field {tool.required[0]!r}", tool.name
        else:
            assert problem is None, tool.name
