"""The edit's compare-and-swap against writers that take no lock, running free.

Editors (``edit_file``) and plain writers, each a process of its own, work on one file for a
bounded time. The file is a generation line, padding and ``END``:

- a plain writer replaces the whole file with a new generation (a new file renamed over it, as an
  editor's save does); the writers take turns among themselves through a lock file no editor
  takes, and number the generations, so at each turn a writer knows the last plain write and
  checks that the file still holds it: if not, an edit made on older content replaced it;
- an editor adds its own line above ``END`` in the generation it read (the generation line is
  part of the edit, so an edit lands only on that generation, or is refused as stale).

The invariant: every write is in the final file, or superseded by a later plain write, or
reported to its writer as not made. So no plain write is ever found replaced, the final file
holds the last generation, and every edit reported as applied to that generation is in it.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import safefs
from safefs.replacing import TEMP_SUFFIX
from safefs.workspace import edits
from tests.race_window import RACE_SECONDS
from tests.workspace.test_edits import ON_CUE

WRITER = """
import fcntl, json, os, random, sys, time
path, lock_path, seq_path = sys.argv[1:4]
seconds, pad = float(sys.argv[4]), int(sys.argv[5])
padding = ("x" * 99 + "\\n") * (pad // 100)
writes = lost = put_back = 0
print("ready", flush=True)
sys.stdin.readline()  # every process is ready: the race starts for all at once
deadline = time.time() + seconds


def generation(path):
    with open(path, "rb") as f:
        return int(f.readline().split(b"=")[1])


while time.time() < deadline:
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(seq_path) as f:
            seq = int(f.read())
        gen, waited = generation(path), 0.0
        if gen != seq:  # an edit made on older content displaced the last plain write: for good?
            while gen != seq and waited < 0.5:
                time.sleep(0.001)
                waited += 0.001
                gen = generation(path)
            if gen == seq:
                put_back += 1  # for a moment only: the edit put it back
            else:
                lost += 1
        seq += 1
        tmp = f"{path}.w{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(f"gen={seq}\\n{padding}END\\n")
        os.replace(tmp, path)
        with open(seq_path, "w") as f:
            f.write(str(seq))
        writes += 1
    time.sleep(random.random() * 0.004)
print(json.dumps({"writes": writes, "lost": lost, "put back": put_back}))
"""

EDITOR = """
import json, sys, time
import safefs
from safefs.workspace.edits import Edit, edit_file
from safefs.workspace.errors import WorkspaceError
directory, me, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
root = safefs.Root(directory)
applied, stale, conflicts = [], 0, 0
print("ready", flush=True)
sys.stdin.readline()
deadline = time.time() + seconds
while time.time() < deadline:
    gen = int(root.read_head("f.txt", 64).split(b"=")[1].split(b"\\n")[0])
    line = f"{me}.{len(applied) + stale + conflicts}"
    try:
        edit_file(root, "f.txt", [Edit(f"gen={gen}\\n", f"gen={gen}\\n"), Edit("END\\n", f"{line}\\nEND\\n")])
    except WorkspaceError as exc:
        if "text not found" in str(exc):
            stale += 1  # a plain write came first: the edit was not made, and said so
        else:
            conflicts += 1  # changed under it again and again: refused, and said so
        continue
    applied.append([gen, line])
print(json.dumps({"applied": applied, "stale": stale, "conflicts": conflicts}))
"""


def race(directory: Path, editors: int, writers: int, pad: int) -> dict[str, int]:
    path = directory / "f.txt"
    path.write_text("gen=0\n" + ("x" * 99 + "\n") * (pad // 100) + "END\n")
    (directory / "seq").write_text("0")
    seconds = str(RACE_SECONDS)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER,
                str(path),
                str(directory / "lock"),
                str(directory / "seq"),
                seconds,
                str(pad),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(writers)
    ] + [
        subprocess.Popen(
            [sys.executable, "-c", EDITOR, str(directory), f"e{i}", seconds],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(editors)
    ]
    for proc in procs:  # started (interpreters under load take a while), then all let go at once
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outs = []
    for proc in procs:
        out, _ = proc.communicate(timeout=RACE_SECONDS + 60)
        assert proc.returncode == 0, out
        outs.append(json.loads(out))
    written, edited = outs[:writers], outs[writers:]
    final = path.read_text()
    last = int((directory / "seq").read_text())
    final_gen = int(final.split("=", 1)[1].split("\n", 1)[0])
    applied = [(gen, line) for out in edited for gen, line in out["applied"]]
    in_last = [line for gen, line in applied if gen == final_gen]
    counts = {
        "plain writes": sum(w["writes"] for w in written),
        "plain writes replaced by an edit": sum(w["lost"] for w in written),
        "plain writes displaced for a moment, then put back": sum(w["put back"] for w in written),
        "edits applied": len(applied),
        "edits in the final file": sum(f"\n{line}\n" in final for line in in_last),
        "edits superseded by a later plain write": len(applied) - len(in_last),
        "edits refused as stale": sum(e["stale"] for e in edited),
        "edits refused after repeated changes": sum(e["conflicts"] for e in edited),
    }
    print(f"{editors} editors, {writers} writers, {pad} bytes of padding, {RACE_SECONDS} s: {counts}")
    tried = counts["edits applied"] + counts["edits refused as stale"]
    assert counts["plain writes"] > 0 and tried + counts["edits refused after repeated changes"] > 0
    assert counts["plain writes replaced by an edit"] == 0
    assert final_gen == last  # the last plain write, or edits made on it, is what remains
    assert counts["edits in the final file"] == len(in_last)
    assert not [p.name for p in directory.iterdir() if p.name.endswith(TEMP_SUFFIX)]  # none left behind
    return counts


@settings(max_examples=3, deadline=None, database=None)
@given(
    editors=st.integers(min_value=1, max_value=3),
    writers=st.integers(min_value=1, max_value=2),
    pad=st.sampled_from([0, 64 << 10, 256 << 10]),
)
def test_no_write_is_lost_to_an_edit_against_free_running_writers(
    editors: int, writers: int, pad: int
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        race(Path(directory), editors, writers, pad)


def test_without_the_exchange_an_edit_falls_back_to_the_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where RENAME_EXCHANGE is refused (no renameat2, or a file system without it), the edit
    renames its new file into place after the check, and asks for the exchange no more."""
    calls = []

    def refused(self: safefs.Root, a: str, b: str) -> None:
        calls.append((a, b))
        raise OSError(errno.EINVAL, "RENAME_EXCHANGE is not supported here")

    monkeypatch.setattr(edits, "_exchange_works", True)  # restored after the test
    monkeypatch.setattr(safefs.Root, "exchange", refused)
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "f.txt").write_text("gen=0\nEND\n")
        with safefs.Root(directory) as root:
            for n in range(2):
                result = edits.edit_file(root, "f.txt", [edits.Edit("END\n", f"{n}\nEND\n")])
                assert result.attempts == 1
        assert Path(directory, "f.txt").read_text() == "gen=0\n0\n1\nEND\n"
        assert not [n for n in os.listdir(directory) if n.endswith(TEMP_SUFFIX)]
    assert len(calls) == 1


