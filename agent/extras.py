"""Console-script entry points that check their optional dependencies before importing them.

``pip install safefs`` brings the confinement library alone. The agent needs its extra;
started without it, ``safefs-agent`` says in one line which extra to install, rather than failing
with a traceback from deep inside an import. (``safefs-mcp`` checks its own, in ``safefs.mcp.cli``.)
"""

from __future__ import annotations

import importlib.util
import sys

# extra name -> the top-level modules it installs that the command imports
EXTRAS: dict[str, tuple[str, ...]] = {
    "agent": ("anthropic", "pathspec"),
}
# extra name -> how to install it: safefs is on no package index, so from a clone of it.
INSTALL: dict[str, str] = {
    "agent": "in a clone of safefs, pip install . ./agent",
}


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


def require(extra: str, prog: str) -> None:
    """Exit with status 1 and one line on stderr when ``extra`` is not installed."""
    missing = missing_modules(extra)
    if missing:
        sys.stderr.write(
            f"{prog}: error: this command needs the '{extra}' extra "
            f"({', '.join(missing)} not installed): {INSTALL[extra]}\n"
        )
        raise SystemExit(1)


def agent_main() -> int:
    """``safefs-agent``."""
    require("agent", "safefs-agent")
    from agent.cli import main

    return main()
