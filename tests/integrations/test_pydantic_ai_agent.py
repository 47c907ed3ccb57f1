"""An agent script written for pydantic-ai's ``LocalWorkspace`` runs unchanged after the import
switch, driven by pydantic-ai's own agent loop with a ``FunctionModel``: every call inside the
workdir returns what the original returns; the read of ``../secret.txt`` is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai.workspaces")

from tests.integrations.scripts.swap import load
from tests.integrations.support import twin

ORIGINAL = "from pydantic_ai.capabilities import LocalWorkspace"
DROP_IN = "from safefs.integrations.pydantic_ai import LocalWorkspace"


def test_the_script_runs_unchanged_after_the_switch(tmp_path: Path) -> None:
    original = load("pydantic_ai_agent").run(str(twin(tmp_path, "original")))
    swapped_dir = twin(tmp_path, "safefs")
    swapped = load("pydantic_ai_agent", (ORIGINAL, DROP_IN)).run(str(swapped_dir))

    assert original[0] == swapped[0] == "all done"
    *inside_original, escape_original = original[1]
    *inside_swapped, escape_swapped = swapped[1]
    assert (
        inside_swapped
        == inside_original
        == [
            "wrote notes/today.txt",
            "buy milk\n",
            ["today.txt"],
            "0: buy milk\ndone\n",
        ]
    )
    assert escape_original == "outside the workdir\n"
    assert escape_swapped == "error: PathEscapeError"
    assert (swapped_dir / "notes" / "today.txt").read_text() == "buy milk\n"


def test_the_switched_capability_gives_runs_the_safefs_backend(tmp_path: Path) -> None:
    from safefs.integrations.pydantic_ai import LocalWorkspace, LocalWorkspaceBackend

    module = load("pydantic_ai_agent", (ORIGINAL, DROP_IN))
    assert module.LocalWorkspace is LocalWorkspace
    backend = LocalWorkspace(str(tmp_path)).get_workspace(None, ref=None)
    assert isinstance(backend, LocalWorkspaceBackend)


def test_the_harness_filesystem_script_runs_unchanged_after_the_switch(tmp_path: Path) -> None:
    """pydantic-ai-harness's ``FileSystem`` tools on the drop-in: the same results inside, and a
    read through a symlink leading out refused by both (the harness's own check refuses it before
    the backend is asked; the race test shows where that check loses)."""
    pytest.importorskip("pydantic_ai_harness.filesystem")
    results = []
    for name, swap in (("original", None), ("safefs", (ORIGINAL, DROP_IN))):
        work = twin(tmp_path, name)
        (work / "link").symlink_to("..")
        results.append(load("pydantic_ai_harness_agent", swap).run(str(work)))
    (out_original, returns_original), (out_swapped, returns_swapped) = results
    assert out_original == out_swapped == "all done"
    assert returns_swapped[:4] == returns_original[:4]
    assert "print('hello')" in str(returns_swapped[2])
    assert "app.py" in str(returns_swapped[3])
    assert "outside the workdir" not in str(returns_original[4]) + str(returns_swapped[4])
    assert (tmp_path / "safefs" / "work" / "src" / "app.py").read_text() == "print('hello')\n"
