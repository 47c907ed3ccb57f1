"""The judge of the Google ADK drop-in: random twin trees (twin_random), random sequences of the
``EnvironmentToolset``'s tools (``ReadFile``, ``WriteFile``, ``EditFile``, and ``Execute`` with
commands that read) run through ADK's own tool call path (``get_tools()``, then each tool's
``run_async``) on the original ``LocalEnvironment`` and on the drop-in, and after every call the
same answer and the same tree wherever the original stays inside the working directory.

The original's file operations resolve the path and check that it lies under the working
directory before touching it, so without a concurrent writer they stay inside: every answer must
be equal, save the named differences below (each listed in docs/integrations.md), and where the
original refuses, the drop-in refuses in the same words. A command is not checked by the
original: where its path leads out of the working directory (judged by the host's ``realpath``
on the original's tree just before the call), the drop-in's sandboxed command must fail without
the outside bytes. The originals only ever see their own temporary base (links leading out point
at its sibling ``outside/``), and their commands only read.

A missing working directory is made by the toolset's ``initialize()`` on both sides. ADK has no
public way to change ``working_dir`` after construction (a read-only property), so no sequence
reassigns it.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("google.adk.tools.environment")

from google.adk.environment import LocalEnvironment as Original
from google.adk.tools.environment import EnvironmentToolset

from safefs.integrations.google_adk import LocalEnvironment as DropIn
from tests.integrations import twin_random
from tests.integrations.support import documented

# The named differences, phrases of docs/integrations.md.
ERROR_TEXTS = "Error texts name the path as the agent gave it"
LOOP = "**A symlink loop is an `OSError`**"
GIT_PLACEHOLDER = "**A command sees a `.git` at the top of the working directory**"
REAL_PATH_ONLY = "**A command sees the working directory by its real path**"
NAMED = (ERROR_TEXTS, LOOP, GIT_PLACEHOLDER, REAL_PATH_ONLY)

P = twin_random.PATHS
CALLS = st.one_of(
    st.tuples(
        st.just("ReadFile"),
        st.fixed_dictionaries(
            {"path": P},
            optional={"start_line": st.sampled_from([1, 2, 3]), "end_line": st.sampled_from([1, 2])},
        ),
    ),
    st.tuples(
        st.just("WriteFile"),
        st.fixed_dictionaries({"path": P, "content": st.sampled_from(["new\n", "more\r\nlines\n", ""])}),
    ),
    st.tuples(
        st.just("EditFile"),
        st.fixed_dictionaries(
            {
                "path": P,
                "old_string": st.sampled_from(["alpha", "line", "a", "\n"]),
                "new_string": st.sampled_from(["ALPHA", ""]),
            }
        ),
    ),
    st.tuples(
        st.just("Execute"),
        st.fixed_dictionaries({"verb": st.sampled_from(["cat --", "ls -1A --"]), "path": P}),
    ),
)

_ERRNO = re.compile(r"\[Errno (\d+)\] ")


async def _call(
    tools: dict[str, Any], base: Path, root: Path, name: str, args: dict[str, Any]
) -> tuple[str, Any]:
    filled = {k: twin_random.fill(v, root, base) if isinstance(v, str) else v for k, v in args.items()}
    if name == "Execute":
        filled = {"command": f"{filled['verb']} {shlex.quote(filled['path'])}"}
    try:
        value = await tools[name].run_async(args=filled, tool_context=None)
    except Exception as exc:
        return ("raises", f"{type(exc).__name__}: {exc}".replace(str(base), "<base>"))
    return (
        "returns",
        {k: v.replace(str(base), "<base>") if isinstance(v, str) else v for k, v in value.items()},
    )


def _inside(path: str, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top + "/")


def _loop(path: str) -> bool:
    """Whether resolving ``path`` meets a symlink loop (the original's ``Path.resolve`` raises)."""
    try:
        Path(path).resolve()
    except RuntimeError:
        return True
    return False


def _compare(original: tuple[str, Any], drop_in: tuple[str, Any], loop: bool, given: str) -> None:
    """Asserts the answers agree, or differ as named (``given``: the path as the agent gave it,
    spelled with ``<base>``)."""
    if original == drop_in:
        return
    if loop:
        # LOOP: the original's Path.resolve raises RuntimeError on a loop (before Python 3.13);
        # the drop-in's resolution fails with ELOOP: an error answer, or an OSError out of
        # EditFile, which lets anything but FileNotFoundError through.
        if original[0] == "raises":
            assert drop_in[0] == "raises" and drop_in[1].startswith("OSError: [Errno 40]"), drop_in
        else:
            assert original[1]["status"] == "error" and drop_in[1]["status"] == "error", (original, drop_in)
            assert _ERRNO.match(drop_in[1]["error"]), drop_in
        return
    o_kind, o_value = original
    d_kind, d_value = drop_in
    if o_kind == d_kind == "raises":
        # ERROR_TEXTS: the same error, naming the path as the agent gave it.
        o_err, d_err = _ERRNO.search(o_value), _ERRNO.search(d_value)
        assert o_value.split(":")[0] == d_value.split(":")[0], (original, drop_in)
        assert o_err and d_err and o_err.group(1) == d_err.group(1), (original, drop_in)
        assert "<base>" not in d_value.replace(given, ""), drop_in
        return
    assert o_kind == d_kind == "returns", (original, drop_in)
    if d_value.get("stdout", "").startswith(".git\n") and not o_value.get("stdout", "").startswith(".git\n"):
        # GIT_PLACEHOLDER: `ls -A` of the top lists the sandbox's read-only .git placeholder.
        d_value = d_value | {"stdout": d_value["stdout"].removeprefix(".git\n")}
        if not d_value["stdout"]:
            del d_value["stdout"]
        assert d_value == o_value, (original, drop_in)
        return
    assert o_value.keys() == d_value.keys(), (original, drop_in)
    o_err, d_err = _ERRNO.match(o_value.get("error", "")), _ERRNO.match(d_value.get("error", ""))
    assert o_err and d_err and o_err.group(1) == d_err.group(1), (original, drop_in)  # ERROR_TEXTS
    assert "<base>" not in d_value["error"].replace(given, ""), drop_in  # no host path but the given one


def test_the_named_differences_are_documented() -> None:
    for phrase in NAMED:
        assert documented(phrase), phrase


async def _sequence(spec: twin_random.Spec, calls: list[tuple[str, dict[str, Any]]]) -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        bases = (Path(os.path.realpath(one)), Path(os.path.realpath(two)))
        roots = [twin_random.lay(base, spec) for base in bases]
        toolsets = [
            EnvironmentToolset(environment=cls(working_dir=root))
            for cls, root in zip((Original, DropIn), roots, strict=True)
        ]
        try:
            tools = [{t.name: t for t in await toolset.get_tools()} for toolset in toolsets]
            for name, args in calls:
                path = twin_random.fill(args["path"], roots[0], bases[0])
                path = path if path.startswith("/") else os.path.join(roots[0], path)
                inside = _inside(path, roots[0])
                loop = _loop(path)
                original = await _call(tools[0], bases[0], roots[0], name, args)
                drop_in = await _call(tools[1], bases[1], roots[1], name, args)
                if name == "Execute" and path.startswith(f"{bases[0]}/via/"):
                    inside = False  # REAL_PATH_ONLY: the symlink to it lies outside, unseen
                if name == "Execute" and not inside:
                    # Refused: nothing of the outside shows (neither the secret's name nor its
                    # bytes, nor ws2's); the sandbox cannot see it.
                    assert drop_in[0] == "returns", (args, drop_in)
                    shown = drop_in[1].get("stdout", "")
                    assert "secret" not in shown and "in ws2" not in shown, (args, drop_in)
                else:
                    given = twin_random.fill(args["path"], roots[1], bases[1]).replace(
                        str(bases[1]), "<base>"
                    )
                    _compare(original, drop_in, loop, given)
                assert twin_random.snapshot(bases[1]) == twin_random.snapshot(bases[0]), (name, args)
                assert twin_random.outside_untouched(bases[1])
        finally:
            for toolset in toolsets:
                await toolset.close()


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=twin_random.specs(), calls=st.lists(CALLS, min_size=1, max_size=8))
def test_drop_in_answers_as_the_original_on_random_trees(
    spec: twin_random.Spec, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    asyncio.run(_sequence(spec, calls))
