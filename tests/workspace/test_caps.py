"""Caps and totals: read_multiple_files stays within the result cap however many paths it gets,
a tail reads only the end of a file, and a listing's totals count what it saw past its cap."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import safefs
from safefs.mcp.directories import Directories
from safefs.mcp.tools import all_tools
from safefs.workspace.limits import MAX_RESULT_CHARS
from safefs.workspace.listing import list_tree
from safefs.workspace.text import tail_lines

TOOLS = {tool.name: tool for tool in all_tools()}


@pytest.fixture
def dirs(tmp_path: Path) -> Iterator[Directories]:
    (tmp_path / "a.txt").write_text("alpha\n" * 1000)
    opened = Directories.open([str(tmp_path)])
    yield opened
    opened.close()


def test_read_multiple_files_stays_within_the_cap_and_names_what_it_did_not_read(dirs: Directories) -> None:
    paths = ["a.txt"] * 10 + [f"missing-{i}.txt" for i in range(2000)]
    out = TOOLS["read_multiple_files"].run(dirs, {"paths": paths})
    assert isinstance(out, str)
    print(f"2010 paths: {len(out)} characters")
    assert len(out) <= MAX_RESULT_CHARS
    assert out.splitlines()[-1].startswith("[") and "not read" in out.splitlines()[-1]


def test_a_huge_path_list_entry_is_cut_too(dirs: Directories) -> None:
    out = TOOLS["read_multiple_files"].run(dirs, {"paths": ["x" * 100_000, "y" * 100_000]})
    assert isinstance(out, str) and len(out) <= MAX_RESULT_CHARS


def test_tail_of_a_1_tib_sparse_file_reads_only_its_end(tmp_path: Path) -> None:
    with open(tmp_path / "huge", "wb") as f:
        f.truncate(1 << 40)
        f.seek((1 << 40) - 12)
        f.write(b"one\ntwo\nend\n")
    found: list[str] = []
    with safefs.Root(str(tmp_path)) as root:
        worker = threading.Thread(target=lambda: found.append(tail_lines(root, "huge", 2).text))
        worker.start()
        worker.join(timeout=10)
    assert found == ["two\nend\n"]


@pytest.mark.parametrize(
    "data, count, expected",
    [
        (b"a\nb\nc\n", 2, "b\nc\n"),
        (b"a\nb\nc", 2, "b\nc"),
        (b"a\n", 5, "a\n"),
        (b"", 3, ""),
        (b"\n\n", 1, "\n"),
    ],
)
def test_tail_lines(tmp_path: Path, data: bytes, count: int, expected: str) -> None:
    (tmp_path / "f").write_bytes(data)
    with safefs.Root(str(tmp_path)) as root:
        assert tail_lines(root, "f", count).text == expected


def test_listing_totals_count_what_was_seen_past_the_cap(tmp_path: Path) -> None:
    for i in range(15):
        (tmp_path / f"f{i:02}").write_text("")
    (tmp_path / "sub").mkdir()
    with safefs.Root(str(tmp_path)) as root:
        listing = list_tree(root, ".", 1, max_entries=10)
    assert (len(listing.items), listing.more, listing.seen) == (10, 6, 16)
    assert (listing.files_seen, listing.dirs_seen) == (15, 1)
