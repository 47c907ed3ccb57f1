"""The launcher's init shares the calling thread's memory, its errno included (no thread-local
storage of its own). The caller must not write that errno while init and the command are being
set up: a setup step that checks errno (``mkdir`` answering EEXIST, say) would see the caller's
value, and the command would fail to start with a wrong reason ("failed: Success").

The test makes the caller write errno as fast as it can right after each spawn, with the
workspace under /tmp (where init makes the workspace's path inside the fresh tmpfs, one
``mkdir`` per level, each answering EEXIST), and asks that every command start."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import safefs
from safefs.sandbox import linux
from tests.sandbox.harness import PATH, sandbox_refusal

pytestmark = pytest.mark.skipif(sandbox_refusal() is not None, reason=str(sandbox_refusal()))

RUNS = 300
HAMMER_SECONDS = 0.01


@pytest.fixture
def workspace() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="safefs-spawn-", dir="/tmp"))
    try:
        (base / "deep" / "er").mkdir(parents=True)
        yield base / "deep" / "er"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _hammering(spawn: Any) -> Any:
    def spawn_then_write_errno(*args: Any) -> int:
        pid = int(spawn(*args))
        end = time.monotonic() + HAMMER_SECONDS
        while time.monotonic() < end:
            try:
                os.stat("/nonexistent-safefs-spawn-test")  # ENOENT into this thread's errno
            except FileNotFoundError:
                pass
        return pid

    return spawn_then_write_errno


def test_the_callers_errno_cannot_fail_a_setup_step(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linux, "_spawn", _hammering(linux._spawn))
    outcomes: dict[str, int] = {}
    with safefs.Root(workspace) as root:
        sandbox = linux.LinuxSandbox(root)
        try:
            for _ in range(RUNS):
                out = sandbox.run(["/bin/true"], {"PATH": PATH}, timeout=30, output_cap=4096, cancel=None)
                key = out.setup_error or f"exit {out.returncode}"
                outcomes[key] = outcomes.get(key, 0) + 1
        finally:
            sandbox.close()
    print(f"{RUNS} commands with the caller writing errno after each spawn: {outcomes}")
    assert outcomes == {"exit 0": RUNS}
