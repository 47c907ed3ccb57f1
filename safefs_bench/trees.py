"""The benchmark workspace: one tree that holds every path shape the suite and the contest time.

One chain of directories ``a1/a2/.../a15`` carries a file ``f`` (read, stat) and a file ``w``
(written) at depths 1, 4 and 16, so a path of N components costs N resolution steps. Two more
shapes reach the depth-4 directory in 4 steps plus a twist: one component is a symlink
(``a1/l2 -> a2``), or the path takes a ``..`` detour (``a1/a2/../a2/a3``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

READ_SIZE = 256  # "a small file"
WRITE_SIZE = 4096  # the 4 KiB of the atomic-write criterion
# Printable ASCII lines: the contestants include text tools (the Anthropic SDK's read and view),
# which refuse bytes that are not UTF-8.
FILE_CONTENT = ((bytes(range(32, 127)) + b"\n") * (READ_SIZE // 96 + 1))[:READ_SIZE]
WRITE_DATA = b"w" * WRITE_SIZE
CHAIN_DEPTH = 16


def chain(levels: int) -> str:
    """``a1/a2/.../aN``: the first ``levels`` directories of the chain ("" for none)."""
    return "/".join(f"a{i}" for i in range(1, levels + 1))


@dataclass(frozen=True)
class Shape:
    """A directory reached by some path; the file operations use names inside it."""

    name: str
    dir: str  # relative to the root; "" is the root itself

    def _in(self, name: str) -> str:
        return f"{self.dir}/{name}" if self.dir else name

    @property
    def file(self) -> str:
        """An existing small file: read and stat."""
        return self._in("f")

    @property
    def write_target(self) -> str:
        """An existing file beside it that the write benchmarks replace."""
        return self._in("w")

    @property
    def listdir_target(self) -> str:
        return self.dir or "."

    @property
    def mkdir_target(self) -> str:
        """A directory that ``mkdir -p`` creates (the benchmarks remove it between rounds)."""
        return self._in("new")

    @property
    def components(self) -> int:
        return len(self.file.split("/"))


DEPTH_1 = Shape("depth-1", "")
DEPTH_4 = Shape("depth-4", chain(3))
DEPTH_16 = Shape("depth-16", chain(15))
SYMLINK = Shape("symlink", "a1/l2/a3")
DOTDOT = Shape("dotdot", "a1/a2/../a2/a3")

SHAPES: tuple[Shape, ...] = (DEPTH_1, DEPTH_4, DEPTH_16, SYMLINK, DOTDOT)
DEPTHS: tuple[Shape, ...] = (DEPTH_1, DEPTH_4, DEPTH_16)


def build_tree(root: str) -> None:
    """Create the tree under the existing directory ``root``."""
    for levels in (0, 3, CHAIN_DEPTH - 1):
        d = os.path.join(root, chain(levels))
        os.makedirs(d, exist_ok=True)
        for name, data in (("f", FILE_CONTENT), ("w", WRITE_DATA)):
            with open(os.path.join(d, name), "wb") as fh:
                fh.write(data)
    os.symlink("a2", os.path.join(root, "a1", "l2"))


def real_dir(root: str, shape: Shape) -> str:
    """The shape's directory as an absolute path with the twist resolved (for setup/cleanup)."""
    return os.path.realpath(os.path.join(root, shape.dir))
