"""An agent script written for Google ADK's ``LocalEnvironment`` runs unchanged after the import
switch, driven by ADK's own ``InMemoryRunner`` against a Gemini API faked on 127.0.0.1: every
call inside the working directory returns what the original returns; a path leading out gets the
original's own refusal from both, and a command reading outside the working directory reads the
secret under the original and nothing under the drop-in (its commands run in the sandbox)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk.environment")

from tests.integrations.fake_gemini import FakeGemini
from tests.integrations.fake_http import Call
from tests.integrations.scripts.swap import load

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # ADK's "experimental" notices

ORIGINAL = "from google.adk.environment import LocalEnvironment"
DROP_IN = "from safefs.integrations.google_adk import LocalEnvironment"
SECRET = "outside the workdir\n"

CALLS: list[Call] = [
    ("WriteFile", {"path": "notes/today.txt", "content": "buy milk\n"}),
    ("EditFile", {"path": "notes/today.txt", "old_string": "milk", "new_string": "bread"}),
    ("ReadFile", {"path": "notes/today.txt"}),
    ("Execute", {"command": "ls notes && wc -c < notes/today.txt"}),
    ("ReadFile", {"path": "../secret.txt"}),
    ("WriteFile", {"path": "../planted.txt", "content": "x"}),
    ("Execute", {"command": "cat ../secret.txt"}),
]


def _twin(tmp_path: Path, name: str) -> Path:
    base = tmp_path / name
    (base / "work").mkdir(parents=True)
    (base / "secret.txt").write_text(SECRET)
    return base / "work"


def _run(tmp_path: Path, name: str, swap: tuple[str, str] | None) -> tuple[str, list[Any], FakeGemini]:
    work = _twin(tmp_path, name)
    with FakeGemini(CALLS, "all done") as model:
        final, returns = load("google_adk_agent", swap).run(str(work), model.base_url)
    return final, returns, model


def test_the_script_runs_unchanged_after_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "fake-key")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    final_original, original, _ = _run(tmp_path, "original", None)
    final_swapped, swapped, model = _run(tmp_path, "safefs", (ORIGINAL, DROP_IN))

    assert final_original == final_swapped == "all done"
    assert len(original) == len(swapped) == len(CALLS)
    inside = [
        {"status": "ok", "message": "Wrote notes/today.txt"},
        {"status": "ok", "message": "Edited notes/today.txt"},
        {"status": "ok", "content": "     1\tbuy bread\n"},
        {"status": "ok", "stdout": "today.txt\n10\n"},
        {"status": "error", "error": "Path escapes working directory: ../secret.txt"},
        {"status": "error", "error": "Path escapes working directory: ../planted.txt"},
    ]
    assert original[:6] == swapped[:6] == inside
    assert SECRET in original[6]["stdout"]
    assert SECRET not in str(swapped[6]) and swapped[6]["status"] == "error"
    assert (tmp_path / "safefs" / "work" / "notes" / "today.txt").read_text() == "buy bread\n"
    assert not (tmp_path / "safefs" / "planted.txt").exists()
    # The agent's system instruction named the working directory, as the original's does.
    assert str(tmp_path / "safefs" / "work") in str(model.requests[0].get("systemInstruction"))


def test_the_switched_import_is_the_drop_in() -> None:
    from google.adk.environment import LocalEnvironment as Original

    from safefs.integrations.google_adk import LocalEnvironment

    module = load("google_adk_agent", (ORIGINAL, DROP_IN))
    assert module.LocalEnvironment is LocalEnvironment
    assert issubclass(LocalEnvironment, Original)
