"""A stateful shell whose every command runs in the kernel sandbox (:mod:`safefs.sandbox`).

The SDK's ``bash`` tool keeps one ``/bin/bash`` process alive across calls, unconfined. Here each
command is a fresh ``bash -c`` in the sandbox, and what a session carries from one command to the
next is carried explicitly: after the command, the shell prints a per-call marker, its exit
status, its working directory and its exported environment; the next command starts in that
directory with that environment. So ``cd`` and ``export`` persist as they do in the SDK's shell;
background jobs do not (the sandbox kills everything a command started when it returns), and
neither do unexported variables, functions and aliases.
"""

from __future__ import annotations

import os
import re
import shlex
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

import safefs
from safefs.sandbox import Refused, Sandbox, make_sandbox

BASH_OUTPUT_LIMIT = 100 * 1024
BASH_DEFAULT_TIMEOUT = 120.0
# What the sandbox lets a command print before it is killed. A shell result holds all of it; each
# tool shapes it (keep_tail: the last BASH_OUTPUT_LIMIT bytes, as SDK 2.15's shell did).
OUTPUT_CAP = 8 * 1024 * 1024
SHELL = "/bin/bash"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# Set by bash itself for every process; carrying them over would only confuse the next one.
_NOT_CARRIED = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})


def default_environment() -> dict[str, str]:
    """The process environment without the runner's ``ANTHROPIC_*`` credentials (the SDK's rule)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


@dataclass(frozen=True)
class ShellResult:
    # Everything the command printed (at most OUTPUT_CAP bytes), ANSI escapes removed, its final
    # newlines kept (a tool shows the text without them).
    output: str
    exit_code: int  # -1 when the shell could not report one (killed, or output cut)
    timed_out: bool = False
    refusal: str | None = None  # the sandbox could not run anything
    cancelled: bool = False  # stopped by the caller's cancel event
    over_cap: bool = False  # killed for printing more than OUTPUT_CAP bytes
    # What the sandbox said of the run: each process killed when it ended ("pid command"; None:
    # the process group was killed), its notes (low disk space, repositories disabled or not), and
    # the layers the command got when more precise than ``describe()``.
    killed: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()
    layers: str | None = None


def keep_tail(text: str, limit: int = BASH_OUTPUT_LIMIT) -> str:
    """``text`` without its final newlines whole when it is at most ``limit`` bytes, else its
    last ``limit`` bytes after a ``[output truncated]`` line."""
    text = text.rstrip("\n")
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) <= limit:
        return text
    return "[output truncated]\n" + raw[-limit:].decode("utf-8", "replace")


def _parse_state(tail: bytes) -> tuple[int, str, dict[str, str]] | None:
    """(exit status, cwd, environment) from what the shell printed after the marker."""
    status, sep, rest = tail.partition(b"\n")
    if not sep:
        return None
    try:
        code = int(status)
    except ValueError:
        return None
    fields = rest.split(b"\0")
    if len(fields) < 2:
        return None
    cwd = os.fsdecode(fields[0])
    env: dict[str, str] = {}
    for item in fields[1:]:
        name, eq, value = item.partition(b"=")
        if eq and name and name.decode("utf-8", "replace") not in _NOT_CARRIED:
            env[os.fsdecode(name)] = os.fsdecode(value)
    return code, cwd, env


class ConfinedShell:
    """One shell session: ``run(command)`` in the sandbox, keeping cwd and exported variables.

    Not safe to share between concurrent callers (as the SDK's ``BashSession``): calls are
    serialised by a lock, so one session's commands run one at a time, in order.
    """

    def __init__(
        self, workdir: safefs.Root, env: Mapping[str, str] | None = None, sandbox: Sandbox | None = None
    ):
        self._root = workdir
        self._initial_env = dict(env) if env is not None else default_environment()
        self._sandbox = sandbox if sandbox is not None else make_sandbox(workdir)
        self._owns_sandbox = sandbox is None
        self._lock = threading.Lock()
        self._closed = False
        self.restart()

    def restart(self) -> None:
        """Back to a fresh shell: the workdir, the initial environment."""
        self._cwd: str | None = None
        self._env = dict(self._initial_env)

    @property
    def closed(self) -> bool:
        return self._closed

    def describe(self) -> str:
        return self._sandbox.describe()

    def _script(self, command: str, marker: str) -> str:
        # A directory inside the workspace is kept relative to it: the sandbox enters the workspace
        # by its descriptor, and its absolute path may pass through directories the sandboxed uid
        # cannot search.
        enter = f"cd -- {shlex.quote(self._cwd)} 2>/dev/null\n" if self._cwd else ""
        # The marker is spelled in two quoted halves so the command's own text can never contain
        # it; only printf reassembles it.
        split = f"'{marker[:8]}''{marker[8:]}'"
        return (
            f'__safefs_top="$(pwd -P)"\n'
            f"{enter}{{ {command}\n}} </dev/null 2>&1\n"
            f"__safefs_status=$?\n"
            f"printf '\\n%s%d\\n' {split} \"$__safefs_status\"\n"
            f'__safefs_here="$(pwd -P)"\n'
            f'case "$__safefs_here" in "$__safefs_top") __safefs_here=. ;; '
            f'"$__safefs_top"/*) __safefs_here="./${{__safefs_here#"$__safefs_top"/}}" ;; esac\n'
            # Builtins and ``command -p``: the command may have changed PATH, or the caller's
            # environment may have none.
            f"printf '%s\\0' \"$__safefs_here\"; command -p env -0\n"
        )

    def run(
        self, command: str, timeout: float = BASH_DEFAULT_TIMEOUT, cancel: threading.Event | None = None
    ) -> ShellResult:
        """Run ``command``; setting ``cancel`` kills it and everything it started at once (the
        session keeps the state of the command before)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("bash session terminated; restart required")
            if isinstance(self._sandbox, Refused):
                return ShellResult("", -1, refusal=self._sandbox.refusal)
            marker = f"__SAFEFS_CMD_{uuid.uuid4().hex}_DONE__"
            outcome = self._sandbox.run(
                [SHELL, "--noprofile", "--norc", "-c", self._script(command, marker)],
                {**self._env, "TERM": "dumb"},
                timeout=timeout,
                output_cap=OUTPUT_CAP,
                cancel=cancel,
            )
            if outcome.setup_error is not None:
                return ShellResult("", -1, refusal=outcome.setup_error)
            if outcome.timed_out:
                self.restart()  # the SDK tears its shell down on a timeout
                return ShellResult(
                    "", -1, timed_out=True, killed=outcome.killed, notes=outcome.notes, layers=outcome.layers
                )
            raw = outcome.output
            at = raw.rfind(marker.encode())
            state = _parse_state(raw[at + len(marker) :]) if at >= 0 else None
            # The newline the script prints before the marker is not the command's.
            body = raw[:at].removesuffix(b"\n") if at >= 0 else raw
            if state is not None:
                code, self._cwd, env = state
                self._env = env
            else:
                # The command ended the shell itself (``exit``): its status is the shell's.
                code = outcome.returncode if outcome.returncode is not None else -1
            return ShellResult(
                _ANSI.sub("", body.decode("utf-8", "replace")),
                -1 if outcome.cancelled or outcome.over_cap else code,
                cancelled=outcome.cancelled,
                over_cap=outcome.over_cap,
                killed=outcome.killed,
                notes=outcome.notes,
                layers=outcome.layers,
            )

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                if self._owns_sandbox:
                    self._sandbox.close()
