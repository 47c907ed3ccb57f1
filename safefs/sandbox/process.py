"""Running one command with a deadline and an output cap, and leaving no process behind.

Two ways, one outcome:

- :func:`supervise` watches a command started by the sandbox launcher as the child of an init
  process, pid 1 of a PID namespace of its own. When the command returns, times out, is
  cancelled, overflows the cap or anything raises, whatever is still running in the namespace is
  listed and init is killed; the kernel then kills every process in the namespace, including
  ``setsid`` and ``set -m`` jobs, which no process-group kill reaches.
- :func:`run_in_process_group`, where there is no such launcher (``--sandbox=off`` without the
  native extension, macOS): the command leads a new session and its process group is killed.
  A descendant that starts its own session leaves the group and is not covered.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

POLL_SECONDS = 0.05
DRAIN_SECONDS = 2.0  # reading what killed writers left in the pipe, at most


@dataclass(frozen=True)
class CommandOutcome:
    output: bytes
    returncode: int | None  # None when we killed it (timeout, cap, cancel) or it never started
    timed_out: bool = False
    over_cap: bool = False
    cancelled: bool = False
    # "pid command" of each process killed at the end; None: unknown (a process group kill)
    killed: tuple[str, ...] | None = None
    setup_error: str | None = None  # the sandbox could not be set up; nothing ran
    notes: tuple[str, ...] = ()  # lines for the end of the result (low disk space)
    layers: str | None = None  # the layers this command got, when more precise than describe()
    set_aside: tuple[tuple[str, str], ...] = ()  # starter files it made: (path, where set aside)


# -- processes of a PID namespace ------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    text = _read(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in text.split()] if text else []


def _describe(pid: int) -> str | None:
    """``"<pid in its namespace> <command line>"``, or None for a zombie or a vanished pid."""
    status = _read(f"/proc/{pid}/status")
    if status is None:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if fields.get("State", "").strip().startswith("Z"):
        return None
    ns_pid = fields.get("NSpid", str(pid)).split()[-1]
    cmdline = " ".join((_read(f"/proc/{pid}/cmdline") or "").replace("\0", " ").split())
    name = cmdline or f"[{fields.get('Name', '?').strip()}]"
    return f"{ns_pid} {name[:60]}"


def descendants(pid: int) -> list[str]:
    """Every live process below ``pid``, described, parents before children."""
    found: list[str] = []
    queue = _children(pid)
    seen: set[int] = set()
    while queue and len(seen) < 4096:
        child = queue.pop(0)
        if child in seen:
            continue
        seen.add(child)
        described = _describe(child)
        if described is not None:
            found.append(described)
        queue.extend(_children(child))
    return found


# -- the launcher's status records -----------------------------------------------------------------

RECORD = struct.Struct("=cBxxi")

SETUP_STAGES = {
    1: "writing the user namespace maps",
    2: "making the mounts private",
    3: "mounting /proc",
    4: "opening the workspace",
    5: "finding the workspace (it was moved or replaced)",
    6: "mounting the workspace for the unprivileged uid (idmapped mount)",
    7: "making .git (and what it names) read-only",
    8: "adding the /proc rule to Landlock",
    9: "starting the command",
    10: "setting resource limits",
    11: "dropping supplementary groups",
    12: "dropping to the unprivileged gid",
    13: "dropping to the unprivileged uid",
    14: "setting no-new-privs",
    15: "entering the Landlock domain",
    16: "setting up stdin/stdout",
    17: "changing to the workspace",
    18: "executing the shell",
    19: "setting the parent-death signal",
    20: "installing the seccomp filter",
    21: "mounting the private tmpfs on /tmp",
    22: "adding the /tmp rule to Landlock",
    23: "joining a fresh session keyring",
}


def _setup_error(stage: int, err: int) -> str:
    return f"{SETUP_STAGES.get(stage, f'stage {stage}')} failed: {os.strerror(err)}"


@dataclass
class _Watch:
    output: bytearray
    cap: int
    status: int | None = None
    error: str | None = None
    init_gone: bool = False
    pending: bytes = b""

    def status_data(self, data: bytes) -> None:
        self.pending += data
        while len(self.pending) >= RECORD.size:
            kind, stage, value = RECORD.unpack_from(self.pending)
            self.pending = self.pending[RECORD.size :]
            if kind == b"E" and self.error is None:
                self.error = _setup_error(stage, value)
            elif kind == b"X" and self.status is None:
                self.status = value


TIMEOUT, CANCEL = "timeout", "cancel"


def _stop_reason(deadline: float, cancel: threading.Event | None) -> str | None:
    if time.monotonic() >= deadline:
        return TIMEOUT
    if cancel is not None and cancel.is_set():
        return CANCEL
    return None


def _wait(deadline: float) -> float:
    """How long one select may block: short, so a cancel is seen promptly."""
    return max(0.0, min(deadline - time.monotonic(), POLL_SECONDS))


def _returncode(wait_status: int) -> int:
    if os.WIFSIGNALED(wait_status):
        return -os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def _drain(fd: int, watch: _Watch, seconds: float) -> None:
    """Read what is left in the pipe until EOF, the cap, or ``seconds``."""
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while len(watch.output) <= watch.cap and time.monotonic() < deadline:
            if not selector.select(max(0.0, deadline - time.monotonic())):
                return
            data = os.read(fd, 65536)
            if not data:
                return
            watch.output += data


def supervise(
    init_pid: int,
    out_fd: int,
    status_fd: int,
    *,
    timeout: float,
    output_cap: int,
    cancel: threading.Event | None = None,
) -> CommandOutcome:
    """Watch the launcher's init (``init_pid``) until its command ends; leave nothing running.

    ``out_fd`` and ``status_fd`` are the read ends of the output and status pipes; they and
    init are owned (closed, killed and reaped) by this call, whatever happens.
    """
    watch = _Watch(bytearray(), output_cap)
    timed_out = over_cap = cancelled = False
    killed: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(out_fd, selectors.EVENT_READ)
            selector.register(status_fd, selectors.EVENT_READ)
            while watch.status is None and watch.error is None and not watch.init_gone:
                stop = _stop_reason(deadline, cancel)
                if stop is not None:
                    timed_out, cancelled = stop == TIMEOUT, stop == CANCEL
                    break
                for key, _ in selector.select(_wait(deadline)):
                    data = os.read(key.fd, 65536)
                    if key.fd == status_fd:
                        if data:
                            watch.status_data(data)
                        else:
                            watch.init_gone = True
                            selector.unregister(status_fd)
                    elif data:
                        watch.output += data
                    else:
                        selector.unregister(out_fd)
                if len(watch.output) > output_cap:
                    over_cap = True
                    break
        if watch.error is None:
            # Everything left is listed before the kill: after it, nothing is left to name.
            killed = descendants(init_pid)
    finally:
        _kill_and_reap(init_pid)
        try:
            if not over_cap:
                _drain(out_fd, watch, DRAIN_SECONDS)
        finally:
            os.close(out_fd)
            os.close(status_fd)
    if watch.error is not None:
        return CommandOutcome(b"", None, setup_error=watch.error)
    stopped = timed_out or over_cap or cancelled
    if not stopped and watch.status is None:
        return CommandOutcome(
            bytes(watch.output[:output_cap]),
            None,
            setup_error="the sandbox's init process ended unexpectedly",
        )
    returncode = None if stopped or watch.status is None else _returncode(watch.status)
    return CommandOutcome(
        bytes(watch.output[:output_cap]),
        returncode,
        timed_out=timed_out,
        over_cap=over_cap or len(watch.output) > output_cap,
        cancelled=cancelled,
        killed=tuple(killed),
    )


def _kill_and_reap(pid: int) -> None:
    """Kill pid 1 of the namespace: the kernel kills the rest, and waitpid returns only once
    they are all gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    while True:
        try:
            os.waitpid(pid, 0)
            return
        except InterruptedError:
            continue
        except ChildProcessError:
            return


