"""The seccomp filter, one system call at a time: a forked child installs the filter the sandbox
uses and makes each refused call and its allowed neighbour for real; each case is its own test.

An allowed neighbour must succeed (or fail only as the kernel would without a filter), so the
filter is shown to refuse exactly the argument it is meant to, not the whole call.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import shutil
import socket
import stat
import tempfile
from dataclasses import dataclass
from typing import Any

import pytest

from safefs.sandbox import landlock, seccomp
from tests.sandbox.harness import as_user, ordinary_user

pytestmark = [
    pytest.mark.skipif(landlock.native is None, reason="the sandbox's native extension is not built"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the test drops to each identity itself, as root"),
]

AT_FDCWD = -100
X32_BIT, X86_64_GETPID = 0x40000000, 39
ALLOWED = 0  # the call was let through: it succeeded
FIFO = stat.S_IFIFO


@dataclass(frozen=True)
class Case:
    """``syscall(*args)``, where a ``str`` argument names a file in the probe's directory; the
    result expected is an errno from the filter, or ALLOWED (any success), or another errno the
    kernel itself returns without a filter (``kernel``)."""

    name: str
    syscall: str
    args: tuple[Any, ...]
    refused: int = ALLOWED
    kernel: int | None = None


CASES = [
    Case("socket unix", "socket", (socket.AF_UNIX, socket.SOCK_STREAM, 0), errno.EACCES),
    Case("socket vsock", "socket", (40, socket.SOCK_STREAM, 0), errno.EACCES),
    Case("socket inet", "socket", (socket.AF_INET, socket.SOCK_STREAM, 0)),
    Case("socketpair dgram", "socketpair", (socket.AF_UNIX, socket.SOCK_DGRAM, 0, "sv"), errno.EACCES),
    Case(
        "socketpair dgram cloexec",
        "socketpair",
        (socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, 0, "sv"),
        errno.EACCES,
    ),
    Case(
        "socketpair dgram nonblock",
        "socketpair",
        (socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK, 0, "sv"),
        errno.EACCES,
    ),
    Case(
        "socketpair seqpacket", "socketpair", (socket.AF_UNIX, socket.SOCK_SEQPACKET, 0, "sv"), errno.EACCES
    ),
    Case(
        "socketpair stream", "socketpair", (socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC, 0, "sv")
    ),
    Case("chmod setuid", "chmod", ("file", 0o4755), errno.EPERM),
    Case("chmod setgid", "chmod", ("file", 0o2755), errno.EPERM),
    Case("chmod plain", "chmod", ("file", 0o755)),
    Case("chmod sticky", "chmod", ("file", 0o1755)),
    Case("fchmod setuid", "fchmod", ("fd", 0o4755), errno.EPERM),
    Case("fchmod plain", "fchmod", ("fd", 0o644)),
    Case("fchmodat setgid", "fchmodat", (AT_FDCWD, "file", 0o2755, 0), errno.EPERM),
    Case("fchmodat plain", "fchmodat", (AT_FDCWD, "file", 0o755, 0)),
    Case("fchmodat2 setuid", "fchmodat2", (AT_FDCWD, "file", 0o4755, 0), errno.EPERM),
    Case("fchmodat2 plain", "fchmodat2", (AT_FDCWD, "file", 0o755, 0), kernel=errno.ENOSYS),
    Case("open create setuid", "open", ("new-open", os.O_CREAT | os.O_WRONLY, 0o4755), errno.EPERM),
    Case("open create plain", "open", ("ok-open", os.O_CREAT | os.O_WRONLY, 0o644)),
    Case(
        "openat create setgid",
        "openat",
        (AT_FDCWD, "new-openat", os.O_CREAT | os.O_WRONLY, 0o2644),
        errno.EPERM,
    ),
    Case("openat create plain", "openat", (AT_FDCWD, "ok-openat", os.O_CREAT | os.O_WRONLY, 0o644)),
    Case("openat2", "openat2", (AT_FDCWD, "file", "how", 24), errno.ENOSYS),
    Case("creat setuid", "creat", ("new-creat", 0o4755), errno.EPERM),
    Case("creat plain", "creat", ("ok-creat", 0o644)),
    Case("mkdir setgid", "mkdir", ("new-dir", 0o2755), errno.EPERM),
    Case("mkdir plain", "mkdir", ("ok-dir", 0o755)),
    Case("mkdirat setgid", "mkdirat", (AT_FDCWD, "new-dirat", 0o2755), errno.EPERM),
    Case("mkdirat plain", "mkdirat", (AT_FDCWD, "ok-dirat", 0o755)),
    Case("mknod setuid fifo", "mknod", ("new-fifo", FIFO | 0o4644, 0), errno.EPERM),
    Case("mknod plain fifo", "mknod", ("ok-fifo", FIFO | 0o644, 0)),
    Case("mknodat setgid fifo", "mknodat", (AT_FDCWD, "new-fifoat", FIFO | 0o2644, 0), errno.EPERM),
    Case("mknodat plain fifo", "mknodat", (AT_FDCWD, "ok-fifoat", FIFO | 0o644, 0)),
    Case("keyctl", "keyctl", (0, -3, 0), errno.EPERM),
    Case("add_key", "add_key", (b"user", b"probe", b"x", 1, -3), errno.EPERM),
    Case("request_key", "request_key", (b"user", b"probe", None, 0), errno.EPERM),
    Case("io_uring_setup", "io_uring_setup", (1, "params"), errno.EPERM),
    Case("io_uring_enter", "io_uring_enter", (-1, 0, 0, 0, None, 0), errno.EPERM),
    Case("io_uring_register", "io_uring_register", (-1, 0, None, 0), errno.EPERM),
]


def _argument(value: Any, directory: str, keep: list[Any]) -> Any:
    if isinstance(value, int):
        return ctypes.c_long(value)
    if value == "fd":
        return ctypes.c_long(os.open(os.path.join(directory, "file"), os.O_RDONLY))
    if value in ("sv", "how", "params"):
        buffer = ctypes.create_string_buffer(256)  # zeroed: an empty open_how, io_uring params
        keep.append(buffer)
        return buffer
    if isinstance(value, str):
        return os.path.join(directory, value).encode()
    return value


def probe() -> dict[str, int]:
    """In the forked child: install the filter, then make every call. errno, or 0 on success."""
    directory = tempfile.mkdtemp(prefix="safefs-seccomp-probe-")
    try:
        open(os.path.join(directory, "file"), "w").close()
        program = seccomp.program_for_this_machine()
        filter_buffer = landlock.native.ffi.new("char[]", program)
        result = landlock.native.lib.sbx_install_seccomp(filter_buffer, seccomp.instruction_count(program))
        if result < 0:
            raise OSError(-result, "installing the filter")
        libc = ctypes.CDLL(None, use_errno=True)
        numbers = seccomp.syscall_numbers()
        got = {}
        for case in CASES:
            if case.syscall not in numbers:
                continue  # this architecture has no such call (open, chmod, ... on aarch64)
            keep: list[Any] = []
            args = [_argument(a, directory, keep) for a in case.args]
            ctypes.set_errno(0)
            r = libc.syscall(ctypes.c_long(numbers[case.syscall]), *args)
            got[case.name] = ctypes.get_errno() if r < 0 else 0
        if platform.machine() == "x86_64":
            ctypes.set_errno(0)
            r = libc.syscall(ctypes.c_long(X32_BIT | X86_64_GETPID))
            got["x32 getpid"] = ctypes.get_errno() if r < 0 else 0
        return got
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module", params=["root", "ordinary-user"])
def probed(request: pytest.FixtureRequest) -> dict[str, int]:
    uid = 0 if request.param == "root" else ordinary_user()
    got: dict[str, int] = as_user(uid, probe, fork=True)
    print(request.param, got)
    return got


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_probe(probed: dict[str, int], case: Case) -> None:
    if case.name not in probed:
        pytest.skip(f"{case.syscall} does not exist on this architecture")
    if case.refused != ALLOWED:
        assert probed[case.name] == case.refused, errno.errorcode.get(probed[case.name])
    else:
        assert probed[case.name] in (0, case.kernel), errno.errorcode.get(probed[case.name])


def test_every_rule_has_a_probe() -> None:
    """A rule added to the table without a probe here is a rule nobody checked."""
    assert {r.syscall for r in seccomp.RULES} <= {c.syscall for c in CASES}


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x32 is an ABI of x86_64")
def test_the_x32_abi_is_refused(probed: dict[str, int]) -> None:
    """getpid by its x32 number: a kernel with x32 would run it, the filter refuses every x32 call."""
    assert probed["x32 getpid"] == errno.ENOSYS
