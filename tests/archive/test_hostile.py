"""Archives that used to lose files, hang, fill the disk, print tracebacks or be read as the
wrong format: each case extracted, with what must hold afterwards. The command runs in a process
of its own, so a hang is a timeout."""

from __future__ import annotations

import gzip
import io
import lzma
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import time
import tomllib
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from safefs.archive import LimitExceeded, Limits, OverlappingEntries, extractall
from tests.archive.hostile import (
    info,
    negative_size_tar,
    overlapping_zip,
    patch_zip,
    regular,
    run_cli,
    stored_zip,
    tar_bytes,
)

PROJECT = Path(__file__).resolve().parents[2]


def _open_tar(raw: bytes) -> tarfile.TarFile:
    return tarfile.TarFile(fileobj=io.BytesIO(raw))


def one_error_line(done: subprocess.CompletedProcess[str], archive: str, member: str | None = None) -> str:
    """The run failed with status 2 and said so in one line (plus the count of failed members)
    naming the archive, and the member when given; never a traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "[Errno None]" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert 1 <= len(lines) <= 2, lines
    assert lines[0].startswith(f"safefs-extract: {archive}: "), lines
    if member is not None:
        assert lines[0].startswith(f"safefs-extract: {archive}: {member}: "), lines
        assert lines[-1] == f"safefs-extract: {archive}: 1 member(s) not extracted", lines
    else:
        assert len(lines) == 1, lines
    print(f"\n{lines[0]}")
    return lines[0]


# -- 1: a failing link never removes what was there ------------------------------------------------


def test_a_hard_link_naming_its_own_file_keeps_it(tmp_path: Path) -> None:
    # What GNU tar writes for `tar cf x.tar d d/f`: d/f, then d/f again as a link to itself.
    raw = tar_bytes(
        [
            (info("d", type=tarfile.DIRTYPE, mode=0o755), None),
            regular("d/f", b"content"),
            (info("d/f", type=tarfile.LNKTYPE, linkname="d/f"), None),
        ]
    )
    (tmp_path / "x.tar").write_bytes(raw)
    done = run_cli("x.tar", "-C", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "d" / "f").read_bytes() == b"content"
    assert sorted(os.listdir(tmp_path / "out" / "d")) == ["f"]


def test_a_hard_link_to_itself_keeps_the_file_already_there(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "f").write_text("there before")
    extractall(
        _open_tar(tar_bytes([(info("f", type=tarfile.LNKTYPE, linkname="f"), None)])),
        dest,
    )
    assert (dest / "f").read_text() == "there before"


def test_a_hard_link_to_a_directory_keeps_the_existing_file(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "f").write_text("there before")
    raw = tar_bytes(
        [(info("d", type=tarfile.DIRTYPE), None), (info("f", type=tarfile.LNKTYPE, linkname="d"), None)]
    )
    with pytest.raises(OSError):
        extractall(_open_tar(raw), dest)
    assert (dest / "f").read_text() == "there before"
    assert sorted(os.listdir(dest)) == ["d", "f"]  # no temporary link left


# -- 2: every member loop ends -------------------------------------------------------------------


def test_a_negative_size_ends_at_once(tmp_path: Path) -> None:
    (tmp_path / "neg.tar").write_bytes(negative_size_tar())
    started = time.monotonic()
    done = run_cli("neg.tar", "-C", "out", cwd=tmp_path, timeout=30)
    assert time.monotonic() - started < 30
    one_error_line(done, "neg.tar")
    assert (tmp_path / "out" / "first").read_bytes() == b"x" * 10


def test_a_negative_size_in_a_tarfile_given_open_ends(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import io, sys, tarfile\nfrom safefs.archive import extractall\n"
            "raw = sys.stdin.buffer.read()\n"
            "try:\n extractall(tarfile.open(fileobj=io.BytesIO(raw)), sys.argv[1])\n"
            "except tarfile.ReadError as e:\n print('ReadError', e)\n",
            str(tmp_path / "out"),
        ],
        input=negative_size_tar(),
        capture_output=True,
        timeout=30,
    )
    assert done.stdout.startswith(b"ReadError invalid header"), done


def _same_name_tar_gz(count: int) -> bytes:
    member = tarfile.TarInfo("x")
    member.size = 1
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=1) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar,
    ):
        for _ in range(count):
            tar.addfile(member, io.BytesIO(b"z"))
    return buffer.getvalue()


def _peak_memory(tmp_path: Path, count: int) -> int:
    archive = tmp_path / f"same-{count}.tar.gz"
    archive.write_bytes(_same_name_tar_gz(count))
    tracemalloc.start()
    started = time.process_time()
    try:
        extractall(archive, tmp_path / f"out-{count}")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    took = time.process_time() - started
    print(f"\n{count} same-name members: {took:.2f} s CPU, peak {peak / 1024:.0f} KiB traced")
    assert os.listdir(tmp_path / f"out-{count}") == ["x"]
    return peak


def test_many_same_name_members_in_flat_memory(tmp_path: Path) -> None:
    # tarfile keeps every header it reads (about 1 KiB each); here memory must not grow with them.
    small, large = _peak_memory(tmp_path, 300), _peak_memory(tmp_path, 3_000)
    assert large < small + 512 * 1024, (small, large)


# -- 3: sparse members stay sparse ---------------------------------------------------------------


@pytest.mark.parametrize("format", ["gnu", "posix"])
def test_a_sparse_member_stays_sparse(tmp_path: Path, format: str) -> None:
    if shutil.which("tar") is None:
        pytest.skip("GNU tar (make system-packages) writes the sparse archive")
    image = tmp_path / "src" / "image"
    image.parent.mkdir()
    with open(image, "wb") as f:
        f.truncate(256 << 20)
        f.seek(100 << 20)
        f.write(b"data in the middle")
    subprocess.run(
        ["tar", "-S", f"--format={format}", "-cf", str(tmp_path / "s.tar"), "-C", str(image.parent), "image"],
        check=True,
    )
    assert (tmp_path / "s.tar").stat().st_size < 64 * 1024
    extractall(tmp_path / "s.tar", tmp_path / "out")
    out = tmp_path / "out" / "image"
    st = out.stat()
    print(f"\nsparse {format}: size {st.st_size}, allocated {st.st_blocks * 512}")
    assert st.st_size == 256 << 20
    assert st.st_blocks * 512 < 1 << 20
    with open(out, "rb") as f:
        f.seek(100 << 20)
        assert f.read(18) == b"data in the middle"
        f.seek(0)
        assert f.read(4096) == bytes(4096)


def test_a_sparse_map_out_of_order_is_refused(tmp_path: Path) -> None:
    pax = {
        "GNU.sparse.major": "1",
        "GNU.sparse.minor": "0",
        "GNU.sparse.name": "s",
        "GNU.sparse.realsize": "4096",
    }
    body = b"2\n1024\n10\n0\n10\n".ljust(512, b"\0") + b"a" * 20
    raw = tar_bytes([(info("GNUSparseFile.0/s", size=len(body), pax=pax), body)])
    (tmp_path / "bad.tar").write_bytes(raw)
    one_error_line(run_cli("bad.tar", "-C", "out", cwd=tmp_path), "bad.tar", "s")


# -- 4: limits, and zip entries that overlap ------------------------------------------------------


def test_overlapping_zip_entries_are_refused_whole(tmp_path: Path) -> None:
    (tmp_path / "bomb.zip").write_bytes(overlapping_zip(50, 1 << 20))
    with pytest.raises(OverlappingEntries, match="overlapped components"):
        extractall(tmp_path / "bomb.zip", tmp_path / "out")
    assert os.listdir(tmp_path / "out") == []
    line = one_error_line(run_cli("bomb.zip", "-C", "out2", cwd=tmp_path), "bomb.zip")
    assert "overlapped components" in line


def test_a_zip_with_one_entry_per_name_is_no_overlap(tmp_path: Path) -> None:
    (tmp_path / "ok.zip").write_bytes(stored_zip([("a", b"1"), ("b/c", b"2")], zipfile.ZIP_DEFLATED))
    extractall(tmp_path / "ok.zip", tmp_path / "out")
    assert (tmp_path / "out" / "b" / "c").read_bytes() == b"2"


def test_total_bytes_are_bounded_and_nothing_partial_stays(tmp_path: Path) -> None:
    (tmp_path / "t.tar").write_bytes(tar_bytes([regular("a", b"1" * 600), regular("b", b"2" * 600)]))
    with pytest.raises(LimitExceeded, match="more than 1000 bytes"):
        extractall(tmp_path / "t.tar", tmp_path / "out", limits=Limits(max_bytes=1000))
    assert os.listdir(tmp_path / "out") == ["a"]
    line = one_error_line(run_cli("t.tar", "-C", "out2", "--max-bytes", "1000", cwd=tmp_path), "t.tar")
    assert "--max-bytes" in line


def test_members_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "t.tar").write_bytes(tar_bytes([regular(f"m{i}", b"") for i in range(5)]))
    with pytest.raises(LimitExceeded, match="more than 3 members"):
        extractall(tmp_path / "t.tar", tmp_path / "out", limits=Limits(max_members=3))
    assert sorted(os.listdir(tmp_path / "out")) == ["m0", "m1", "m2"]
    with pytest.raises(LimitExceeded):
        extractall(tmp_path / "t.tar", tmp_path / "z", limits=Limits(max_members=3))


def test_the_compression_ratio_is_bounded(tmp_path: Path) -> None:
    member = tarfile.TarInfo("zeros")
    member.size = 80 << 20
    with tarfile.open(tmp_path / "z.tar.gz", "w:gz", compresslevel=9) as tar:
        tar.addfile(member, io.BytesIO(bytes(member.size)))
    assert (tmp_path / "z.tar.gz").stat().st_size < 100_000  # about 1000:1
    with pytest.raises(LimitExceeded, match="per archive byte"):
        extractall(tmp_path / "z.tar.gz", tmp_path / "out", limits=Limits(max_ratio=100))
    assert os.listdir(tmp_path / "out") == []
    extractall(tmp_path / "z.tar.gz", tmp_path / "ok")  # the default admits gzip's best (about 1030:1)
    assert (tmp_path / "ok" / "zeros").stat().st_size == 80 << 20


# -- 5: tar is asked before zip ----------------------------------------------------------------


def test_a_tar_ending_in_a_zip_is_a_tar(tmp_path: Path) -> None:
    wheel = stored_zip([("inside.py", b"print()")])
    (tmp_path / "t.tar").write_bytes(tar_bytes([regular("README", b"hi"), regular("pkg.whl", wheel)]))
    assert zipfile.is_zipfile(tmp_path / "t.tar")
    extractall(tmp_path / "t.tar", tmp_path / "out")
    assert sorted(os.listdir(tmp_path / "out")) == ["README", "pkg.whl"]
    assert (tmp_path / "out" / "pkg.whl").read_bytes() == wheel


# -- 6: a compressed stream is read to its check ---------------------------------------------------


def _damage_near_end(raw: bytes, back: int) -> bytes:
    damaged = bytearray(raw)
    damaged[len(raw) - back] ^= 0xFF
    return bytes(damaged)


@pytest.mark.parametrize(("suffix", "back"), [("xz", 20), ("gz", 6)])
def test_a_damaged_check_is_an_error(tmp_path: Path, suffix: str, back: int) -> None:
    data = os.urandom(5000)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz" if suffix == "xz" else "w:gz") as tar:
        tar.addfile(info("f", size=len(data)), io.BytesIO(data))
    (tmp_path / f"c.tar.{suffix}").write_bytes(_damage_near_end(buffer.getvalue(), back))
    with pytest.raises((lzma.LZMAError, OSError, EOFError, tarfile.ReadError)):
        extractall(tmp_path / f"c.tar.{suffix}", tmp_path / "out")
    one_error_line(run_cli(f"c.tar.{suffix}", "-C", "out2", cwd=tmp_path), f"c.tar.{suffix}")


# -- 7: one line per error, never a traceback --------------------------------------------------------


def _zip_member(method: int) -> bytes:
    return stored_zip([("m", os.urandom(20_000).hex().encode())], method)


def _damage_data(raw: bytes) -> bytes:
    at = raw.find(b"PK\x03\x04") + 30 + 1 + 200
    return raw[:at] + bytes(64) + raw[at + 64 :]


def _pax(name: str, pax: dict[str, str], data: bytes = b"x") -> bytes:
    return tar_bytes([(info(name, size=len(data), pax=pax), data)])


MEMBER_FAILURES: dict[str, tuple[Callable[[], bytes], str]] = {
    "corrupt-deflate.zip": (lambda: _damage_data(_zip_member(zipfile.ZIP_DEFLATED)), "m"),
    "corrupt-lzma.zip": (lambda: _damage_data(_zip_member(zipfile.ZIP_LZMA)), "m"),
    "encrypted.zip": (lambda: patch_zip(_zip_member(zipfile.ZIP_STORED), flag=1), "m"),
    "method99.zip": (lambda: patch_zip(_zip_member(zipfile.ZIP_STORED), method=99), "m"),
    "nul.tar": (lambda: _pax("plain", {"path": "a\0b"}), "a\\x00b"),
    "mtime.tar": (lambda: _pax("late", {"mtime": "1" + "0" * 400}), "late"),
}


@pytest.mark.parametrize("name", sorted(MEMBER_FAILURES))
def test_a_failing_member_is_one_line(tmp_path: Path, name: str) -> None:
    build, member = MEMBER_FAILURES[name]
    (tmp_path / name).write_bytes(build())
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "m").write_text("there before")
    done = run_cli(name, "-C", "out", cwd=tmp_path)
    one_error_line(done, name, member)
    assert (tmp_path / "out" / "m").read_text() == "there before"


def _truncated_gz() -> bytes:
    raw = gzip.compress(tar_bytes([regular("f", os.urandom(20_000))]))
    return raw[: len(raw) // 2]


ARCHIVE_FAILURES: dict[str, Callable[[], bytes]] = {
    "bad-sparse-map.tar": lambda: _pax(
        "s", {"GNU.sparse.map": "1,x", "GNU.sparse.size": "10", "GNU.sparse.name": "s"}
    ),
    "truncated.tar.gz": _truncated_gz,
    "garbage.tar.gz": lambda: b"\x1f\x8b" + os.urandom(3000),
    "text.txt": lambda: b"just some text\n",
    "empty": lambda: b"",
}


@pytest.mark.parametrize("name", sorted(ARCHIVE_FAILURES))
def test_a_damaged_archive_is_one_line(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(ARCHIVE_FAILURES[name]())
    one_error_line(run_cli(name, "-C", "out", cwd=tmp_path), name)


def test_dir_given_as_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a.tar").write_bytes(tar_bytes([regular("f", b"1")]))
    (tmp_path / "file").write_text("a file")
    line = one_error_line(run_cli("a.tar", "-C", "file", cwd=tmp_path), "file")
    assert line == "safefs-extract: file: Not a directory"


# -- 8: the Pythons the project admits have the data filter --------------------------------------


def test_requires_python_excludes_pythons_without_the_data_filter() -> None:
    declared = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert "3.11.3" not in SpecifierSet(declared)
    assert "3.11.4" in SpecifierSet(declared)
    assert hasattr(tarfile, "data_filter")


# -- 9: a directory member never changes the destination through a link ---------------------------


def test_a_directory_member_replaces_a_link_to_the_destination(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir(mode=0o755)
    raw = tar_bytes(
        [
            (info("n", type=tarfile.SYMTYPE, linkname="."), None),
            (info("n", type=tarfile.DIRTYPE, mode=0o000), None),
        ]
    )
    extractall(_open_tar(raw), dest, filter="tar")
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
    assert not (dest / "n").is_symlink() and (dest / "n").is_dir()
    assert stat.S_IMODE((dest / "n").lstat().st_mode) == 0o000
