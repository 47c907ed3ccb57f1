"""The packages keep their import contract (``import_contract``): the core ``safefs`` stands alone,
and no module reaches into another package's private modules."""

from __future__ import annotations

from pathlib import Path

from tests.project.import_contract import check, is_core, unit

PROJECT = Path(__file__).resolve().parents[2]


def test_the_tree_keeps_the_import_contract() -> None:
    checked, violations = check(PROJECT)
    names = {m.name for m in checked}
    # The scan saw the tree it is meant to see, so an empty report means something.
    assert {
        "safefs._root",
        "safefs.testing",
        "safefs._sys",
        "safefs.sandbox.landlock",
        "safefs.workspace.files",
        "agent.loop",
        "agent.policy.rules",
        "safefs_bench.cli",
        "safefs_bench.strategies",
    } <= names
    assert len(checked) > 50, sorted(names)
    assert not violations, "import contract broken:\n" + "\n".join(map(str, violations))


def test_units() -> None:
    assert is_core("safefs") and is_core("safefs.testing") and is_core("safefs._sys")
    assert not is_core("safefs.sandbox._native") and not is_core("safefs.anthropic.client")
    assert unit("safefs.mcp.server") == "safefs.mcp"
    assert unit("agent.policy.rules") == "agent"


# One planted violation of each kind per line marked "# bad", and allowed imports beside them
# that must not be reported.
PLANTED = {
    "safefs/__init__.py": "from safefs.root import Root\n",
    "safefs/_sys.py": "from __future__ import annotations\nimport os\nimport cffi\n",
    "safefs/root.py": (
        "from safefs import _sys\n"
        "from . import _sys as again\n"
        "from safefs.workspace import files  # bad\n"
        "import agent.loop  # bad\n"
        "import safefs_bench.race  # bad\n"
        "import requests  # bad\n"
        "from .mcp import server  # bad\n"
    ),
    "safefs/testing.py": (
        "import importlib\n"
        "def f():\n"
        "    importlib.import_module('safefs.sandbox')  # bad\n"
        "    from typing import TYPE_CHECKING\n"
        "    if TYPE_CHECKING:\n"
        "        import pathspec  # bad\n"
    ),
    "safefs/sandbox/__init__.py": "",
    "safefs/sandbox/landlock.py": (
        "import importlib\n"
        "import os\n"
        "native = importlib.import_module('safefs.sandbox._native')\n"
        "from . import _native as again\n"
        "from safefs import _sys  # bad\n"
        "from .._paths import split_parent  # bad\n"
        "importlib.import_module('safefs._linux')  # bad\n"
        "os._exit\n"
        "from os import _exit\n"
        "import requests\n"
    ),
    "safefs/mcp/__init__.py": "from safefs.sandbox._native import lib  # bad\n",
    "safefs/mcp/server.py": (
        "from safefs_bench.mcp_client import mcp_session  # bad\nfrom agent import loop  # bad\n"
    ),
    "safefs_bench/__init__.py": "",
    "safefs_bench/race.py": (
        "from safefs.testing import race\n"
        "from safefs.anthropic import shell\n"
        "from safefs import _sys  # bad\n"
    ),
    "agent/__init__.py": "",
    "agent/_private.py": "",
    "agent/policy/__init__.py": "",
    "agent/policy/_rules.py": "",
    "agent/policy/guard.py": "from agent import _private\nfrom ._rules import R\n",
    "agent/tools/__init__.py": "",
    "agent/tools/read.py": (
        "from agent.policy import _rules  # bad\n"
        "from ..policy._rules import R  # bad\n"
        "from safefs.root import _helper  # bad\n"
        "import importlib\n"
        "importlib.import_module('._rules', 'agent.policy')  # bad\n"
        "importlib.import_module(name)\n"
    ),
    "benchmarks/bench_x.py": "import safefs._sys  # bad\nfrom agent import __version__\n",
    "agent/build/lib/agent/stale.py": "from safefs import _sys\n",
}


def test_every_planted_violation_is_reported_with_its_line(tmp_path: Path) -> None:
    expected = set()
    for rel, source in PLANTED.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        expected |= {(rel, n) for n, line in enumerate(source.splitlines(), 1) if line.endswith("# bad")}
    checked, violations = check(tmp_path)
    found = {(str(v.path), v.line) for v in violations}
    assert found == expected, "\n".join(map(str, violations))
    assert "agent.build.lib.agent.stale" not in {m.name for m in checked}  # build output is skipped
    # Each report names the file and line, and what was imported.
    by_place = {(str(v.path), v.line): str(v) for v in violations}
    assert by_place[("safefs/sandbox/landlock.py", 5)].startswith("safefs/sandbox/landlock.py:5: ")
    assert "safefs._sys" in by_place[("safefs/sandbox/landlock.py", 5)]
    assert "third-party" in by_place[("safefs/root.py", 6)]
    assert "safefs._paths.split_parent" in by_place[("safefs/sandbox/landlock.py", 6)]
    assert "the safefs_bench distribution" in by_place[("safefs/mcp/server.py", 1)]
    assert "the agent distribution" in by_place[("safefs/mcp/server.py", 2)]
