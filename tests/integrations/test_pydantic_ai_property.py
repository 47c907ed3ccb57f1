"""The judge of the pydantic-ai drop-in: random twin trees (twin_random), random sequences of the
backend's file methods (the calls pydantic-ai's workspace tools make) on the original
``LocalWorkspaceBackend`` and on the drop-in, and after every call the same answer and the same
tree wherever the original stays inside the working directory; where it leaves it (a path or a
link leading out), the drop-in raises ``PermissionError``, the workspace protocol's refusal.

"Stays inside" is judged by the host's own ``realpath`` of the path on the original's tree just
before the call. The originals only ever see their own temporary base (links leading out point
at its sibling ``outside/``).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pydantic_ai.workspaces")

from pydantic_ai.workspaces import FileEntry
from pydantic_ai.workspaces import LocalWorkspaceBackend as Original

from safefs.integrations.pydantic_ai import LocalWorkspaceBackend as DropIn
from tests.integrations import twin_random
from tests.integrations.support import documented

# The named differences, phrases of docs/integrations.md.
OUT_LINK_LISTED = "listed with `is_dir=False` and `size=None`"
LOOP_OS_ERROR = "`OSError` (`errno.ELOOP`) where the original's `Path.resolve` raises `RuntimeError`"
NAMED = (OUT_LINK_LISTED, LOOP_OS_ERROR)

PATH = twin_random.PATHS.map(lambda p: p if p.startswith("{") else "{root}/" + p)
CALLS = st.one_of(
    st.tuples(
        st.sampled_from(["read_bytes", "stat", "list_dir", "exists", "realpath", "make_dir", "remove"]), PATH
    ),
    st.tuples(st.just("write_bytes"), PATH, st.sampled_from([b"new\n", b""])),
)


def _plain(value: Any, base: str) -> Any:
    if isinstance(value, FileEntry):
        return (value.name, value.path.replace(base, "<base>"), value.is_dir, value.size)
    if isinstance(value, list | tuple):
        return [_plain(v, base) for v in value]
    if isinstance(value, str):
        return value.replace(base, "<base>")
    return value


def _outcome(backend: Any, base: Path, call: tuple[Any, ...], root: Path) -> tuple[str, Any]:
    method, path, *rest = call
    try:
        value = asyncio.run(getattr(backend, method)(twin_random.fill(path, root, base), *rest))
    except Exception as exc:
        return ("raises", "PermissionError" if isinstance(exc, PermissionError) else type(exc).__name__)
    return ("returns", _plain(value, str(base)))


def _inside(path: str, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top + "/")


def _leads_out(entry_path: str, root: Path) -> bool:
    return os.path.islink(entry_path) and not _inside(entry_path, root)


def test_the_named_differences_are_documented() -> None:
    for phrase in NAMED:
        assert documented(phrase), phrase


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=twin_random.specs(), calls=st.lists(CALLS, min_size=1, max_size=8))
def test_drop_in_answers_as_the_original_on_random_trees(
    spec: twin_random.Spec, calls: list[tuple[Any, ...]]
) -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        bases = (Path(os.path.realpath(one)), Path(os.path.realpath(two)))
        roots = [twin_random.lay(base, spec) for base in bases]
        backends = [Original(roots[0]), DropIn(roots[1])]
        try:
            for call in calls:
                method, path = call[0], twin_random.fill(call[1], roots[0], bases[0])
                inside = _inside(path, roots[0])
                # A path whose parent is a link leading out counts as leading out (remove, stat
                # and list act on the entry the parent names).
                if inside and not _inside(os.path.dirname(path.rstrip("/")) or "/", roots[0]):
                    inside = False
                if spec.root == "missing":
                    inside = True  # both report the workspace unavailable
                if (
                    not inside
                    and method == "remove"
                    and os.path.islink(path)
                    and _inside(os.path.dirname(path), roots[0])
                ):
                    inside = True  # removing a link removes the entry, wherever it points
                listed_out = (
                    {e.name for e in os.scandir(path) if _leads_out(e.path, roots[0])}
                    if method == "list_dir" and inside and os.path.isdir(path)
                    else set()
                )
                original = _outcome(backends[0], bases[0], call, roots[0])
                drop_in = _outcome(backends[1], bases[1], call, roots[1])
                if inside:
                    if listed_out and original[0] == "returns":
                        # OUT_LINK_LISTED: the entries of links leading out are not followed.
                        o = [e for e in original[1] if e[0] not in listed_out]
                        d = [e for e in drop_in[1] if e[0] not in listed_out]
                        assert d == o, (call, original, drop_in)
                        assert {e[0] for e in drop_in[1]} == {e[0] for e in original[1]}
                        for e in drop_in[1]:
                            if e[0] in listed_out:
                                assert (e[2], e[3]) == (False, None), e
                    elif original == ("raises", "RuntimeError"):
                        # LOOP_OS_ERROR: pathlib's loop error (Python < 3.13) is an OSError here.
                        assert drop_in == ("raises", "OSError"), (call, original, drop_in)
                    else:
                        assert drop_in == original, (call, original, drop_in)
                    assert twin_random.snapshot(bases[1]) == twin_random.snapshot(bases[0]), call
                else:
                    if method in ("stat", "exists") and os.path.islink(path):
                        # OUT_LINK_LISTED: the link itself is described, not followed.
                        assert drop_in[0] == "returns", (call, drop_in)
                    else:
                        assert drop_in == ("raises", "PermissionError"), (call, original, drop_in)
                    assert twin_random.outside_untouched(bases[1])
                    break  # the original may have changed what lies outside: the twins part here
        finally:
            backends[1].close()
