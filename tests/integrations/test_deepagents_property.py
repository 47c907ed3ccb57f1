"""The judge of the deepagents drop-in: random twin trees (twin_random), random sequences of
deepagents' own file tools (``ls``, ``read_file``, ``write_file``, ``edit_file``, ``delete``,
``glob``, ``grep``: the tools ``FilesystemMiddleware`` builds on a backend, called as the agent's
tool node calls them, with a ``ToolRuntime``) on the original ``FilesystemBackend`` and on the
drop-in, in both ``virtual_mode`` settings, and after every call the same answer and the same
tree wherever the original stays inside ``root_dir``.

"Stays inside" is judged by the host's own ``realpath`` of the path on the original's tree just
before the call. Where the original leaves (a path or a link leading out: in virtual mode the
original refuses it itself), the drop-in refuses with deepagents' error shape: the
``ValueError`` the tool raises out of the tool node (naming no host path), or, for ``grep``, no
matches; the twins part there. The originals only ever see paths inside their own temporary
base: links leading out point at its sibling ``outside/``, and with ``virtual_mode=False`` every
path is spelled under it. ``grep`` is compared with the original's own Python search, the one it
runs without ``rg`` on ``PATH`` (the drop-in's, docs/integrations.md).
"""

from __future__ import annotations

import ast
import os
import posixpath
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("deepagents.middleware.filesystem")

from deepagents.backends import filesystem as original_module
from deepagents.backends.filesystem import FilesystemBackend as Original
from deepagents.middleware.filesystem import FilesystemMiddleware
from langchain.tools import ToolRuntime

from safefs.integrations.deepagents import FilesystemBackend as DropIn
from tests.integrations import twin_random
from tests.integrations.support import documented

# The named differences, phrases of docs/integrations.md.
NO_HOST_PATH = "**The refusal of a path leading out names no host path**"
DELETE_ROOT = '`delete("/")` is refused (`EINVAL`); the original removes the whole of `root_dir`.'
ERROR_TEXTS = "Error texts name the path as the agent gave it, never the host path of `root_dir`."
LOOP = "where the original's `resolve()` raises `RuntimeError`"
GREP_FILE = "**A `path` that names a file searches that file alone**"
LS_OUT_LINK = "**`ls` and `glob` leave out a symlink leading outside**"
ROOT_AS_FILE = "**A write of a missing `root_dir` itself**"
GREP_OUT_LINK = "a link to a file is searched only when it leads inside"
ROOT_LINK = "fails with `EISDIR` where the original's `O_NOFOLLOW` open fails with `ELOOP`"
NAMED = (
    NO_HOST_PATH,
    DELETE_ROOT,
    ERROR_TEXTS,
    LOOP,
    GREP_FILE,
    LS_OUT_LINK,
    ROOT_LINK,
    GREP_OUT_LINK,
    ROOT_AS_FILE,
)
ERRNO_PATH = re.compile(r"(\[Errno \d+\] [^:]*): '[^']*'")
LOOP_TEXT = re.compile(r"Symlink loop from '[^']*'")
QUOTED = re.compile(r"'[^']*'")

P = twin_random.PATHS
CALLS = st.one_of(
    st.tuples(st.just("ls"), st.fixed_dictionaries({"path": P})),
    st.tuples(
        st.just("read_file"),
        st.fixed_dictionaries(
            {"file_path": P}, optional={"offset": st.integers(0, 2), "limit": st.integers(1, 2)}
        ),
    ),
    st.tuples(
        st.just("write_file"),
        st.fixed_dictionaries({"file_path": P, "content": st.sampled_from(["new\n", "alpha\nbeta\n", ""])}),
    ),
    st.tuples(
        st.just("edit_file"),
        st.fixed_dictionaries(
            {
                "file_path": P,
                "old_string": st.sampled_from(["alpha", "line", "\n", "missing"]),
                "new_string": st.sampled_from(["ALPHA", ""]),
            },
            optional={"replace_all": st.booleans()},
        ),
    ),
    st.tuples(st.just("delete"), st.fixed_dictionaries({"file_path": P})),
    st.tuples(
        st.just("glob"),
        st.fixed_dictionaries(
            {"pattern": st.sampled_from(["*", "*.txt", "**/*", "d/*", "/a", "**/a"])}, optional={"path": P}
        ),
    ),
    st.tuples(
        st.just("grep"),
        st.fixed_dictionaries(
            {"pattern": st.sampled_from(["alpha", "line", "new", "a"])},
            optional={
                "path": P,
                "glob": st.sampled_from(["*", "*.txt"]),
                "output_mode": st.sampled_from(["files_with_matches", "content", "count"]),
            },
        ),
    ),
    # cwd reassigned between calls: ws2, or back to the first directory.
    st.tuples(st.just("reassign"), st.fixed_dictionaries({"to": st.sampled_from(["ws2", "first"])})),
)
PATH_ARGS = ("path", "file_path")


