"""The two text helpers every MCP result goes through: undecodable names escaped and taken back
(safefs.workspace.names), and JSON indented without recursion (safefs.workspace.json_text)."""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from safefs.workspace.json_text import dumps_indented
from safefs.workspace.names import from_shown, shown

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30,
)


@given(json_values)
def test_dumps_indented_is_json_dumps_indent_2(value: Any) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_dumps_indented_takes_any_depth() -> None:
    value: list[Any] = []
    for _ in range(5000):
        value = [value]
    # json.loads would recurse too, so the text is compared with what it must be.
    assert dumps_indented(value, indent=0) == "[\n" * 5000 + "[]" + "\n]" * 5000


@given(st.binary(min_size=1, max_size=20).filter(lambda b: b"/" not in b and b"\0" not in b))
def test_every_file_name_is_shown_as_utf8_and_taken_back(raw: bytes) -> None:
    name = os.fsdecode(raw)
    text = shown(name)
    text.encode("utf-8")  # always encodable: valid JSON and UTF-8
    if b"\\x" not in raw:  # a name holding the text \x.. itself is the documented exception
        assert from_shown(text) == name


def test_a_lone_surrogate_is_shown_escaped() -> None:
    assert shown("a\ud800b") == "a\\ud800b"
    assert shown("plain é") == "plain é"
