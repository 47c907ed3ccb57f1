"""Edits: compare-and-swap against the content read, overlapping occurrences, lone surrogates,
all-or-none multi-edits, and a diff of the changed region only."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import safefs
from safefs.replacing import TEMP_SUFFIX
from safefs.workspace.edits import Edit, EditResult, diff_lines, edit_file, unified_diff
from safefs.workspace.errors import WorkspaceError


@pytest.fixture
def root(tmp_path: Path) -> safefs.Root:
    return safefs.Root(str(tmp_path))


def test_an_overlapping_second_occurrence_makes_the_text_ambiguous(root: safefs.Root, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\nx = 1\nx = 1\n")
    with pytest.raises(WorkspaceError, match=r"occurs 2 times \(some overlapping\)"):
        edit_file(root, "f.py", [Edit("x = 1\nx = 1", "y")])
    assert (tmp_path / "f.py").read_text() == "x = 1\nx = 1\nx = 1\n"


def test_a_lone_surrogate_is_refused_as_write_refuses_it(root: safefs.Root, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("a\n")
    with pytest.raises(WorkspaceError, match="lone surrogate"):
        edit_file(root, "f.py", [Edit("a", "\ud800")])
    assert (tmp_path / "f.py").read_bytes() == b"a\n"


def test_several_edits_apply_all_or_none(root: safefs.Root, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("one\ntwo\nthree\n")
    with pytest.raises(WorkspaceError, match=r"edit 2 of 'f\.py': text not found"):
        edit_file(root, "f.py", [Edit("one", "1"), Edit("missing", "x")])
    assert (tmp_path / "f.py").read_text() == "one\ntwo\nthree\n"
    result = edit_file(root, "f.py", [Edit("one", "1"), Edit("three", "3"), Edit("1\ntwo", "1\n2")])
    assert (tmp_path / "f.py").read_text() == "1\n2\n3\n" and result.replacements == 3


def test_the_diff_covers_the_changed_region_with_whole_file_line_numbers() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 100_001))
    new = old.replace("line 50000\n", "changed\n")
    diff = unified_diff(old, new, "f")
    assert diff == (
        "--- f\toriginal\n+++ f\tmodified\n@@ -49997,7 +49997,7 @@\n line 49997\n line 49998\n"
        " line 49999\n-line 50000\n+changed\n line 50001\n line 50002\n line 50003\n"
    )
    # The same hunk as difflib over the whole file.
    whole = "".join(
        difflib.unified_diff(diff_lines(old), diff_lines(new), "f", "f", "original", "modified", n=3)
    )
    assert diff == whole


@pytest.mark.parametrize(
    "old, new",
    [
        ("a\nb\nc", "a\nB\nc"),
        ("a\nb\nc", "a\nb\nc\nd\n"),
        ("x", "y"),
        ("a\n", "a\nb"),
        ("abc\n" * 9, "abc\n" * 8),
    ],
)
def test_the_region_diff_equals_a_whole_file_diff(old: str, new: str) -> None:
    whole = difflib.unified_diff(diff_lines(old), diff_lines(new), "f", "f", "original", "modified")
    expected = "".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n" for x in whole)
    assert unified_diff(old, new, "f") == expected


def test_concurrent_edits_in_threads_are_never_lost(root: safefs.Root, tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("END\n")
    outcomes = {"applied": 0, "refused": 0}
    lock = threading.Lock()

    def add(i: int) -> None:
        try:
            edit_file(root, "log.txt", [Edit("END\n", f"m{i}\nEND\n")])
            kind = "applied"
        except WorkspaceError:
            kind = "refused"
        with lock:
            outcomes[kind] += 1

    threads = [threading.Thread(target=add, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    text = (tmp_path / "log.txt").read_text()
    kept = sum(f"m{i}\n" in text for i in range(12))
    print(f"threads: {outcomes}, markers kept {kept}")
    # Each edit either landed or was refused with an error after its retries (a loaded machine
    # may refuse some); none that reported success is missing.
    assert not any(t.is_alive() for t in threads)
    assert outcomes["applied"] + outcomes["refused"] == 12 and outcomes["applied"] >= 1
    assert kept == outcomes["applied"]


CHILD = """
import sys, safefs
from safefs.workspace.edits import Edit, edit_file
from safefs.workspace.errors import WorkspaceError
root = safefs.Root(sys.argv[1])
applied = []
for i in range(int(sys.argv[3])):
    try:
        edit_file(root, "log.txt", [Edit("END\\n", f"{sys.argv[2]}{i}\\nEND\\n")])
    except WorkspaceError:
        continue  # refused after its retries: reported, not lost
    applied.append(i)