@contextmanager
def _without_ripgrep() -> Iterator[None]:
    """``PATH`` without ``rg``, so the original runs its own Python search."""
    path = os.pathsep.join(
        d for d in os.environ.get("PATH", "").split(os.pathsep) if not os.path.exists(os.path.join(d, "rg"))
    )
    resolver = getattr(original_module, "_resolve_ripgrep_path", None)
    with mock.patch.dict(os.environ, {"PATH": path}):
        if resolver is not None:
            resolver.cache_clear()
        try:
            yield
        finally:
            if resolver is not None:
                resolver.cache_clear()


def _runtime() -> Any:
    return ToolRuntime(
        state={"messages": [], "files": {}},
        context=None,
        config={},
        stream_writer=lambda chunk: None,
        tool_call_id="call-1",
        store=None,
    )


def _spelled(value: str, virtual: bool) -> str:
    """A path as the model gives it: with ``virtual_mode=False`` always under the base; in
    virtual mode a host spelling is a virtual path (the same in both twins)."""
    if virtual:
        return value.replace("{root}", "").replace("{base}", "/base")
    if value.startswith("{"):
        return value
    return "{root}/" + value


def _run(tools: dict[str, Any], base: Path, root: Path, name: str, args: dict[str, Any]) -> tuple[str, str]:
    filled = {k: twin_random.fill(v, root, base) if isinstance(v, str) else v for k, v in args.items()}
    try:
        message = tools[name].invoke({**filled, "runtime": _runtime()})
    except Exception as exc:
        return ("raises", f"{type(exc).__name__}: {exc}".replace(str(base), "<base>"))
    return (str(message.status), str(message.content).replace(str(base), "<base>"))


def _inside(path: str, top: Path) -> bool:
    real, root = os.path.realpath(path), os.path.realpath(top)
    return real == root or real.startswith(root + "/")


def _stays_inside(
    backend: Any, base: Path, root: Path, name: str, args: dict[str, Any], virtual: bool
) -> bool:
    """Whether the call on the original's tree touches nothing outside its ``cwd``."""
    value = args.get("path", args.get("file_path"))
    if value is None:
        return True
    path = twin_random.fill(value, root, base)
    if virtual:
        if ".." in path.split("/"):
            return True  # the tool refuses it before the backend sees it
        path = str(backend.cwd) + "/" + path.lstrip("/")
    elif ".." in path.split("/"):
        return True
    path = posixpath.normpath(path)
    if os.path.realpath(path) == os.path.realpath(backend.cwd):
        return True
    if name == "delete" and not virtual and os.path.islink(path):
        return _inside(os.path.dirname(path), backend.cwd)  # an absolute path: the link is removed
    if not os.path.lexists(str(backend.cwd)):
        return path == str(backend.cwd) or path.startswith(str(backend.cwd) + "/") or not path.startswith("/")
    if os.path.realpath(path) == os.path.realpath(backend.cwd):
        return True
    return _inside(path, backend.cwd) and _inside(os.path.dirname(path), backend.cwd)


