"""An agent script written for strands-agents-tools' ``file_read``, ``file_write`` and
``editor`` runs unchanged after the import switch, driven by strands' own ``Agent`` against an
OpenAI-compatible model faked on 127.0.0.1: every call inside the working directory returns
what the original returns, and the calls that lead out, which the originals let out (into
their own temporary tree only), are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands_tools.file_read")
pytest.importorskip("openai")

from tests.integrations.fake_http import Call
from tests.integrations.fake_openai_chat import FakeChat
from tests.integrations.scripts.swap import load

ORIGINAL = "from strands_tools import editor, file_read, file_write"
DROP_IN = "from safefs.integrations.strands import editor, file_read, file_write"
SECRET = "outside the workdir\n"

CALLS: list[Call] = [
    ("file_write", {"path": "notes/today.txt", "content": "buy milk\n"}),
    ("file_read", {"path": "notes/today.txt", "mode": "view"}),
    ("editor", {"command": "str_replace", "path": "notes/today.txt", "old_str": "milk", "new_str": "oats"}),
    ("editor", {"command": "view", "path": "notes/today.txt"}),
    ("file_read", {"path": ".", "mode": "find"}),
    ("file_read", {"path": "notes", "mode": "search", "search_pattern": "oats"}),
    ("editor", {"command": "undo_edit", "path": "notes/today.txt"}),
    ("file_read", {"path": "../secret.txt", "mode": "view"}),
    ("file_write", {"path": "../planted.txt", "content": "x"}),
    ("editor", {"command": "create", "path": "notes/../../planted2.txt", "file_text": "x"}),
]
ESCAPES = 3  # the last calls lead out


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content)
    return str(content)


def _run(tmp_path: Path, name: str, swap: tuple[str, str] | None) -> tuple[str, list[str], Any]:
    base = tmp_path / name
    work = base / "work"
    work.mkdir(parents=True)
    (base / "secret.txt").write_text(SECRET)
    with FakeChat(CALLS, "Noted: buy milk.") as model:
        final = load("strands_agent", swap).run(str(work), model.base_url)
    results = [_text(content).replace(str(base), "<base>") for content in model.tool_results()]
    return final, results, model.requests[0]["tools"]


def test_the_script_runs_unchanged_after_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BYPASS_TOOL_CONSENT", "true")
    monkeypatch.delenv("SAFEFS_STRANDS_ROOT", raising=False)
    final_original, original, schemas_original = _run(tmp_path, "original", None)
    final_swapped, swapped, schemas_swapped = _run(tmp_path, "safefs", (ORIGINAL, DROP_IN))

    assert schemas_swapped == schemas_original, "the model sees the same tools, descriptions, arguments"
    assert final_original == final_swapped == "Noted: buy milk."
    assert len(original) == len(swapped) == len(CALLS)
    assert swapped[:-ESCAPES] == original[:-ESCAPES]
    assert swapped[0] == "File write success: File written successfully to notes/today.txt"
    assert swapped[1] == "Content of notes/today.txt:\nbuy milk\n"
    assert "Replaced 1 occurrence" in swapped[2]
    assert swapped[3].endswith("Content: buy oats\n")
    assert swapped[4] == "Found 2 files:\n./notes/today.txt\n./notes/today.txt.bak"
    assert "oats" in swapped[5]
    assert swapped[6] == "Successfully reverted changes to notes/today.txt"
    work = tmp_path / "safefs" / "work"
    assert (work / "notes" / "today.txt").read_text() == "buy milk\n"

    # The originals let the model out; the drop-ins refuse, in each tool's own error shape.
    assert SECRET in original[-3] and (tmp_path / "original" / "planted.txt").exists()
    assert swapped[-3] == "No files found matching pattern(s): ../secret.txt"
    assert swapped[-2] == "Error writing file: path escapes workspace: '../planted.txt'"
    assert swapped[-1] == "Error: path escapes workspace: 'notes/../../planted2.txt'"
    assert not (tmp_path / "safefs" / "planted.txt").exists()
    assert not (tmp_path / "safefs" / "planted2.txt").exists()
