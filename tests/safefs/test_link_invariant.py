"""The link guarantee as an invariant: whatever sequence of operations a caller makes, every
symlink that an operation created or moved (each one inside a moved directory included) leads
beneath the root when the kernel follows it from outside, with no confinement at all, or dangles
at a place beneath it.

A hypothesis state machine makes random trees and random calls (mkdir, symlink, link, rename of
files, directories and links, write_bytes, remove, rmtree, chmod), with targets that climb,
loop, are absolute or padded to near PATH_MAX, and directories made unreadable (mode 0o000 or
0o300). The calls run without root's permission bypass (tests/capabilities.py), so an unreadable
directory really is one; the check after each call runs with it, to see everything.

Budget: ``SAFEFS_LINK_EXAMPLES`` sequences of ``SAFEFS_LINK_STEPS`` calls per resolver and
``symlinks=`` mode (``make test-long`` raises both).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

import safefs
from tests.capabilities import permissions_bypassed, without_dac_bypass
from tests.safefs.conftest import Flavour

EXAMPLES = int(os.environ.get("SAFEFS_LINK_EXAMPLES", "10"))
STEPS = int(os.environ.get("SAFEFS_LINK_STEPS", "20"))

NAMES = ["a", "b", "c"]
# Paths a caller passes: a few names deep, now and then a ".." (which may climb out: refused).
paths = st.lists(st.sampled_from(NAMES * 3 + ["up", ".."]), min_size=1, max_size=3).map("/".join)
# Link targets: relative climbs through names and links, the outside, absolute ones, and long ones.
# Segments, not single names: "x/.." names a missing directory and climbs back out of it.
_parts = st.sampled_from([*NAMES, "up", "l", "..", "x/..", ".", "outside"])
_relative = st.lists(_parts, min_size=1, max_size=5).map("/".join)
targets = st.one_of(
    _relative,
    st.builds(lambda pad, tail: "./" * pad + tail, st.integers(1900, 2040), _relative),
    st.sampled_from(["/etc", "/tmp", ".", "..", "../outside/secret"]),
)
modes = st.sampled_from([0o000, 0o300, 0o500, 0o700, 0o755])
# The tree a sequence starts from: directories and files, and links another program planted
# (they may lead anywhere; only what safefs makes or moves is held to the invariant).
_dirs = st.sampled_from(["a", "b", "c", "a/a", "a/b", "b/a", "a/a/c", "c/b"])
_planted = st.tuples(
    _dirs, st.sampled_from(["up", "l"]), st.sampled_from(["..", ".", "../..", "a", "../a/b"])
)
trees = st.tuples(
    st.lists(_dirs, max_size=6), st.lists(_dirs, max_size=3), st.lists(_planted, min_size=1, max_size=4)
)


def _links(top: Path) -> dict[str, tuple[int, str]]:
    """Every symlink under ``top``: its host path -> (inode, target)."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st_ = os.lstat(p)
            if stat.S_ISLNK(st_.st_mode):
                found[p] = (st_.st_ino, os.readlink(p))
    return found


