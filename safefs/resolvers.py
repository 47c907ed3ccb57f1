"""Choosing a resolver: openat2 when this kernel allows it, the portable walk otherwise."""

from __future__ import annotations

import errno
import os
import threading
from typing import Protocol

from safefs import _sys
from safefs.errors import ResolverUnavailableError
from safefs.resolve_openat2 import Openat2Resolver, probe
from safefs.resolve_walk import MODES, WalkResolver
from safefs.resolved import Resolved

RESOLVERS = ("auto", "openat2", "walk")


class Resolver(Protocol):
    name: str
    mode: str
    use_o_path: bool
    dir_flags: int

    def open(self, root_fd: int, rel: bytes, flags: int, mode: int = 0o666, *,
             follow: bool) -> int: ...

    def open_read(self, root_fd: int, rel: bytes) -> int: ...

    def canonical(self, root_fd: int, rel: bytes, *, strict: bool) -> bytes: ...

    def lookup(self, root_fd: int, rel: bytes, *, follow: bool, parents: bool = False,
               lstat: bool = False) -> Resolved: ...


_lock = threading.Lock()
# None until probed; then 0 (openat2 works) or the errno that ruled it out. Remembered for the
# life of the process: once openat2 has worked, a later failure is an error, never a downgrade.
_openat2_status: int | None = None


def openat2_status(root_fd: int) -> int:
    global _openat2_status
    with _lock:
        if _openat2_status is None:
            _openat2_status = probe(root_fd) if _sys.HAVE_NATIVE else errno.ENOSYS
        return _openat2_status


def make_resolver(kind: str, mode: str, root_fd: int, *, use_o_path: bool = True) -> Resolver:
    if mode not in MODES:
        raise ValueError(f"symlinks must be one of {MODES}, not {mode!r}")
    if kind not in RESOLVERS:
        raise ValueError(f"resolver must be one of {RESOLVERS}, not {kind!r}")
    if kind == "walk":
        return WalkResolver(mode, use_o_path=use_o_path)
    if not use_o_path:  # openat2 resolves with O_PATH only: without it there is no openat2
        if kind == "openat2":
            raise ResolverUnavailableError(errno.ENOSYS,
                                           "openat2 resolver unavailable: no O_PATH here")
        return WalkResolver(mode, use_o_path=False)
    status = openat2_status(root_fd)
    if status == 0:
        return Openat2Resolver(mode)
    if kind == "openat2":
        why = "the native extension is not built" if not _sys.HAVE_NATIVE else os.strerror(status)
        raise ResolverUnavailableError(status, f"openat2 resolver unavailable: {why}")
    return WalkResolver(mode, use_o_path=use_o_path)
