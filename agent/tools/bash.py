"""``bash {command}``: a shell command run in the workspace directory, inside a kernel sandbox.

safefs does not confine a shell; the sandbox does (see ``safefs.sandbox``): on Linux, Landlock
limits the command to the workspace, a private temporary directory and the read-only system, a
network namespace takes the network away, rlimits bound it and, when the agent is root, it runs
as an unprivileged uid. Where a required layer is missing the command is refused, never run
unconfined; only ``sandbox="off"`` (``--sandbox=off``) runs it with the agent's rights. The agent
still denies ``bash`` unless an approval policy allows it (see ``agent.policy.approval``).

What the tool guarantees besides: a timeout and a kill cap on the output (both error results),
every process the command started killed when it returns (listed in the result), an environment
built from an allowlist, and at most ``safefs.workspace.limits.MAX_RESULT_CHARS`` characters of
output to the model (its head and tail, the middle cut), the cap every tool result keeps.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, string_schema
from agent.tools.environment import scrub_environment
from safefs.sandbox import AUTO, Refused, Sandbox, SandboxOptions, make_sandbox
from safefs.sandbox.process import CommandOutcome
from safefs.workspace.limits import truncate_middle

DEFAULT_TIMEOUT = 30.0
DEFAULT_OUTPUT_CAP = 1 << 20  # bytes; the command is killed beyond it
KILLED_SHOWN = 10  # processes named in the "killed" line; the rest are counted


def find_shell() -> str:
    """bash where there is one (the tool is named for it), else the POSIX shell."""
    for candidate in ("/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"):
        if os.access(candidate, os.X_OK):
            return candidate
    return "/bin/sh"


DEFAULT_SHELL = find_shell()


def _status_line(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"killed by signal {name}"
    return f"exit status {returncode}"


def killed_line(killed: tuple[str, ...] | None) -> str:
    if killed is None:
        return "killed: the command's process group (a job in a session of its own is not tracked)"
    if not killed:
        return "killed: none (nothing else was running)"
    shown = "; ".join(killed[:KILLED_SHOWN])
    more = f"; and {len(killed) - KILLED_SHOWN} more" if len(killed) > KILLED_SHOWN else ""
    return f"killed {len(killed)} process{'es' if len(killed) > 1 else ''}: {shown}{more}"


class BashTool(Tool):
    name = "bash"
    description = (
        f"Run a command with {os.path.basename(DEFAULT_SHELL)} ({DEFAULT_SHELL} -c) in the "
        "workspace directory, inside a sandbox: only the workspace and $TMPDIR are writable, the "
        "rest of the filesystem outside the system directories is unreachable and there is no "
        "network. Output (stdout and stderr combined) is returned with the exit status; long "
        "output is cut in the middle. Commands are killed after a timeout, and background jobs "
        "are killed when the command returns."
    )
    input_schema = string_schema(command="The shell command to run.")

    def __init__(
        self,
        root: safefs.Root,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        shell: str = DEFAULT_SHELL,
        env_allow: Iterable[str] = (),
        secret_values: Iterable[str] = (),
        base_env: Mapping[str, str] | None = None,
        sandbox: str | Sandbox = AUTO,
        allow_network: bool = False,
        sandbox_options: SandboxOptions | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if output_cap <= 0:
            raise ValueError("output cap must be positive")
        self.root = root
        self.timeout = timeout
        self.output_cap = output_cap
        self.shell = shell
        self.env_allow = frozenset(env_allow)
        self.secret_values = tuple(secret_values)
        self.base_env = base_env
        self.sandbox: Sandbox = (
            make_sandbox(root, sandbox, allow_network=allow_network, options=sandbox_options)
            if isinstance(sandbox, str)
            else sandbox
        )
        #: The layers the commands get, as the last result stated them (for the audit log).
        self.sandbox_layers = self.sandbox.describe()
        #: Asked about each starter file a command made, which its sandbox set aside: given its
        #: path and where it lies now, True puts it back (``--mode full``: the person is asked).
        self.keep_starter: Callable[[str, str], bool] | None = None

    def close(self) -> None:
        self.sandbox.close()

    def child_environment(self) -> dict[str, str]:
        base = os.environ if self.base_env is None else self.base_env
        return scrub_environment(base, allow=self.env_allow, secret_values=self.secret_values)

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        command: str = args["command"]
        if "\0" in command:
            return ToolOutput("command must not contain a NUL character", is_error=True)
        if isinstance(self.sandbox, Refused):
            return ToolOutput(f"bash refused: {self.sandbox.refusal}", is_error=True)
        outcome = self.sandbox.run(
            [self.shell, "-c", command],
            self.child_environment(),
            timeout=self.timeout,
            output_cap=self.output_cap,
            cancel=cancel,
        )
        return self._result(outcome)

    def _kept(self, set_aside: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
        """Each starter file set aside that :attr:`keep_starter` says to keep, put back."""
        restore = getattr(self.sandbox, "restore", None)
        if self.keep_starter is None or restore is None:
            return ()
        kept: list[str] = []
        for path, aside in set_aside:
            if not self.keep_starter(path, aside):
                continue
            try:
                restore(path, aside)
            except OSError as exc:
                kept.append(f"note: {aside} could not be put back as {path}: {exc.strerror or exc}")
                continue
            kept.append(f"note: {aside} put back as {path}, as the person chose")
        return tuple(kept)

    def _result(self, outcome: CommandOutcome) -> ToolOutput:
        if outcome.setup_error is not None:
            return ToolOutput(
                f"bash refused: the sandbox could not be set up "
                f"({outcome.setup_error}); nothing ran\n{self.sandbox_layers}",
                is_error=True,
            )
        if outcome.timed_out:
            status = f"command timed out after {self.timeout:g} s"
        elif outcome.over_cap:
            status = f"command output exceeded {self.output_cap} bytes and it was killed"
        elif outcome.cancelled:
            status = "command cancelled"
        else:
            assert outcome.returncode is not None
            status = _status_line(outcome.returncode)
        failed = outcome.returncode != 0
        text = truncate_middle(outcome.output.decode("utf-8", "replace"))
        if outcome.layers is not None:  # the precise list of what was read-only for it
            self.sandbox_layers = outcome.layers
        layers = self.sandbox_layers
        notes = "".join(f"\n{note}" for note in outcome.notes + self._kept(outcome.set_aside))
        return ToolOutput(
            f"{status}\n{layers}\n{killed_line(outcome.killed)}\n{text}{notes}", is_error=failed
        )
