"""A request id is a string or an integer; a message with any other id is refused with -32600
and the server lives on. A ``notifications/cancelled`` naming no possible call is ignored."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from safefs.mcp.directories import Directories
from safefs.mcp.jsonrpc import is_request_id
from safefs.mcp.roots import RootsPolicy
from safefs.mcp.stdio_server import BAD_ID, serve
from safefs.mcp.tools import tools_for
from tests.mcp.raw_stdio import RawServer, call

REFUSED = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": BAD_ID}}


@pytest.mark.parametrize(
    "message",
    [
        call([], "list_directory", {"path": "."}),
        call({}, "list_directory", {"path": "."}),
        call({"a": [1]}, "list_allowed_directories", {}),
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": [], "result": {}},
    ],
    ids=["call-list", "call-object", "call-nested", "ping-bool", "ping-float", "ping-null", "response-list"],
)
def test_an_id_of_another_type_is_refused_and_the_server_lives(
    tmp_path: Path, message: dict[str, Any]
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    with RawServer(str(tmp_path)) as server:
        server.start()
        server.send(message)
        assert server.next() == REFUSED
        assert server.text(7, "read_text_file", {"path": "a.txt"}) == (False, "a\n")
        code, err = server.close()
    assert code == 0 and b"Traceback" not in err, err.decode(errors="replace")


@pytest.mark.parametrize("request_id", [[7], {"id": 7}, True, 7.0, None])
def test_a_cancel_naming_no_possible_call_is_ignored(tmp_path: Path, request_id: object) -> None:
    with RawServer(str(tmp_path)) as server:
        server.start()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
        server.send(cancel, {"jsonrpc": "2.0", "id": "after", "method": "ping"})
        assert server.next() == {"jsonrpc": "2.0", "id": "after", "result": {}}
        code, err = server.close()
    assert code == 0 and b"Traceback" not in err, err.decode(errors="replace")


def test_an_id_already_in_progress_is_refused(tmp_path: Path) -> None:
    """Two calls in progress under one id could not both be answered or cancelled: the second
    is refused. The first is held by an unanswered roots/list."""
    (tmp_path / "a.txt").write_text("a\n")
    with RawServer(str(tmp_path)) as server:
        server.start(roots=[tmp_path.as_uri()])
        server.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        asked = server.next()
        assert asked["method"] == "roots/list"
        server.send(call(5, "read_text_file", {"path": "a.txt"}), call(5, "list_directory", {"path": "."}))
        refused = server.next()
        assert refused["id"] == 5 and refused["error"]["code"] == -32600, refused
        assert "already used by a call in progress" in refused["error"]["message"]
        server.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": tmp_path.as_uri()}]}})
        assert server.next() == {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"content": [{"type": "text", "text": "a\n"}], "structuredContent": {"content": "a\n"}},
        }
        assert server.close()[0] == 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(json_values, min_size=1, max_size=6), cancels=st.lists(json_values, max_size=3))
def test_every_id_gets_its_answer_or_a_refusal(tmp_path: Path, ids: list[Any], cancels: list[Any]) -> None:
    """Whatever the ids and cancels: each call with a string or integer id is answered under that
    id, every other one is refused with id null, in order, and the session ends normally."""
    lines = [
        json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": c}})
        for c in cancels
    ]
    lines += [json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}) for i in ids]
    out = io.BytesIO()
    policy = RootsPolicy(Directories.open([str(tmp_path)]))
    try:
        serve(
            policy,
            tools_for(read_only=True, allow_delete=False),
            io.BytesIO("\n".join(lines).encode() + b"\n"),
            out,
        )
    finally:
        policy.given.close()
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    expected = [{"jsonrpc": "2.0", "id": i, "result": {}} if is_request_id(i) else REFUSED for i in ids]
    assert answers == expected
