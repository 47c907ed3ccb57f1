"""Extraction as a user meets it: members streamed, each file complete or absent, an existing
file replaced whole, archives given as paths or open objects, and the command line."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tarfile
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from safefs import Root
from safefs.archive import CHUNK, extractall
from safefs.archive.cli import main
from tests.archive.archives import TarMaker, open_zip, zip_bytes
from tests.fds import new_fds, open_fds


def test_a_large_member_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    size = 64 * 1024 * 1024
    archive = tmp_path / "big.tar.gz"
    with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo("big")
        info.size = size
        tar.addfile(info, io.BufferedReader(_Zeros(size)))
    tracemalloc.start()
    try:
        extractall(archive, tmp_path / "dest")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (tmp_path / "dest" / "big").stat().st_size == size
    assert peak < 16 * CHUNK, peak  # a few buffers, never the member


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def _truncated_tar(tmp_path: Path) -> Path:
    """``first`` whole, then ``second`` cut off in the middle of its data."""
    with TarMaker() as arc:
        arc.add("first", content="complete")
        arc.add("second", content="y" * 100_000)
    path = tmp_path / "cut.tar"
    path.write_bytes(arc.contents[: 512 * 3 + 50_000])
    return path


def test_a_member_that_fails_midway_leaves_nothing_half_written(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "second").write_text("the previous file")
    with pytest.raises(tarfile.ReadError, match="unexpected end of data"):
        extractall(_truncated_tar(tmp_path), dest)
    assert (dest / "first").read_text() == "complete"
    assert (dest / "second").read_text() == "the previous file"
    assert sorted(os.listdir(dest)) == ["first", "second"]  # no temporary file left


def test_existing_files_and_links_are_replaced_whole(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "f").write_text("old")
    (dest / "l").symlink_to("f")
    with TarMaker() as arc:
        arc.add("f", content="new")
        arc.add("l", content="a file now")
    extractall(arc.open(), dest)
    assert (dest / "f").read_text() == "new"
    assert not (dest / "l").is_symlink() and (dest / "l").read_text() == "a file now"


def test_destination_may_be_a_root_left_open(tmp_path: Path) -> None:
    (tmp_path / "dest").mkdir()
    with TarMaker() as arc:
        arc.add("sub/x", content="x")
    with Root(tmp_path / "dest") as root:
        extractall(arc.open(), root)
        assert not root.closed
        assert root.read_text("sub/x") == "x"


def test_stream_mode_tar_is_read_in_order(tmp_path: Path) -> None:
    with TarMaker() as arc:
        arc.add("a/b", content="1")
        arc.add("c", content="2")
    with tarfile.open(fileobj=io.BytesIO(gzip.compress(arc.contents)), mode="r|gz") as tar:
        extractall(tar, tmp_path / "dest")
    assert (tmp_path / "dest" / "a" / "b").read_text() == "1"


def test_zip_and_tar_paths_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "a.zip").write_bytes(zip_bytes([("z/1", b"zip")]))
    with TarMaker() as arc:
        arc.add("t/1", content="tar")
    (tmp_path / "a.tar.gz").write_bytes(gzip.compress(arc.contents))
    extractall(tmp_path / "a.zip", tmp_path / "dest")
    extractall(str(tmp_path / "a.tar.gz"), tmp_path / "dest")
    assert (tmp_path / "dest" / "z" / "1").read_bytes() == b"zip"
    assert (tmp_path / "dest" / "t" / "1").read_bytes() == b"tar"


def test_a_zip_takes_filter_names_only(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="filter name"):
        extractall(open_zip(zip_bytes([("x", b"")])), tmp_path, filter=tarfile.data_filter)
    with pytest.raises(ValueError, match="not found"):
        extractall(open_zip(zip_bytes([("x", b"")])), tmp_path, filter="unknown")


def test_a_zip_symlink_member_is_a_file_as_zipfile_makes_it(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("link")
        info.external_attr = 0o120777 << 16
        archive.writestr(info, "/etc/passwd")
    for who in "zipfile", "ours":
        dest = tmp_path / who
        if who == "zipfile":
            zipfile.ZipFile(io.BytesIO(buffer.getvalue())).extractall(dest)
        else:
            extractall(open_zip(buffer.getvalue()), dest)
        assert not (dest / "link").is_symlink()
        assert (dest / "link").read_text() == "/etc/passwd"


def test_command_line_extracts(tmp_path: Path) -> None:
    (tmp_path / "a.zip").write_bytes(zip_bytes([("d/x", b"1")]))
    assert main([str(tmp_path / "a.zip"), str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "d" / "x").read_bytes() == b"1"


def test_command_line_refusal_is_one_line(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "out").mkdir(parents=True)
    (outer / "out" / "d").symlink_to(outer)
    (tmp_path / "a.zip").write_bytes(zip_bytes([("d/x", b"1")]))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from safefs.archive.cli import entry_point; entry_point()",
            str(tmp_path / "a.zip"),
            str(outer / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    archive = tmp_path / "a.zip"
    assert done.returncode == 2
    assert done.stderr == (
        f"safefs-extract: {archive}: d/x: refused: the path leads outside the destination\n"
        f"safefs-extract: {archive}: 1 member(s) not extracted\n"
    )
    assert not (outer / "x").exists()


def test_command_line_truncated_archive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = _truncated_tar(tmp_path)
    assert main([str(archive), str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"safefs-extract: {archive}: second: unexpected end of data\n"


def test_a_zip_member_with_an_empty_name_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(zipfile.BadZipFile, match="empty name"):
        extractall(open_zip(zip_bytes([("", b"x")])), tmp_path)


def test_failures_leave_no_descriptor_open(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "dest").mkdir(parents=True)
    (outer / "dest" / "d").symlink_to(outer)
    truncated = _truncated_tar(tmp_path)
    planted = zip_bytes([("ok", b"1"), ("d/x", b"2")])
    before = open_fds()
    for _ in range(3):
        with pytest.raises(tarfile.ReadError):
            extractall(truncated, tmp_path / "cut")
        with pytest.raises(OSError):
            extractall(open_zip(planted), outer / "dest")
        assert main([str(truncated), str(tmp_path / "cli")]) == 2
    assert new_fds(before) == {}


def test_an_archive_that_cannot_be_read_makes_no_destination(tmp_path: Path) -> None:
    (tmp_path / "not-an-archive").write_text("plain text")
    with pytest.raises(FileNotFoundError):
        extractall(tmp_path / "missing.tar", tmp_path / "a")
    with pytest.raises(tarfile.ReadError):
        extractall(tmp_path / "not-an-archive", tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