def test_the_named_differences_are_documented() -> None:
    for phrase in NAMED:
        assert documented(phrase), phrase


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=twin_random.specs(), virtual=st.booleans(), calls=st.lists(CALLS, min_size=1, max_size=8))
def test_drop_in_answers_as_the_original_on_random_trees(
    spec: twin_random.Spec, virtual: bool, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two, _without_ripgrep():
        bases = (Path(os.path.realpath(one)), Path(os.path.realpath(two)))
        roots = [twin_random.lay(base, spec) for base in bases]
        backends = [
            cls(root_dir=root, virtual_mode=virtual)
            for cls, root in zip((Original, DropIn), roots, strict=True)
        ]
        toolsets = [{t.name: t for t in FilesystemMiddleware(backend=b).tools} for b in backends]
        firsts = [b.cwd for b in backends]
        try:
            for name, args in calls:
                if name == "reassign":
                    for i, base in enumerate(bases):
                        backends[i].cwd = roots[i] = base / "ws2" if args["to"] == "ws2" else firsts[i]
                    continue
                args = {k: _spelled(v, virtual) if k in PATH_ARGS else v for k, v in args.items()}
                inside = _stays_inside(backends[0], bases[0], roots[0], name, args, virtual)
                one_file = name == "grep" and _names_a_file(backends[0], bases[0], roots[0], args, virtual)
                original = _run(toolsets[0], bases[0], roots[0], name, args)
                drop_in = _run(toolsets[1], bases[1], roots[1], name, args)
                if not inside and original == drop_in and original[0] == "error":
                    inside = True  # both failed before acting (the original's O_NOFOLLOW open)
                if not inside:
                    if name == "grep":
                        assert drop_in[0] == "success" and not _named_matches(drop_in[1]), (args, drop_in)
                    else:
                        # NO_HOST_PATH: deepagents' ValueError, out of the tool, naming the path as given.
                        # (the glob tool catches it: its error message carries the text)
                        assert drop_in[0] in ("raises", "error"), (name, args, original, drop_in)
                        assert drop_in[1].startswith(("ValueError: Path:", "Error: glob failed: Path:")), (
                            drop_in
                        )
                        assert drop_in[1].endswith(" outside root directory"), drop_in
                    assert not virtual or "<base>" not in drop_in[1]
                    assert twin_random.outside_untouched(bases[1])
                    break  # the original may have changed what lies outside: the twins part here
                if name == "write_file" and original[0] == "success" and "[Errno 21]" in drop_in[1]:
                    # ROOT_AS_FILE: the original wrote the missing root_dir itself as a file.
                    assert not os.path.isdir(backends[0].cwd), (args, original, drop_in)
                    break
                if name == "delete" and original != drop_in and "[Errno 22]" in drop_in[1]:
                    # DELETE_ROOT: the original removed its whole root_dir.
                    assert original[0] == "success", original
                    break
                if spec.root == "via" and _the_given_root(args, virtual) and drop_in != original:
                    # ROOT_LINK: root_dir itself, spelled through the link it was given by.
                    assert "[Errno 40]" in original[1] and "[Errno 21]" in drop_in[1], (original, drop_in)
                elif (
                    name in ("ls", "glob")
                    and drop_in != original
                    and original[0] == "success"
                    and not virtual
                ):
                    # LS_OUT_LINK: the original lists a link leading out as what it leads to.
                    listed = _listed(original[1])
                    kept = [p for p in listed if not _leads_out(p, bases[0], backends[0].cwd)]
                    assert kept != listed and _listed(drop_in[1]) == kept, (args, original, drop_in)
                elif (
                    name == "grep"
                    and not virtual
                    and drop_in != original
                    and _out_links(bases[0], backends[0].cwd)
                ):
                    # GREP_OUT_LINK: the original's walk reads through links leading out.
                    out = _out_links(bases[0], backends[0].cwd)
                    lines = set(drop_in[1].split("\n"))
                    subset = lines <= set(original[1].split("\n"))
                    assert drop_in[1].startswith("No matches found") or subset, (args, original, drop_in)
                    assert not any(link in line for link in out for line in lines), (args, drop_in)
                elif one_file and drop_in != original:
                    # GREP_FILE: what the drop-in found in the file, the original found there too.
                    assert drop_in[0] == original[0] == "success", (args, original, drop_in)
                    assert drop_in[1].startswith("No matches found") or set(drop_in[1].split("\n")) <= set(
                        original[1].split("\n")
                    ), (args, original, drop_in)
                elif "Symlink loop from" in original[1]:
                    # LOOP: the kernel's ELOOP where Python 3.11 and 3.12 raise RuntimeError.
                    loop = "[Errno 40] Too many levels of symbolic links"
                    ours = QUOTED.sub("<p>", ERRNO_PATH.sub(r"\1", drop_in[1]))
                    assert ours == QUOTED.sub("<p>", LOOP_TEXT.sub(loop, original[1])), (original, drop_in)
                    assert not virtual or "<base>" not in drop_in[1]
                elif drop_in != original and original[0] == "error" and ERRNO_PATH.search(original[1]):
                    # ERROR_TEXTS: the same error, naming the path as the agent gave it.
                    assert ERRNO_PATH.sub(r"\1", drop_in[1]) == ERRNO_PATH.sub(r"\1", original[1]), (
                        name,
                        args,
                        original,
                        drop_in,
                    )
                    assert not virtual or "<base>" not in drop_in[1]
                else:
                    assert drop_in == original, (name, args, original, drop_in)
                assert twin_random.snapshot(bases[1]) == twin_random.snapshot(bases[0]), (name, args)
                assert twin_random.outside_untouched(bases[1])
        finally:
            backends[1].close()


def _names_a_file(backend: Any, base: Path, root: Path, args: dict[str, Any], virtual: bool) -> bool:
    value = args.get("path")
    if value is None:
        return False
    path = twin_random.fill(value, root, base)
    if virtual:
        path = str(backend.cwd) + "/" + path.lstrip("/")
    return os.path.isfile(path)


def _the_given_root(args: dict[str, Any], virtual: bool) -> bool:
    value = args.get("path", args.get("file_path"))
    return not virtual and value is not None and posixpath.normpath(value) == "{root}"


def _out_links(base: Path, cwd: Path) -> set[str]:
    """The links under ``cwd`` leading outside it, as the original's non-virtual grep names them."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(cwd):
        for entry in dirnames + filenames:
            path = os.path.join(dirpath, entry)
            if os.path.islink(path) and not _inside(path, cwd):
                found.add(path.replace(str(base), "<base>"))
    return found


def _listed(content: str) -> list[str]:
    return [] if content == "No files found" else list(ast.literal_eval(content))


def _leads_out(shown: str, base: Path, cwd: Path) -> bool:
    path = shown.rstrip("/").replace("<base>", str(base))
    return os.path.islink(path) and not _inside(path, cwd)


def _named_matches(content: str) -> bool:
    return content.startswith("/") or "\n/" in content
