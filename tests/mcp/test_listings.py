"""Listings and searches through the real client over stdio: a tree stays JSON whatever the
names, a pattern that starts with a directory still obeys the ignore rules, and a listing too
long to show counts, totals and sorts every entry."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from safefs.mcp.node_format import format_size
from tests.mcp.client import mcp_client


def test_directory_tree_is_json_with_an_undecodable_name(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with open(os.path.join(os.fsencode(ws), b"caf\xe9.txt"), "wb") as f:
        f.write(b"named in Latin-1\n")
    os.mkdir(os.path.join(os.fsencode(ws), b"d\xff"))
    with mcp_client(str(ws)) as client:
        error, text = client.text("directory_tree", {"path": "."})
        assert not error
        tree: list[dict[str, Any]] = json.loads(text)  # the whole answer parses
        names = sorted(node["name"] for node in tree)
        assert names == ["caf\\xe9.txt", "d\\xff"]
        # The name as the JSON decodes is the spelling a client passes back.
        assert client.text("read_text_file", {"path": names[0]}) == (False, "named in Latin-1\n")


def test_a_pattern_that_starts_with_a_directory_obeys_the_ignore_rules(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for d in ("build", ".git", "src/gen"):
        (ws / d).mkdir(parents=True)
    (ws / ".gitignore").write_text("build/\nsrc/gen/\n")
    (ws / "build" / "out.o").write_text("o")
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "src" / "app.py").write_text("")
    (ws / "src" / "gen" / "made.py").write_text("")
    with mcp_client(str(ws)) as client:
        for pattern in ("build/*", ".git/*", "build/**", "src/gen/*.py", "./build/*"):
            assert client.text("search_files", {"path": ".", "pattern": pattern}) == (
                False,
                "No matches found",
            ), pattern
        assert client.text("search_files", {"path": ".", "pattern": "src/*.py"}) == (
            False,
            f"{ws}/src/app.py",
        )
        assert client.text("search_files", {"path": ".", "pattern": "src/**/*.py"}) == (
            False,
            f"{ws}/src/app.py",
        )
        # Named as the search's path, an ignored directory is searched (as ripgrep does), and
        # includeIgnored gives the official behaviour.
        assert client.text("search_files", {"path": "build", "pattern": "*"}) == (False, f"{ws}/build/out.o")
        every = {"path": ".", "pattern": "build/*", "includeIgnored": True}
        assert client.text("search_files", every) == (False, f"{ws}/build/out.o")
        every = {"path": ".", "pattern": ".git/*", "includeIgnored": True}
        assert client.text("search_files", every) == (False, f"{ws}/.git/HEAD")


ENTRIES = 100_005


@pytest.mark.slow  # a listing of many thousand entries
def test_a_listing_too_long_to_show_counts_totals_and_sorts_every_entry(tmp_path: Path) -> None:
    ws = tmp_path / "big"
    ws.mkdir()
    fd = os.open(ws, os.O_RDONLY)
    try:  # named so that the largest and the smallest file come last in name order
        for i in range(ENTRIES - 2):
            os.close(os.open(f"f{i:06}", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    (ws / "z-largest.bin").write_bytes(b"x" * 3000)
    (ws / "zz-second.bin").write_bytes(b"x" * 2000)
    with mcp_client(str(ws)) as client:
        error, text = client.text("list_directory", {"path": "."})
        assert not error
        lines = text.splitlines()
        more = re.fullmatch(r"\[(\d+) more entries not shown; .*\]", lines[-1])
        assert more is not None, lines[-1]
        assert len(lines) - 1 + int(more[1]) == ENTRIES
        assert lines[0] == "[FILE] f000000"

        error, text = client.text("list_directory_with_sizes", {"path": ".", "sortBy": "size"})
        assert not error
        lines = text.splitlines()
        assert lines[0].split() == ["[FILE]", "z-largest.bin", "2.93", "KB"]
        assert lines[1].split() == ["[FILE]", "zz-second.bin", "1.95", "KB"]
        assert f"Total: {ENTRIES} files, 0 directories" in lines
        assert f"Combined size: {format_size(5000)}" in lines
        more = next(
            re.fullmatch(r"\[(\d+) more entries not shown; .*\]", line)
            for line in lines
            if line.startswith("[") and "more entries" in line
        )
        assert more is not None
        shown = [line for line in lines if line.startswith("[FILE]")]
        assert len(shown) + int(more[1]) == ENTRIES
