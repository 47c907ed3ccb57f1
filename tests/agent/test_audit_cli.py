"""The audit log through ``safefs-agent run``: out of the tools' reach, appended by path to the
file the run opened, written ahead of each call, a line for every refused call, and a last
hash printed for ``audit verify --expect``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agent.cli import main
from agent.loop import CUT_OFF, LONE_SURROGATE
from tests.agent.cli_runs import REPO, cli_env, one_error_line, results
from tests.agent.conftest import AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, Reply, text_reply, tool_reply


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def verify(capsys: Any, path: Path, *options: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(["audit", "verify", str(path), *options])
    return rc, capsys.readouterr().out


def test_the_session_and_audit_directory_is_denied_to_every_tool(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, inline: Any, capsys: Any
) -> None:
    session = ws.path / ".agent" / "run.jsonl"
    audit = ws.path / ".agent" / "run.audit.jsonl"
    messages_api.queue(
        tool_reply(
            "",
            ("w1", "write", {"path": ".agent/run.audit.jsonl", "content": "{}\n"}),
            ("r1", "read", {"path": ".agent/run.jsonl"}),
            ("l1", "list", {"path": ".agent"}),
            ("w2", "write", {"path": ".AGENT/new.jsonl", "content": "{}\n"}),
            ("r2", "read", {"path": "hello.txt"}),
        )
    )
    messages_api.queue(text_reply("done"))
    proc = inline(
        messages_api, "--workspace", str(ws.path), "--session", str(session), "--allow-path", ".agent/", "go"
    )
    assert proc.returncode == 0, proc.stderr
    got = {r.tool_call_id: r for r in results(session)}
    for call_id in ("w1", "r1", "l1"):
        assert got[call_id].is_error and "the run's own session and audit log" in got[call_id].content
    assert not got["r2"].is_error
    assert sorted(os.listdir(ws.path / ".agent")) == ["run.audit.jsonl", "run.jsonl"]
    calls = [e["call_id"] for e in events(audit) if e["event"] == "tool_call"]
    assert calls == ["w1", "r1", "l1", "w2", "r2"]
    rc, out = verify(capsys, audit)
    assert rc == 0 and "chain intact" in out


def test_a_log_replaced_under_the_run_stops_it(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, inline: Any
) -> None:
    # bash is not judged by path rules: in full mode it can swap the log's inode (an atomic
    # rewrite). The next line must not go to the unlinked file.
    session = ws.path / ".agent" / "run.jsonl"
    swap = "cp .agent/run.audit.jsonl copy && mv copy .agent/run.audit.jsonl"
    messages_api.queue(
        tool_reply("", ("b1", "bash", {"command": swap}), ("r1", "read", {"path": "hello.txt"}))
    )
    messages_api.queue(text_reply("done"))
    proc = inline(
        messages_api,
        "--workspace",
        str(ws.path),
        "--session",
        str(session),
        "--mode",
        "full",
        "--sandbox",
        "off",
        "go",
    )
    assert proc.returncode == 1
    assert "was replaced or removed since this run opened it" in one_error_line(proc.stderr)
    assert len(messages_api.requests) == 1  # the run stopped there


def test_decisions_are_written_before_the_call_runs(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, capsys: Any
) -> None:
    """A command that planted a file and was killed with the agent (SIGKILL) has its line."""
    messages_api.queue(tool_reply("", ("b1", "bash", {"command": "touch planted; sleep 30"})))
    session = tmp_path / "s.jsonl"
    audit = tmp_path / "s.audit.jsonl"
    command = ["run", "--workspace", str(ws.path), "--session", str(session), "--mode", "full"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", *command, "--sandbox", "off", "go"],
        cwd=REPO,
        env=cli_env(messages_api),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (ws.path / "planted").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the command never ran"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    lines = [e for e in events(audit) if e.get("call_id") == "b1"]
    assert [(e["event"], e["decision"]) for e in lines] == [("tool_call", "allowed")]
    rc, out = verify(capsys, audit)
    assert rc == 0, out


def test_calls_refused_before_the_hook_have_a_line(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    messages_api.queue(tool_reply("", ("s1", "write", {"path": "notes\ud83d.txt", "content": "x"})))
    messages_api.queue_reply(
        Reply(
            tool_reply("", ("c1", "write", {"path": "main.py", "content": "pri"}), stop_reason="max_tokens"),
            partial_json={"c1": '{"path": "main.py", "content": "pri'},
        )
    )
    messages_api.queue(text_reply("done"))
    session = tmp_path / "s.jsonl"
    proc = inline(messages_api, "--workspace", str(ws.path), "--session", str(session), "go")
    assert proc.returncode == 0, proc.stderr
    lines = {e["call_id"]: e for e in events(tmp_path / "s.audit.jsonl") if e["event"] == "tool_call"}
    assert {k: (v["decision"], v["decided_by"], v["outcome"], v["reason"]) for k, v in lines.items()} == {
        "s1": ("denied", "loop", "not run", LONE_SURROGATE),
        "c1": ("denied", "loop", "not run", CUT_OFF),
    }


def test_the_run_prints_the_last_hash_and_verify_checks_it(
    ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any, capsys: Any
) -> None:
    messages_api.queue(
        tool_reply(
            "", ("r1", "read", {"path": "hello.txt"}), ("w1", "write", {"path": "a.txt", "content": "a"})
        )
    )
    messages_api.queue(text_reply("done"))
    session = tmp_path / "s.jsonl"
    audit = tmp_path / "s.audit.jsonl"
    proc = inline(messages_api, "--workspace", str(ws.path), "--session", str(session), "go")
    assert proc.returncode == 0, proc.stderr
    last = events(audit)[-1]["hash"]
    shown = [line for line in proc.stderr.splitlines() if line.startswith("audit log ")]
    assert shown == [
        f"audit log {audit}: {len(events(audit))} events, last hash {last} "
        f"(check with: safefs-agent audit verify {audit} --expect {last})"
    ]
    assert verify(capsys, audit, "--expect", last)[0] == 0
    # Cut the last two lines (the last call's result and the final model request): the chain
    # is still intact, only the hash kept elsewhere shows what is missing.
    audit.write_text("".join(line + "\n" for line in audit.read_text().splitlines()[:-2]))
    assert verify(capsys, audit)[0] == 0
    rc, out = verify(capsys, audit, "--expect", last)
    assert rc == 1 and f"not the expected {last}: lines were cut off its end" in out
