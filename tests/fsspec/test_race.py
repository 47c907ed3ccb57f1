"""The swap race against fsspec: a real attacker process exchanges ``d/`` with a symlink to a
directory outside while ``cat_file`` reads ``d/f`` and ``pipe_file`` writes ``d/wN``, for a
bounded time (safefs.testing.race counts every attempt). fsspec's DirFileSystem over the local
filesystem runs beside SafeFileSystem under the same attack; both counts are printed, ours must
show no escape."""

from __future__ import annotations

from typing import Any

import pytest

from tests.race_window import RACE_SECONDS

pytest.importorskip("fsspec")

from fsspec.implementations.dirfs import DirFileSystem
from fsspec.implementations.local import LocalFileSystem

from safefs import capabilities
from safefs.fsspec import SafeFileSystem
from safefs.testing import race

SECONDS = RACE_SECONDS

pytestmark = pytest.mark.skipif(not capabilities().renameat2, reason="the attacker needs renameat2")


class Victim:
    def __init__(self, fs: Any) -> None:
        self.fs = fs

    def __enter__(self) -> Victim:
        return self

    def __exit__(self, *exc: object) -> None:
        if isinstance(self.fs, SafeFileSystem):
            self.fs.close()

    def read(self, rel: str) -> bytes:
        data: bytes = self.fs.cat_file(rel)
        return data

    def write(self, rel: str, data: bytes) -> None:
        self.fs.pipe_file(rel, data)


def dirfs(ws: str) -> Victim:
    return Victim(DirFileSystem(path=ws, fs=LocalFileSystem()))


def safe(ws: str) -> Victim:
    return Victim(SafeFileSystem(ws))


@pytest.mark.parametrize("op", ["read", "write"])
def test_no_operation_escapes_under_the_swap_race(op: str) -> None:
    theirs = race(dirfs, op, SECONDS, "dir", name="DirFileSystem")
    ours = race(safe, op, SECONDS, "dir", name="SafeFileSystem")
    for counts in theirs, ours:
        print(
            f"{counts.strategy:15} {op:5} attempts={counts.attempts} inside={counts.inside} "
            f"refused={counts.refused} escapes={counts.escapes} swaps={counts.swaps}"
        )
    assert ours.swaps > 0 and ours.inside > 0
    assert ours.escapes == 0
