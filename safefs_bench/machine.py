"""Facts about the machine a measurement ran on, saved beside the numbers."""

from __future__ import annotations

import os
import platform
import tempfile
from typing import Any

import safefs
from safefs import capabilities


def machine_facts() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="safefs-probe-") as tmp, safefs.Root(tmp) as root:
        resolver = root.resolver
    cpu_model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu_model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "system": platform.system(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu_model": cpu_model,
        "cpu_count": os.cpu_count(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "safefs_version": safefs.__version__,
        "safefs_native_extension": capabilities().native_extension,
        "openat2_used": resolver == "openat2",
        "default_resolver": resolver,
        "renameat2": capabilities().renameat2,
        "tempdir": tempfile.gettempdir(),
        "tempdir_filesystem": filesystem_of(tempfile.gettempdir()),
    }


def filesystem_of(path: str) -> str:
    """The type of the filesystem holding ``path`` (writes cost what that filesystem makes them
    cost), from /proc/self/mounts; "" where that is not available."""
    real = os.path.realpath(path)
    best, fstype = "", ""
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                mount = parts[1].replace("\\040", " ")
                inside = real == mount or real.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best):
                    best, fstype = mount, parts[2]
    except OSError:
        pass
    return fstype
