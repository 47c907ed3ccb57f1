"""The judge of the agno drop-in: random twin trees (twin_random), random sequences of the eight
``FileTools`` tools run through agno's own dispatch (a ``FunctionCall`` on the toolkit's
registered ``Function``, as an agent runs a model's tool call) on the original and on the
drop-in, and after every call the same answer and the same tree.

The original resolves each path (``safe_join_relative_path``: ``resolve()``, then
``relative_to`` the resolved ``base_dir``) before touching it, so without a concurrent writer it
never leaves ``base_dir``: every answer must be equal, save the named differences below (each a
phrase of docs/integrations.md, applied only where it says), and where the original refuses,
the drop-in refuses in the same words. ``base_dir`` is reassigned between calls as a user may
reassign it. The originals only ever see paths inside their own temporary base (links leading
out point at its sibling ``outside/``).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("agno.tools.file")

from agno.tools.file import FileTools as Original
from agno.tools.function import FunctionCall

from safefs.integrations.agno import FileTools as DropIn
from tests.integrations import twin_random
from tests.integrations.support import documented

# The named differences: each is a phrase of docs/integrations.md, applied where it says.
ERROR_TEXTS = "**Error texts name the path as the model gave it**"
LISTING_ORDER = "**entries come sorted by name**"
LINKS_NOT_ENTERED = (
    "symlinks are listed and never entered (pathlib's glob enters a linked directory for `link/*`)"
)
LOOP = "where the original's `resolve()` raises `RuntimeError`"
DELETE_ROOT = "**`delete_file` of `base_dir` itself is refused**"
SAVE_ROOT = "**`save_file` of `base_dir` itself is a directory**"
NAMED = (ERROR_TEXTS, LISTING_ORDER, LINKS_NOT_ENTERED, LOOP, DELETE_ROOT, SAVE_ROOT)
LISTINGS = ("list_files", "search_files", "search_content")

P = twin_random.PATHS
LINE = st.integers(min_value=0, max_value=3)
CALLS = st.one_of(
    st.tuples(st.just("read_file"), st.fixed_dictionaries({"file_name": P})),
    st.tuples(
        st.just("read_file_chunk"),
        st.fixed_dictionaries({"file_name": P, "start_line": LINE, "end_line": LINE}),
    ),
    st.tuples(
        st.just("save_file"),
        st.fixed_dictionaries(
            {"file_name": P, "contents": st.sampled_from(["new\n", "two\nlines\n", ""])},
            optional={"overwrite": st.booleans()},
        ),
    ),
    st.tuples(
        st.just("replace_file_chunk"),
        st.fixed_dictionaries(
            {"file_name": P, "start_line": LINE, "end_line": LINE, "chunk": st.sampled_from(["X", "Y\nZ"])}
        ),
    ),
    st.tuples(st.just("delete_file"), st.fixed_dictionaries({"file_name": P})),
    st.tuples(st.just("list_files"), st.fixed_dictionaries({}, optional={"directory": P})),
    st.tuples(
        st.just("search_files"),
        st.fixed_dictionaries({"pattern": st.sampled_from(["*", "*.txt", "*/a", "d/*", "**/*.txt", "**/a"])}),
    ),
    st.tuples(
        st.just("search_content"),
        st.fixed_dictionaries(
            {"query": st.sampled_from(["alpha", "line", "new", "in"])}, optional={"directory": P}
        ),
    ),
    # base_dir reassigned between calls: ws2, or back to the first directory.
    st.tuples(st.just("reassign"), st.fixed_dictionaries({"to": st.sampled_from(["ws2", "first"])})),
)

ERRNO_PATH = re.compile(r"(\[Errno \d+\] [^:]*): '[^']*'")


def _functions(tools: Any) -> dict[str, Any]:
    for function in tools.functions.values():
        function.process_entrypoint()
    return dict(tools.functions)


def _run(
    functions: dict[str, Any], base: Path, root: Path, name: str, args: dict[str, Any]
) -> tuple[Any, ...]:
    """The call as agno's agent runs it: a FunctionCall on the registered Function."""
    filled = {k: twin_random.fill(v, root, base) if isinstance(v, str) else v for k, v in args.items()}
    outcome = FunctionCall(function=functions[name], arguments=filled).execute()
    if outcome.status != "success":
        return ("failure", str(outcome.error).replace(str(base), "<base>"))
    text = str(outcome.result).replace(str(base), "<base>")
    if name == "list_files" and text.startswith("["):
        return ("listed", sorted(json.loads(text)))  # LISTING_ORDER
    if name == "search_files" and text.startswith("{"):
        found = json.loads(text)
        return ("found", found["matches_found"], sorted(found["files"]))  # LISTING_ORDER
    if name == "search_content" and text.startswith("{"):
        found = json.loads(text)
        return ("found", found["matches_found"], sorted(found["files"], key=lambda f: f["file"]))
    return ("returns", text)


