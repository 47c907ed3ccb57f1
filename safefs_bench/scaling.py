"""The scaling tree: a 4 KiB file at depths 1, 4, 16 and 64, and files of 4 KiB, 1 MiB and 64 MiB
at depth 1. How the cost of a read grows with the path's depth and with the file's size, for the
contest's plots and for the benchmark suite's scaling readings.
"""

from __future__ import annotations

import os

DEPTHS: tuple[int, ...] = (1, 4, 16, 64)
SMALL = 4096
SIZES: tuple[int, ...] = (SMALL, 1024 * 1024, 64 * 1024 * 1024)
_CHUNK = 1024 * 1024


def depth_file(depth: int) -> str:
    """A 4 KiB file reached by a path of ``depth`` components: ``b1/.../b{depth-1}/f``."""
    return "/".join([*(f"b{i}" for i in range(1, depth)), "f"])


def size_file(size: int) -> str:
    """A file of ``size`` bytes beside the root: one component."""
    return f"size-{size}"


def content(size: int) -> bytes:
    """What a file of ``size`` bytes holds: a pattern, so a wrong read shows, of printable text
    lines, so the contestants whose tools read only text read it too."""
    line = bytes(range(32, 127)) + b"\n"
    return (line * (size // len(line) + 1))[:size]


def build_scaling_tree(
    root: str, *, sizes: tuple[int, ...] = SIZES, extra_sizes: tuple[int, ...] = ()
) -> None:
    """Create the tree under the existing directory ``root``."""
    for depth in DEPTHS:
        path = os.path.join(root, depth_file(depth))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content(SMALL))
    for size in (*sizes, *extra_sizes):
        with open(os.path.join(root, size_file(size)), "wb") as f:
            chunk = content(min(size, _CHUNK))
            left = size
            while left:
                left -= f.write(chunk[:left])
