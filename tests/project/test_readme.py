"""The README's example runs as printed, on a real temporary workspace."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_example_runs(tmp_path: Path) -> None:
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S)
    assert block is not None, "README has no python example"
    code = block.group(1).replace("/srv/workspace", str(tmp_path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    lines = [line for line in out.getvalue().splitlines() if line]
    assert lines[0] == "hello"
    assert lines[1] == "['today.md'] notes/today.md"
    assert lines[2] == "path escapes workspace: '../../etc/passwd'"
    assert lines[3] in ("openat2", "walk")
    assert (tmp_path / "notes" / "today.md").read_text() == "hello\n"
    assert str(tmp_path) not in out.getvalue()


def test_readme_names_the_two_commands() -> None:
    text = README.read_text()
    assert "make demo" in text and "make test" in text
