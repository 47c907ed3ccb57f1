"""Why no cgroup bounds a command's memory, processes and CPU: the sandbox line names the reason.

A per-command cgroup v2 (``memory.max``, ``pids.max``, ``cpu.max``) needs a cgroup v2 hierarchy
with those controllers available where the agent runs. This module finds out whether that is so
and says what is missing; creating the cgroups is not implemented yet, so memory stays bounded
per process only (the address-space rlimit times the process limit).
"""

from __future__ import annotations

REQUIRED = ("memory", "pids", "cpu")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _cgroup2_mount(mountinfo: str) -> str | None:
    for line in mountinfo.splitlines():
        fields = line.split(" - ", 1)
        if len(fields) == 2 and fields[1].split(" ", 1)[0] == "cgroup2":
            return fields[0].split()[4]
    return None


def _own_cgroup(cgroups: str) -> str | None:
    for line in cgroups.splitlines():
        if line.startswith("0::"):
            return line[3:]
    return None


def unavailable_reason(proc: str = "/proc/self") -> str:
    """Why no per-command cgroup is used here, as a phrase for the sandbox line."""
    mount = _cgroup2_mount(_read(f"{proc}/mountinfo") or "")
    if mount is None:
        return "no cgroup v2 is mounted"
    own = _own_cgroup(_read(f"{proc}/cgroup") or "")
    if own is None:
        return "this process is in no cgroup v2"
    controllers = (_read(f"{mount}{own.rstrip('/')}/cgroup.controllers") or "").split()
    missing = [c for c in REQUIRED if c not in controllers]
    if missing:
        return f"cgroup v2 has no {'/'.join(missing)} controller here"
    return "per-command cgroups are not implemented yet"
