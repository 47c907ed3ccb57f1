"""Disk and memory: one file's size is bounded by RLIMIT_FSIZE, the workspace's free space is
checked before and after each command (a note says when it is low or much was used), and the
result says why no cgroup bounds memory."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import safefs
from agent.tools import BashTool
from safefs.sandbox import cgroup
from safefs.sandbox.linux import LARGE_GROWTH, LOW_SPACE, MIB, Limits, LinuxSandbox, space_notes
from tests.sandbox.harness import PATH, make_base, ran_in_sandbox, sandbox_refusal

needs_sandbox = pytest.mark.skipif(sandbox_refusal() is not None, reason=str(sandbox_refusal()))


@pytest.fixture
def workspace() -> Iterator[Path]:
    base = make_base("safefs-resources-")
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@needs_sandbox
def test_one_file_cannot_outgrow_the_file_size_limit(workspace: Path) -> None:
    with safefs.Root(workspace) as root:
        sandbox = LinuxSandbox(root, limits=Limits(file_size=4 * MIB))
        tool = BashTool(root, sandbox=sandbox, base_env={"PATH": PATH})
        out = tool.execute({"command": "dd if=/dev/zero of=big bs=1M count=8 2>&1"})
        tool.close()
    text = ran_in_sandbox(out.content)
    assert (workspace / "big").stat().st_size <= 4 * MIB, text
    assert "File size limit exceeded" in text or "SIGXFSZ" in text, text


@needs_sandbox
def test_the_result_says_no_cgroup_bounds_memory(workspace: Path) -> None:
    with safefs.Root(workspace) as root:
        tool = BashTool(root, base_env={"PATH": PATH})
        out = tool.execute({"command": "true"})
        tool.close()
    layers = ran_in_sandbox(out.content).split("\n")[1]
    assert f"no cgroup ({cgroup.unavailable_reason()}; memory bounded per process only)" in layers


def test_no_note_when_space_is_plentiful_and_little_was_used() -> None:
    assert space_notes(LOW_SPACE * 4, LOW_SPACE * 4 - MIB) == ()


def test_a_note_when_space_was_low_before() -> None:
    (note,) = space_notes(LOW_SPACE - MIB, LOW_SPACE - MIB)
    assert f"had only {LOW_SPACE // MIB - 1} MiB free" in note


def test_a_note_when_the_command_used_much() -> None:
    before = LOW_SPACE * 8
    (note,) = space_notes(before, before - LARGE_GROWTH - MIB)
    assert f"used {LARGE_GROWTH // MIB + 1} MiB" in note


def proc_dir(tmp: Path, *, mount: Path | None, own: str | None) -> str:
    """A directory laid out as /proc/self is, with the two files the probe reads."""
    line = f"30 1 0:26 / {mount} rw - cgroup2 cgroup2 rw\n" if mount else "30 1 0:1 / /tmp rw - tmpfs t rw\n"
    (tmp / "mountinfo").write_text(line)
    (tmp / "cgroup").write_text(f"0::{own}\n" if own is not None else "4:memory:/x\n")
    return str(tmp)


def test_the_reason_names_what_is_missing(tmp_path: Path) -> None:
    hierarchy = tmp_path / "unified"
    (hierarchy / "agent").mkdir(parents=True)
    (hierarchy / "agent" / "cgroup.controllers").write_text("cpu io\n")
    proc = tmp_path / "proc"
    proc.mkdir()
    assert cgroup.unavailable_reason(proc_dir(proc, mount=None, own="/")) == "no cgroup v2 is mounted"
    assert (
        cgroup.unavailable_reason(proc_dir(proc, mount=hierarchy, own=None))
        == "this process is in no cgroup v2"
    )
    reason = cgroup.unavailable_reason(proc_dir(proc, mount=hierarchy, own="/agent"))
    assert reason == "cgroup v2 has no memory/pids controller here"
    (hierarchy / "agent" / "cgroup.controllers").write_text("cpu io memory pids\n")
    reason = cgroup.unavailable_reason(proc_dir(proc, mount=hierarchy, own="/agent"))
    assert reason == "per-command cgroups are not implemented yet"
