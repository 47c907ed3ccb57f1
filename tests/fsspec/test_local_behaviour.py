"""SafeFileSystem answering as fsspec's LocalFileSystem where they used to differ: link loops end
(a link to a directory is listed, not entered), writes go through a link inside the root, ``mv``
into an existing directory, ``xb`` never clobbers, ``read_block``, ``r+b``, ``exists`` of a
dangling link, ``cp_file`` without ``auto_mkdir``, and the reversed URL's error. Each case runs
on twin trees, LocalFileSystem's inside a temporary directory of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

fsspec = pytest.importorskip("fsspec")

from fsspec.implementations.local import LocalFileSystem  # noqa: E402

from safefs.fsspec import SafeFileSystem  # noqa: E402


class Twins:
    """The same tree twice: ``local`` for LocalFileSystem, ``ours`` for a SafeFileSystem."""

    def __init__(self, tmp_path: Path) -> None:
        self.local_top = tmp_path / "local" / "ws"
        self.ours_top = tmp_path / "ours" / "ws"
        self.local = LocalFileSystem()
        self.ours: SafeFileSystem | None = None

    def build(self, build: Any) -> None:
        for top in self.local_top, self.ours_top:
            top.mkdir(parents=True)
            build(top)
        self.ours = SafeFileSystem(str(self.ours_top))

    def lp(self, path: str) -> str:
        return str(self.local_top / path.lstrip("/")) if path.strip("/") else str(self.local_top)

    def names(self, found: Any) -> list[str]:
        prefix = str(self.local_top)
        if isinstance(found, dict):
            found = list(found)
        return sorted("/" + os.path.relpath(n, prefix) if n != prefix else "/" for n in found)

    def close(self) -> None:
        if self.ours is not None:
            self.ours.close()


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[Twins]:
    made = Twins(tmp_path)
    yield made
    made.close()


def _loops(top: Path) -> None:
    (top / "d").mkdir()
    (top / "d" / "f").write_text("f")
    (top / "l0").symlink_to(".")
    (top / "l1").symlink_to(".")
    (top / "d" / "up").symlink_to("..")


# -- 11: link loops end ----------------------------------------------------------------------------


LOOP_SCRIPT = """
import json, os, sys
from fsspec.implementations.local import LocalFileSystem
from safefs.fsspec import SafeFileSystem
ours_top, local_top, got = sys.argv[1:4]
fs, local = SafeFileSystem(ours_top), LocalFileSystem()
def names(found):
    return sorted("/" + os.path.relpath(n, local_top) if n != local_top else "/" for n in found)
answers = {"ours": {}, "local": {}}
def both(name, ours, theirs):
    answers["ours"][name] = ours
    answers["local"][name] = theirs
both("type", fs.info("l0")["type"], local.info(local_top + "/l0")["type"])
both("find", sorted(fs.find("/")), names(local.find(local_top)))
both("find-dirs", sorted(fs.find("/", withdirs=True)), names(local.find(local_top, withdirs=True)))
both("glob", sorted(fs.glob("/**")), names(local.glob(local_top + "/**")))
both("walk", [[p, sorted(d), sorted(f)] for p, d, f in fs.walk("/")],
     [[names([p])[0], sorted(d), sorted(f)] for p, d, f in local.walk(local_top)])
both("du", fs.du("/"), local.du(local_top))
both("expand", sorted(fs.expand_path("/", recursive=True)),
     names(local.expand_path(local_top, recursive=True)))
fs.get("/", got + "/ours", recursive=True)
local.get(local_top, got + "/local", recursive=True)
for who in ("ours", "local"):
    answers[who]["get"] = sorted(os.path.relpath(os.path.join(d, n), got + "/" + who)
                                 for d, ds, fs_ in os.walk(got + "/" + who) for n in ds + fs_)
