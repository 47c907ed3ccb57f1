"""The resolver layer: every partial lookup safefs makes, behind one seam.

Threat model: docs/threat-model.md.

- :mod:`.base`: the :class:`Resolver` protocol every backend implements, and the names that
  choose one (:data:`ResolverName`, :data:`SymlinkMode`);
- :mod:`.resolved`: what a lookup hands back (a held directory fd and the final name);
- :mod:`.openat2`: Linux, the kernel resolves in one call;
- :mod:`.walk`: portable, one ``openat(O_NOFOLLOW)`` per component, the one walk loop (its
  ``open`` also runs in C, safefs/fastpath.c, where the extension is built);
- :mod:`.reading`: a whole-file read, one native call where the extension is built;
- :mod:`.metadata`: stat and chmod without opening a node for I/O, the two ways.

Here: choosing a backend. openat2 when this kernel allows it, the walk otherwise; probed once per
process, and once openat2 has worked a later failure is an error, never a downgrade.
"""

from __future__ import annotations

import errno
import os
import threading

from safefs import _sys
from safefs._resolve.base import (
    MODES,
    RESOLVERS,
    BackendName,
    Resolver,
    ResolverName,
    SymlinkMode,
)
from safefs._resolve.openat2 import Openat2Resolver, probe
from safefs._resolve.resolved import DirectoryPath, Resolved
from safefs._resolve.walk import MAX_SYMLINKS, PATH_MAX, WalkResolver
from safefs.errors import ResolverUnavailableError, error

__all__ = [
    "MAX_SYMLINKS",
    "MODES",
    "PATH_MAX",
    "RESOLVERS",
    "BackendName",
    "DirectoryPath",
    "Openat2Resolver",
    "Resolved",
    "Resolver",
    "ResolverName",
    "SymlinkMode",
    "WalkResolver",
    "make_resolver",
    "openat2_status",
]

_lock = threading.Lock()
# None until probed; then 0 (openat2 works) or the errno that ruled it out. Remembered for the
# life of the process: once openat2 has worked, a later failure is an error, never a downgrade.
_openat2_status: int | None = None


# The answers that rule openat2 out for good: the kernel lacks it, or a seccomp filter denies it.
_RULED_OUT = (errno.ENOSYS, errno.EPERM)


def openat2_status(root_fd: int) -> int:
    """0 if openat2 works here, else the errno that rules it out (ENOSYS or EPERM), probed
    from ``root_fd`` until one of those answers. Any other failure of the probe (EMFILE, ENOMEM)
    says nothing about the kernel: it is raised, and nothing is remembered."""
    global _openat2_status
    with _lock:
        if _openat2_status is None:
            status = probe(root_fd) if _sys.HAVE_NATIVE else errno.ENOSYS
            if status != 0 and status not in _RULED_OUT:
                raise error(status)
            _openat2_status = status
        return _openat2_status


def make_resolver(
    kind: ResolverName,
    mode: SymlinkMode,
    root_fd: int,
    *,
    use_o_path: bool = True,
    native_walk: bool = True,
) -> Resolver:
    """The backend ``kind`` names for a root held by ``root_fd``; ``"auto"`` takes openat2 when
    it works here. ResolverUnavailableError when the one asked for cannot run here.
    ``native_walk`` False keeps the walk in Python even where the C walk is built."""
    if mode not in MODES:
        raise ValueError(f"symlinks must be one of {MODES}, not {mode!r}")
    if kind not in RESOLVERS:
        raise ValueError(f"resolver must be one of {RESOLVERS}, not {kind!r}")
    if kind == "walk":
        return WalkResolver(mode, use_o_path=use_o_path, native=native_walk)
    if not use_o_path:  # openat2 resolves with O_PATH only: without it there is no openat2
        if kind == "openat2":
            raise ResolverUnavailableError(errno.ENOSYS, "openat2 resolver unavailable: no O_PATH here")
        return WalkResolver(mode, use_o_path=False, native=native_walk)
    status = openat2_status(root_fd)
    if status == 0:
        return Openat2Resolver(mode)
    if kind == "openat2":
        why = "the native extension is not built" if not _sys.HAVE_NATIVE else os.strerror(status)
        raise ResolverUnavailableError(status, f"openat2 resolver unavailable: {why}")
    return WalkResolver(mode, use_o_path=use_o_path, native=native_walk)
