"""What this platform gives safefs: a public query, so programs need no private module."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from safefs import _sys
from safefs._resolve import BackendName, openat2_status


@dataclass(frozen=True)
class Capabilities:
    """Facts about this platform and build, as safefs sees them."""

    platform: str
    resolvers: tuple[BackendName, ...]  # the resolvers a Root can use here, fastest first
    openat2: bool  # Root(resolver="openat2") works: the native extension and the kernel allow it
    native_extension: bool  # the cffi extension (openat2, renameat2) was built
    o_path: bool  # directories are looked through with O_PATH (needs no permission at all)
    search_only_dirs: bool  # without O_PATH: O_SEARCH/O_EXEC, so ``--x`` directories traverse
    unnamed_temp_files: bool  # atomic writes use O_TMPFILE (nothing left behind by a crash)
    renameat2: bool  # atomic no-clobber rename and atomic exchange of two names


def capabilities() -> Capabilities:
    """Probe (once per process) and describe what safefs can do here."""
    fd = os.open("/", _sys.dir_flags(True))
    try:
        has_openat2 = openat2_status(fd) == 0
    finally:
        os.close(fd)
    resolvers: tuple[BackendName, ...] = ("openat2", "walk") if has_openat2 else ("walk",)
    return Capabilities(
        platform=sys.platform,
        resolvers=resolvers,
        openat2=has_openat2,
        native_extension=_sys.HAVE_NATIVE,
        o_path=_sys.HAVE_O_PATH,
        search_only_dirs=_sys.HAVE_O_PATH or bool(_sys.search_flag()),
        unnamed_temp_files=bool(_sys.O_TMPFILE),
        renameat2=_sys.have_renameat2(),
    )
