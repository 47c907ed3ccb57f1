"""A kernel whose Landlock is older than ABI 3 (Linux 6.2) does not mediate truncate(2): the
sandbox refuses to run commands there unless the operator accepts that loss.

The old kernel is real, not mocked: ``LinuxSandbox(landlock_abi=N)`` makes the rulesets for ABI
``N``, which is exactly what a kernel of that ABI would enforce. Both sides are shown: refused by
default; accepted when asked, with the outside victim then truncated (what is lost), while at
this kernel's ABI the same truncate is denied.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import safefs
from agent.tools import BashTool
from safefs.sandbox.linux import LandlockTooOld, LinuxSandbox
from tests.sandbox.harness import PATH, make_base, ran_in_sandbox, sandbox_refusal

pytestmark = pytest.mark.skipif(sandbox_refusal() is not None, reason=str(sandbox_refusal()))

VICTIM = b"a file outside that the command's uid may write\n"
# truncate(2) on the path: opening the file for writing is denied at every ABI, truncating it by
# name is what ABI 3 added (the truncate utility opens it, so it would not show the difference).
TRUNCATE = "python3 -c 'import os; os.truncate(\"{victim}\", 0)'"


@pytest.fixture
def world() -> Iterator[tuple[Path, Path]]:
    base = make_base("safefs-old-landlock-")
    workspace, victim = base / "work", base / "victim.txt"
    workspace.mkdir()
    victim.write_bytes(VICTIM)
    victim.chmod(0o666)  # writable by the command's uid: only Landlock stands in the way
    try:
        yield workspace, victim
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("abi", [1, 2])
def test_an_old_abi_is_refused_naming_the_kernel_and_the_right(abi: int, world: tuple[Path, Path]) -> None:
    workspace, _ = world
    with safefs.Root(workspace) as root, pytest.raises(LandlockTooOld) as refused:
        LinuxSandbox(root, landlock_abi=abi)
    message = str(refused.value)
    assert f"Landlock ABI {abi}" in message
    assert f"Linux {os.uname().release}" in message
    assert "truncate(2)" in message and "--allow-old-landlock" in message


@pytest.mark.parametrize("abi", [1, 2])
def test_an_accepted_old_abi_says_what_is_lost(abi: int, world: tuple[Path, Path]) -> None:
    workspace, victim = world
    with safefs.Root(workspace) as root:
        sandbox = LinuxSandbox(root, landlock_abi=abi, allow_old_landlock=True)
        tool = BashTool(root, sandbox=sandbox, base_env={"PATH": PATH})
        out = tool.execute({"command": TRUNCATE.format(victim=victim)})
        tool.close()
    text = ran_in_sandbox(out.content)
    assert f"landlock abi {abi} (truncate not mediated)" in text
    assert victim.read_bytes() == b""  # what the operator accepted to lose


def test_at_this_kernels_abi_the_same_truncate_is_denied(world: tuple[Path, Path]) -> None:
    workspace, victim = world
    with safefs.Root(workspace) as root:
        tool = BashTool(root, base_env={"PATH": PATH})
        out = tool.execute({"command": TRUNCATE.format(victim=victim)})
        tool.close()
    text = ran_in_sandbox(out.content)
    assert "PermissionError" in text
    assert victim.read_bytes() == VICTIM
