"""macOS: ``sandbox-exec`` with the static deny-by-default profile ``macos.sbpl`` (package data).

UNTESTED: the profile is written against Apple's SBPL and modelled on Codex's and Chrome's, but
this project has never run it, so :func:`safefs.sandbox.make_sandbox` refuses bash on macOS with
:data:`UNTESTED` instead of running commands under it. :class:`MacSandbox` is what it would use.

The profile takes the workspace and temporary directory as parameters. sandbox-exec matches the
paths the kernel reports, which are canonical (``/private/var/...``, not ``/var/...``), so both
are asked of the kernel with ``F_GETPATH`` on the descriptors held, never rebuilt from strings.
Processes are tracked by process group only (no PID namespace on macOS): a job that starts its
own session is not killed at the end.
"""

from __future__ import annotations

import fcntl
import importlib.resources
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence

import safefs
from safefs.sandbox.process import CommandOutcome, run_in_process_group

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
PROFILE = "macos.sbpl"
F_GETPATH = 50  # <sys/fcntl.h>
MAXPATHLEN = 1024
UNTESTED = (
    "the macOS sandbox profile (safefs/sandbox/macos.sbpl) has not been tested on macOS yet, so "
    "commands are not run under it"
)


def profile() -> str:
    """The SBPL profile, as shipped."""
    return importlib.resources.files("safefs.sandbox").joinpath(PROFILE).read_text(encoding="utf-8")


def kernel_path(fd: int) -> str:
    """The canonical path the kernel holds for ``fd`` (macOS ``F_GETPATH``)."""
    raw = fcntl.fcntl(fd, F_GETPATH, bytes(MAXPATHLEN))
    return os.fsdecode(raw.split(b"\0", 1)[0])


def profile_arguments(workspace: str, tmp: str, *, allow_network: bool) -> list[str]:
    return ["-D", f"WORKSPACE={workspace}", "-D", f"TMP={tmp}", "-D", f"NETWORK={int(allow_network)}"]


class MacSandbox:
    def __init__(self, root: safefs.Root, *, allow_network: bool = False) -> None:
        if not os.access(SANDBOX_EXEC, os.X_OK):
            raise OSError(f"{SANDBOX_EXEC} is missing")
        self.root = root
        self.allow_network = allow_network
        self.rules = profile()

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
        workspace = kernel_path(self.root.fileno())
        made = tempfile.mkdtemp(prefix="safefs-sandbox-tmp-")
        try:
            fd = os.open(made, os.O_RDONLY | os.O_DIRECTORY)
            try:
                tmp = kernel_path(fd)
            finally:
                os.close(fd)
            arguments = profile_arguments(workspace, tmp, allow_network=self.allow_network)
            return run_in_process_group(
                [SANDBOX_EXEC, "-p", self.rules, *arguments, *argv],
                cwd=workspace,
                env={**env, "TMPDIR": tmp, "HOME": tmp},
                timeout=timeout,
                output_cap=output_cap,
                cancel=cancel,
            )
        finally:
            shutil.rmtree(made, ignore_errors=True)