def _entered_links(base: Path, base_dir: Path, found: list[str]) -> set[str]:
    """The matches of the original's glob that lie beneath a symlink (pathlib entered it)."""
    entered = set()
    for rel in found:
        parts = rel.split("/")
        if any(os.path.islink(base_dir.joinpath(*parts[:i])) for i in range(1, len(parts))):
            entered.add(rel)
    return entered


def _compare(
    name: str,
    args: dict[str, Any],
    original: Any,
    drop_in: Any,
    entered: set[str],
    original_dir: Path,
    given: list[str],
) -> bool:
    """Asserts the answers agree, or differ as named; True when the trees part ways there.
    ``given``: the paths the model gave, as the answers spell them (``<base>`` for the base)."""
    if original == drop_in:
        return False
    if name == "save_file" and original == ("returns", args["file_name"]) and original_dir.is_file():
        # SAVE_ROOT: base_dir was missing, and the original wrote a file in its place; the drop-in
        # answers as the original does where base_dir exists.
        kept = drop_in[1] == f"File {args['file_name']} already exists"
        assert kept or "[Errno 21] Is a directory" in drop_in[1], (original, drop_in)
        return True
    if name == "delete_file" and "[Errno 22]" in drop_in[1]:
        # DELETE_ROOT: the original removes base_dir itself when empty (else ENOTEMPTY).
        assert original[1] == "" or "[Errno 39]" in original[1], (original, drop_in)
        return True
    if "Symlink loop from" in str(original[-1]):
        # LOOP: the original's resolve() raises on a link loop (its text, or out of the tool);
        # the drop-in answers, a path as the kernel's ELOOP, a listing as it finds the entries.
        assert drop_in[0] != "failure", (original, drop_in)
        assert name in LISTINGS or "[Errno 40]" in drop_in[1], (original, drop_in)
        return False
    if name == "search_files" and original[0] == drop_in[0] == "found":
        # LINKS_NOT_ENTERED: what pathlib's glob found beneath a linked directory is not listed.
        assert drop_in[2] == [f for f in original[2] if f not in entered], (original, drop_in)
        assert drop_in[1] == len(drop_in[2])
        return False
    if original[0] == drop_in[0] == "returns" and ERRNO_PATH.search(original[1]):
        # ERROR_TEXTS: the same error, naming the path as the model gave it.
        assert ERRNO_PATH.sub(r"\1", original[1]) == ERRNO_PATH.sub(r"\1", drop_in[1]), (original, drop_in)
        named = drop_in[1]
        for path in given:
            if "<base>" in path:  # a host path the model gave: named as given
                named = named.replace(path, "")
        assert "<base>" not in named, drop_in  # no host path but one the model gave
        return False
    raise AssertionError(f"{name} {args}: original {original!r}, drop-in {drop_in!r}")


def test_the_named_differences_are_documented() -> None:
    for phrase in NAMED:
        assert documented(phrase), phrase


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=twin_random.specs(), calls=st.lists(CALLS, min_size=1, max_size=8))
def test_drop_in_answers_as_the_original_on_random_trees(
    spec: twin_random.Spec, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        bases = (Path(os.path.realpath(one)), Path(os.path.realpath(two)))
        roots = [twin_random.lay(base, spec) for base in bases]
        toolkits = [kit(base_dir=root, all=True) for kit, root in zip((Original, DropIn), roots, strict=True)]
        functions = [_functions(tools) for tools in toolkits]
        firsts = [tools.base_dir for tools in toolkits]
        try:
            for name, args in calls:
                if name == "reassign":
                    for i, base in enumerate(bases):
                        toolkits[i].base_dir = roots[i] = base / "ws2" if args["to"] == "ws2" else firsts[i]
                    continue
                original = _run(functions[0], bases[0], roots[0], name, args)
                drop_in = _run(functions[1], bases[1], roots[1], name, args)
                entered = (
                    _entered_links(bases[0], toolkits[0].base_dir, original[2])
                    if name == "search_files" and original[0] == "found"
                    else set()
                )
                given = [
                    twin_random.fill(v, roots[1], bases[1]).replace(str(bases[1]), "<base>")
                    for v in args.values()
                    if isinstance(v, str)
                ]
                if _compare(name, args, original, drop_in, entered, toolkits[0].base_dir, given):
                    assert twin_random.outside_untouched(bases[1])
                    break
                assert twin_random.snapshot(bases[1]) == twin_random.snapshot(bases[0]), (name, args)
                assert twin_random.outside_untouched(bases[1])
        finally:
            toolkits[1].close()
