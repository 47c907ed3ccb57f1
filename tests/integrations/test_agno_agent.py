"""An agent script written for agno's ``FileTools`` runs unchanged after the import switch,
driven by agno's own ``Agent.run`` against an OpenAI-compatible model faked on 127.0.0.1: every
call inside the working directory returns what the original returns, and a path leading out is
refused by both with the original's text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agno.tools.file")
pytest.importorskip("openai")

from tests.integrations.fake_http import Call
from tests.integrations.fake_openai_chat import FakeChat
from tests.integrations.scripts.swap import load

ORIGINAL = "from agno.tools.file import FileTools"
DROP_IN = "from safefs.integrations.agno import FileTools"
SECRET = "outside the workdir\n"

CALLS: list[Call] = [
    ("save_file", {"contents": "buy milk\n", "file_name": "notes/today.txt"}),
    ("read_file", {"file_name": "notes/today.txt"}),
    ("list_files", {"directory": "notes"}),
    ("search_files", {"pattern": "**/*.txt"}),
    ("search_content", {"query": "milk"}),
    ("replace_file_chunk", {"file_name": "notes/today.txt", "start_line": 0, "end_line": 0, "chunk": "oats"}),
    ("read_file_chunk", {"file_name": "notes/today.txt", "start_line": 0, "end_line": 1}),
    ("delete_file", {"file_name": "notes/today.txt"}),
    ("read_file", {"file_name": "../secret.txt"}),
    ("save_file", {"contents": "x", "file_name": "../planted.txt"}),
]


def _run(tmp_path: Path, name: str, swap: tuple[str, str] | None) -> tuple[str, list[str], Any]:
    base = tmp_path / name
    work = base / "work"
    work.mkdir(parents=True)
    (base / "secret.txt").write_text(SECRET)
    with FakeChat(CALLS, "Noted: buy milk.") as model:
        final = load("agno_agent", swap).run(str(work), model.base_url)
    results = [text.replace(str(base), "<base>") for text in model.tool_results()]
    return final, results, model.requests[0]["tools"]


def test_the_script_runs_unchanged_after_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGNO_TELEMETRY", "false")
    final_original, original, schemas_original = _run(tmp_path, "original", None)
    final_swapped, swapped, schemas_swapped = _run(tmp_path, "safefs", (ORIGINAL, DROP_IN))

    assert schemas_swapped == schemas_original, "the model sees the same tools, descriptions, arguments"

    assert final_original == final_swapped == "Noted: buy milk."
    assert len(original) == len(swapped) == len(CALLS)
    assert swapped == original
    assert swapped[0] == "notes/today.txt"
    assert swapped[1] == "buy milk\n"
    assert json.loads(swapped[2]) == ["notes/today.txt"]
    assert json.loads(swapped[3])["files"] == ["notes/today.txt"]
    assert json.loads(swapped[4])["files"][0]["file"] == "notes/today.txt"
    assert swapped[5] == "notes/today.txt"
    assert swapped[6] == "oats\n"
    assert swapped[7] == ""
    assert swapped[8] == "Error reading file" and SECRET not in swapped[8]
    assert swapped[9] == "Error saving file"
    assert not (tmp_path / "safefs" / "work" / "notes" / "today.txt").exists()
    assert not (tmp_path / "safefs" / "planted.txt").exists()
