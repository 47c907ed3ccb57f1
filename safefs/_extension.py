"""The native extensions, loaded once for the whole core (None where they are not built).

- ``native``: ``safefs._native`` (cffi, safefs/fastpath.c through build_ext.py): openat2 and
  renameat2, the C walk, the whole-file read and the small atomic write;
- ``native_read``: ``safefs._native_read`` (safefs/fastread.c): the same read as a plain CPython
  type, for the hottest path.

Without them (no compiler, Windows) every caller takes the portable Python code.
"""

from __future__ import annotations

import importlib
from typing import Any


def _load(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


native: Any = _load("safefs._native")
native_read: Any = _load("safefs._native_read")
