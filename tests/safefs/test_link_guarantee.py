"""The link guarantee, case by case: a symlink safefs creates or moves (each one inside a moved
directory included) is judged at the moment of the operation by the resolution
``Root.resolve(strict=False)`` uses, on the tree as the operation leaves it, and any error while
judging refuses the operation. (The invariant itself: test_link_invariant.py.)"""

from __future__ import annotations

import errno
import os
import resource
from collections import Counter
from collections.abc import Callable

import pytest

import safefs
from tests.capabilities import without_dac_bypass
from tests.fds import fds_left
from tests.safefs.conftest import Flavour, Workspace, tree_snapshot


def test_a_link_inside_a_moved_directory_is_judged_through_the_links_beside_it(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    # d1/T/a -> up/../outside/secret leads to d1/T/.. = d1, then ../outside/secret: inside,
    # spelled so that no ".." of it climbs out of T. From T, up is the root and a leads outside.
    root = open_root(["d1/T/", "d1/T/up => .."])
    os.symlink("up/../outside/secret", workspace.root_path / "d1/T/a")
    before = tree_snapshot(workspace.root_path)
    with pytest.raises(safefs.PathEscapeError):
        root.rename("d1/T", "T")
    assert tree_snapshot(workspace.root_path) == before
    assert not os.path.exists(workspace.root_path / "d1/T/a")  # and it never led out before


def test_a_moved_directory_is_judged_where_it_lands_not_where_it_was(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    # Before the move ../T2 is missing from d1/T: b dangles. Once T is T2, T2/up is the root.
    root = open_root(["d1/T/", "d1/T/up => .."])
    os.symlink("../T2/up/../../outside/secret", workspace.root_path / "d1/T/b")
    with pytest.raises(safefs.PathEscapeError):
        root.rename("d1/T", "T2")
    assert not os.path.lexists(workspace.root_path / "T2")


def test_a_moved_directory_that_cannot_be_listed_is_refused(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["d/T/"])
    os.symlink("../x", workspace.root_path / "d/T/l")  # d/x from d/T, outside from T
    (workspace.root_path / "d/T").chmod(0o300)  # search and write, no read: not listable
    try:
        with without_dac_bypass(), pytest.raises(PermissionError) as caught:
            root.rename("d/T", "T")
    finally:
        (workspace.root_path / "d/T").chmod(0o755)
    assert caught.value.errno == errno.EACCES
    assert not os.path.lexists(workspace.root_path / "T")
    root.rename("d/T", "d/T2")  # readable again: judged, and the same depth is fine


def test_a_target_padded_to_near_path_max_is_still_judged_physically(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    # u -> . : u/.. is the root's parent for the kernel, though the spelling never climbs.
    # The directory's name and the target together pass PATH_MAX; the target alone does not.
    root = open_root(["a_directory_with_a_long_name/"])
    root.symlink(".", "u")
    tail = b"../u/../outside/secret"
    target = b"./" * ((4089 - len(tail)) // 2) + tail
    assert len(target) < 4096 <= len(b"a_directory_with_a_long_name/" + target)
    with pytest.raises(safefs.PathEscapeError):
        root.symlink(target, b"a_directory_with_a_long_name/l")
    assert not os.path.lexists(workspace.root_path / "a_directory_with_a_long_name/l")


def test_a_dangling_link_is_judged_as_the_directories_it_names_would_make_it(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    # d/x is missing: x/.. is d once x exists, and d/u/.. is the root's parent.
    root = open_root(["d/", "d/u => .."])
    with pytest.raises(safefs.PathEscapeError):
        root.symlink("x/../u/../outside/secret", "d/s")
    assert not os.path.lexists(workspace.root_path / "d/s")
    if flavour.symlinks == "beneath":  # the rules the judge applies, whatever the root's mode
        with pytest.raises(safefs.PathEscapeError):
            root.resolve("d/x/../u/../outside/secret")  # what resolve says of the same place
    root.symlink("x/../u/d", "d/fine")  # the same way, inside
    root.mkdir("d/x")
    assert os.path.realpath(workspace.root_path / "d/fine") == str(workspace.root_path / "d")


def test_running_out_of_fds_while_judging_refuses_the_move(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["d/T/s1/s2/"])
    os.symlink("../../../../x", workspace.root_path / "d/T/s1/s2/l")  # x; from T: outside
    before = tree_snapshot(workspace.root_path)
    outcomes: Counter[str] = Counter()
    for free in range(40):
        with fds_left(free):
            try:
                root.rename("d/T", "T")
                outcomes["moved"] += 1
            except safefs.PathEscapeError:
                outcomes["escape"] += 1
            except OSError as exc:
                outcomes[errno.errorcode[exc.errno or 0]] += 1
        if outcomes["moved"]:
            break
    print(dict(outcomes))
    assert tree_snapshot(workspace.root_path) == before
    assert not outcomes["moved"]
    assert outcomes["EMFILE"] and outcomes["escape"], outcomes


def test_a_wide_directory_moves_with_fds_bounded_by_its_depth(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    top = workspace.root_path / "d" / "T"
    for i in range(1100):
        (top / f"s{i}").mkdir(parents=True)
    os.symlink("../../../x", top / "s1099" / "l")  # x; moved to the root, outside
    root = open_root()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))  # far fewer than 1,100
    try:
        root.rename("d/T", "d/T2")  # judged through all 1,100, allowed
        with pytest.raises(safefs.PathEscapeError):
            root.rename("d/T2", "T")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert len(os.listdir(workspace.root_path / "d" / "T2")) == 1100
    assert not os.path.lexists(workspace.root_path / "T")


def test_a_link_that_cannot_be_judged_is_not_made(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["f", "closed/inner/"])
    with pytest.raises(NotADirectoryError):
        root.symlink("f/../../outside", "l")  # a file used as a directory: no answer, refused
    (workspace.root_path / "closed").chmod(0o000)
    try:
        with without_dac_bypass(), pytest.raises(PermissionError):
            root.symlink("closed/inner/../../../outside", "l")  # cannot be searched: refused
    finally:
        (workspace.root_path / "closed").chmod(0o755)
    assert not os.path.lexists(workspace.root_path / "l")
    root.symlink("closed/inner/..", "l")
    assert os.path.realpath(workspace.root_path / "l") == str(workspace.root_path / "closed")


@pytest.mark.parametrize("link_or_symlink", ["link", "symlink"])
@pytest.mark.parametrize("leading", ["loop", "../..", "missing-dir/x"])
def test_a_taken_name_is_eexist_before_any_judgement(
    flavour: Flavour, open_root: Callable[..., safefs.Root], link_or_symlink: str, leading: str
) -> None:
    """A link onto a name that exists fails as the system call fails (EEXIST, nothing changed),
    whatever a judgement of the link would have said (a loop, an escape), as pathlib's."""
    root = open_root(["taken", "loop => loop", f"src => {leading}"])
    with pytest.raises(FileExistsError):
        if link_or_symlink == "link":
            root.link("src", "taken")
        else:
            root.symlink(leading, "taken")
    assert root.read_text("taken") == "content of taken\n"
    with pytest.raises(FileNotFoundError):
        root.link("missing", "taken")  # a missing source comes first, as linkat's
