"""How long every race test lets its attacker run: one setting for the whole suite.

``SAFEFS_RACE_SECONDS`` (default 1.5) is the window of one race; a test that needs a longer one (a
real MCP client over stdio makes fewer calls a second) asks for a multiple of it. ``make check``
shortens it, ``make test-long`` lengthens it.
"""

from __future__ import annotations

import os

RACE_SECONDS = float(os.environ.get("SAFEFS_RACE_SECONDS", "1.5"))
