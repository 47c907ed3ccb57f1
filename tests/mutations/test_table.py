"""The mutation list is well-formed: every snippet is found once in the tree as it is, every
mutation changes something, names are unique, and every test file it names exists. So the list
cannot rot silently when the code it mutates moves on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutations.table import MUTATIONS, Mutation

PROJECT = Path(__file__).resolve().parents[2]


def test_names_are_unique() -> None:
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_the_mutation_plants_in_the_current_tree(mutation: Mutation) -> None:
    original = (PROJECT / mutation.file).read_text()
    planted = mutation.plant(original)  # ValueError when the snippet is gone or ambiguous
    assert planted != original
    compile(planted, mutation.file, "exec")  # a mutation is a bug, not a syntax error
    files = [t.split("::")[0] for t in mutation.tests if t.startswith("tests/")]
    assert files, mutation.name
    for name in files:
        assert (PROJECT / name).is_file(), name


def test_a_snippet_that_is_gone_is_refused_loudly() -> None:
    with pytest.raises(ValueError, match="occurs 0 times"):
        MUTATIONS[0].plant("nothing of it here")
