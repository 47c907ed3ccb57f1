"""The read and write tools under a real attacker: a separate process swapping a directory of
the workspace with a symlink to the outside. Bounded in time; outcomes counted and printed."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import safefs
from agent.tools import ReadTool, WriteTool
from safefs import capabilities
from safefs.testing import RaceCounts, Swapper, run_for
from tests.race_window import RACE_SECONDS

pytestmark = pytest.mark.skipif(not capabilities().renameat2, reason="the attacker needs renameat2")

SECONDS = RACE_SECONDS
INSIDE = "inside content\n"
OUTSIDE = "outside secret\n"


def arena(tmp_path: Path) -> tuple[Path, Path]:
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "d").mkdir(parents=True)
    outside.mkdir()
    (work / "d" / "f").write_text(INSIDE)
    (outside / "f").write_text(OUTSIDE)
    os.symlink(outside, work / "evil")
    return work, outside


def attack(work: Path, attempt: Callable[[], None], label: str, counts: RaceCounts) -> None:
    """Run ``attempt`` for SECONDS while ``d`` is swapped with ``evil``; print and check."""
    with Swapper(str(work / "d"), str(work / "evil")) as swapper:
        run_for(SECONDS, attempt)
    print(f"{label}: {counts} swaps={swapper.swaps}")
    assert counts.escapes == 0
    assert counts.inside > 0


def test_read_tool_never_returns_outside_content(tmp_path: Path) -> None:
    work, _outside = arena(tmp_path)
    counts = RaceCounts()
    with safefs.Root(work) as root:  # the backend the CLI gets
        tool = ReadTool(root)

        def attempt() -> None:
            counts.attempts += 1
            out = tool.execute({"path": "d/f"})
            if OUTSIDE in out.content:
                counts.escapes += 1
            elif out.is_error:
                assert out.content in (
                    "path escapes workspace: 'd/f'",
                    "No such file or directory: 'd/f'",
                    "Not a directory: 'd/f'",
                ), out.content
                counts.refused += 1
            else:
                assert out.content == "     1\t" + INSIDE
                counts.inside += 1

        attack(work, attempt, f"read tool [{root.resolver}]", counts)


def test_write_tool_never_creates_outside(tmp_path: Path) -> None:
    work, outside = arena(tmp_path)
    counts = RaceCounts()
    with safefs.Root(work) as root:  # the backend the CLI gets
        tool = WriteTool(root)

        def attempt() -> None:
            name = f"w{counts.attempts}"
            counts.attempts += 1
            out = tool.execute({"path": f"d/{name}", "content": "x"})
            if (outside / name).exists():
                counts.escapes += 1
                (outside / name).unlink()
            elif out.is_error:
                counts.refused += 1
            else:
                counts.inside += 1

        attack(work, attempt, f"write tool [{root.resolver}]", counts)
    assert sorted(os.listdir(outside)) == ["f"]
    assert (outside / "f").read_text() == OUTSIDE


@pytest.mark.parametrize(
    "tool, args",
    [
        ("list", {"path": ".", "depth": 3}),
        ("glob", {"pattern": "**"}),
        ("grep", {"pattern": "secret|inside"}),
    ],
)
def test_walking_tools_never_list_or_read_outside(tmp_path: Path, tool: str, args: dict[str, object]) -> None:
    from agent.tools import GlobTool, GrepTool, ListTool

    work, outside = arena(tmp_path)
    (outside / "only-outside.txt").write_text(OUTSIDE)
    counts = RaceCounts()
    with safefs.Root(work) as root:
        kinds: dict[str, type[ListTool | GlobTool | GrepTool]] = {
            "list": ListTool,
            "glob": GlobTool,
            "grep": GrepTool,
        }
        runner = kinds[tool](root)

        def attempt() -> None:
            counts.attempts += 1
            out = runner.execute(args)
            if "only-outside" in out.content or OUTSIDE in out.content:
                counts.escapes += 1
            elif out.is_error:
                counts.refused += 1
            else:
                counts.inside += 1

        attack(work, attempt, f"{tool} tool [{root.resolver}]", counts)
