"""The judge of the LangChain drop-in: random twin trees (twin_random), random sequences of the
seven tools run through LangChain's own dispatch (``BaseTool.run``) on the original toolkit and on
the drop-in, and after every call the same answer and the same tree.

With ``root_dir`` set, the original resolves each path and checks it lies under ``root_dir``
before touching it, so without a concurrent writer it stays inside: every answer must be equal,
save the named differences below (each listed in docs/integrations.md), and where the original
refuses, the drop-in refuses in the same words. The originals only ever see paths inside their
own temporary base (links leading out point at its sibling ``outside/``).
"""

from __future__ import annotations

import os
import posixpath
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain_community.agent_toolkits")

from langchain_community.agent_toolkits import FileManagementToolkit as Original

from safefs.integrations.langchain import FileManagementToolkit as DropIn
from tests.integrations import twin_random
from tests.integrations.support import documented

# The named differences: each is a phrase of docs/integrations.md, applied where it says.
ERROR_TEXTS = "**Error texts name the path as the model gave it**"
LISTING_ORDER = "**entries come sorted by name**"
SEARCH_OUT_LINK = "**`file_search` lists a symlink leading outside as a file**"
MOVE_OUTSIDE = "**`move_file` refuses an outside destination**"
LOOP = "**A symlink loop is an error text**"
MOVE_ABSOLUTE = "**A directory holding a symlink that leads outside, or an absolute one, is not moved**"
ROOT_AS_FILE = "**`write_file` of `.` under a missing `root_dir`**"
COPY_INTO_OUT_LINK = "**`copy_file` into a directory whose entry of that name leads outside**"
NAMED = (
    ERROR_TEXTS,
    LISTING_ORDER,
    SEARCH_OUT_LINK,
    MOVE_OUTSIDE,
    LOOP,
    MOVE_ABSOLUTE,
    ROOT_AS_FILE,
    COPY_INTO_OUT_LINK,
)

P = twin_random.PATHS
CALLS = st.one_of(
    st.tuples(st.just("read_file"), st.fixed_dictionaries({"file_path": P})),
    st.tuples(
        st.just("write_file"),
        st.fixed_dictionaries(
            {"file_path": P, "text": st.sampled_from(["new\n", "more\r\n", ""]), "append": st.booleans()}
        ),
    ),
    st.tuples(st.just("copy_file"), st.fixed_dictionaries({"source_path": P, "destination_path": P})),
    st.tuples(st.just("move_file"), st.fixed_dictionaries({"source_path": P, "destination_path": P})),
    st.tuples(st.just("file_delete"), st.fixed_dictionaries({"file_path": P})),
    st.tuples(st.just("list_directory"), st.fixed_dictionaries({"dir_path": P})),
    st.tuples(
        st.just("file_search"),
        st.fixed_dictionaries({"pattern": st.sampled_from(["*", "*.txt", "[ab]*", "?"]), "dir_path": P}),
    ),
    # root_dir reassigned on every tool between calls: ws2, or back to the first directory.
    st.tuples(st.just("reassign"), st.fixed_dictionaries({"to": st.sampled_from(["ws2", "first"])})),
)

_ERRNO = re.compile(r"^Error: \[Errno (\d+)\]")
_QUOTED = re.compile(r"(PosixPath\()?'[^']*'\)?")


def _run(tools: dict[str, Any], base: Path, root: Path, name: str, args: dict[str, Any]) -> tuple[str, Any]:
    filled = {k: twin_random.fill(v, root, base) if isinstance(v, str) else v for k, v in args.items()}
    try:
        text = tools[name].run(filled)
    except Exception as exc:
        return ("raises", type(exc).__name__)
    return ("returns", str(text).replace(str(base), "<base>"))


def _out_dir_links(base: Path, root: Path, dir_path: str) -> set[str]:
    """Names under ``dir_path`` that are links the host resolves to a directory outside the root
    (os.walk takes them for directories; the drop-in cannot follow them, so lists them)."""
    found = set()
    top = Path(twin_random.fill(dir_path, root, base))
    top = top if top.is_absolute() else root / top
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            real = os.path.realpath(path)
            if os.path.islink(path) and os.path.isdir(real) and not real.startswith(real_root + "/"):
                found.add(os.path.relpath(path, top))
    return found


def _holds_judged_link(path: Path, root: Path) -> bool:
    """Whether the directory ``path`` (not followed) holds, at any depth, a symlink that is
    absolute or leads outside ``root``: the link guarantee refuses to move it."""
    if path.is_symlink() or not path.is_dir():
        return False
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            entry = os.path.join(dirpath, name)
            if not os.path.islink(entry):
                continue
            real = os.path.realpath(entry)
            if os.readlink(entry).startswith("/") or not (real + "/").startswith(real_root + "/"):
                return True
    return False


def _copies_into_out_link(base: Path, root: Path, args: dict[str, str]) -> bool:
    """Whether ``copy_file`` would write through a link leading out: the destination is a
    directory and its entry named as the source is such a link (shutil.copy2 writes there; the
    original checks only the destination it was given)."""
    source, destination = (
        Path(twin_random.fill(args[k], root, base)) for k in ("source_path", "destination_path")
    )
    source, destination = (p if p.is_absolute() else root / p for p in (source, destination))
    if not destination.is_dir():
        return False
    entry = destination / os.path.basename(os.path.realpath(source))
    real_root = os.path.realpath(root)
    return entry.is_symlink() and not (os.path.realpath(entry) + "/").startswith(real_root + "/")


