"""Running one shell command with a deadline and an output cap, and leaving no process behind.

The child leads a new session (so a new process group); on timeout, on the cap, on cancel, and
also after a normal exit, the whole group is killed, so a backgrounded ``sleep &`` does not
outlive the tool call. The leader is only reaped after the group kill: until then its pid (the
group id) cannot be reused, so ``killpg`` never hits an unrelated group.
Not covered: a descendant that starts its own session (``setsid``) leaves the group.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

POLL_SECONDS = 0.05


@dataclass(frozen=True)
class CommandOutcome:
    output: bytes
    returncode: int | None  # None when we killed it (timeout, cap, cancel)
    timed_out: bool = False
    over_cap: bool = False
    cancelled: bool = False


def _leader_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Has the leader exited? Where waitid exists it is left a zombie (WNOWAIT), keeping its
    group id reserved for the kill; elsewhere it is reaped, a small window we accept there."""
    if hasattr(os, "waitid") and hasattr(os, "WNOWAIT"):
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        return info is not None and info.si_pid == proc.pid
    return proc.poll() is not None


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already empty


def run_command(argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout: float,
                output_cap: int, cancel: threading.Event | None = None) -> CommandOutcome:
    """Run ``argv``; stdout and stderr combined, at most ``output_cap`` bytes kept."""
    proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    assert proc.stdout is not None
    output = bytearray()
    timed_out = over_cap = cancelled = False
    deadline = time.monotonic() + timeout
    try:
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            eof = False
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                if cancel is not None and cancel.is_set():
                    cancelled = True
                    break
                if eof:
                    # Output closed; wait (without reaping) for the leader itself to exit.
                    if _leader_exited(proc):
                        break
                    time.sleep(min(remaining, POLL_SECONDS))
                    continue
                if selector.select(min(remaining, POLL_SECONDS)):
                    data = os.read(fd, 65536)
                    if not data:
                        eof = True
                        continue
                    output += data
                    if len(output) > output_cap:
                        over_cap = True
                        break
    finally:
        _kill_group(proc.pid)
        proc.wait()
        proc.stdout.close()
    killed = timed_out or over_cap or cancelled
    return CommandOutcome(bytes(output[:output_cap]), None if killed else proc.returncode,
                          timed_out=timed_out, over_cap=over_cap, cancelled=cancelled)