@pytest.mark.parametrize(
    "cued", [(1,), (1, 2)], ids=["before the exchange", "before the exchange and before it is undone"]
)
def test_a_write_landing_at_the_exchange_is_put_back_and_edited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cued: tuple[int, ...]
) -> None:
    """A writer cued to replace the file right before the edit's exchange (and, the second time,
    right before the exchange that undoes it): its content stays, with the edit applied on top."""
    (tmp_path / "f.txt").write_text("seq=0\nEND\n")
    writer = subprocess.Popen(
        [sys.executable, "-c", ON_CUE, str(tmp_path / "f.txt")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    plain_exchange = safefs.Root.exchange
    calls = 0

    def exchange_cued(self: safefs.Root, a: str, b: str) -> None:
        nonlocal calls
        calls += 1
        if calls in cued:
            assert writer.stdin is not None and writer.stdout is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
            assert writer.stdout.readline() == "done\n"
        plain_exchange(self, a, b)

    monkeypatch.setattr(safefs.Root, "exchange", exchange_cued)
    try:
        with safefs.Root(str(tmp_path)) as root:
            result = edits.edit_file(root, "f.txt", [edits.Edit("END\n", "edited\nEND\n")])
    finally:
        writer.communicate(timeout=10)
    print(f"exchanges: {calls}, writes cued: {len(cued)}, reads the edit took: {result.attempts}")
    assert (tmp_path / "f.txt").read_text() == f"seq={len(cued)}\nedited\nEND\n"
    assert result.attempts == 2
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(TEMP_SUFFIX)]
