"""The sandboxed command runner the drop-ins share: stdout and stderr kept apart, and a command
cannot forge the split by printing the marker itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import safefs
from safefs.integrations._commands import _split, run_split

MARKER = b"__SAFEFS_STDERR_0123456789abcdef__"


@given(stdout=st.binary(max_size=200), stderr=st.binary(max_size=200), plants=st.integers(0, 3))
def test_the_split_returns_exactly_what_was_printed(stdout: bytes, stderr: bytes, plants: int) -> None:
    # The command may print the marker (with any length after it) on stdout and on stderr.
    stdout = stdout + (MARKER + b"5\n") * plants
    stderr = stderr + (MARKER + b"0\n") * plants
    output = stdout + stderr + MARKER + b"%d\n" % len(stderr)
    assert _split(output, MARKER) == (stdout, stderr)


def test_output_without_the_epilogue_is_not_split() -> None:
    assert _split(b"killed before the end", MARKER) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel sandbox is Linux's")
def test_a_command_reports_its_streams_and_exit_code_apart(tmp_path: Path) -> None:
    with safefs.Root(tmp_path) as root:
        outcome = run_split(
            root,
            ["sh", "-c", "printf out; printf err >&2; exit 3"],
            {"PATH": "/usr/bin:/bin"},
            timeout=30,
            output_cap=1 << 20,
        )
    if outcome.refusal is not None:
        pytest.skip(outcome.refusal)
    assert (outcome.stdout, outcome.stderr, outcome.exit_code) == (b"out", b"err", 3)
