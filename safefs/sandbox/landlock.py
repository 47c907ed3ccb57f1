"""Landlock rulesets: which files a process may touch, judged by the kernel on the inode reached.

A ruleset handles every access right the running kernel's ABI knows (so anything not granted is
denied) and grants rights beneath directories given as open descriptors. It applies to the thread
that calls :func:`restrict_self` and to everything that thread starts afterwards; it cannot be
lifted. Landlock does not mediate everything: ``stat`` metadata, path walks (``cd``), ``chmod``
and ``chown`` of reachable files, and already open descriptors are not checked.
"""

from __future__ import annotations

import errno
import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

native: Any
try:
    native = importlib.import_module("safefs.sandbox._native")
except ImportError:
    native = None

# Filesystem rights (linux/landlock.h), by the ABI that introduced them.
EXECUTE: Final = 1 << 0
WRITE_FILE: Final = 1 << 1
READ_FILE: Final = 1 << 2
READ_DIR: Final = 1 << 3
REMOVE_DIR: Final = 1 << 4
REMOVE_FILE: Final = 1 << 5
MAKE_CHAR: Final = 1 << 6
MAKE_DIR: Final = 1 << 7
MAKE_REG: Final = 1 << 8
MAKE_SOCK: Final = 1 << 9
MAKE_FIFO: Final = 1 << 10
MAKE_BLOCK: Final = 1 << 11
MAKE_SYM: Final = 1 << 12
REFER: Final = 1 << 13  # ABI 2
TRUNCATE: Final = 1 << 14  # ABI 3
IOCTL_DEV: Final = 1 << 15  # ABI 5
# Network rights (ABI 4) and scopes (ABI 6).
NET_BIND_TCP: Final = 1 << 0
NET_CONNECT_TCP: Final = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET: Final = 1 << 0
SCOPE_SIGNAL: Final = 1 << 1

_FS_BY_ABI: Final = {1: (1 << 13) - 1, 2: REFER, 3: TRUNCATE, 5: IOCTL_DEV}
# Rights that make sense on a file (not a directory) rule; the kernel refuses the others there.
FILE_RIGHTS: Final = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV

READ_ONLY: Final = EXECUTE | READ_FILE | READ_DIR
READ_WRITE: Final = (
    READ_ONLY
    | WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_SYM
    | REFER
    | TRUNCATE
)
DEVICE_READ_WRITE: Final = READ_FILE | WRITE_FILE | TRUNCATE


class LandlockUnavailable(OSError):
    """Landlock cannot be used here; ``str()`` says why."""


def abi_version() -> int:
    """The kernel's Landlock ABI version; :class:`LandlockUnavailable` when there is none."""
    if native is None:
        raise LandlockUnavailable(
            "the sandbox's native extension is not built (no C compiler when safefs was installed)"
        )
    result = int(native.lib.sbx_landlock_abi())
    if result < 0:
        reason = {
            errno.ENOSYS: "the kernel has no Landlock",
            errno.EOPNOTSUPP: "Landlock is disabled in this kernel (boot with lsm=...,landlock)",
        }
        raise LandlockUnavailable(reason.get(-result, os.strerror(-result)))
    return result


def handled_fs(abi: int) -> int:
    return sum(bits for version, bits in _FS_BY_ABI.items() if version <= abi)


@dataclass(frozen=True)
class Grant:
    """``access`` beneath ``path`` (masked to what a file rule allows when it is a file)."""

    path: str
    access: int


def _check(result: int, what: str) -> int:
    if result < 0:
        raise OSError(-result, f"{what}: {os.strerror(-result)}")
    return result


def add_grant(ruleset: int, fd: int, access: int, abi: int) -> None:
    """Grant ``access`` beneath the file or directory open on ``fd``."""
    import stat

    access &= handled_fs(abi)
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        access &= FILE_RIGHTS
    _check(native.lib.sbx_landlock_add_path(ruleset, fd, access), "landlock_add_rule")


def create_ruleset(
    grants: Iterable[Grant],
    *,
    abi: int,
    restrict_network: bool,
    scopes: bool = True,
    extra_fds: Iterable[tuple[int, int]] = (),
) -> int:
    """A ruleset fd (close-on-exec; the caller closes it) handling every right ``abi`` knows.

    Grants whose path does not exist are skipped. ``restrict_network``: TCP bind and connect are
    handled with no rule, so both are denied (ABI 4+). ``scopes``: abstract unix sockets and
    signals are confined to the domain (ABI 6+). ``extra_fds``: (fd, access) grants on
    descriptors the caller already holds.
    """
    net = NET_BIND_TCP | NET_CONNECT_TCP if restrict_network and abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if scopes and abi >= 6 else 0
    ruleset = _check(
        native.lib.sbx_landlock_create_ruleset(handled_fs(abi), net, scoped, abi), "landlock_create_ruleset"
    )
    try:
        for fd, access in extra_fds:
            add_grant(ruleset, fd, access, abi)
        for grant in grants:
            try:
                fd = os.open(grant.path, os.O_PATH | os.O_CLOEXEC)
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue
            try:
                add_grant(ruleset, fd, grant.access, abi)
            finally:
                os.close(fd)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def restrict_self(
    read_write: Iterable[str], read_only: Iterable[str] = (), *, restrict_network: bool = True
) -> int:
    """Confine the calling thread (and what it starts later) to these paths; returns the ABI.

    Call it before the process starts other threads: Landlock restricts only the caller.
    """
    abi = abi_version()
    grants = [Grant(p, READ_WRITE) for p in read_write] + [Grant(p, READ_ONLY) for p in read_only]
    ruleset = create_ruleset(grants, abi=abi, restrict_network=restrict_network)
    try:
        _check(native.lib.sbx_landlock_restrict_self(ruleset), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi
