"""Crash consistency of atomic writes: a writer killed with SIGKILL at a random moment.

A child Python process rewrites many files in a loop with ``Root.write_bytes``, alternating an old
and a new content of different lengths (so a torn or truncated write would show). After the kill,
every target holds exactly its old or its new content. On Linux the data goes to an unnamed
O_TMPFILE inode that gets a name only between ``linkat`` and ``renameat``, so a kill leaves at
most one temporary name (the one in flight); a clean exit leaves none. The named-temp fallback
(filesystems without O_TMPFILE, and macOS) is run too: it may leave one temp file per kill.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from safefs import _sys
from safefs._atomic import TEMP_SUFFIX

N_FILES = 24
KILLS = 5

CHILD = r"""
import sys
import safefs
import safefs._atomic

root_path, backend, fallback, rounds, n_files = sys.argv[1:6]
if fallback == "named":
    # The code path used where O_TMPFILE is missing (macOS, some filesystems).
    safefs._atomic._tmpfile_works = False
kwargs = {"resolver": "walk", "_use_o_path": False} if backend == "walk-no-o-path" else {
    "resolver": backend}
root = safefs.Root(root_path, **kwargs)
names = [f"sub/f{i}" if i % 2 else f"f{i}" for i in range(int(n_files))]
print("ready", flush=True)
r = 0
while rounds == "forever" or r < int(rounds):
    r += 1
    for i, name in enumerate(names):
        root.write_bytes(name, (b"NEW %d " % i) * 2000 if r % 2 else (b"old %d " % i) * 100,
                         durable=(r % 5 == 0))
root.close()
"""


def old(i: int) -> bytes:
    return (b"old %d " % i) * 100


def new(i: int) -> bytes:
    return (b"NEW %d " % i) * 2000


def target(base: Path, i: int) -> Path:
    return base / ("sub" if i % 2 else "") / f"f{i}"


def make_targets(base: Path) -> None:
    (base / "sub").mkdir()
    for i in range(N_FILES):
        target(base, i).write_bytes(old(i))


def temp_files(base: Path) -> list[Path]:
    return [p for p in base.rglob("*") if p.name.encode().endswith(TEMP_SUFFIX)]


def start_writer(base: Path, backend: str, fallback: str, rounds: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(base), backend, fallback, rounds, str(N_FILES)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    return child


def contents(base: Path) -> list[bytes]:
    return [target(base, i).read_bytes() for i in range(N_FILES)]


def backend_available(backend: str) -> None:
    if backend == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("native extension not built")


@pytest.mark.parametrize("fallback", ["tmpfile", "named"])
@pytest.mark.parametrize("backend", ["openat2", "walk-no-o-path"])
def test_sigkill_leaves_old_or_new_content(tmp_path: Path, backend: str, fallback: str) -> None:
    backend_available(backend)
    make_targets(tmp_path)
    rng = random.Random(f"{backend}-{fallback}")  # reproducible kill moments
    left_per_kill = []
    changed = 0
    for _ in range(KILLS):
        before = contents(tmp_path)
        temps_before = len(temp_files(tmp_path))
        child = start_writer(tmp_path, backend, fallback, "forever")
        time.sleep(rng.uniform(0.05, 0.4))
        child.send_signal(signal.SIGKILL)
        assert child.wait(10) == -signal.SIGKILL
        assert child.stdout is not None
        child.stdout.close()
        after = contents(tmp_path)
        for i, data in enumerate(after):
            assert data in (old(i), new(i)), (
                f"{target(tmp_path, i).name}: torn content of {len(data)} bytes after SIGKILL"
            )
        changed += sum(a != b for a, b in zip(before, after, strict=True))
        left_per_kill.append(len(temp_files(tmp_path)) - temps_before)
    print(
        f"[crash] {backend}/{fallback}: {KILLS} kills, {changed} targets seen changed across "
        f"kills, temp files left per kill: {left_per_kill}"
    )
    assert changed > 0, "the writer never got to write before being killed: nothing was tested"
    assert all(n <= 1 for n in left_per_kill), f"more than the one in-flight temp file: {left_per_kill}"


@pytest.mark.parametrize("fallback", ["tmpfile", "named"])
def test_clean_exit_leaves_no_temp_files(tmp_path: Path, fallback: str) -> None:
    backend = "openat2" if _sys.HAVE_NATIVE else "walk"
    make_targets(tmp_path)
    rounds = 7  # odd: the last round writes the new content
    child = start_writer(tmp_path, backend, fallback, str(rounds))
    assert child.stdout is not None
    child.stdout.close()
    assert child.wait(60) == 0
    assert contents(tmp_path) == [new(i) for i in range(N_FILES)]
    left = temp_files(tmp_path)
    print(f"[crash] clean exit/{fallback}: {len(left)} temp files left")
    assert left == []
    # Nothing else appeared either: only the targets and their directory.
    names = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert names == sorted(["sub", *(str(target(Path(), i)) for i in range(N_FILES))])
