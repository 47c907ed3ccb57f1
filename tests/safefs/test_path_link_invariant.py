"""The link invariant of test_link_invariant.py, with copies and moves through ``safefs.Path``.

The same state machine (random trees, hostile link targets, unreadable directories, every call
without root's permission bypass), with its rules and these besides: ``Path.copy`` (links
followed or kept), ``Path.move``, ``copy_into`` and copies and moves into a second Root opened on
a directory of the tree (``open_root``). After each call, every symlink made or moved must lead
beneath the root, or dangle beneath it, when the kernel follows it with no confinement at all: a
copy or a move never plants a link out.
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

import safefs
from safefs import _sys
from tests.capabilities import permissions_bypassed, without_dac_bypass
from tests.safefs.conftest import Flavour
from tests.safefs.test_link_invariant import (
    EXAMPLES,
    NAMES,
    STEPS,
    Attacker,
    _links,
    indices,
    make_machine,
    paths,
    where_it_leads,
)

new_names = st.sampled_from(["m", "n", *NAMES])


def make_path_machine(
    flavour: Flavour, outcomes: Counter[str], attacker: Attacker
) -> type[RuleBasedStateMachine]:
    base = make_machine(flavour, outcomes, attacker)

    class PathLinkInvariant(base):  # type: ignore[valid-type,misc]
        def act_with(self, label: str, call: Callable[[], object]) -> None:
            """``act`` of the base machine, for a call through a Path."""
            before = _links(self.top)
            try:
                with without_dac_bypass():
                    assert not permissions_bypassed()
                    call()
                outcomes[f"{label} ok"] += 1
            except safefs.PathEscapeError:
                outcomes[f"{label} escape refused"] += 1
            except OSError as exc:
                outcomes[f"{label} {errno.errorcode.get(exc.errno or 0, exc.errno)}"] += 1
            after = _links(self.top)
            for link in [p for p, seen in after.items() if before.get(p) != seen]:
                leads = where_it_leads(link, self.host)
                outcomes[f"made or moved: {leads.split(':')[0]}"] += 1
                assert not leads.startswith("OUTSIDE"), (label, link, after[link][1], leads)

        # As the base machine's rules, these choose among what is in the tree by drawn indices,
        # never by drawing from the tree's own lists: the attacker makes the tree differ from one
        # run of the same choices to the next, and hypothesis needs the same draws to replay them.

        def pick(self, src: int, into: int) -> tuple[str, str]:
            """An entry of the tree (or "a") and a directory of the tree."""
            dirs, every = self.entries()
            every = every or ["a"]
            return every[src % len(every)], dirs[into % len(dirs)]

        @rule(src=indices, into=indices, name=new_names, follow=st.booleans())
        def path_copy_from_the_tree(self, src: int, into: int, name: str, follow: bool) -> None:
            source, where = self.pick(src, into)
            dest = os.path.join(where, name)
            self.act_with(
                "Path.copy", lambda: (self.root / source).copy(self.root / dest, follow_symlinks=follow)
            )

        @rule(src=indices, into=indices, name=new_names)
        def path_move_from_the_tree(self, src: int, into: int, name: str) -> None:
            source, where = self.pick(src, into)
            dest = os.path.join(where, name)
            self.act_with("Path.move", lambda: (self.root / source).move(self.root / dest))

        @rule(src=indices, into=indices)
        def path_copy_into(self, src: int, into: int) -> None:
            source, where = self.pick(src, into)
            self.act_with(
                "Path.copy_into",
                lambda: (self.root / source).copy_into(self.root / where, follow_symlinks=False),
            )

        @rule(src=indices, into=indices, name=new_names, how=st.sampled_from(["copy", "move"]))
        def into_another_root(self, src: int, into: int, name: str, how: str) -> None:
            """Into a Root of a directory of the tree: links are judged against that Root."""
            source, sub_dir = self.pick(src, into)

            def call() -> None:
                with self.root.open_root(sub_dir) as sub:
                    target = sub / name
                    if how == "copy":
                        (self.root / source).copy(target, follow_symlinks=False)
                    else:
                        (self.root / source).move(target)

            self.act_with(f"Path.{how} to another Root", call)

        @rule(src=paths, dst=paths, follow=st.booleans())
        def path_copy(self, src: str, dst: str, follow: bool) -> None:
            self.act_with(
                "Path.copy", lambda: (self.root / src).copy(self.root / dst, follow_symlinks=follow)
            )

        @rule(src=paths, dst=paths)
        def path_move(self, src: str, dst: str) -> None:
            self.act_with("Path.move", lambda: (self.root / src).move(self.root / dst))

    return PathLinkInvariant


@pytest.mark.skipif(not _sys.have_renameat2(), reason="the attacker needs renameat2")
def test_no_copy_or_move_through_path_plants_a_link_out(flavour: Flavour) -> None:
    outcomes: Counter[str] = Counter()
    attacker = Attacker()  # the base machine's calls run while it exchanges a directory they use
    try:
        run_state_machine_as_test(
            make_path_machine(flavour, outcomes, attacker),
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
    tried = {k.split(" ")[0] for k in outcomes if k.startswith("Path.")}
    assert {"Path.copy", "Path.move"} <= tried, outcomes
