"""An agent script written for deepagents' ``FilesystemBackend`` runs unchanged after the import
switch, driven by deepagents' own ``create_deep_agent`` with langchain-anthropic's
``ChatAnthropic`` talking HTTP to a Messages API faked on 127.0.0.1: every call inside
``root_dir`` returns what the original returns; a read through a symlink leading out
(``escape/``) is refused by both with deepagents' ``ValueError``, which ends the run, and the
drop-in's names no host path."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("deepagents")
pytest.importorskip("langchain_anthropic")

from tests.integrations.fake_anthropic_messages import FakeMessages
from tests.integrations.scripts.swap import load
from tests.integrations.support import twin

ORIGINAL = "from deepagents.backends.filesystem import FilesystemBackend"
DROP_IN = "from safefs.integrations.deepagents import FilesystemBackend"


def _run(tmp_path: Path, name: str, swap: tuple[str, str] | None) -> tuple[str, list[str], Path]:
    work = twin(tmp_path, name)
    (work / "escape").symlink_to("..")
    script = load("deepagents_agent", swap)
    with FakeMessages(script.CALLS, "all done") as model:
        answer = script.run(str(work), model.address)
        results = [str(r) for r in model.tool_results()]
    return answer, results, work


def test_the_script_runs_unchanged_after_the_switch(tmp_path: Path) -> None:
    answer, original, _ = _run(tmp_path, "original", None)
    swapped_answer, swapped, work = _run(tmp_path, "safefs", (ORIGINAL, DROP_IN))
    # Six tool results came back to the model, the same from both; the seventh call ended the run.
    assert len(swapped) == len(original) == 6
    assert swapped == original
    assert "milk" in swapped[1]
    assert "/notes/today.txt" in swapped[4] and "/notes/today.txt" in swapped[5]
    assert (work / "notes" / "today.txt").read_text() == "buy bread\n"
    assert answer.startswith("refused: Path:") and str(tmp_path) in answer  # the original's text
    assert swapped_answer == "refused: Path:/escape/secret.txt outside root directory"
