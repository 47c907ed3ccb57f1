"""Whether the kernel sandbox can run commands here, for the tests that run bash in it."""

from __future__ import annotations

from pathlib import Path

import safefs
from safefs.sandbox import Refused, make_sandbox


def sandbox_refusal(workspace: Path) -> str | None:
    """None when the sandbox can run commands in ``workspace``, else why it cannot."""
    with safefs.Root(workspace) as root:
        box = make_sandbox(root)
        try:
            return box.refusal if isinstance(box, Refused) else None
        finally:
            box.close()
