"""An agent script written for langchain-community's ``FileManagementToolkit`` runs unchanged
after the import switch, driven by LangChain's own ``AgentExecutor`` with a fake chat model:
every call inside ``root_dir`` returns what the original returns; ``../secret.txt`` is refused
with the original's own text."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain_community.agent_toolkits")

from langchain_community.tools.file_management.utils import INVALID_PATH_TEMPLATE

from tests.integrations.scripts.swap import load
from tests.integrations.support import twin

ORIGINAL = "from langchain_community.agent_toolkits import FileManagementToolkit"
DROP_IN = "from safefs.integrations.langchain import FileManagementToolkit"


def test_the_script_runs_unchanged_after_the_switch(tmp_path: Path) -> None:
    original = load("langchain_agent").run(str(twin(tmp_path, "original")))
    work = twin(tmp_path, "safefs")
    swapped = load("langchain_agent", (ORIGINAL, DROP_IN)).run(str(work))

    assert original[0] == swapped[0] == "all done"
    assert (
        swapped[1][:3]
        == original[1][:3]
        == [
            "File written successfully to notes/today.txt.",
            "buy milk\n",
            "File copied successfully from notes/today.txt to notes/copy.txt.",
        ]
    )
    assert set(swapped[1][3].split("\n")) == set(original[1][3].split("\n")) == {"today.txt", "copy.txt"}
    assert set(swapped[1][4].split("\n")) == set(original[1][4].split("\n"))
    refusal = INVALID_PATH_TEMPLATE.format(arg_name="file_path", value="../secret.txt")
    assert swapped[1][5] == original[1][5] == refusal
    assert (work / "notes" / "copy.txt").read_text() == "buy milk\n"


def test_the_switched_toolkit_hands_out_the_drop_ins(tmp_path: Path) -> None:
    from safefs.integrations import langchain

    module = load("langchain_agent", (ORIGINAL, DROP_IN))
    tools = module.FileManagementToolkit(root_dir=str(tmp_path)).get_tools()
    assert {type(t).__module__ for t in tools} == {langchain.__name__}