def _beneath(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


def where_it_leads(link: str, root: str) -> str:
    """Follow ``link`` with the kernel, as any program would: "beneath", "dangles" (ELOOP,
    ENOTDIR), or "OUTSIDE: <where>" when it reaches, or dangles at, a place outside the root."""
    try:
        fd = os.open(link, os.O_PATH | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            return "dangles"
        # Missing: the place it dangles at, as a later mkdir or write there would make it.
        landing = os.path.realpath(link)
        return "dangles" if _beneath(landing, root) else f"OUTSIDE (dangling): {landing}"
    try:
        landing = os.readlink(f"/proc/self/fd/{fd}")  # the kernel's own name for what it reached
    finally:
        os.close(fd)
    return "beneath" if _beneath(landing, root) else f"OUTSIDE: {landing}"


def make_machine(flavour: Flavour, outcomes: Counter[str]) -> type[RuleBasedStateMachine]:
    class LinkInvariant(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.base = Path(tempfile.mkdtemp(prefix="safefs-links-"))
            self.top = self.base / "ROOT"
            self.top.mkdir()
            (self.base / "outside").mkdir()
            (self.base / "outside" / "secret").write_text("outside secret\n")
            self.root = flavour.open(self.top)
            self.host = os.path.realpath(self.top)

        @initialize(tree=trees)
        def build(self, tree: tuple[list[str], list[str], list[tuple[str, str, str]]]) -> None:
            dirs, files, planted = tree
            for d in dirs:
                (self.top / d).mkdir(parents=True, exist_ok=True)
            for f in files:
                (self.top / f).mkdir(parents=True, exist_ok=True)
                (self.top / f / "f").write_bytes(b"file\n")
            for d, name, to in planted:
                (self.top / d).mkdir(parents=True, exist_ok=True)
                if not os.path.lexists(self.top / d / name):
                    os.symlink(to, self.top / d / name)

        def act(self, name: str, *args: object, **kwargs: object) -> None:
            """One call, without root's permission bypass, then the invariant on what it did."""
            before = _links(self.top)
            try:
                with without_dac_bypass():
                    assert not permissions_bypassed()
                    getattr(self.root, name)(*args, **kwargs)
                outcomes[f"{name} ok"] += 1
            except safefs.PathEscapeError:
                outcomes[f"{name} escape refused"] += 1
            except OSError as exc:
                outcomes[f"{name} {errno.errorcode.get(exc.errno or 0, exc.errno)}"] += 1
            after = _links(self.top)
            made = [p for p, seen in after.items() if before.get(p) != seen]
            for link in made:
                leads = where_it_leads(link, self.host)
                outcomes[f"made or moved: {leads.split(':')[0]}"] += 1
                assert not leads.startswith("OUTSIDE"), (name, args, link, after[link][1], leads)

        @rule(path=paths, parents=st.booleans())
        def mkdir(self, path: str, parents: bool) -> None:
            self.act("mkdir", path, parents=parents)

        @rule(to=targets, path=paths)  # (``target`` names a bundle in a rule)
        def symlink(self, to: str, path: str) -> None:
            self.act("symlink", to, path)

        def entries(self) -> tuple[list[str], list[str]]:
            """The tree as it is: its directories (root-relative, "." first) and all entries."""
            dirs, every = ["."], []
            for dirpath, dirnames, filenames in os.walk(self.top):
                rel = os.path.relpath(dirpath, self.top)
                for name in dirnames:
                    dirs.append(os.path.normpath(os.path.join(rel, name)))
                every += [os.path.normpath(os.path.join(rel, n)) for n in dirnames + filenames]
            return dirs, every

        @rule(data=st.data())
        def symlink_from_the_tree(self, data: st.DataObject) -> None:
            """A link whose target is made of what is there: the names beside it (links among
            them), a missing name and back, climbs, and the outside."""
            dirs, _every = self.entries()
            place = data.draw(st.sampled_from(dirs), label="place")
            beside = sorted(os.listdir(self.top / place)) or ["a"]
            segment = st.sampled_from(beside) | st.sampled_from(["..", "x/..", "outside"])
            to = "/".join(data.draw(st.lists(segment, min_size=1, max_size=5), label="target"))
            name = data.draw(st.sampled_from(["s", "t", *NAMES]), label="name")
            self.act("symlink", to, os.path.join(place, name))

        @rule(data=st.data())
        def move_from_the_tree(self, data: st.DataObject) -> None:
            """An entry that is there (a directory with links in it, a link) moved to a directory
            that is there, under a new or an existing name."""
            dirs, every = self.entries()
            if not every:
                return
            src = data.draw(st.sampled_from(every), label="src")
            dst = os.path.join(
                data.draw(st.sampled_from(dirs), label="into"), data.draw(st.sampled_from(["m", *NAMES]))
            )
            self.act(data.draw(st.sampled_from(["rename", "link"]), label="how"), src, dst)

        @rule(src=paths, dst=paths)
        def link(self, src: str, dst: str) -> None:
            self.act("link", src, dst)

        @rule(src=paths, dst=paths)
        def rename(self, src: str, dst: str) -> None:
            self.act("rename", src, dst)

        @rule(path=paths)
        def write_bytes(self, path: str) -> None:
            self.act("write_bytes", path, b"data\n")

        @rule(path=paths)
        def remove(self, path: str) -> None:
            self.act("remove", path)

        @rule(path=paths)
        def rmtree(self, path: str) -> None:
            self.act("rmtree", path)

        @rule(path=paths, mode=modes)
        def chmod(self, path: str, mode: int) -> None:
            self.act("chmod", path, mode)

        @rule(data=st.data(), mode=modes)
        def chmod_from_the_tree(self, data: st.DataObject, mode: int) -> None:
            dirs, _every = self.entries()
            self.act("chmod", data.draw(st.sampled_from(dirs), label="dir"), mode)

        def teardown(self) -> None:
            self.root.close()
            for dirpath, _dirs, _files in os.walk(self.base):
                os.chmod(dirpath, 0o755)
            shutil.rmtree(self.base)

    return LinkInvariant


def test_every_link_made_or_moved_leads_beneath_the_root(flavour: Flavour) -> None:
    outcomes: Counter[str] = Counter()
    machine = make_machine(flavour, outcomes)
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
    print(flavour, dict(sorted(outcomes.items())))
    # The run did what it is for: links were made and moved, and escapes were tried.
    assert outcomes["symlink ok"] and outcomes["symlink escape refused"], outcomes


@pytest.mark.parametrize(
    ("tree", "link", "want"),
    [
        ({"d/": None, "d/l": "../x"}, "d/l", "dangles"),
        ({"l": "../outside/secret"}, "l", "OUTSIDE"),
        ({"l": "../outside/nothing"}, "l", "OUTSIDE (dangling)"),
        ({"l": "l"}, "l", "dangles"),
        ({"f": "", "l": "f"}, "l", "beneath"),
    ],
    ids=["dangles-inside", "outside", "dangles-outside", "loop", "inside"],
)
def test_the_judge_of_the_invariant_sees_an_escape(
    tmp_path: Path, tree: dict[str, str | None], link: str, want: str
) -> None:
    # The check itself: a link that leads out, or dangles out, is reported.
    top = tmp_path / "ROOT"
    top.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s")
    for name, content in tree.items():
        if content is None:
            (top / name).mkdir()
        elif name == "f":
            (top / name).write_text(content)
        else:
            os.symlink(content, top / name)
    assert where_it_leads(str(top / link), os.path.realpath(top)).split(":")[0] == want