print(" ".join(map(str, applied)))
"""


def test_concurrent_edits_from_two_processes_are_never_lost(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("END\n")
    children = {
        tag: subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path), tag, "15"], stdout=subprocess.PIPE, text=True
        )
        for tag in ("p", "q")
    }
    applied = {tag: child.communicate(timeout=30)[0].split() for tag, child in children.items()}
    assert [child.returncode for child in children.values()] == [0, 0]
    text = (tmp_path / "log.txt").read_text()
    kept = {f"{tag}{i}" for tag in "pq" for i in range(15) if f"{tag}{i}\n" in text}
    reported = {f"{tag}{i}" for tag, done in applied.items() for i in done}
    print(f"two processes, 30 edits: {len(reported)} reported applied, {len(kept)} markers kept")
    assert reported and kept == reported


def test_text_inserted_into_a_crlf_file_gets_crlf_line_ends(root: safefs.Root, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"one\r\ntwo\r\n")
    edit_file(root, "f.txt", [Edit("one", "one\nand a half")])  # oldText holds no line break
    assert (tmp_path / "f.txt").read_bytes() == b"one\r\nand a half\r\ntwo\r\n"
    edit_file(root, "f.txt", [Edit("two\n", "2\r\n3\n")])  # LF oldText; a CRLF already given stays one
    assert (tmp_path / "f.txt").read_bytes() == b"one\r\nand a half\r\n2\r\n3\r\n"
    (tmp_path / "lf.txt").write_bytes(b"one\ntwo\n")  # an LF file keeps LF
    edit_file(root, "lf.txt", [Edit("one", "one\nmore")])
    assert (tmp_path / "lf.txt").read_bytes() == b"one\nmore\ntwo\n"


def test_a_form_feed_is_inside_a_line_of_the_diff_as_in_git() -> None:
    # As in CPython's email/charset.py: a form feed alone on a line between sections.
    old = "a\n\f\nb\nc\n"
    assert unified_diff(old, old.replace("b", "B"), "f") == (
        "--- f\toriginal\n+++ f\tmodified\n@@ -1,4 +1,4 @@\n a\n \f\n-b\n+B\n c\n"
    )
    old = "a\u2028b\x85c\rd\n1\n2\n3\n4\n"
    diff = unified_diff(old, old.replace("1", "one"), "f")
    assert diff.startswith("--- f\toriginal\n+++ f\tmodified\n@@ -1,5 +1,5 @@\n a\u2028b\x85c\rd\n-1\n"), diff
    assert "No newline" not in diff


BREAKS = ["\n", "\r\n", "\r", "\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "a", "b", "é"]
texts = st.lists(st.sampled_from(BREAKS), max_size=40).map("".join)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@settings(max_examples=150, deadline=None)
@given(old=texts, start=st.integers(0, 40), length=st.integers(0, 10), inserted=texts)
def test_git_apply_turns_the_old_text_into_the_new_with_the_diff(
    old: str, start: int, length: int, inserted: str
) -> None:
    start = min(start, len(old))
    new = old[:start] + inserted + old[start + length :]
    diff = unified_diff(old, new, "f")
    if old == new:
        assert diff == ""
        return
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / "f").write_bytes(old.encode())
        (Path(scratch) / "p.diff").write_bytes(diff.encode())
        applied = subprocess.run(
            ["git", "apply", "-p0", "--unidiff-zero", "p.diff"], cwd=scratch, capture_output=True
        )
        assert applied.returncode == 0, (diff, applied.stderr)
        assert (Path(scratch) / "f").read_bytes() == new.encode()


def test_simultaneous_editors_take_turns_without_a_retry(root: safefs.Root, tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("END\n")
    editors = 24
    start = threading.Barrier(editors)
    results: dict[int, EditResult | WorkspaceError] = {}

    def add(i: int) -> None:
        start.wait()
        try:
            results[i] = edit_file(root, "log.txt", [Edit("END\n", f"m{i}\nEND\n")])
        except WorkspaceError as exc:
            results[i] = exc

    threads = [threading.Thread(target=add, args=(i,)) for i in range(editors)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    attempts = [r.attempts if isinstance(r, EditResult) else "refused" for r in results.values()]
    tally = {a: attempts.count(a) for a in set(attempts)}
    print(f"{editors} simultaneous edits, by reads taken: {tally}")
    assert not any(t.is_alive() for t in threads)
    assert attempts == [1] * editors  # each read the file once, after the one before it wrote
    text = (tmp_path / "log.txt").read_text()
    assert all(f"m{i}\n" in text for i in range(editors))


# A writer that takes no lock: it replaces the file by rename with its own content, and before
# each write checks that its previous write is still there (or an edit made on top of it).
WRITER = """
import os, sys, time, json, random
path, stop, pad = sys.argv[1], sys.argv[2], int(sys.argv[3])
last, lost, writes = 0, 0, 0
padding = ("x" * 99 + "\\n") * (pad // 100)
while not os.path.exists(stop):
    with open(path) as f:
        seen = int(f.read().split("seq=", 1)[1].split("\\n", 1)[0])
    if seen < last:
        # An edit exchanged in over our write shows for an instant before the edit, seeing our
        # write in the file it displaced, puts it back: lost only if it is still gone after that.
        time.sleep(0.2)
        with open(path) as f:
            seen = int(f.read().split("seq=", 1)[1].split("\\n", 1)[0])
        if seen < last:
            lost += 1  # an edit made on an older content replaced our write
    time.sleep(random.random() * 0.03)
    last += 1
    with open(path + ".w", "w") as f:
        f.write(f"{padding}seq={last}\\nEND\\n")
    os.replace(path + ".w", path)
    writes += 1
print(json.dumps({"writes": writes, "lost": lost}))
"""


def test_a_write_landing_while_the_edit_writes_is_never_lost(root: safefs.Root, tmp_path: Path) -> None:
    pad = 4 << 20  # writing this much takes the edit milliseconds: a wide window for the writer
    (tmp_path / "big.txt").write_text(("x" * 99 + "\n") * (pad // 100) + "seq=0\nEND\n")
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path / "big.txt"), str(stop), str(pad)],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes = {"first try": 0, "retried": 0, "refused": 0}
    try:
        deadline = time.monotonic() + 6
        rounds = 0
        while rounds < 40 and time.monotonic() < deadline:
            rounds += 1
            try:
                result = edit_file(root, "big.txt", [Edit("END\n", "edited\nEND\n", replace_all=True)])
            except WorkspaceError:
                outcomes["refused"] += 1
                continue
            outcomes["first try" if result.attempts == 1 else "retried"] += 1
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=30)
    counts = json.loads(out)
    print(f"edits: {outcomes}; writer: {counts}")
    assert writer.returncode == 0
    assert counts["writes"] > 0 and outcomes["first try"] + outcomes["retried"] > 0
    assert counts["lost"] == 0
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(TEMP_SUFFIX)]  # none left behind


# A writer that takes no lock, driven by the test: each line it reads makes it replace the file.
ON_CUE = """
import os, sys
path = sys.argv[1]
for n, _ in enumerate(sys.stdin, 1):
    with open(path + ".w", "w") as f:
        f.write(f"seq={n}\\nEND\\n")
    os.replace(path + ".w", path)
    print("done", flush=True)
"""


def test_a_write_landing_as_the_edit_starts_writing_is_kept(
    root: safefs.Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_text("seq=0\nEND\n")
    writer = subprocess.Popen(
        [sys.executable, "-c", ON_CUE, str(tmp_path / "f.txt")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    cues = 0

    def cue() -> None:  # the first time the edit starts writing, the writer replaces the file
        nonlocal cues
        if cues == 0:
            assert writer.stdin is not None and writer.stdout is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
            assert writer.stdout.readline() == "done\n"
        cues += 1

    plain_open, plain_write = safefs.Root.open, safefs.Root.write_bytes

    def open_cued(self: safefs.Root, path: str, mode: str = "r", **kw: object) -> object:
        if set(mode) & set("wxa+"):
            cue()
        return plain_open(self, path, mode, **kw)  # type: ignore[arg-type]

    def write_cued(self: safefs.Root, path: str, data: bytes, **kw: object) -> int:
        cue()
        return plain_write(self, path, data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(safefs.Root, "open", open_cued)
    monkeypatch.setattr(safefs.Root, "write_bytes", write_cued)
    try:
        result = edit_file(root, "f.txt", [Edit("END\n", "edited\nEND\n")])
    finally:
        writer.communicate(timeout=10)
    print(f"writes started by the edit: {cues}, reads it took: {result.attempts}")
    assert cues >= 1
    # The writer's content is there, with the edit applied on top of it: nothing was lost.
    assert (tmp_path / "f.txt").read_text() == "seq=1\nedited\nEND\n"
    assert result.attempts == 2


def test_an_edit_through_a_link_replaces_its_target_and_keeps_the_mode(
    root: safefs.Root, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "real.txt").write_text("a\n")
    (tmp_path / "sub" / "real.txt").chmod(0o640)
    (tmp_path / "link.txt").symlink_to("sub/real.txt")
    edit_file(root, "link.txt", [Edit("a", "b")])
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "sub" / "real.txt").read_text() == "b\n"
    assert (tmp_path / "sub" / "real.txt").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["real.txt"]
