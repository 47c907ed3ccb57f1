"""``compile_glob(pattern, dot=False)``: a name starting with a dot is matched only by a pattern
component that starts with a literal dot, and ``**`` never enters one; ``dot=True`` (the
default) matches it like any other name."""

from __future__ import annotations

import pytest

pytest.importorskip("re2")

from safefs.workspace.patterns import compile_glob, matches

CASES = [
    # (pattern, path, with dot=False, with dot=True)
    ("*", ".env", False, True),
    ("*", "env", True, True),
    (".*", ".env", True, True),
    ("*.py", ".a.py", False, True),
    ("?env", ".env", False, True),
    ("[!a]env", ".env", False, True),
    ("**/*.yml", ".github/ci.yml", False, True),
    (".github/**/*.yml", ".github/w/ci.yml", True, True),
    ("src/**", "src/.cache/x", False, True),
    ("src/**", "src/a/x", True, True),
    ("*x", "x", True, True),
    ("*.x", ".x", False, True),
]


@pytest.mark.parametrize(
    ("pattern", "path", "hidden", "shown"), CASES, ids=[f"{p} {q}" for p, q, *_ in CASES]
)
def test_a_dot_name_is_matched_only_by_a_dot(pattern: str, path: str, hidden: bool, shown: bool) -> None:
    assert matches(compile_glob(pattern, dot=False), path) is hidden
    assert matches(compile_glob(pattern), path) is shown