print(json.dumps(answers))
"""


def test_link_loops_end_with_local_filesystems_answers(twins: Twins, tmp_path: Path) -> None:
    twins.build(_loops)
    # In a process of its own: a walk that never ends is a timeout here, not a hung run.
    done = subprocess.run(
        [sys.executable, "-c", LOOP_SCRIPT, str(twins.ours_top), str(twins.local_top), str(tmp_path / "got")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers = json.loads(done.stdout)
    print(f"\nLocalFileSystem: {answers['local']}")
    assert answers["ours"] == answers["local"]
    assert answers["local"]["type"] == "directory"


# -- 12: writes through a link inside the root -----------------------------------------------------


def _linked(top: Path) -> None:
    (top / "f").write_text("old")
    (top / "l").symlink_to("f")


@pytest.mark.parametrize("how", ["open", "pipe_file"])
def test_a_write_through_a_link_inside_goes_to_its_file(twins: Twins, how: str) -> None:
    twins.build(_linked)
    assert twins.ours is not None
    for fs, path, top in ((twins.local, twins.lp("l"), twins.local_top), (twins.ours, "l", twins.ours_top)):
        if how == "open":
            with fs.open(path, "wb") as f:
                f.write(b"new")
        else:
            fs.pipe_file(path, b"new")
        assert (top / "l").is_symlink(), (fs, how)
        assert (top / "f").read_bytes() == b"new"


# -- 13: mv into an existing directory -------------------------------------------------------------


@pytest.mark.parametrize("full", [False, True])
def test_mv_of_a_directory_onto_an_existing_one_moves_it_inside(twins: Twins, full: bool) -> None:
    def build(top: Path) -> None:
        (top / "a").mkdir()
        (top / "a" / "x").write_text("x")
        (top / "b").mkdir()
        if full:
            (top / "b" / "y").write_text("y")

    twins.build(build)
    assert twins.ours is not None
    twins.local.mv(twins.lp("a"), twins.lp("b"), recursive=True)
    twins.ours.mv("a", "b", recursive=True)
    assert twins.ours.find("/") == twins.names(twins.local.find(twins.lp("/")))
    assert (twins.ours_top / "b" / "a" / "x").read_text() == "x"


# -- 14: xb never clobbers ------------------------------------------------------------------------


def test_xb_never_replaces_a_file_another_writer_made_meanwhile(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    fs = SafeFileSystem(str(tmp_path / "ws"))
    try:
        f = fs.open("report", "xb")
        f.write(b"mine")
        # another process creates the file before this one commits
        subprocess.run(
            [
                sys.executable,
                "-c",
                "open(__import__('sys').argv[1], 'x').write('theirs')",
                str(tmp_path / "ws" / "report"),
            ],
            check=True,
        )
        with pytest.raises(FileExistsError):
            f.close()
    finally:
        fs.close()
    assert (tmp_path / "ws" / "report").read_text() == "theirs"
    assert os.listdir(tmp_path / "ws") == ["report"]  # no temporary file left


# -- 15: smaller differences ----------------------------------------------------------------------


def _plain(top: Path) -> None:
    (top / "f").write_bytes(b"line one\nline two\nline three\n")
    (top / "dangling").symlink_to("missing")


def test_read_block_as_local(twins: Twins) -> None:
    twins.build(_plain)
    assert twins.ours is not None
    for args in ((0, 5), (3, 10), (0, 100), (5, 8, b"\n"), (1, 1, b"\n")):
        assert twins.ours.read_block("f", *args) == twins.local.read_block(twins.lp("f"), *args), args


def test_r_plus_b_writes_in_place_as_local(twins: Twins) -> None:
    twins.build(_plain)
    assert twins.ours is not None
    for fs, path in ((twins.local, twins.lp("f")), (twins.ours, "f")):
        with fs.open(path, "r+b") as f:
            assert f.read(4) == b"line"
            f.seek(0)
            f.write(b"LINE")
    assert (
        (twins.ours_top / "f").read_bytes()
        == (twins.local_top / "f").read_bytes()
        == b"LINE one\nline two\nline three\n"
    )


def test_exists_of_a_dangling_link_as_local(twins: Twins) -> None:
    twins.build(_plain)
    assert twins.ours is not None
    assert twins.ours.exists("dangling") is twins.local.exists(twins.lp("dangling")) is False
    assert twins.ours.lexists("dangling") is twins.local.lexists(twins.lp("dangling")) is True


def test_cp_file_without_auto_mkdir_makes_no_parents(twins: Twins) -> None:
    twins.build(_plain)
    assert twins.ours is not None
    with pytest.raises(FileNotFoundError):
        twins.local.cp_file(twins.lp("f"), twins.lp("new/dir/f"))
    with pytest.raises(FileNotFoundError):
        twins.ours.cp_file("f", "new/dir/f")
    assert not (twins.ours_top / "new").exists() and not (twins.local_top / "new").exists()


def test_the_reversed_url_says_which_order(tmp_path: Path) -> None:
    (tmp_path / "ws" / "data").mkdir(parents=True)
    (tmp_path / "ws" / "data" / "x.csv").write_text("a")
    with pytest.raises(NotADirectoryError, match="the path first, then the root"):
        with fsspec.open(f"safefs://{tmp_path}/ws::data/x.csv") as f:
            f.read()
    with fsspec.open(f"safefs://data/x.csv::file://{tmp_path}/ws") as f:
        assert f.read() == b"a"
