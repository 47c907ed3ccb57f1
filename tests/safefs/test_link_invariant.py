"""The link guarantee as an invariant: whatever sequence of operations a caller makes, and
whatever another process does to the tree meanwhile, every symlink that an operation created or
moved (each one inside a moved directory included) leads beneath the root when the kernel follows
it from outside, with no confinement at all, or dangles at a place beneath it.

A hypothesis state machine makes random trees and random calls (mkdir, symlink, link, rename of
files, directories and links, write_bytes, remove, rmtree, remove_all, chmod), with targets that
climb, loop, are absolute or padded to near PATH_MAX, and directories made unreadable (mode 0o000
or 0o300). The calls run without root's permission bypass (tests/capabilities.py), so an
unreadable directory really is one; the check after each call runs with it, to see everything.

The attacker: during every call, a second process exchanges a directory the call uses (a parent
of its path, of its source or of its destination) with a symlink beside it that leads to another
directory of the tree (``renameat2(RENAME_EXCHANGE)``, as fast as it can), so the call may run in
either state. A correct judge makes a link that leads beneath in the state it ran in; so after the
call each link made or moved is followed in both states, and it fails the invariant only if it
leads outside in both (a judge that looked elsewhere than where the link is made leaves links that
lead out in every state). The counts are printed: how many swaps landed during calls that judged
a link.

Each sequence starts with explicit escape attempts (a link that climbs one level too high, one
whose way out passes an unsearchable directory, a directory moved shallower with a link inside
that then leads out), so what the run exercises does not depend on the draw.

Budget: ``SAFEFS_LINK_EXAMPLES`` sequences of ``SAFEFS_LINK_STEPS`` calls per resolver and
``symlinks=`` mode (``make test-long`` raises both).
"""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import shutil
import stat
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

import safefs
from safefs import _sys
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
indices = st.integers(0, 1 << 16)  # a choice among what the tree holds when the rule runs
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


def _as_before(
    link: str, seen: tuple[int, str], before: dict[str, tuple[int, str]], pair: tuple[str, str] | None
) -> bool:
    """Whether ``link`` is a link that was there before the call, at this path or (the attacker's
    exchange left standing: the call removed one of the pair) under the other name of the pair."""
    if before.get(link) == seen:
        return True
    for here, there in [pair, pair[::-1]] if pair is not None else []:
        if link.startswith(there + "/") and before.get(here + link[len(there) :]) == seen:
            return True
    return False


def _exchange(a: str, b: str) -> bool:
    try:
        _sys.renameat2(_sys.AT_FDCWD, os.fsencode(a), _sys.AT_FDCWD, os.fsencode(b), _sys.RENAME_EXCHANGE)
    except OSError:
        return False
    return True


def _attack(conn: Any, counter: Any) -> None:
    """The attacker process: told a pair of paths, it exchanges them as fast as it can until told
    to stop, then answers how many exchanges it made (odd: the pair is left exchanged)."""
    while True:
        order = conn.recv()
        if order is None:
            return
        a, b = order
        n = 1 if _exchange(a, b) else 0
        counter.value = n
        conn.send("going")  # after the first exchange: the call may start in either state
        while True:
            for _ in range(16):
                if _exchange(a, b):
                    n += 1
                    counter.value = n
            if conn.poll():
                conn.recv()
                break
        conn.send(n)


class Attacker:
    """The second process, and what it did."""

    def __init__(self) -> None:
        ctx = mp.get_context("spawn")
        self.conn, theirs = ctx.Pipe()
        self.counter = ctx.Value("q", 0, lock=False)
        self.proc = ctx.Process(target=_attack, args=(theirs, self.counter), daemon=True)
        self.proc.start()

    def start(self, a: str, b: str) -> None:
        """Start exchanging ``a`` and ``b``; returns once the attacker is running (a few
        exchanges made, or 20 ms), so that the call comes while it is at work."""
        self.counter.value = 0
        self.conn.send((a, b))
        assert self.conn.recv() == "going"
        deadline = time.monotonic() + 0.02
        while self.counter.value < 4 and time.monotonic() < deadline:
            pass

    def stop(self) -> int:
        self.conn.send("stop")
        n: int = self.conn.recv()
        return n

    def close(self) -> None:
        self.conn.send(None)
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()


JUDGED = {"symlink", "link", "rename"}


