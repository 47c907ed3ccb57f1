"""``safefs-extract`` as tar and unzip are used: -C (default the current directory), - for
standard input (a pipe too), -t, -v, --strip-components, --keep-old-files, --version; refused
members skipped, each one line naming archive and member in the same words for tar and zip, and
counted in the exit status at the end; a progress line on a terminal for a long run."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from safefs import __version__
from tests.archive.hostile import info, regular, run_cli, stored_zip, tar_bytes

COMMAND = [sys.executable, "-c", "from safefs.archive.cli import entry_point; entry_point()"]


def _sample(tmp_path: Path) -> Path:
    (tmp_path / "a.tar").write_bytes(
        tar_bytes(
            [
                (info("top", type=tarfile.DIRTYPE, mode=0o755), None),
                regular("top/sub/f", b"1"),
                regular("top/g", b"2"),
            ]
        )
    )
    return tmp_path / "a.tar"


def test_the_directory_defaults_to_the_current_one(tmp_path: Path) -> None:
    _sample(tmp_path)
    done = run_cli("a.tar", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "top" / "sub" / "f").read_bytes() == b"1"


def test_dash_reads_standard_input_from_a_pipe(tmp_path: Path) -> None:
    archive = _sample(tmp_path)
    (tmp_path / "out").mkdir()
    with open(archive, "rb") as source:
        cat = subprocess.Popen(["cat"], stdin=source, stdout=subprocess.PIPE)
        done = subprocess.run(
            [*COMMAND, "-", "-C", "out"],
            stdin=cat.stdout,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert cat.stdout is not None
        cat.stdout.close()
        cat.wait()
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "top" / "g").read_bytes() == b"2"
    zipped = stored_zip([("z/1", b"zip")])
    done = run_cli("-", "-C", "out", stdin=zipped, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "z" / "1").read_bytes() == b"zip"


def test_list_and_verbose(tmp_path: Path) -> None:
    _sample(tmp_path)
    listed = run_cli("-t", "a.tar", cwd=tmp_path)
    assert listed.returncode == 0 and listed.stdout.splitlines() == ["top", "top/sub/f", "top/g"]
    assert not (tmp_path / "top").exists()
    verbose = run_cli("-v", "a.tar", "-C", "out", cwd=tmp_path)
    assert verbose.returncode == 0 and verbose.stdout.splitlines() == ["top", "top/sub/f", "top/g"]


def test_strip_components(tmp_path: Path) -> None:
    _sample(tmp_path)
    done = run_cli("--strip-components", "1", "a.tar", "-C", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path / "out")) == ["g", "sub"]
    assert (tmp_path / "out" / "sub" / "f").read_bytes() == b"1"


def test_keep_old_files(tmp_path: Path) -> None:
    _sample(tmp_path)
    (tmp_path / "out" / "top").mkdir(parents=True)
    (tmp_path / "out" / "top" / "g").write_text("mine")
    done = run_cli("--keep-old-files", "a.tar", "-C", "out", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "safefs-extract: a.tar: top/g: File exists",
        "safefs-extract: a.tar: 1 member(s) not extracted",
    ]
    assert (tmp_path / "out" / "top" / "g").read_text() == "mine"
    assert (tmp_path / "out" / "top" / "sub" / "f").read_bytes() == b"1"


def test_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0 and done.stdout == f"safefs-extract (safefs) {__version__}\n"


def test_refused_members_are_skipped_and_counted_in_the_same_words(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "dest").mkdir(parents=True)
    (outer / "dest" / "d").symlink_to(outer)  # planted: leads out
    (tmp_path / "a.tar").write_bytes(
        tar_bytes(
            [
                regular("d/x", b"out"),
                regular("ok1", b"1"),
                (info("l", type=tarfile.SYMTYPE, linkname="../../x"), None),
                regular("ok2", b"2"),
            ]
        )
    )
    (tmp_path / "a.zip").write_bytes(stored_zip([("d/x", b"out"), ("ok1", b"1"), ("ok2", b"2")]))
    said = {}
    for kind in "tar", "zip":
        done = run_cli(f"a.{kind}", "-C", str(outer / "dest"), cwd=tmp_path)
        assert done.returncode == 2
        assert (outer / "dest" / "ok2").read_bytes() == b"2"  # members after a refusal are made
        assert sorted(os.listdir(outer)) == ["dest"]
        said[kind] = done.stderr.splitlines()
        print(f"\n{kind}: {said[kind]}")
    assert said["tar"] == [
        "safefs-extract: a.tar: d/x: refused: the path leads outside the destination",
        "safefs-extract: a.tar: l: refused: the link leads outside the destination",
        "safefs-extract: a.tar: 2 member(s) not extracted",
    ]
    assert said["zip"] == [
        "safefs-extract: a.zip: d/x: refused: the path leads outside the destination",
        "safefs-extract: a.zip: 1 member(s) not extracted",
    ]


def test_a_long_run_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    members = [regular(f"d{i % 50}/f{i}", b"x") for i in range(12_000)]
    (tmp_path / "many.tar").write_bytes(tar_bytes(members))
    pid, terminal = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(tmp_path)
        os.execv(sys.executable, [*COMMAND, "many.tar", "-C", "out"])
    started = time.monotonic()
    seen = b""
    while True:
        try:
            chunk = os.read(terminal, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    _, status = os.waitpid(pid, 0)
    os.close(terminal)
    took = time.monotonic() - started
    print(f"\n{took:.1f} s; terminal saw {seen[-80:]!r}")
    assert os.waitstatus_to_exitcode(status) == 0
    if took <= 1.5:
        pytest.skip(f"the extraction took {took:.1f} s: too short to judge a progress line")
    assert b"\rsafefs-extract: many.tar: " in seen and b" members" in seen
    assert seen.endswith(b"\r\x1b[K")  # the line is cleared at the end


def test_no_progress_when_not_a_terminal(tmp_path: Path) -> None:
    _sample(tmp_path)
    done = run_cli("a.tar", "-C", "out", cwd=tmp_path)
    assert done.stderr == "" and done.stdout == ""
