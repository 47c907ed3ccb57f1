"""zipfile's extraction tests (Lib/test/test_zipfile.py: ``ExtractTests`` and
``TestWithDirectory``), run on ``safefs.archive.extractall`` with the same archives and the same
expected files, and each compared with what the installed ``zipfile`` itself extracts.

Not ported: ``test_extract*`` of single members (``ZipFile.extract``; ours extracts whole
archives), ``test_sanitize_windows_name`` and the Windows-only names (this runs on POSIX), and
extraction into the current directory (ours takes the destination explicitly; the same names are
checked with a target).
"""

from __future__ import annotations

import pathlib
from pathlib import Path

import pytest

from tests.archive.archives import open_zip, ours, snapshot, zip_bytes

SMALL_TEST_DATA = [
    ("_ziptest1", "1q2w3e4r5t"),
    ("ziptest2dir/_ziptest2", "qawsedrftg"),
    ("ziptest2dir/ziptest3dir/_ziptest3", "azsxdcfvgb"),
    ("ziptest2dir/ziptest3dir/ziptest4dir/_ziptest3", "6y7u8i9o0p"),
]

COMMON_HACKNAMES = [
    ("../foo/bar", "foo/bar"),
    ("foo/../bar", "foo/bar"),
    ("foo/../../bar", "foo/bar"),
    ("foo/bar/..", "foo/bar"),
    ("./../foo/bar", "foo/bar"),
    ("/foo/bar", "foo/bar"),
    ("/foo/../bar", "foo/bar"),
    ("/foo/../../bar", "foo/bar"),
]
POSIX_HACKNAMES = [
    ("//foo/bar", "foo/bar"),
    ("../../foo../../ba..r", "foo../ba..r"),
    (r"foo/..\bar", r"foo/..\bar"),
]


@pytest.mark.parametrize("as_path", [str, pathlib.Path], ids=["str", "pathlike"])
def test_extract_all_with_target(tmp_path: Path, as_path: type) -> None:
    contents = zip_bytes([(name, data.encode()) for name, data in SMALL_TEST_DATA])
    target = tmp_path / "extdir"
    target.mkdir()
    ours(open_zip(contents), as_path(target), "data")
    for name, data in SMALL_TEST_DATA:
        assert (target / name).read_bytes() == data.encode()


@pytest.mark.parametrize(("arcname", "fixedname"), COMMON_HACKNAMES + POSIX_HACKNAMES)
def test_extract_hackers_arcnames(tmp_path: Path, arcname: str, fixedname: str) -> None:
    content = b"foobar" + arcname.encode()
    contents = zip_bytes([(arcname, content)])
    target = tmp_path / "target" / "subdir" / "subsub"
    ours(open_zip(contents), target, "data")
    correct = target.joinpath(*fixedname.split("/"))
    assert correct.is_file() and correct.read_bytes() == content
    # The installed zipfile, on the same archive, makes the same tree.
    theirs = tmp_path / "theirs" / "subdir" / "subsub"
    with open_zip(contents) as archive:
        archive.extractall(theirs)
    assert snapshot(theirs) == snapshot(target)


def _zipdir() -> bytes:
    """The entries of CPython's zipdir.zip: directories a/ and a/b/, and a/b/c."""
    return zip_bytes([("a/", b""), ("a/b/", b""), ("a/b/c", b"")])


def test_extract_dir(tmp_path: Path) -> None:
    ours(open_zip(_zipdir()), tmp_path, "data")
    assert (tmp_path / "a").is_dir()
    assert (tmp_path / "a" / "b").is_dir()
    assert (tmp_path / "a" / "b" / "c").exists()


def test_bug_6050(tmp_path: Path) -> None:
    # Extraction succeeds when directories already exist.
    (tmp_path / "a").mkdir()
    test_extract_dir(tmp_path)