def spawn_and_supervise(
    spawn: Callable[[int, int], int], *, timeout: float, output_cap: int, cancel: threading.Event | None
) -> CommandOutcome:
    """Make the pipes, ``spawn(out_write_fd, status_write_fd) -> init pid``, then supervise."""
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    st_r, st_w = os.pipe2(os.O_CLOEXEC)
    pid = None
    try:
        pid = spawn(out_w, st_w)
    finally:
        os.close(out_w)
        os.close(st_w)
        if pid is None:  # spawn raised: nothing was started
            os.close(out_r)
            os.close(st_r)
    # From here supervise owns init and both read ends, whatever happens inside it.
    return supervise(pid, out_r, st_r, timeout=timeout, output_cap=output_cap, cancel=cancel)


# -- without the launcher: a process group ---------------------------------------------------------


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


def run_in_process_group(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    output_cap: int,
    cancel: threading.Event | None = None,
) -> CommandOutcome:
    """Run ``argv`` leading a new session; stdout and stderr combined, at most ``output_cap``
    bytes kept. Output still open once the leader exits (a background job) ends the wait: the
    group is killed then."""
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    output = bytearray()
    timed_out = over_cap = cancelled = False
    deadline = time.monotonic() + timeout
    try:
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                stop = _stop_reason(deadline, cancel)
                if stop is not None:
                    timed_out, cancelled = stop == TIMEOUT, stop == CANCEL
                    break
                if _leader_exited(proc):
                    break
                if selector.select(_wait(deadline)):
                    data = os.read(fd, 65536)
                    if not data:
                        selector.unregister(fd)
                        continue
                    output += data
                    if len(output) > output_cap:
                        over_cap = True
                        break
    finally:
        _kill_group(proc.pid)
        proc.wait()
        watch = _Watch(output, output_cap)
        if not over_cap:
            _drain(proc.stdout.fileno(), watch, DRAIN_SECONDS)
        proc.stdout.close()
    killed = timed_out or over_cap or cancelled
    return CommandOutcome(
        bytes(output[:output_cap]),
        None if killed else proc.returncode,
        timed_out=timed_out,
        over_cap=over_cap,
        cancelled=cancelled,
    )