def make_machine(flavour: Flavour, outcomes: Counter[str], attacker: Attacker) -> type[RuleBasedStateMachine]:
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
            # The escape attempts every sequence makes (their outcome is the invariant's too).
            (self.top / "e" / "f" / "g").mkdir(parents=True, exist_ok=True)
            self.act("symlink", "../../../outside/secret", "e/f/up3", pick=-1)
            (self.top / "e" / "shut" / "x").mkdir(parents=True, exist_ok=True)
            (self.top / "e" / "shut").chmod(0o000)
            self.act("symlink", "../e/shut/x/../../../../outside/secret", "e/through", pick=-1)
            (self.top / "e" / "f" / "g" / "m").mkdir(exist_ok=True)
            if not os.path.lexists(self.top / "e" / "f" / "g" / "m" / "l"):
                os.symlink("../../../../outside/secret", self.top / "e" / "f" / "g" / "m" / "l")
            self.act("rename", "e/f/g/m", "e/m", pick=-1)
            (self.top / "e" / "shut").chmod(0o755)
            # And one link that leads inside, so that every sequence makes a link to follow.
            self.act("symlink", "g", "e/f/in", pick=-1)

        def pair(self, args: tuple[object, ...], pick: int) -> tuple[str, str] | None:
            """A directory the call uses (a parent of one of its paths) and a symlink beside it to
            another directory of the tree: what the attacker exchanges during the call (none for
            a ``pick`` below 0)."""
            if pick < 0:
                return None
            used = []
            for arg in args:
                if isinstance(arg, str) and "/" in arg:
                    parts = arg.split("/")
                    used += ["/".join(parts[: k + 1]) for k in range(len(parts) - 1)]
            used = [u for u in used if not {"", ".", ".."} & set(u.split("/")) and (self.top / u).is_dir()]
            used = [u for u in used if not (self.top / u).is_symlink()]
            if not used:
                return None
            place = used[pick % len(used)]
            dirs = [d for d in self.entries()[0] if d != "." and not d.startswith(place)]
            if not dirs:
                return None
            elsewhere = dirs[pick % len(dirs)]
            swap = self.top / f"{place}.x"
            if os.path.lexists(swap):
                return None
            os.symlink(os.path.relpath(self.top / elsewhere, swap.parent), swap)
            return str(self.top / place), str(swap)

        def act(self, name: str, *args: object, pick: int = 0, **kwargs: object) -> None:
            """One call, without root's permission bypass, while the attacker exchanges a
            directory it uses; then the invariant on what it did."""
            pair = self.pair(args, pick)
            before = _links(self.top)
            if pair is not None:
                before = {p: seen for p, seen in before.items() if p != pair[1]}
                attacker.start(*pair)
            landed = 0
            try:
                with without_dac_bypass():
                    assert not permissions_bypassed()
                    ahead = attacker.counter.value
                    try:
                        getattr(self.root, name)(*args, **kwargs)
                    finally:
                        landed = attacker.counter.value - ahead
                outcomes[f"{name} ok"] += 1
            except safefs.PathEscapeError:
                outcomes[f"{name} escape refused"] += 1
            except OSError as exc:
                outcomes[f"{name} {errno.errorcode.get(exc.errno or 0, exc.errno)}"] += 1
            finally:
                swaps = attacker.stop() if pair is not None else 0
            if pair is not None:
                outcomes["calls attacked"] += 1
                outcomes["judged calls attacked"] += name in JUDGED
                outcomes["swaps during calls"] += landed
                if name in JUDGED and landed:
                    outcomes["judged calls with swaps landed"] += 1
                    outcomes["swaps landed during judged calls"] += landed
                if swaps % 2:
                    _exchange(*pair)  # back to the state the call started from
            after = _links(self.top)
            if pair is not None:
                after.pop(pair[1], None)
            made = [p for p, seen in after.items() if not _as_before(p, seen, before, pair)]
            for link in made:
                leads = where_it_leads(link, self.host)
                if leads.startswith("OUTSIDE") and pair is not None and swaps:
                    # The call may have run with the pair exchanged: follow it there too.
                    leads = self.in_other_state(link, pair) or leads
                outcomes[f"made or moved: {leads.split(':')[0]}"] += 1
                assert not leads.startswith("OUTSIDE"), (name, args, link, after[link][1], leads)
            if pair is not None and os.path.islink(pair[1]):
                os.unlink(pair[1])

        def in_other_state(self, link: str, pair: tuple[str, str]) -> str | None:
            """Where ``link`` leads with the pair exchanged (None: that state cannot be made)."""
            a, b = pair
            moved = b + link[len(a) :] if link.startswith(a + "/") else link
            if not _exchange(a, b):
                return None
            try:
                return where_it_leads(moved, self.host) if os.path.lexists(moved) else None
            finally:
                _exchange(a, b)

        @rule(path=paths, parents=st.booleans(), pick=st.integers(0, 99))
        def mkdir(self, path: str, parents: bool, pick: int) -> None:
            self.act("mkdir", path, parents=parents, pick=pick)

        @rule(to=targets, path=paths, pick=st.integers(0, 99))  # (``target`` names a bundle)
        def symlink(self, to: str, path: str, pick: int) -> None:
            self.act("symlink", to, path, pick=pick)

        def entries(self) -> tuple[list[str], list[str]]:
            """The tree as it is: its directories (root-relative, "." first) and all entries."""
            dirs, every = ["."], []
            for dirpath, dirnames, filenames in os.walk(self.top):
                rel = os.path.relpath(dirpath, self.top)
                for name in dirnames:
                    dirs.append(os.path.normpath(os.path.join(rel, name)))
                every += [os.path.normpath(os.path.join(rel, n)) for n in dirnames + filenames]
            return dirs, every

        # The rules below choose among what is in the tree by drawn indices, never by drawing
        # from the tree's own lists: the attacker makes the tree differ from one run of the same
        # choices to the next, and hypothesis needs the same draws to replay them.

        @rule(
            place=indices,
            parts=st.lists(indices, min_size=1, max_size=5),
            name=st.sampled_from(["s", "t", *NAMES]),
            pick=st.integers(0, 99),
        )
        def symlink_from_the_tree(self, place: int, parts: list[int], name: str, pick: int) -> None:
            """A link whose target is made of what is there: the names beside it (links among
            them), a missing name and back, climbs, and the outside."""
            dirs, _every = self.entries()
            where = dirs[place % len(dirs)]
            beside = sorted(os.listdir(self.top / where)) or ["a"]
            segments = [*beside, "..", "x/..", "outside"]
            to = "/".join(segments[k % len(segments)] for k in parts)
            self.act("symlink", to, os.path.join(where, name), pick=pick)

        @rule(place=indices, pick=st.integers(0, 99))
        def escape_by_one(self, place: int, pick: int) -> None:
            """A link that climbs exactly one level above the root from its own directory."""
            dirs, _every = self.entries()
            where = dirs[place % len(dirs)]
            depth = 0 if where == "." else where.count("/") + 1
            self.act("symlink", "../" * (depth + 1) + "outside/secret", os.path.join(where, "esc"), pick=pick)

        @rule(
            src=indices,
            into=indices,
            name=st.sampled_from(["m", *NAMES]),
            how=st.sampled_from(["rename", "link"]),
            pick=st.integers(0, 99),
        )
        def move_from_the_tree(self, src: int, into: int, name: str, how: str, pick: int) -> None:
            """An entry that is there (a directory with links in it, a link) moved to a directory
            that is there, under a new or an existing name."""
            dirs, every = self.entries()
            if every:
                dst = os.path.join(dirs[into % len(dirs)], name)
                self.act(how, every[src % len(every)], dst, pick=pick)

        @rule(src=paths, dst=paths, pick=st.integers(0, 99))
        def link(self, src: str, dst: str, pick: int) -> None:
            self.act("link", src, dst, pick=pick)

        @rule(src=paths, dst=paths, pick=st.integers(0, 99))
        def rename(self, src: str, dst: str, pick: int) -> None:
            self.act("rename", src, dst, pick=pick)

        @rule(path=paths, pick=st.integers(0, 99))
        def write_bytes(self, path: str, pick: int) -> None:
            self.act("write_bytes", path, b"data\n", pick=pick)

        @rule(path=paths, pick=st.integers(0, 99))
        def remove(self, path: str, pick: int) -> None:
            self.act("remove", path, pick=pick)

        @rule(path=paths, pick=st.integers(0, 99))
        def rmtree(self, path: str, pick: int) -> None:
            self.act("rmtree", path, pick=pick)

        @rule(path=paths, pick=st.integers(0, 99))
        def remove_all(self, path: str, pick: int) -> None:
            self.act("remove_all", path, pick=pick)

        @rule(path=paths, mode=modes, pick=st.integers(0, 99))
        def chmod(self, path: str, mode: int, pick: int) -> None:
            self.act("chmod", path, mode, pick=pick)

        @rule(place=indices, mode=modes)
        def chmod_from_the_tree(self, place: int, mode: int) -> None:
            dirs, _every = self.entries()
            self.act("chmod", dirs[place % len(dirs)], mode)

        def teardown(self) -> None:
            self.root.close()
            for dirpath, _dirs, _files in os.walk(self.base):
                os.chmod(dirpath, 0o755)
            shutil.rmtree(self.base)
            assert os.path.isdir(self.base.parent)

    return LinkInvariant


@pytest.mark.skipif(not _sys.have_renameat2(), reason="the attacker needs renameat2")
def test_every_link_made_or_moved_leads_beneath_the_root(flavour: Flavour) -> None:
    outcomes: Counter[str] = Counter()
    attacker = Attacker()
    try:
        machine = make_machine(flavour, outcomes, attacker)
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
    finally:
        attacker.close()
    print(flavour, dict(sorted(outcomes.items())))
    print(
        f"[link invariant] {flavour}: {outcomes['swaps landed during judged calls']} swaps landed during "
        f"{outcomes['judged calls with swaps landed']} judged calls; "
        f"{outcomes['calls attacked']} calls attacked"
    )
    # The run did what it is for: links were made and moved, and escapes were tried and refused
    # (each sequence starts with them), and the attacker was there.
    assert outcomes["symlink ok"] and outcomes["symlink escape refused"], outcomes
    assert outcomes["rename escape refused"], outcomes
    assert outcomes["calls attacked"] and outcomes["judged calls attacked"], outcomes


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
