"""An agent script written for crewai-tools' file tools runs unchanged after the import switch,
driven by crewAI's own ``Crew`` against an OpenAI-compatible model faked on 127.0.0.1: every
call inside the working directory returns what the originals return, and a path leading out is
refused by both with the original's text."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("crewai_tools")
pytest.importorskip("crewai")

from tests.integrations.fake_http import Call
from tests.integrations.fake_openai_chat import FakeChat
from tests.integrations.scripts.swap import load

ORIGINAL = "from crewai_tools import DirectoryReadTool, FileReadTool, FileWriterTool"
DROP_IN = "from safefs.integrations.crewai import DirectoryReadTool, FileReadTool, FileWriterTool"
SECRET = "outside the workdir\n"

CALLS: list[Call] = [
    ("writer", {"filename": "notes/today.txt", "content": "buy milk\n", "overwrite": True}),
    ("read", {"file_path": "notes/today.txt"}),
    ("list", {"directory": "notes"}),
    ("read", {"file_path": "../secret.txt"}),
    ("writer", {"filename": "planted.txt", "content": "x", "directory": ".."}),
]


def _run(
    tmp_path: Path, name: str, swap: tuple[str, str] | None, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[str]]:
    base = tmp_path / name
    work = base / "work"
    work.mkdir(parents=True)
    (base / "secret.txt").write_text(SECRET)
    monkeypatch.chdir(work)
    with FakeChat(CALLS, "Noted: buy milk.") as model:
        final = load("crewai_agent", swap).run(str(work), model.base_url)
    hidden = [
        text.replace(str(base), "<base>").replace(f"'{name}'", "'<base>'") for text in model.tool_results()
    ]
    return final, hidden


def test_the_script_runs_unchanged_after_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED", "CREWAI_DISABLE_TRACKING"):
        monkeypatch.setenv(variable, "true")
    monkeypatch.setenv("CREWAI_TRACING_ENABLED", "false")
    final_original, original = _run(tmp_path, "original", None, monkeypatch)
    final_swapped, swapped = _run(tmp_path, "safefs", (ORIGINAL, DROP_IN), monkeypatch)

    assert final_original == final_swapped == "Noted: buy milk."
    assert len(original) == len(swapped) == len(CALLS)
    assert swapped == original
    assert swapped[0] == "Content successfully written to notes/today.txt"
    assert swapped[1] == "buy milk\n"
    assert "<base>/work/notes/today.txt" in swapped[2]
    assert swapped[3].startswith("Error: Invalid file path:") and SECRET not in swapped[3]
    assert swapped[4].startswith("Error: Invalid directory:")
    assert (tmp_path / "safefs" / "work" / "notes" / "today.txt").read_text() == "buy milk\n"
    assert not (tmp_path / "safefs" / "planted.txt").exists()
