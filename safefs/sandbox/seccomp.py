"""The seccomp filter every sandboxed command runs under, kept as data and assembled here.

Each :class:`Rule` names a system call and, optionally, tests on its arguments that must all hold
for the call to be refused; the assembler turns the table into a classic BPF program and computes
every jump itself (a hand-counted offset breaks on the next edit). What the filter refuses, and
why each is there:

- ``socket(AF_UNIX)``, ``socket(AF_VSOCK)``: Landlock (up to ABI 7) does not mediate connecting to
  a Unix socket by its path, and a network namespace does not isolate those; AF_VSOCK reaches the
  hypervisor.
- ``socketpair`` of any type but ``SOCK_STREAM`` (``SOCK_CLOEXEC``/``SOCK_NONBLOCK`` masked off):
  an unbound datagram socket can ``sendto()`` any path-named datagram socket on the host
  (``/dev/log``, the journal, a daemon's control socket). A stream pair can only talk to itself.
- a set-user-ID or set-group-ID bit in the mode of ``chmod``, ``fchmod``, ``fchmodat``,
  ``fchmodat2``, ``open``, ``openat``, ``creat``, ``mkdir``, ``mkdirat``, ``mknod`` and
  ``mknodat``: Landlock does not mediate mode changes, and a setuid file the command plants in the
  workspace works for whoever runs it later, outside (no-new-privs stops it only inside).
  ``openat2`` hides its mode behind a pointer, so it is refused with ``ENOSYS`` and the C library
  falls back to ``openat``.
- ``keyctl``, ``add_key``, ``request_key``: the kernel keyrings are shared by uid and session, and
  not namespaced (Docker's default profile refuses them too).
- ``io_uring_setup``, ``io_uring_enter``, ``io_uring_register``: io_uring makes sockets and opens
  files without the system calls above.
- every other ABI (x32, i386): their system call numbers differ, and i386's ``socketcall`` hides
  the socket family behind a pointer.
"""

from __future__ import annotations

import errno
import platform
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Final

AF_UNIX: Final = 1
AF_VSOCK: Final = 40
SOCK_STREAM: Final = 1
SOCK_TYPE_FLAGS: Final = 0o2000000 | 0o4000  # SOCK_CLOEXEC | SOCK_NONBLOCK
SETID_BITS: Final = 0o6000  # S_ISUID | S_ISGID

# Classic BPF (linux/filter.h, linux/seccomp.h).
_LD_W_ABS: Final = 0x20
_JEQ_K: Final = 0x15
_JSET_K: Final = 0x45
_JGE_K: Final = 0x35
_AND_K: Final = 0x54
_RET_K: Final = 0x06
_RET_ALLOW: Final = 0x7FFF0000
_RET_ERRNO: Final = 0x00050000
_OFFSET_NR: Final = 0
_OFFSET_ARCH: Final = 4
_OFFSET_ARGS: Final = 16
_INSTRUCTION: Final = struct.Struct("=HBBI")

# Per architecture: its AUDIT_ARCH token and the numbers of the calls the rules name (a call the
# architecture does not have, such as open on aarch64, is left out).
_X86_64: Final = {
    "open": 2, "socket": 41, "socketpair": 53, "mkdir": 83, "creat": 85, "chmod": 90, "fchmod": 91,
    "mknod": 133, "add_key": 248, "request_key": 249, "keyctl": 250, "openat": 257, "mkdirat": 258,
    "mknodat": 259, "fchmodat": 268, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "openat2": 437, "fchmodat2": 452,
}  # fmt: skip
_AARCH64: Final = {
    "mknodat": 33, "mkdirat": 34, "fchmod": 52, "fchmodat": 53, "openat": 56, "socket": 198,
    "socketpair": 199, "add_key": 217, "request_key": 218, "keyctl": 219, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "openat2": 437, "fchmodat2": 452,
}  # fmt: skip
ARCHITECTURES: Final = {"x86_64": (0xC000003E, _X86_64), "aarch64": (0xC00000B7, _AARCH64)}
_X32_BIT: Final = 0x40000000


@dataclass(frozen=True)
class ArgTest:
    """Holds when ``(arg & mask) != 0`` (``equals`` is None) or ``(arg & mask) == equals``, or,
    with ``negate``, the opposite. Only the low 32 bits of the argument are read: every argument
    tested here is an int, a mode or a flag word."""

    arg: int
    mask: int = 0xFFFFFFFF
    equals: int | None = None
    negate: bool = False


@dataclass(frozen=True)
class Rule:
    """Refuse ``syscall`` with ``errno`` when every test holds (no tests: always)."""

    syscall: str
    tests: tuple[ArgTest, ...] = ()
    errno: int = errno.EPERM


