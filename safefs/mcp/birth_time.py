"""A file's birth time, which ``get_file_info`` shows as ``created`` (as the official server does).

Python's ``os.stat`` reports it only where the platform's stat has it (``st_birthtime``: macOS,
the BSDs, Windows). On Linux it comes from ``statx(2)`` with ``STATX_BTIME``, asked of an fd the
entry was opened by through safefs (so the path is resolved beneath the directory like every
other), with ``AT_EMPTY_PATH``. None when the file system does not record it: the caller then
says ``unknown`` rather than show the inode change time, which moves with chmod and rename.
"""

from __future__ import annotations

import ctypes
import stat
import struct
import sys
from collections.abc import Callable

import safefs

STATX_BTIME = 0x800
AT_EMPTY_PATH = 0x1000
STATX_SIZE = 256  # sizeof(struct statx)
BTIME_OFFSET = 80  # struct statx: stx_btime, a struct statx_timestamp {s64 tv_sec; u32 tv_nsec; ...}


def _load_statx() -> Callable[..., int] | None:
    if sys.platform != "linux":
        return None
    try:
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).statx
    except (OSError, AttributeError):  # a libc older than glibc 2.28
        return None
    return function


_statx = _load_statx()


def _statx_btime(fd: int) -> float | None:
    if _statx is None:
        return None
    buffer = ctypes.create_string_buffer(STATX_SIZE)
    if _statx(fd, b"", AT_EMPTY_PATH, STATX_BTIME, buffer) != 0:
        return None
    mask: int = struct.unpack_from("I", buffer.raw, 0)[0]
    if not mask & STATX_BTIME:
        return None
    seconds: int
    nanoseconds: int
    seconds, nanoseconds = struct.unpack_from("qI", buffer.raw, BTIME_OFFSET)
    return seconds + nanoseconds / 1e9


def birth_time(root: safefs.Root, path: str) -> float | None:
    """When the entry at ``path`` (a symlink followed while it stays inside) was created."""
    try:
        st = root.stat(path)
    except OSError:
        return None
    known: float | None = getattr(st, "st_birthtime", None)
    if known is not None:
        return float(known)
    try:
        if stat.S_ISDIR(st.st_mode):
            with root.opendir(path) as directory:
                return _statx_btime(directory.fileno())
        if stat.S_ISREG(st.st_mode):
            with root.open(path, "rb") as stream:
                return _statx_btime(stream.fileno())
    except OSError:  # no permission to open it, say: unknown
        return None
    return None
