"""The swap race: a real attacker process exchanges the directory ``d`` with a symlink to a
directory outside while one-member archives are extracted into the workspace, one per attempt,
for a bounded time (safefs.testing.race counts every attempt). The standard library's own
extraction runs beside ours under the same attack and both counts are printed; ours must show
no escape."""

from __future__ import annotations

import io
import tarfile
import zipfile
from collections.abc import Callable
from typing import Any

import pytest

from safefs import Root, capabilities
from safefs.archive import extractall
from safefs.testing import RaceCounts, race
from tests.race_window import RACE_SECONDS

SECONDS = RACE_SECONDS

pytestmark = pytest.mark.skipif(not capabilities().renameat2, reason="the attacker needs renameat2")


def one_member_tar(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def one_member_zip(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


def opener(kind: str) -> Callable[[bytes], Any]:
    if kind == "tar":
        return lambda raw: tarfile.open(fileobj=io.BytesIO(raw))
    return lambda raw: zipfile.ZipFile(io.BytesIO(raw))


class Extractor:
    """A race victim whose write is the extraction of a one-member archive. Reads are not
    what an extractor does: the race only writes."""

    def __init__(self, workspace: str, kind: str, ours: bool) -> None:
        self.workspace = workspace
        self.build = one_member_tar if kind == "tar" else one_member_zip
        self.open = opener(kind)
        self.root = Root(workspace) if ours else None

    def __enter__(self) -> Extractor:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.root is not None:
            self.root.close()

    def read(self, rel: str) -> bytes:
        raise NotImplementedError

    def write(self, rel: str, data: bytes) -> None:
        with self.open(self.build(rel, data)) as archive:
            try:
                if self.root is not None:
                    extractall(archive, self.root)
                elif isinstance(archive, tarfile.TarFile):
                    archive.extractall(self.workspace, filter="data")
                else:
                    archive.extractall(self.workspace)
            except tarfile.TarError as exc:  # the race counts a refusal as an OSError
                raise PermissionError(str(exc)) from exc


def attack(kind: str, ours: bool) -> RaceCounts:
    name = f"{'safefs.archive' if ours else 'stdlib'} {kind}"
    return race(lambda ws: Extractor(ws, kind, ours), "write", SECONDS, "dir", name=name)


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_no_member_escapes_under_the_swap_race(kind: str) -> None:
    theirs = attack(kind, ours=False)
    mine = attack(kind, ours=True)
    for counts in theirs, mine:
        print(
            f"{counts.strategy:20} attempts={counts.attempts} inside={counts.inside} "
            f"refused={counts.refused} escapes={counts.escapes} swaps={counts.swaps}"
        )
    assert mine.swaps > 0 and mine.attempts > 0
    assert mine.inside > 0  # some extractions landed: the attack did not just stop everything
    assert mine.escapes == 0
