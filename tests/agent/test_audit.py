"""The audit log: the hash chain and what breaks it, model requests at the HTTP layer, and a
real run's log holding digests and decisions but never content or the key."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agent.audit import GENESIS, AuditError, AuditLog, entry_hash, verify
from agent.audit_http import audit_hooks, usage_from_body
from agent.cli import main
from agent.loop import run_agent
from agent.messages import AssistantMessage, ToolCall
from agent.models.scripted import ScriptedModelClient
from agent.policy.setup import prepare
from agent.tools import ReadTool, ToolOutput
from tests.agent.conftest import API_KEY, AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, text_reply, tool_reply


def write_log(path: Path, events: int) -> list[str]:
    with AuditLog(path) as log:
        for n in range(events):
            log.record("tool_call", tool="read", call_id=f"c{n}", outcome="ok")
    return path.read_text().splitlines()


def test_an_untouched_log_verifies(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    lines = write_log(log, 5)
    result = verify(log)
    assert (result.ok, result.events) == (True, 5)
    entries = [json.loads(line) for line in lines]
    assert [e["seq"] for e in entries] == [0, 1, 2, 3, 4]
    assert entries[0]["prev"] == GENESIS
    assert all(b["prev"] == a["hash"] for a, b in itertools.pairwise(entries))
    assert all(entry_hash(e) == e["hash"] for e in entries)
    assert result.head == entries[-1]["hash"]


def test_appending_in_a_later_run_continues_the_chain(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    write_log(log, 2)
    lines = write_log(log, 3)
    assert [json.loads(line)["seq"] for line in lines] == [0, 1, 2, 3, 4]
    assert verify(log).ok


def tamper(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    lines = path.read_text().splitlines()
    path.write_text("".join(line + "\n" for line in change(lines)))


def edited(lines: list[str]) -> list[str]:
    lines[2] = lines[2].replace('"outcome":"ok"', '"outcome":"error"')
    return lines


def edited_and_rehashed(lines: list[str]) -> list[str]:
    entry = json.loads(lines[2])
    entry["outcome"] = "error"
    entry["hash"] = entry_hash(entry)
    lines[2] = json.dumps(entry, sort_keys=True, separators=(",", ":"))
    return lines


@pytest.mark.parametrize(
    ("change", "line", "words"),
    [
        (edited, 3, "altered"),
        (edited_and_rehashed, 4, "does not follow the line before it"),
        (lambda ls: ls[:2] + ls[3:], 3, "1 line is missing before it"),
        (lambda ls: ls[:1] + ls[3:], 2, "2 lines are missing before it"),
        (lambda ls: ls[1:], 1, "1 line is missing before it"),
        (lambda ls: [ls[0], ls[2], ls[1], *ls[3:]], 2, "missing before it, or lines were reordered"),
        (lambda ls: [*ls[:3], ls[2], *ls[3:]], 4, "reordered or repeated"),
        (lambda ls: [*ls[:-1], ls[-1][:40]], 5, "not an audit entry"),
    ],
    ids=[
        "edited",
        "edited-and-rehashed",
        "removed",
        "two-removed",
        "first-removed",
        "reordered",
        "repeated",
        "cut-off",
    ],
)
def test_the_first_altered_or_missing_line_is_reported(
    tmp_path: Path, change: Callable[[list[str]], list[str]], line: int, words: str
) -> None:
    log = tmp_path / "a.jsonl"
    write_log(log, 5)
    tamper(log, change)
    result = verify(log)
    assert not result.ok and result.line == line, result
    assert words in str(result.problem)


def test_a_log_with_a_damaged_end_is_not_appended_to(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    write_log(log, 2)
    tamper(log, lambda ls: [ls[0], ls[1].replace("read", "write")])
    with pytest.raises(AuditError, match="last line is not a valid entry"):
        AuditLog(log)


def test_missing_directories_are_made_as_for_the_session(tmp_path: Path) -> None:
    write_log(tmp_path / "new" / "dirs" / "a.jsonl", 1)
    assert verify(tmp_path / "new" / "dirs" / "a.jsonl").ok


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    with AuditLog(tmp_path / "a.jsonl"):
        with pytest.raises(AuditError, match="in use by another run"):
            AuditLog(tmp_path / "a.jsonl")
    with AuditLog(tmp_path / "a.jsonl") as log:  # free again once closed
        log.record("tool_call", tool="read")
    assert verify(tmp_path / "a.jsonl").ok


def test_audit_verify_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "a.jsonl"
    write_log(log, 4)
    assert main(["audit", "verify", str(log)]) == 0
    assert capsys.readouterr().out.startswith(f"{log}: 4 events, chain intact (last hash ")
    tamper(log, lambda ls: ls[:1] + ls[2:])
    assert main(["audit", "verify", str(log)]) == 1
    assert capsys.readouterr().out == (
        f"{log}: line 2: event 2 where 1 was expected: 1 line is missing before it, or lines "
        "were reordered; the 1 events before it are intact\n"
    )
    assert main(["audit", "verify", str(tmp_path / "none")]) == 1
    assert "no audit log at" in capsys.readouterr().err


# -- model requests ------------------------------------------------------------------------------


def test_usage_is_read_from_json_and_from_an_event_stream() -> None:
    assert usage_from_body(b'{"usage": {"input_tokens": 5, "output_tokens": 2}}', "application/json") == {
        "input_tokens": 5,
        "output_tokens": 2,
    }
    stream = (
        b'event: message_start\ndata: {"type": "message_start", "message": {"usage": '
        b'{"input_tokens": 9, "output_tokens": 1}}}\n\nevent: ping\ndata: {}\n\n'
        b'event: message_delta\ndata: {"type": "message_delta", "usage": '
        b'{"output_tokens": 30}}\n\n'
    )
    assert usage_from_body(stream, "text/event-stream") == {"input_tokens": 9, "output_tokens": 30}


def test_http_hooks_record_host_size_digest_and_usage(tmp_path: Path) -> None:
    reply = b'{"usage": {"input_tokens": 3, "output_tokens": 4}, "content": []}'

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=reply, headers={"content-type": "application/json"})

    body = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    with AuditLog(tmp_path / "a.jsonl") as log:
        with httpx2.Client(event_hooks=audit_hooks(log), transport=httpx2.MockTransport(handler)) as client:
            response = client.post(
                "https://api.example.test/v1/messages", content=body, headers={"x-api-key": API_KEY}
            )
            assert response.content == reply  # the reply passes through unchanged
    [entry] = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert entry["event"] == "model_request"
    assert (entry["host"], entry["path"], entry["status"]) == ("api.example.test", "/v1/messages", 200)
    assert entry["bytes"] == len(body)
    assert entry["sha256"] == hashlib.sha256(body).hexdigest()
    assert entry["response_bytes"] == len(reply)
    assert entry["usage"] == {"input_tokens": 3, "output_tokens": 4}
    assert API_KEY not in (tmp_path / "a.jsonl").read_text()


# -- a real run ----------------------------------------------------------------------------------


def test_a_run_logs_every_call_and_request_but_no_content_and_no_key(
    ws: AgentWorkspace,
    messages_api: LoopbackMessagesAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_api.url)
    monkeypatch.setenv("ANTHROPIC_MODEL", "loopback-model")
    (ws.path / ".env").write_text("DB=1\n")
    os.symlink("hello.txt", ws.path / "alias")
    written = "a line of written content\n"
    messages_api.queue(
        tool_reply(
            "",
            ("t1", "read", {"path": "alias"}),
            ("t2", "read", {"path": ".env"}),
            ("t3", "write", {"path": "out/new.txt", "content": written}),
            ("t4", "bash", {"command": "echo hi"}),
        )
    )
    messages_api.queue(text_reply("done"))
    session = tmp_path / "run.jsonl"
    assert main(["run", "--workspace", str(ws.path), "--session", str(session), "go"]) == 0
    capsys.readouterr()
    log = tmp_path / "run.audit.jsonl"
    assert verify(log).ok
    text = log.read_text()
    for content in ("hello from inside", "DB=1", written.strip(), "echo hi", API_KEY, "done"):
        assert content not in text, content
    entries = [json.loads(line) for line in text.splitlines()]
    # Written ahead: each allowed call's decision, then its result.
    assert [(e["event"], e.get("call_id")) for e in entries] == [
        ("run_start", None),
        ("model_request", None),
        ("tool_call", "t1"),
        ("tool_result", "t1"),
        ("tool_call", "t2"),
        ("tool_call", "t3"),
        ("tool_result", "t3"),
        ("tool_call", "t4"),
        ("model_request", None),
    ]
    assert entries[0]["mode"] == "edit"
    calls = merged_calls(entries)
    assert (calls["t1"]["target"], calls["t1"]["outcome"]) == ("hello.txt", "ok")
    assert calls["t1"]["result_sha256"] == hashlib.sha256(b"hello from inside\n").hexdigest()
    assert (calls["t2"]["decision"], calls["t2"]["decided_by"]) == ("denied", "rule:.env")
    assert calls["t3"]["target"] == "out/new.txt" and calls["t3"]["outcome"] == "ok"
    assert (
        calls["t3"]["input_sha256"]
        == hashlib.sha256(
            json.dumps({"content": written, "path": "out/new.txt"}, sort_keys=True).encode()
        ).hexdigest()
    )
    assert (calls["t4"]["decided_by"], calls["t4"]["outcome"]) == ("mode:edit", "denied")
    requests = [e for e in entries if e["event"] == "model_request"]
    assert all(
        r["host"] == "127.0.0.1" and r["status"] == 200 and r["bytes"] > 0 and r["response_bytes"] > 0
        for r in requests
    )
    # The loopback server's usage, read from the reply as it streamed by.
    assert all((r["usage"]["input_tokens"], r["usage"]["output_tokens"]) == (11, 7) for r in requests)
    assert requests[0]["sha256"] != requests[1]["sha256"]


def merged_calls(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each call's ``tool_call`` line with its ``tool_result`` line's fields added."""
    calls: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry["event"] in ("tool_call", "tool_result"):
            calls.setdefault(entry["call_id"], {}).update(entry)
    return calls


class Broken(ReadTool):
    name = "broken"

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        raise RuntimeError("a bug")


def test_every_call_gets_its_outcome_even_unknown_and_raising_ones(
    ws: AgentWorkspace, tmp_path: Path
) -> None:
    log_path = tmp_path / "a.jsonl"
    turn = AssistantMessage(
        "",
        (
            ToolCall("u", "nosuch", {}),
            ToolCall("e", "read", {"path": "missing.txt"}),
            ToolCall("b", "broken", {"path": "hello.txt"}),
        ),
    )
    with AuditLog(log_path) as log:
        permissions = prepare([ReadTool(ws.root), Broken(ws.root)], ws.root, mode="full", audit=log)
        with pytest.raises(RuntimeError, match="a bug"):
            run_agent(
                ScriptedModelClient([turn]),
                permissions.tools,
                prompt="go",
                before_tool_call=permissions.policy,
            )
    calls = merged_calls(list(map(json.loads, log_path.read_text().splitlines())))
    outcomes = {k: (e["decided_by"], e["outcome"]) for k, e in calls.items()}
    assert outcomes == {
        "u": ("mode:full", "unknown tool"),
        "e": ("mode:full", "error"),
        "b": ("mode:full", "raised"),
    }
    assert verify(log_path).ok
