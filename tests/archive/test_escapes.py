"""Archives that get out of the standard library's extraction, and the invariant behind ours:
whatever an archive holds and whatever filter is chosen, nothing outside the destination is
created or changed. The standard library's result is printed beside ours."""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from safefs import PathEscapeError, Root
from safefs.archive import extractall
from tests.archive.archives import TarMaker, cve_2025_4517, open_zip, snapshot, zip_bytes

FLAG = "capture me"


def outside_changes(outer: Path) -> int:
    """Escapes seen in ``outer`` (dest's parent): the flag changed, and each new entry."""
    found = {p.name for p in outer.iterdir()} - {"dest", "flag"}
    return int((outer / "flag").read_text() != FLAG) + len(found)


def arena(tmp_path: Path, name: str) -> tuple[Path, Path]:
    outer = tmp_path / name
    outer.mkdir()
    (outer / "flag").write_text(FLAG)
    return outer, outer / "dest"


def test_cve_2025_4517_archive_gets_nothing_out(tmp_path: Path) -> None:
    theirs_outer, theirs_dest = arena(tmp_path, "theirs")
    try:
        cve_2025_4517(theirs_dest).open().extractall(theirs_dest, filter="data")
        theirs_error = "none"
    except (OSError, KeyError, tarfile.TarError) as exc:
        theirs_error = type(exc).__name__
    ours_outer, ours_dest = arena(tmp_path, "ours")
    with pytest.raises(tarfile.LinkOutsideDestinationError, match="'escape' would link to"):
        extractall(cve_2025_4517(ours_dest).open(), ours_dest)
    theirs, ours = outside_changes(theirs_outer), outside_changes(ours_outer)
    print(
        f"\nCVE-2025-4517 archive, filter='data': tarfile escapes={theirs} (error: {theirs_error}); "
        f"ours escapes={ours}"
    )
    assert ours == 0


def test_zip_through_a_planted_directory_symlink(tmp_path: Path) -> None:
    contents = zip_bytes([("d/x", b"planted"), ("ok", b"fine")])
    counts = {}
    for who in "zipfile", "ours":
        outer, dest = arena(tmp_path, who)
        dest.mkdir()
        (dest / "d").symlink_to(outer)  # already in the destination, no race needed
        if who == "zipfile":
            with open_zip(contents) as archive:
                archive.extractall(dest)
        else:
            with pytest.raises(PathEscapeError) as refused:
                extractall(open_zip(contents), dest)
            assert refused.value.filename == "d/x"
        counts[who] = outside_changes(outer)
    print(
        f"\nzip through a planted directory symlink: zipfile escapes={counts['zipfile']}; "
        f"ours escapes={counts['ours']}"
    )
    assert counts["ours"] == 0


def test_tar_through_a_planted_directory_symlink(tmp_path: Path) -> None:
    outer, dest = arena(tmp_path, "ours")
    dest.mkdir()
    (dest / "d").symlink_to(outer)
    with TarMaker() as arc:
        arc.add("d/x", content="planted")
    for filter in "fully_trusted", "tar", "data":
        with pytest.raises(tarfile.FilterError):
            extractall(arc.open(), dest, filter=filter)
    assert outside_changes(outer) == 0


def test_hard_link_to_a_symlink_that_leads_out_from_its_new_place(tmp_path: Path) -> None:
    # a/inner -> ../x stays inside from a/; linked as h at the top, the same link leads out.
    outer, dest = arena(tmp_path, "ours")
    with TarMaker() as arc:
        arc.add("a/inner", symlink_to="../flag")
        arc.add("h", hardlink_to="a/inner")
    for filter in "fully_trusted", "tar", "data":
        with pytest.raises(tarfile.LinkOutsideDestinationError, match="'h' would link to"):
            extractall(arc.open(), dest, filter=filter)
    assert outside_changes(outer) == 0


# The invariant, searched by hypothesis: archives of files, directories, symlinks and hard links
# whose names and targets are made of ordinary names, "..", ".", empty components and absolute
# spellings (of the destination, its parent and "/") never change anything outside.
COMPONENTS = st.sampled_from(["a", "b", "..", ".", "", "flag", "dest"])


def _spelling(outer: Path) -> st.SearchStrategy[str]:
    relative = st.lists(COMPONENTS, min_size=1, max_size=4).map("/".join)
    prefix = st.sampled_from(["", "", "/", f"{outer}/", f"{outer}/dest/"])
    return st.builds(lambda p, r: p + r, prefix, relative)


MEMBER_KINDS = st.sampled_from(["file", "dir", "symlink", "hardlink"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_archive_changes_anything_outside(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    outer = tmp_path_factory.mktemp("outer")
    (outer / "flag").write_text(FLAG)
    (outer / "a").mkdir()
    dest = outer / "dest"
    dest.mkdir()
    (dest / "b").symlink_to(outer)  # planted, as a hostile previous archive would leave it
    before = {k: v for k, v in snapshot(outer).items() if not k.startswith("dest")}
    members = data.draw(st.lists(st.tuples(MEMBER_KINDS, _spelling(outer), _spelling(outer)), max_size=6))
    filter = data.draw(st.sampled_from(["data", "tar", "fully_trusted"]))
    kind_of = st.sampled_from(["tar", "zip"])
    kind = data.draw(kind_of)
    if kind == "tar":
        with TarMaker() as arc:
            for member, name, target in members:
                if member == "file":
                    arc.add(name, content="x")
                elif member == "dir":
                    arc.add(name, type=tarfile.DIRTYPE)
                elif member == "symlink":
                    arc.add(name, symlink_to=target)
                else:
                    arc.add(name, hardlink_to=target)
        archive: tarfile.TarFile | zipfile.ZipFile = arc.open()
    else:
        archive = open_zip(zip_bytes([(n + ("/" if m == "dir" else ""), b"x") for m, n, _ in members]))
    try:
        with archive:
            extractall(archive, dest, filter=filter)
    except (OSError, KeyError, tarfile.TarError, zipfile.BadZipFile):
        pass
    after = {k: v for k, v in snapshot(outer).items() if not k.startswith("dest")}
    with Root(outer) as top:
        top.rmtree("dest")
    assert after == before
