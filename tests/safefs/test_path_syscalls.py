"""The system calls of ``Root.copy``, as strace sees them in a child process: the bytes move in
the kernel (a reflink, or copy_file_range), never through the process's memory, into an unnamed
inode in the held destination directory that is linked and renamed over the target."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="strace is Linux's"),
]

MARK = "safefs-copy-mark"
TRACED = "openat,openat2,read,write,ioctl,copy_file_range,sendfile,linkat,renameat,renameat2,close"
LINE = re.compile(r"^(?P<name>\w+)\((?P<args>.*)\)\s+=\s+(?P<ret>-?\d+)")
CHILD = f"""
import os, sys, safefs
root = safefs.Root(sys.argv[1])
root.copy("big", "warm")  # imports done before the marks
mark = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
os.write(mark, b"{MARK}")
root.copy("big", "copy")
os.write(mark, b"{MARK}")
"""


def test_copy_moves_the_bytes_in_the_kernel(tmp_path: Path) -> None:
    size = 8 << 20
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big").write_bytes(b"\x5a" * size)
    out = tmp_path / "strace.out"
    proc = subprocess.run(
        [
            "strace",
            "-qq",
            "-e",
            f"trace={TRACED}",
            "-o",
            str(out),
            sys.executable,
            "-c",
            CHILD,
            str(tmp_path / "ws"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0 and "ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().split(MARK)[1].splitlines()
    calls = [(m["name"], m["args"], int(m["ret"])) for m in map(LINE.match, lines) if m]
    names = [c[0] for c in calls]
    moved = sum(r for n, _a, r in calls if n == "copy_file_range" and r > 0)
    cloned = any(n == "ioctl" and "FICLONE" in a and r == 0 for n, a, r in calls)
    assert cloned or moved == size, calls
    assert not any(n in ("read", "write") and r >= 65536 for n, _a, r in calls), "bytes went through memory"
    assert "linkat" in names and any(n.startswith("renameat") for n in names), names
    assert (tmp_path / "ws" / "copy").read_bytes() == (tmp_path / "ws" / "big").read_bytes()
    print(f"[syscalls] copy of {size} bytes: {names}")
