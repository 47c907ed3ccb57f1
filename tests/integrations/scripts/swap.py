"""Run an agent script as written, or with one import line switched: the proof that a script
written for a framework works unchanged after the switch."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).parent


def load(script: str, swap: tuple[str, str] | None = None) -> ModuleType:
    """The module ``scripts/<script>.py``; with ``swap=(old, new)`` the line ``old`` (which must
    occur exactly once, whole) is replaced by ``new`` first, and nothing else changes."""
    source = (HERE / f"{script}.py").read_text()
    name = f"_agent_script_{script}"
    if swap is not None:
        old, new = swap
        lines = source.splitlines(keepends=True)
        hits = [i for i, line in enumerate(lines) if line.rstrip("\n") == old]
        assert len(hits) == 1, f"{old!r} must be one whole line of {script}.py"
        lines[hits[0]] = new + "\n"
        source = "".join(lines)
        name += "_swapped"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(compile(source, str(HERE / f"{script}.py"), "exec"), module.__dict__)
    return module
