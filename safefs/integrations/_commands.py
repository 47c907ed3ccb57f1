"""A command in the kernel sandbox with its stdout and stderr kept apart.

:mod:`safefs.sandbox` hands back one combined output stream; the frameworks report stdout and
stderr separately. So the command runs under a small ``sh`` wrapper that sends its stderr to a
file in the sandbox's private ``/tmp`` and, once the command has exited, prints that stderr after stdout
and then a trailer: a per-call marker and the stderr's length. The trailer is the last line of
the output, so whatever the command printed (the marker included) is split exactly.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import safefs
from safefs.sandbox import Refused, make_sandbox

SHELL = "/bin/sh"
_WRAPPER = (
    "__safefs_m=$1; shift\n"
    "__safefs_e=$(command -p mktemp) || exit 125\n"
    '"$@" 2>"$__safefs_e"\n'
    "__safefs_s=$?\n"
    'command -p cat -- "$__safefs_e"\n'
    'printf \'%s%d\\n\' "$__safefs_m" "$(command -p wc -c <"$__safefs_e")"\n'
    'exit "$__safefs_s"\n'
)
_LENGTH = re.compile(rb"(\d+)\n\Z")


@dataclass(frozen=True)
class SplitOutcome:
    stdout: bytes
    stderr: bytes
    exit_code: int | None  # None when the command was killed (timeout, cap, cancel) or never ran
    timed_out: bool = False
    over_cap: bool = False
    cancelled: bool = False
    refusal: str | None = None  # the sandbox could not be set up: nothing ran


def _split(output: bytes, marker: bytes) -> tuple[bytes, bytes] | None:
    """(stdout, stderr) from the wrapper's output, or None when it did not reach its trailer."""
    at = output.rfind(marker)
    trailer = _LENGTH.match(output, at + len(marker)) if at >= 0 else None
    if trailer is None or int(trailer.group(1)) > at:
        return None
    start = at - int(trailer.group(1))
    return output[:start], output[start:at]


def run_split(
    root: safefs.Root,
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout: float,
    output_cap: int,
    cancel: threading.Event | None = None,
) -> SplitOutcome:
    """Run ``argv`` in the workspace's kernel sandbox, starting in the root, with ``env`` only."""
    sandbox = make_sandbox(root)
    try:
        if isinstance(sandbox, Refused):
            return SplitOutcome(b"", b"", None, refusal=sandbox.refusal)
        marker = f"__SAFEFS_STDERR_{uuid.uuid4().hex}__"
        outcome = sandbox.run(
            [SHELL, "-c", _WRAPPER, "sh", marker, *argv],
            env,
            timeout=timeout,
            output_cap=output_cap,
            cancel=cancel,
        )
    finally:
        sandbox.close()
    if outcome.setup_error is not None:
        return SplitOutcome(b"", b"", None, refusal=outcome.setup_error)
    parts = _split(outcome.output, marker.encode())
    stdout, stderr = parts if parts is not None else (outcome.output, b"")
    killed = outcome.timed_out or outcome.over_cap or outcome.cancelled
    return SplitOutcome(
        stdout,
        stderr,
        None if killed else outcome.returncode,
        timed_out=outcome.timed_out,
        over_cap=outcome.over_cap,
        cancelled=outcome.cancelled,
    )
