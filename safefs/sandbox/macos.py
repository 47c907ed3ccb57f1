"""macOS: ``sandbox-exec`` with a generated deny-by-default profile. UNTESTED: written against
Apple's documented SBPL profile language, never run by this project's test suite.

The workspace and a private temporary directory are read-write, the system read-only, and the
network denied. Processes are tracked by process group only (no PID namespace on macOS), so a
job that starts its own session is not killed at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence

import safefs
from safefs.sandbox.process import CommandOutcome, run_in_process_group

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
SYSTEM_READ_ONLY = (
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library",
    "/private/etc",
    "/dev/null",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
)


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile(workspace: str, tmp: str, *, allow_network: bool) -> str:
    """The SBPL profile for one command."""
    read_only = " ".join(f"(subpath {_quote(p)})" for p in SYSTEM_READ_ONLY)
    writable = f"(subpath {_quote(workspace)}) (subpath {_quote(tmp)})"
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-fork)",
        "(allow process-exec)",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow mach-lookup)",
        f'(allow file-read* {read_only} {writable} (literal "/"))',
        f'(allow file-write* {writable} (literal "/dev/null"))',
        f"(deny file-write* (subpath {_quote(os.path.join(workspace, '.git', 'hooks'))}) "
        f"(literal {_quote(os.path.join(workspace, '.git', 'config'))}))",
    ]
    if allow_network:
        lines.append("(allow network*)")
    return "\n".join(lines) + "\n"


class MacSandbox:
    def __init__(self, root: safefs.Root, *, allow_network: bool = False) -> None:
        if not os.access(SANDBOX_EXEC, os.X_OK):
            raise OSError(f"{SANDBOX_EXEC} is missing")
        self.root = root
        self.allow_network = allow_network

    def describe(self) -> str:
        network = "network allowed" if self.allow_network else "no network"
        return f"sandbox: sandbox-exec deny-by-default profile (untested), {network}, process group"

    def close(self) -> None:
        pass

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        timeout: float,
        output_cap: int,
        cancel: threading.Event | None,
    ) -> CommandOutcome:
        workspace = os.path.realpath(self.root.path)
        tmp = os.path.realpath(tempfile.mkdtemp(prefix="safefs-sandbox-tmp-"))
        try:
            rules = profile(workspace, tmp, allow_network=self.allow_network)
            return run_in_process_group(
                [SANDBOX_EXEC, "-p", rules, *argv],
                cwd=workspace,
                env={**env, "TMPDIR": tmp, "HOME": tmp},
                timeout=timeout,
                output_cap=output_cap,
                cancel=cancel,
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
