"""Claude Code's own Read, Edit and Grep against the safefs tools on random twin trees: random
files of random lines, and random sequences of calls, each sequence run through the bundled
binary on both twins (one session each). The same result texts and the same trees afterwards,
but for the differences docs/integrations.md lists (the release differences of
``test_claude_agent_sdk_differential``). A Read of each file comes first, as the binary's Edit
wants one. Few examples: each costs two sessions of the binary."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integrations.support import documented, twin
from tests.integrations.test_claude_agent_sdk_differential import ROOT, _session, _tree

pytestmark = pytest.mark.slow

FILES = ("a.txt", "b.md", "sub/c.txt")
WORDS = ("alpha", "beta", "Gamma", "delta")
UNCHANGED = "Wasted call — file unchanged"  # the oldest release's second Read of a file
UNCHANGED_DOC = 'a "Wasted call — file unchanged" note instead of the content'

lines = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=6
)
contents = st.tuples(*(lines for _ in FILES)).map(lambda t: ["\n".join(ls) + "\n" for ls in t])
files = st.sampled_from(FILES)
reads = st.builds(
    lambda f, offset, limit: ("Read", {"file_path": f"{ROOT}/{f}", **offset, **limit}),
    files,
    st.one_of(st.just({}), st.integers(1, 7).map(lambda n: {"offset": n})),
    st.one_of(st.just({}), st.integers(1, 7).map(lambda n: {"limit": n})),
)
edits = st.builds(
    lambda f, old, new, every: (
        "Edit",
        {"file_path": f"{ROOT}/{f}", "old_string": old, "new_string": new, "replace_all": every},
    ),
    files,
    st.one_of(st.sampled_from(WORDS), st.tuples(*(st.sampled_from(WORDS),) * 2).map(" ".join)),
    st.sampled_from(("zeta", "eta", "")),
    st.booleans(),
)
greps = st.builds(
    lambda pattern, where, ignore: ("Grep", {"pattern": pattern, **where, "-i": ignore}),
    st.one_of(st.sampled_from(WORDS), st.tuples(*(st.sampled_from(WORDS),) * 2).map("|".join)),
    st.one_of(
        st.just({}),
        files.map(lambda f: {"path": f"{ROOT}/{f}", "output_mode": "content"}),
        st.just({"path": f"{ROOT}/sub", "output_mode": "count"}),
    ),
    st.booleans(),
)
sequences = st.lists(st.one_of(reads, edits, greps), min_size=1, max_size=6)


def _make(work: Path, texts: list[str]) -> None:
    (work / "sub").mkdir()
    for age, (name, text) in enumerate(zip(FILES, texts, strict=True)):
        (work / name).write_text(text)
        os.utime(work / name, (1_700_000_000 + age, 1_700_000_000 + age))


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(contents, sequences)
def test_random_sequences_answer_as_claude_code(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], calls: list[tuple[str, dict[str, Any]]]
) -> None:
    calls = [("Read", {"file_path": f"{ROOT}/{f}"}) for f in FILES] + calls
    base = tmp_path_factory.mktemp("claude-property")
    original_work, drop_in_work = twin(base, "original"), twin(base, "safefs")
    _make(original_work, texts)
    _make(drop_in_work, texts)
    original = _session(original_work, calls, drop_in=False)
    drop_in = _session(drop_in_work, calls, drop_in=True)
    assert len(original) == len(drop_in) == len(calls)
    for i, (call, want, got) in enumerate(zip(calls, original, drop_in, strict=True)):
        if want[0].startswith(UNCHANGED):
            assert documented(UNCHANGED_DOC)
            continue
        assert got == want, f"call {i} {call}"
    assert _tree(drop_in_work) == _tree(original_work)
