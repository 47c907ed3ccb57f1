"""``bash {command}``: a shell command run in the workspace directory.

This tool is *not* confined by safefs: the command runs with the user's rights and can read
anything the user can. That is why the agent denies it unless an approval policy allows it
(see ``agent.approval``). What the tool itself guarantees: a timeout and an output cap (both
error results), the process group killed as a whole, and an environment without credentials.

Known gap: ``sh -l`` reads /etc/profile and ~/.profile, so a credential those files export is
set again after the scrub and reaches the command. Keep secrets out of login profiles, or run
the agent as a user whose profile holds none.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, string_schema
from agent.tools.environment import scrub_environment
from agent.tools.process import run_command

DEFAULT_TIMEOUT = 30.0
DEFAULT_OUTPUT_CAP = 1 << 20
DEFAULT_SHELL = "/bin/sh"


def _workspace_cwd(root: safefs.Root) -> str:
    """The directory the root's fd holds, even if its name was moved since the root was opened.

    The child inherits the fd until exec and chdirs through /proc/self/fd before that; where
    there is no /proc we fall back to the path the root was opened with.
    """
    magic = f"/proc/self/fd/{root.fileno()}"
    return magic if os.path.isdir("/proc/self/fd") else root.path


def _status_line(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"killed by signal {name}"
    return f"exit status {returncode}"


class BashTool(Tool):
    name = "bash"
    description = (
        "Run a shell command in the workspace directory. Output (stdout and stderr combined) is "
        "returned with the exit status. Commands are killed after a timeout."
    )
    input_schema = string_schema(command="The shell command to run.")

    def __init__(self, root: safefs.Root, *, timeout: float = DEFAULT_TIMEOUT,
                 output_cap: int = DEFAULT_OUTPUT_CAP, shell: str = DEFAULT_SHELL,
                 env_allow: Iterable[str] = (), secret_values: Iterable[str] = (),
                 base_env: Mapping[str, str] | None = None) -> None:
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

    def child_environment(self) -> dict[str, str]:
        base = os.environ if self.base_env is None else self.base_env
        return scrub_environment(base, allow=self.env_allow, secret_values=self.secret_values)

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        command: str = args["command"]
        if "\0" in command:
            return ToolOutput("command must not contain a NUL character", is_error=True)
        outcome = run_command([self.shell, "-lc", command], cwd=_workspace_cwd(self.root),
                              env=self.child_environment(), timeout=self.timeout,
                              output_cap=self.output_cap, cancel=cancel)
        text = outcome.output.decode("utf-8", "replace")
        if outcome.timed_out:
            return ToolOutput(f"command timed out after {self.timeout:g} s; its process group was "
                              f"killed\n{text}", is_error=True)
        if outcome.over_cap:
            return ToolOutput(f"command output exceeded {self.output_cap} bytes; its process group "
                              f"was killed\n{text}", is_error=True)
        if outcome.cancelled:
            return ToolOutput(f"command cancelled; its process group was killed\n{text}", is_error=True)
        assert outcome.returncode is not None
        return ToolOutput(f"{_status_line(outcome.returncode)}\n{text}",
                          is_error=outcome.returncode != 0)
