"""Line ranges against a plain reference: ranges that start, end or stop near the edges of the
reads (lines before the range are skipped in raw chunks, the range is decoded, the rest only
counted), with multi-byte characters and a line longer than a chunk."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import safefs
from safefs.workspace.text import RANGE_CHUNK_BYTES, number_prefix, read_lines


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    rng = random.Random(7)
    out: list[str] = []
    for i in range(6000):
        width = rng.choice([0, 1, 5, 40, 120, 300])
        out.append(f"{i}:" + "é" * (width // 3) + "x" * width + "\n")
    out.insert(2500, "y" * (RANGE_CHUNK_BYTES + 123) + "\n")  # longer than a chunk
    out[-1] = out[-1].rstrip("\n")  # the last line has no newline
    path = tmp_path_factory.mktemp("text") / "f.txt"
    path.write_text("".join(out))
    return path, out


def test_every_range_equals_the_reference(lines: tuple[Path, list[str]]) -> None:
    path, text = lines
    rng = random.Random(11)
    offsets = [1, 2, 2499, 2500, 2501, 2502, len(text) - 1, len(text), len(text) + 1]
    offsets += [rng.randint(1, len(text)) for _ in range(40)]
    with safefs.Root(str(path.parent)) as root:
        for offset in offsets:
            for limit in (1, 3, 101, 2000):
                got = read_lines(root, path.name, offset, limit, budget=10**9, numbered=True)
                shown = text[offset - 1 : offset - 1 + limit]
                expected = "".join(number_prefix(offset + i) + line for i, line in enumerate(shown))
                assert got.text == expected, (offset, limit)
                if got.total_known:
                    assert got.total == len(text), (offset, limit)
                else:
                    assert offset - 1 + len(shown) < got.total < len(text), (offset, limit)
                whole = read_lines(root, path.name, offset, limit, budget=10**9, count_all=True)
                assert whole.total_known and whole.total == len(text)


def test_a_line_that_does_not_fit_is_shown_whole_or_not_at_all(tmp_path: Path) -> None:
    # 35,000 three-byte characters: a line that takes more than one read to decode.
    (tmp_path / "f.txt").write_text("short\n" + "€" * 35_000 + "\nend\n")
    with safefs.Root(str(tmp_path)) as root:
        first = read_lines(root, "f.txt", 1, 10, budget=29_800)
        assert (first.text, first.last, first.cut_at_budget, first.line_cut) == ("short\n", 1, True, False)
        second = read_lines(root, "f.txt", first.last + 1, 10, budget=29_800)  # where it said to go on
        assert second.text == "€" * 29_800 and second.last == 2 and second.line_cut


@pytest.mark.parametrize("budget", [7, 100, 1000, 20_000, 70_000])
def test_paging_by_the_continue_offset_shows_every_line_whole_once(
    lines: tuple[Path, list[str]], budget: int
) -> None:
    path, text = lines
    with safefs.Root(str(path.parent)) as root:
        offset, pages = 2400, 0
        while offset <= 2700:
            got = read_lines(root, path.name, offset, 2000, budget=budget)
            pages += 1
            assert got.last >= offset, (offset, budget)  # every read moves on
            if got.line_cut:
                assert got.last == offset and text[offset - 1].startswith(got.text)
                assert len(got.text) == budget and len(text[offset - 1]) > budget
            else:
                assert got.text == "".join(text[offset - 1 : got.last]), (offset, budget)
            offset = got.last + 1
