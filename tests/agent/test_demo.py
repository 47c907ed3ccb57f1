"""safefs-agent demo: runs offline to the end and its verdicts are the ones the defences earn."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from agent.audit import verify
from agent.demo_scenario import FAKE_CREDENTIAL
from agent.messages import ToolResult, loads

ROW = re.compile(r"^\s*(\d+)\s{2}(.+?)\s{2,}(.+?)\s{2,}(Blocked|Detected|Not blocked|Skipped)$")
RACE = re.compile(r"^\s+(\S+)\s+(read|write)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$")


def test_demo_runs_offline_and_reports_each_layer(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("safefs-agent")
    session = tmp_path / "demo-session.jsonl"
    # No key, no base URL, no proxy: the demo must not need the network or the API.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_") and "proxy" not in k.lower()}
    proc = subprocess.run(
        [str(script), "demo", "--race-seconds", "0.5", "--session", str(session)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    print(proc.stdout)
    assert (proc.returncode, proc.stderr) == (0, "")

    verdicts = {m.group(2): m.group(4) for line in proc.stdout.splitlines() if (m := ROW.match(line))}
    for row in (
        "bash exfiltration",
        "absolute path",
        "dot-dot path",
        "symlink read",
        "symlink write",
        "race",
        "host path in errors",
        "bash environment",
        "secret inside workspace",
        ".env read",
        "git hook write",
        "dangling alias write",
        "bash outside workspace",
    ):
        assert verdicts[row] == "Blocked", row
    assert verdicts["audit log tampering"] == "Detected"
    # The demo is honest about what it does not stop.
    assert verdicts["injection in README.md"] == "Not blocked"
    assert "Still not blocked:" in proc.stdout

    races = [RACE.match(line) for line in proc.stdout.splitlines()]
    counts = {(m.group(1), m.group(2)): [int(g) for g in m.groups()[2:]] for m in races if m}
    safe = [key for key in counts if key[0].startswith("safefs")]
    assert {op for _, op in safe} == {"read", "write"}
    for key in safe:
        attempts, inside, refused, escapes = counts[key]
        assert escapes == 0 and inside > 0 and attempts == inside + refused
    assert {("realpath", "read"), ("realpath", "write")} <= set(counts)

    assert f"Session file: {session}" in proc.stdout
    stored = [loads(line) for line in session.read_text().splitlines()[1:]]  # after the header
    errors = [m.content for m in stored if isinstance(m, ToolResult) and m.is_error]
    assert "bash requires an explicit approval policy; --mode full allows it" in errors
    assert "path escapes workspace: 'docs/id_rsa'" in errors
    assert (
        "write to 'notes/alias' (really 'secrets/new/x') denied: path denied by --deny-path "
        "'secrets/'" in errors
    )
    text = session.read_text()
    assert FAKE_CREDENTIAL not in text and "[REDACTED:secret-assignment]" in text

    audit = tmp_path / "demo-session.audit.jsonl"
    assert f"Audit log:    {audit}" in proc.stdout
    assert (
        verify(audit).ok and verify(audit).events == 16
    )  # a decision line per call, a result line per one run
    assert FAKE_CREDENTIAL not in audit.read_text()
