"""The README's example runs as printed, unchanged, in a temporary directory this test names."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> str:
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S)
    assert block is not None, "README has no python example"
    return block.group(1)


def test_readme_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the example's relative "workspace" is made here
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example(), "README.md", "exec"), {})
    lines = [line for line in out.getvalue().splitlines() if line]
    assert lines[0] == "hello"
    assert lines[1] == "['today.md'] notes/today.md"
    assert lines[2] == "path escapes workspace: '../../etc/passwd'"
    assert lines[3] in ("openat2", "walk")
    assert (tmp_path / "workspace" / "notes" / "today.md").read_text() == "hello\n"
    assert [p.name for p in tmp_path.iterdir()] == ["workspace"]
    assert str(tmp_path) not in out.getvalue()


def test_the_readme_example_names_no_host_directory() -> None:
    # Run as written, it must work in any directory: no absolute path it would need to exist.
    assert re.findall(r"""["'](/[^"']*)["']""", readme_example()) == []


def test_readme_names_the_commands() -> None:
    text = README.read_text()
    assert "make demo" in text and "make check" in text and "make test" in text
