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
