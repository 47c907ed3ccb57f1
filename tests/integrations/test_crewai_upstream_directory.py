# mypy: allow-untyped-defs, allow-untyped-calls, allow-incomplete-defs
"""crewai-tools' own tests of ``DirectoryReadTool``
(``tests/tools/test_directory_read_tool.py``), with the import switched to
``safefs.integrations.crewai`` and every expected result unchanged.
"""

import pytest

pytest.importorskip("crewai_tools")

from pathlib import Path

from safefs.integrations.crewai import DirectoryReadTool


def test_lists_actual_path_when_descendant_repeats_base_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    base = tmp_path / "workspace"
    repeated = base / base.relative_to(base.anchor)
    repeated.mkdir(parents=True)
    target = repeated / "sentinel.txt"
    target.write_text("content", encoding="utf-8")

    result = DirectoryReadTool()._run(directory=str(base))

    assert result == f"File paths: \n-{target}"
    assert target.exists()
