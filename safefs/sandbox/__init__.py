"""The kernel sandbox an approved ``bash`` command runs in.

``make_sandbox(root, mode)`` picks one: on Linux :class:`~safefs.sandbox.linux.LinuxSandbox`
(Landlock, namespaces, seccomp, rlimits, an unprivileged uid); on macOS none yet (its
``sandbox-exec`` profile is written but untested, so commands are refused there). It fails
closed: when a required layer is missing the result is a :class:`Refused` sandbox whose ``run``
runs nothing and whose ``refusal`` says why; only ``mode="off"`` runs commands unconfined. Every
sandbox ``describe()``s the layers it applies, for each result and for the audit log.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import safefs
from safefs.sandbox.process import CommandOutcome, run_in_process_group

AUTO = "auto"
OFF = "off"
MODES = (AUTO, OFF)
REFUSED_HINT = "only --sandbox=off runs commands unconfined"
DEFAULT_TMP_SIZE = 512 << 20


@dataclass(frozen=True)
class SandboxOptions:
    """What the operator chose: ``allow_network``; ``allow_old_landlock`` runs commands on a
    kernel whose Landlock (ABI < 3) does not mediate truncate(2); ``tmp_size``, in bytes, of each
    command's private ``/tmp``; ``hidden``: files (paths as the caller spells them, relative to
    the current directory) that a command may neither read, write, rename nor replace when they
    lie in the workspace, with the ``.partial`` files set aside beside them (a run's session
    and audit log)."""

    allow_network: bool = False
    allow_old_landlock: bool = False
    tmp_size: int = DEFAULT_TMP_SIZE
    hidden: tuple[str, ...] = ()


class Sandbox(Protocol):
    def describe(self) -> str:
        """The layers applied, e.g. ``sandbox: landlock abi 7, no network, uid 65534, pid ns``."""

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        timeout: float,
        output_cap: int,
        cancel: threading.Event | None,
    ) -> CommandOutcome:
        """Run ``argv`` confined; nothing it started is left running when this returns."""

    def close(self) -> None:
        """Release what the sandbox holds."""


class Refused:
    """A sandbox that could not be set up: every command is refused with ``refusal``."""

    def __init__(self, reason: str) -> None:
        self.refusal = f"the sandbox is unavailable: {reason}; {REFUSED_HINT}"

    def describe(self) -> str:
        return f"sandbox: unavailable ({self.refusal})"

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        timeout: float,
        output_cap: int,
        cancel: threading.Event | None,
    ) -> CommandOutcome:
        return CommandOutcome(b"", None, setup_error=self.refusal)

    def close(self) -> None:
        pass


class Unconfined:
    """``--sandbox=off``: the command runs with the agent's rights. On Linux it still gets a PID
    namespace of its own where it can, so that nothing it started outlives it."""

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def _pid_namespace(self) -> bool:
        from safefs.sandbox import landlock

        return sys.platform.startswith("linux") and landlock.native is not None

    def describe(self) -> str:
        tracking = "pid ns" if self._pid_namespace() else "process group"
        return f"sandbox: off (unconfined), {tracking}"

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        timeout: float,
        output_cap: int,
        cancel: threading.Event | None,
    ) -> CommandOutcome:
        if self._pid_namespace():
            from safefs.sandbox.linux import spawn_pid_namespace_only

            return spawn_pid_namespace_only(
                argv, env, self.root, timeout=timeout, output_cap=output_cap, cancel=cancel
            )
        magic = f"/proc/self/fd/{self.root.fileno()}"
        cwd = magic if os.path.isdir("/proc/self/fd") else self.root.path
        return run_in_process_group(
            argv, cwd=cwd, env=env, timeout=timeout, output_cap=output_cap, cancel=cancel
        )

    def close(self) -> None:
        pass


def make_sandbox(
    root: safefs.Root,
    mode: str = AUTO,
    *,
    allow_network: bool = False,
    options: SandboxOptions | None = None,
) -> Sandbox:
    """The sandbox for ``mode`` on this platform; a :class:`Refused` one if it cannot be had.
    ``options`` (when given) supersedes ``allow_network``."""
    if mode == OFF:
        return Unconfined(root)
    if mode != AUTO:
        raise ValueError(f"unknown sandbox mode {mode!r}; choose from {', '.join(MODES)}")
    chosen = options or SandboxOptions(allow_network=allow_network)
    try:
        if sys.platform.startswith("linux"):
            from safefs.sandbox.linux import Limits, LinuxSandbox

            return LinuxSandbox(
                root,
                allow_network=chosen.allow_network,
                limits=Limits(tmp_size=chosen.tmp_size),
                allow_old_landlock=chosen.allow_old_landlock,
                hidden=chosen.hidden,
            )
        if sys.platform == "darwin":
            from safefs.sandbox.macos import UNTESTED

            return Refused(UNTESTED)
    except OSError as exc:
        return Refused(str(exc))
    return Refused(f"no kernel sandbox is implemented for {sys.platform}")


def harden_agent_process() -> None:
    """Make this process not dumpable, so no other process of this uid can read its memory or
    ``/proc/<pid>/environ`` (where the model API key is). Linux only; a no-op elsewhere."""
    from safefs.sandbox import landlock

    if landlock.native is not None:
        landlock.native.lib.sbx_set_dumpable(0)


__all__ = [
    "AUTO",
    "DEFAULT_TMP_SIZE",
    "MODES",
    "OFF",
    "Refused",
    "Sandbox",
    "SandboxOptions",
    "Unconfined",
    "harden_agent_process",
    "make_sandbox",
]
