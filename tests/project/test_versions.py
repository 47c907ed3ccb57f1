"""The two distributions are released together: one version, pinned both ways."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import safefs

PROJECT = Path(__file__).resolve().parents[2]


def project_table(pyproject: Path) -> Any:
    with open(pyproject, "rb") as f:
        return tomllib.load(f)["project"]


def pinned(requirements: list[str], name: str) -> str:
    """The version ``name`` (with any extras) is pinned to with ``==`` in ``requirements``."""
    pins = [
        m.group(1)
        for r in requirements
        if (m := re.fullmatch(rf"{re.escape(name)}(?:\[[\w,\s-]*\])?\s*==\s*([\w.]+)", r.strip()))
    ]
    assert len(pins) == 1, (name, requirements)
    return pins[0]


def test_safefs_is_installed_from_this_checkout() -> None:
    assert Path(safefs.__file__).resolve().is_relative_to(PROJECT)


def test_the_agent_distribution_has_the_safefs_version_and_pins_it() -> None:
    agent = project_table(PROJECT / "agent" / "pyproject.toml")
    assert agent["version"] == safefs.__version__
    assert pinned(agent["dependencies"], "safefs") == safefs.__version__


def test_the_agent_extra_pins_the_same_version() -> None:
    root = project_table(PROJECT / "pyproject.toml")
    assert pinned(root["optional-dependencies"]["agent"], "safefs-agent") == safefs.__version__
