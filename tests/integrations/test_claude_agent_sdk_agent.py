"""The Claude Agent SDK and its bundled Claude Code binary, run against a fake Messages API on
127.0.0.1, with the options of ``safefs_options``: a scripted model reads, edits, greps, globs,
writes and runs a command through the safefs tools, and every escape it tries is refused.

The binary gets a home and a config directory of the test's own (nothing is left in ``$HOME``)
and no network but the fake server. The built-in file and shell tools must not even be offered
to the model: the test reads the tools the binary sent."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

import claude_agent_sdk

import safefs
from safefs.integrations.claude_agent_sdk import BUILT_IN_TOOLS, safefs_options
from tests.integrations.claude_code import MODEL, binary_env, results, run_session
from tests.integrations.fake_anthropic_stream import FakeStreamingMessages
from tests.integrations.support import twin

pytestmark = pytest.mark.slow

SECRET = "outside the workdir"


def test_a_scripted_model_works_through_the_drop_in_and_its_escapes_are_refused(tmp_path: Path) -> None:
    work = twin(tmp_path, "claude")
    base = work.parent
    (work / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text("def beta():\n    return 1\n")
    os.symlink("..", work / "up")  # a link leading out of the workspace
    # A hook in the workspace's own settings, which the binary would run on the host.
    (work / ".claude").mkdir()
    hook = {"hooks": [{"type": "command", "command": f"touch {base}/hooked"}]}
    settings = {"hooks": {event: [{"matcher": "*", **hook}] for event in ("PreToolUse", "SessionStart")}}
    (work / ".claude" / "settings.json").write_text(json.dumps(settings))
    secret = base / "secret.txt"
    tool = "mcp__safefs__{}".format
    inside = str(work / "notes.txt")  # absolute, under the root: as the model is told its cwd
    calls: list[tuple[str, dict[str, Any]]] = [
        (tool("Read"), {"file_path": inside}),
        (tool("Edit"), {"file_path": inside, "old_string": "beta", "new_string": "BETA"}),
        (tool("Grep"), {"pattern": "beta|BETA", "output_mode": "content", "-i": True}),
        (tool("Glob"), {"pattern": "**/*.py"}),
        (tool("Write"), {"file_path": "out/report.txt", "content": "done\n"}),
        (tool("Bash"), {"command": "cat notes.txt && echo ran > ran.txt"}),
        # the escapes
        (tool("Read"), {"file_path": str(secret)}),
        (tool("Read"), {"file_path": "../secret.txt"}),
        (tool("Read"), {"file_path": "up/secret.txt"}),
        (tool("Write"), {"file_path": "up/planted.txt", "content": "x"}),
        (tool("Edit"), {"file_path": "up/secret.txt", "old_string": "outside", "new_string": "EDITED"}),
        (tool("Grep"), {"pattern": "outside", "path": "up"}),
        (tool("Glob"), {"pattern": "*.txt", "path": str(base)}),
        (tool("Bash"), {"command": f"cat {secret}; cat ../secret.txt; echo x > ../planted.txt"}),
    ]
    root = safefs.Root(work)
    try:
        with FakeStreamingMessages(calls, "All done.") as model:
            options = safefs_options(root, model=MODEL, env=binary_env(base, model), max_turns=40)
            messages = run_session(options)
    finally:
        root.close()

    offered = {t["name"] for t in model.requests[0]["tools"]}
    assert not offered & set(BUILT_IN_TOOLS), (
        f"built-in tools offered: {sorted(offered & set(BUILT_IN_TOOLS))}"
    )
    assert {tool(n) for n in ("Read", "Write", "Edit", "Glob", "Grep", "Bash")} <= offered
    assert isinstance(messages[-1], claude_agent_sdk.ResultMessage)
    assert messages[-1].result == "All done."

    got = results(model)
    assert len(got) == len(calls)
    for (name, args), (text, error) in zip(calls, got, strict=True):
        print(f"{name} {args} -> error={error}: {text[:120]!r}")
    work_results, escapes = got[:6], got[6:]
    read, edit, grep, glob, write, bash = work_results
    assert read == ("1\talpha\n2\tbeta\n3\tgamma\n4", False)
    assert edit == (f"The file {inside} has been updated successfully.", False)
    assert grep == ("notes.txt:2:BETA\nsrc/app.py:1:def beta():", False)
    assert glob == ("src/app.py", False)
    assert write == ("File created successfully at: out/report.txt", False)
    assert bash == ("alpha\nBETA\ngamma", False)
    assert (work / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    assert (work / "out" / "report.txt").read_text() == "done\n"
    assert (work / "ran.txt").read_text() == "ran\n"

    for (name, args), (text, error) in zip(calls[6:], escapes, strict=True):
        assert SECRET not in text, f"{name} {args} read the secret"
        assert error, f"{name} {args} was not refused: {text!r}"
    assert secret.read_text() == SECRET + "\n"
    assert not (base / "hooked").exists(), "the workspace's own hook ran"
    assert sorted(p.name for p in base.iterdir()) == ["config", "home", "secret.txt", "work"]


def test_claude_codes_own_tools_allowed_by_name_reach_outside_the_working_directory(tmp_path: Path) -> None:
    """The premise, checked on the installed binary: its built-in tools, allowed by name as the
    SDK's examples allow them, read and write outside ``cwd`` (only inside this test's own temp
    tree). The same calls through the safefs tools are refused above."""
    work = twin(tmp_path, "original")
    base = work.parent
    os.symlink("..", work / "up")
    secret = base / "secret.txt"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("Read", {"file_path": str(secret)}),
        ("Read", {"file_path": str(work / ".." / "secret.txt")}),
        ("Read", {"file_path": str(work / "up" / "secret.txt")}),
        ("Write", {"file_path": str(base / "planted.txt"), "content": "planted\n"}),
    ]
    tools = ["Read", "Write"]
    with FakeStreamingMessages(calls, "done") as model:
        options = claude_agent_sdk.ClaudeAgentOptions(
            cwd=str(work),
            tools=tools,
            allowed_tools=tools,
            permission_mode="dontAsk",
            model=MODEL,
            env=binary_env(base, model),
        )
        run_session(options)
    got = results(model)
    for (name, args), (text, error) in zip(calls, got, strict=True):
        print(f"Claude Code {name} {args['file_path']} -> error={error}: {text[:80]!r}")
    reads_out = sum(SECRET in text for text, _ in got[:3])
    print(f"Claude Code's own tools: {reads_out} of 3 reads outside got the secret")
    assert reads_out > 0, "the built-in Read no longer reaches outside cwd: say so in docs/integrations.md"
    print(f"Claude Code's own Write outside: {'landed' if (base / 'planted.txt').exists() else 'refused'}")