def _compare(
    name: str,
    args: dict[str, Any],
    original: tuple[str, Any],
    drop_in: tuple[str, Any],
    extra: set[str],
    moves_absolute: bool = False,
    into_out_link: bool = False,
) -> bool:
    """Asserts the answers agree, or differ as named; True when the trees part ways there."""
    if into_out_link:
        # COPY_INTO_OUT_LINK: the original writes through the link (outside); the drop-in refuses.
        assert drop_in[1].startswith("Error: Access denied to destination_path"), (original, drop_in)
        return True
    if original == drop_in:
        return False
    if moves_absolute and original[1].startswith("File moved"):
        # MOVE_ABSOLUTE: the link guarantee judges every link in a moved directory, and refuses
        # an absolute one wherever it points; the trees differ from here on.
        assert drop_in[1].startswith("Error: Access denied to source_path"), drop_in
        return True
    o_kind, o_text = original
    d_kind, d_text = drop_in
    if name == "write_file" and o_text.startswith("File written") and d_text.startswith("Error: [Errno 21]"):
        # ROOT_AS_FILE: the original writes the missing root itself as a file.
        assert posixpath.normpath(args["file_path"]) == ".", (original, drop_in)
        return True
    if o_kind == "raises" and o_text in ("RuntimeError", "OSError"):
        # LOOP: the original's Path.resolve raises on a symlink loop, out of the tool; the
        # drop-in answers (an error text, or a search that finds nothing there).
        assert d_kind == "returns", (original, drop_in)
        return False
    if o_kind == "raises":
        # MOVE_OUTSIDE: the original's refusal of an outside destination crashes on its own text.
        assert name == "move_file" and o_text == "UnboundLocalError", (original, drop_in)
        assert d_text.startswith("Error: Access denied to destination_path"), drop_in
        return False
    assert d_kind == "returns", (original, drop_in)
    o_err, d_err = _ERRNO.match(o_text), _ERRNO.match(d_text)
    if o_err and d_err:
        assert o_err.group(1) == d_err.group(1), (original, drop_in)  # ERROR_TEXTS
        return False
    if o_text.startswith("Error: ") and _QUOTED.sub("<path>", o_text) == _QUOTED.sub("<path>", d_text):
        return False  # ERROR_TEXTS: the same words, the paths named as the model gave them
    if name in ("list_directory", "file_search") and not o_text.startswith(("Error", "No files")):
        o_lines, d_lines = set(o_text.split("\n")), set(d_text.split("\n"))
        if name == "file_search":
            d_lines -= extra  # SEARCH_OUT_LINK
        assert o_lines == d_lines, (original, drop_in)  # LISTING_ORDER
        return False
    if name == "file_search" and o_text.startswith("No files") and extra:
        assert set(d_text.split("\n")) <= extra, (original, drop_in)  # SEARCH_OUT_LINK
        return False
    raise AssertionError(f"{name} {args}: original {original!r}, drop-in {drop_in!r}")


def test_the_named_differences_are_documented() -> None:
    for phrase in NAMED:
        assert documented(phrase), phrase


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=twin_random.specs(), calls=st.lists(CALLS, min_size=1, max_size=8))
def test_drop_in_answers_as_the_original_on_random_trees(
    spec: twin_random.Spec, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        bases = (Path(os.path.realpath(one)), Path(os.path.realpath(two)))
        roots = [twin_random.lay(base, spec) for base in bases]
        toolsets = [
            {t.name: t for t in kit(root_dir=str(root)).get_tools()}
            for kit, root in zip((Original, DropIn), roots, strict=True)
        ]
        firsts = list(roots)
        try:
            for name, args in calls:
                if name == "reassign":
                    for i, base in enumerate(bases):
                        roots[i] = base / "ws2" if args["to"] == "ws2" else firsts[i]
                        for tool in toolsets[i].values():
                            tool.root_dir = str(roots[i])
                    continue
                extra = (
                    _out_dir_links(bases[0], roots[0], args["dir_path"]) if name == "file_search" else set()
                )
                moves_absolute = name == "move_file" and _holds_judged_link(
                    Path(
                        os.path.realpath(roots[1] / twin_random.fill(args["source_path"], roots[1], bases[1]))
                    ),
                    roots[1],
                )
                into_out_link = name == "copy_file" and _copies_into_out_link(bases[0], roots[0], args)
                original = _run(toolsets[0], bases[0], roots[0], name, args)
                drop_in = _run(toolsets[1], bases[1], roots[1], name, args)
                outside_links = {e.replace(str(bases[0]), "<base>") for e in extra}
                if _compare(name, args, original, drop_in, outside_links, moves_absolute, into_out_link):
                    assert twin_random.outside_untouched(bases[1])
                    break
                assert twin_random.snapshot(bases[1]) == twin_random.snapshot(bases[0]), (name, args)
                assert twin_random.outside_untouched(bases[1])
        finally:
            for tool in toolsets[1].values():
                tool.close()
