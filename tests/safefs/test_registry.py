"""The registry of operations covers the whole public API."""

from __future__ import annotations

import safefs
from tests.safefs.registry import BY_NAME, LIFECYCLE, OPERATIONS, public_methods


def test_every_public_root_method_is_in_the_registry() -> None:
    covered = {m for op in OPERATIONS for m in op.methods}
    missing = public_methods() - covered - LIFECYCLE
    assert not missing, f"public Root methods no operation exercises: {sorted(missing)}"
    assert covered <= public_methods(), covered - public_methods()
    assert "read_bytes" in public_methods() and "close" in LIFECYCLE  # the check can see both


def test_names_are_unique_and_aliases_exist() -> None:
    assert len(BY_NAME) == len(OPERATIONS)
    for op in OPERATIONS:
        assert not op.like or op.like in BY_NAME, op.name


def test_every_public_root_method_is_documented() -> None:
    undocumented = [
        name
        for name in sorted(public_methods() | {"resolver", "symlinks", "path", "closed", "anchors"})
        if not (getattr(safefs.Root, name).__doc__ or "").strip()
    ]
    assert not undocumented, undocumented
