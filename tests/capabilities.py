"""Running a block without the capabilities that let root ignore file permissions.

Root (as the tests run in a container) reads a mode-0300 directory as if it were 0700:
CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH bypass the permission bits. ``without_dac_bypass()``
clears both from the calling thread's effective set (they stay permitted, so they come back
afterwards), through capget/capset. Linux capabilities are per thread: the block must make its
system calls on the thread that entered it. Where the process has neither capability (not root),
nothing needs dropping and the block runs as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Iterator
from contextlib import contextmanager

_VERSION_3 = 0x20080522
CAP_DAC_OVERRIDE = 1
CAP_DAC_READ_SEARCH = 2
_BYPASS = (1 << CAP_DAC_OVERRIDE) | (1 << CAP_DAC_READ_SEARCH)


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def _get() -> tuple[_Header, ctypes.Array[_Data]]:
    header = _Header(_VERSION_3, 0)
    data = (_Data * 2)()
    if _libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return header, data


def _set(header: _Header, data: ctypes.Array[_Data]) -> None:
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def permissions_bypassed() -> bool:
    """Whether this thread ignores permission bits now."""
    return bool(_get()[1][0].effective & _BYPASS)


@contextmanager
def without_dac_bypass() -> Iterator[None]:
    """This thread, inside the block, is refused what the permission bits refuse."""
    header, data = _get()
    saved = data[0].effective
    if not saved & _BYPASS:
        yield
        return
    data[0].effective = saved & ~_BYPASS
    _set(header, data)
    try:
        yield
    finally:
        header, data = _get()
        data[0].effective = saved
        _set(header, data)
