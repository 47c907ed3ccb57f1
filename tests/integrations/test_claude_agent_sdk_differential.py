"""Claude Code's own Read, Write, Edit, Glob and Grep against the safefs tools, both driven by the
bundled binary through the SDK against the streaming fake Messages API, with the same calls on
twin trees: the same result texts and the same trees afterwards, but for the differences named
in ``DIFFERENCES`` and ``RELEASE_DIFFERENCES`` (each listed in docs/integrations.md).

The original is only ever given paths inside its own twin tree, and runs with its home and
config directory under the test's temp directory."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

import claude_agent_sdk

import safefs
from safefs.integrations.claude_agent_sdk import safefs_options
from tests.integrations.claude_code import MODEL, binary_env, results, run_session
from tests.integrations.fake_anthropic_stream import FakeStreamingMessages
from tests.integrations.support import documented, twin

pytestmark = pytest.mark.slow

ROOT = "<root>"  # where a result names the twin's root, in either implementation

# (tool, arguments): a path argument starting with ROOT is made absolute in each twin.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": f"{ROOT}/a.txt"}),
    ("Read", {"file_path": f"{ROOT}/a.txt", "offset": 2, "limit": 2}),
    ("Read", {"file_path": f"{ROOT}/a.txt", "offset": 4}),
    ("Read", {"file_path": f"{ROOT}/sub/c.py", "limit": 1}),
    ("Read", {"file_path": "sub/c.py"}),
    ("Read", {"file_path": f"{ROOT}/sub/link.txt"}),
    ("Edit", {"file_path": f"{ROOT}/a.txt", "old_string": "beta", "new_string": "B"}),
    ("Edit", {"file_path": f"{ROOT}/a.txt", "old_string": "zzz", "new_string": "y"}),
    ("Edit", {"file_path": f"{ROOT}/a.txt", "old_string": "beta", "new_string": "beta"}),
    ("Edit", {"file_path": f"{ROOT}/a.txt", "old_string": "beta", "new_string": "B", "replace_all": True}),
    ("Edit", {"file_path": f"{ROOT}/a.txt", "old_string": "gamma\n", "new_string": "gamma\ndelta\n"}),
    ("Edit", {"file_path": f"{ROOT}/made.txt", "old_string": "", "new_string": "made\n"}),
    ("Write", {"file_path": f"{ROOT}/sub/c.py", "content": "def beta():\n    return 2\n"}),
    ("Write", {"file_path": f"{ROOT}/new/deep/n.txt", "content": "n\n"}),
    ("Glob", {"pattern": "**/*.txt"}),
    ("Glob", {"pattern": "*.py", "path": f"{ROOT}/sub"}),
    ("Glob", {"pattern": "*.zzz"}),
    ("Grep", {"pattern": "beta"}),
    ("Grep", {"pattern": "alpha|def"}),
    ("Grep", {"pattern": "alpha|def", "path": f"{ROOT}/sub"}),
    ("Read", {"file_path": f"{ROOT}/empty.txt"}),
    ("Read", {"file_path": f"{ROOT}/sub/c.py", "offset": 3}),
    ("Read", {"file_path": f"{ROOT}/sub/c.py", "offset": 2, "limit": 1}),
    ("Grep", {"pattern": "zzz", "output_mode": "count"}),
    ("Grep", {"pattern": "B|beta", "output_mode": "count"}),
    ("Grep", {"pattern": "B", "output_mode": "content"}),
    ("Grep", {"pattern": "B", "output_mode": "content", "-C": 1}),
    ("Grep", {"pattern": "b", "output_mode": "content", "-i": True, "-n": False}),
    ("Grep", {"pattern": "return", "type": "py", "output_mode": "content"}),
    ("Grep", {"pattern": "n", "glob": "*.txt", "path": f"{ROOT}/new"}),
    ("Grep", {"pattern": "zzz"}),
    ("Grep", {"pattern": "zzz", "output_mode": "content"}),
]

# Deliberate differences, by the index of the call: what docs/integrations.md says of each.
DIFFERENCES: dict[int, str] = {}
# Differences of some releases of the original only, by the index of the call: (how the
# original's text of those releases becomes ours, what docs/integrations.md says of it).
# Grep with -C: older binaries name a context line's file by absolute path.
CONTEXT_LINES = next(i for i, (name, args) in enumerate(CALLS) if name == "Grep" and "-C" in args)
RELEASE_DIFFERENCES: dict[int, tuple[Callable[[str], str], str]] = {
    CONTEXT_LINES: (
        lambda text: re.sub(rf"^{re.escape(ROOT)}/", "", text, flags=re.M),
        "name the file of a context line by its absolute path",
    ),
}
# A difference of every Write and Edit that succeeds: the binary's own tools add a note on its
# file-state tracking (in the releases that track it), which the safefs tools do not take part in.
FILE_STATE = " (file state is current in your context — no need to Read it back)"
FILE_STATE_DOC = "do not end with the note that the file state is current"


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): os.readlink(p) if p.is_symlink() else p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_symlink() or p.is_file()
    }


def _make(work: Path) -> None:
    (work / "a.txt").write_text("alpha\nbeta\ngamma\nbeta\n")
    (work / "sub").mkdir()
    (work / "sub" / "c.py").write_text("def beta():\n    return 1\n")
    (work / "sub" / "link.txt").symlink_to("../a.txt")
    (work / "empty.txt").write_text("")
    for age, name in enumerate(("sub/c.py", "sub/link.txt", "empty.txt", "a.txt")):
        os.utime(work / name, (1_700_000_000 + age, 1_700_000_000 + age), follow_symlinks=False)


def _spelled(value: Any, work: Path) -> Any:
    return value.replace(ROOT, str(work)) if isinstance(value, str) else value


def _session(work: Path, calls: list[tuple[str, dict[str, Any]]], drop_in: bool) -> list[tuple[str, bool]]:
    base = work.parent
    named = [
        (f"mcp__safefs__{name}" if drop_in else name, {k: _spelled(v, work) for k, v in args.items()})
        for name, args in calls
    ]
    with FakeStreamingMessages(named, "done") as model:
        env = binary_env(base, model)
        if drop_in:
            root = safefs.Root(work)
            try:
                run_session(safefs_options(root, model=MODEL, env=env, max_turns=60, bash=False))
            finally:
                root.close()
        else:
            options = claude_agent_sdk.ClaudeAgentOptions(
                cwd=str(work),
                model=MODEL,
                env=env,
                max_turns=60,
                allowed_tools=["Read", "Write", "Edit", "Glob", "Grep"],
                permission_mode="dontAsk",
            )
            run_session(options)
    return [(text.replace(str(work), ROOT).replace(FILE_STATE, ""), error) for text, error in results(model)]


def test_the_drop_in_answers_as_claude_code_on_twin_trees(tmp_path: Path) -> None:
    original_work, drop_in_work = twin(tmp_path, "original"), twin(tmp_path, "safefs")
    _make(original_work)
    _make(drop_in_work)
    original = _session(original_work, CALLS, drop_in=False)
    drop_in = _session(drop_in_work, CALLS, drop_in=True)
    assert len(original) == len(drop_in) == len(CALLS)
    unexplained = []
    for i, (call, want, got) in enumerate(zip(CALLS, original, drop_in, strict=True)):
        if i in DIFFERENCES:
            assert got != want, f"call {i} {call} no longer differs: drop the listed difference"
            assert documented(DIFFERENCES[i]), f"docs/integrations.md must list: {DIFFERENCES[i]}"
        elif i in RELEASE_DIFFERENCES and got != want:
            as_ours, doc = RELEASE_DIFFERENCES[i]
            assert got == (as_ours(want[0]), want[1]), f"call {i} {call}: {want!r} != {got!r}"
            assert documented(doc), f"docs/integrations.md must list: {doc}"
        elif got != want:
            unexplained.append(f"{i} {call}:\n  claude code: {want!r}\n  safefs:      {got!r}")
    assert not unexplained, "\n".join(unexplained)
    assert documented(FILE_STATE_DOC)
    assert _tree(drop_in_work) == _tree(original_work)