def _setid_mode(syscall: str, arg: int) -> Rule:
    return Rule(syscall, (ArgTest(arg, SETID_BITS),))


RULES: Final = (
    Rule("socket", (ArgTest(0, equals=AF_UNIX),), errno.EACCES),
    Rule("socket", (ArgTest(0, equals=AF_VSOCK),), errno.EACCES),
    Rule("socketpair", (ArgTest(1, ~SOCK_TYPE_FLAGS & 0xFFFFFFFF, SOCK_STREAM, negate=True),), errno.EACCES),
    _setid_mode("chmod", 1),
    _setid_mode("fchmod", 1),
    _setid_mode("fchmodat", 2),
    _setid_mode("fchmodat2", 2),
    _setid_mode("open", 2),
    _setid_mode("openat", 3),
    _setid_mode("creat", 1),
    _setid_mode("mkdir", 1),
    _setid_mode("mkdirat", 2),
    _setid_mode("mknod", 1),
    _setid_mode("mknodat", 2),
    Rule("openat2", errno=errno.ENOSYS),
    Rule("keyctl"),
    Rule("add_key"),
    Rule("request_key"),
    Rule("io_uring_setup"),
    Rule("io_uring_enter"),
    Rule("io_uring_register"),
)


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> tuple[int, int, int, int]:
    return (code, jt, jf, k & 0xFFFFFFFF)


def _rule_body(rule: Rule) -> list[tuple[int, int, int, int]]:
    """The tests of one rule (the call number already matched), ending in its refusal; a failing
    test jumps past the refusal, to whatever follows the body."""
    per_test = []
    for test in rule.tests:
        code = [_op(_LD_W_ABS, _OFFSET_ARGS + 8 * test.arg + _low_word())]
        if test.equals is None:
            jump_code, k = _JSET_K, test.mask
        else:
            if test.mask != 0xFFFFFFFF:
                code.append(_op(_AND_K, test.mask))
            jump_code, k = _JEQ_K, test.equals
        per_test.append((code, jump_code, k, test.negate))
    body: list[tuple[int, int, int, int]] = []
    remaining = sum(len(code) + 1 for code, *_ in per_test)
    for code, jump_code, k, negate in per_test:
        body += code
        remaining -= len(code) + 1
        past_refusal = remaining + 1  # the later tests, then the refusal
        jt, jf = (past_refusal, 0) if negate else (0, past_refusal)
        body.append(_op(jump_code, k, jt, jf))
    body.append(_op(_RET_K, _RET_ERRNO | rule.errno))
    return body


def _low_word() -> int:
    return 0 if struct.pack("=H", 1)[0] == 1 else 4


def assemble(rules: Sequence[Rule], arch_token: int, numbers: dict[str, int]) -> bytes:
    """The BPF program (``struct sock_filter[]``) for ``rules`` on one architecture."""
    program = [
        _op(_LD_W_ABS, _OFFSET_ARCH),
        _op(_JEQ_K, arch_token, 1, 0),
        _op(_RET_K, _RET_ERRNO | errno.ENOSYS),
        _op(_LD_W_ABS, _OFFSET_NR),
    ]
    if arch_token == ARCHITECTURES["x86_64"][0]:
        program += [_op(_JGE_K, _X32_BIT, 0, 1), _op(_RET_K, _RET_ERRNO | errno.ENOSYS)]
    for rule in rules:
        if rule.syscall not in numbers:
            continue
        body = _rule_body(rule)
        # The body's tests load arguments over the number: reload it after a body that fell through.
        reload = [_op(_LD_W_ABS, _OFFSET_NR)] if rule.tests else []
        if len(body) > 255:
            raise ValueError(f"the rule for {rule.syscall} is too long for one jump")
        program.append(_op(_JEQ_K, numbers[rule.syscall], 0, len(body)))
        program += body + reload
    program.append(_op(_RET_K, _RET_ALLOW))
    return b"".join(_INSTRUCTION.pack(*instruction) for instruction in program)


def instruction_count(program: bytes) -> int:
    return len(program) // _INSTRUCTION.size


def syscall_numbers() -> dict[str, int]:
    """The numbers of the calls the rules name, on the running architecture."""
    machine = platform.machine()
    if machine not in ARCHITECTURES:
        raise OSError(f"no seccomp filter is written for the {machine} architecture")
    return ARCHITECTURES[machine][1]


@cache
def program_for_this_machine(rules: tuple[Rule, ...] = RULES) -> bytes:
    """The filter for the running architecture; ``OSError`` where there is no table for it."""
    numbers = syscall_numbers()
    return assemble(rules, ARCHITECTURES[platform.machine()][0], numbers)
