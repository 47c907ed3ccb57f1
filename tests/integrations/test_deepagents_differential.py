"""The same calls to deepagents' ``FilesystemBackend`` and to the drop-in, on twin trees, in both
``virtual_mode`` settings: every result must be equal (host paths spelled ``<base>``, times
left out, listings sorted), or the difference must be one of ``DIFFERENCES``: a refusal for
safety (the drop-in refused what the original reached outside) or a behaviour
docs/integrations.md lists. Then a hypothesis search over paths built from the tree's names:
no read returns the outside secret, and every read inside agrees with the original's."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("deepagents.backends.filesystem")

from deepagents.backends.filesystem import FilesystemBackend as Original

from safefs.integrations.deepagents import FilesystemBackend as DropIn
from tests.integrations import twin_tree
from tests.integrations.support import REFUSED, assert_as_listed, documented

SECRET = twin_tree.SECRET.decode()
ABSOLUTE_LINK = "**An absolute symlink is refused**"
ERROR_TEXTS = "Error texts name the path as the agent gave it"
NO_HOST_PATH = "The refusal of a path leading out names no host path"

# (method, args); "{p}" is the path prefix: "" in virtual mode, the root's host path otherwise.
CALLS: list[tuple[str, tuple[Any, ...]]] = [
    ("ls", ("{p}/",)),
    ("ls", ("{p}/sub",)),
    ("ls", ("{p}/a.txt",)),
    ("ls", ("{p}/missing",)),
    ("read", ("{p}/a.txt",)),
    ("read", ("{p}/crlf.txt",)),
    ("read", ("{p}/crlf.txt", 1, 1)),
    ("read", ("{p}/a.txt", 5, 1)),
    ("read", ("{p}/bin.dat",)),
    ("read", ("{p}/missing",)),
    ("read", ("{p}/sub",)),
    ("read", ("{p}/rel-link",)),
    ("write", ("{p}/new/deep/c.txt", "one\ntwo\r\n")),
    ("read", ("{p}/new/deep/c.txt",)),
    ("edit", ("{p}/new/deep/c.txt", "two", "TWO")),
    ("edit", ("{p}/new/deep/c.txt", "absent", "x")),
    ("edit", ("{p}/a.txt", "", "x")),
    ("read", ("{p}/new/deep/c.txt",)),
    ("write", ("{p}/sub", "x")),
    ("glob", ("*.txt",)),
    ("glob", ("**/*.txt",)),
    ("glob", ("sub/*",)),
    ("glob", ("../*",)),
    ("glob", ("*.txt", "{p}/sub")),
    ("grep", ("alpha",)),
    ("grep", ("e", None, "*.txt")),
    ("grep", ("beta", "{p}/sub")),
    ("grep", ("two",)),
    ("grep", ("x", None, "../*")),
    ("download_files", (["{p}/a.txt", "{p}/sub", "{p}/missing"],)),
    ("upload_files", ([("{p}/up/u.bin", b"\x00\xff")],)),
    ("read", ("{p}/up/u.bin",)),
    ("delete", ("{p}/up",)),
    ("delete", ("{p}/up",)),
    ("ls", ("{p}/",)),
    # Leading outside.
    ("read", ("{p}/out-link/secret",)),
    ("write", ("{p}/out-link/planted", "x")),
    ("ls", ("{p}/out-link",)),
    ("download_files", (["{p}/out-link/secret"],)),
    ("grep", ("secret", "{p}/out-link")),
    ("read", ("{p}/abs-link",)),
]

VIRTUAL: dict[int, str] = {
    18: ERROR_TEXTS,
    35: NO_HOST_PATH,  # both refuse; the original's text names the host paths
    36: REFUSED,
    37: NO_HOST_PATH,
    38: REFUSED,
}
NON_VIRTUAL: dict[int, str] = {
    0: ABSOLUTE_LINK,
    34: ABSOLUTE_LINK,
    35: REFUSED,
    36: REFUSED,
    37: REFUSED,
    38: REFUSED,
    39: REFUSED,
}


def _plain(value: Any, base: Path) -> Any:
    """``value`` as data: dataclasses as dicts, times dropped, listings sorted, host paths hidden."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v, base) for k, v in value.items() if k != "modified_at"}
    if isinstance(value, list):
        items = [_plain(v, base) for v in value]
        return sorted(items, key=repr)
    if isinstance(value, str):
        return value.replace(str(base), "<base>")
    return value


def _fill(value: Any, prefix: str) -> Any:
    if isinstance(value, str):
        return value.replace("{p}", prefix)
    if isinstance(value, list | tuple):
        return type(value)(_fill(v, prefix) for v in value)
    return value


def _run_all(cls: Any, base: Path, virtual: bool) -> list[Any]:
    root = twin_tree.build(base)
    backend = cls(root_dir=root, virtual_mode=virtual)
    prefix = "" if virtual else str(root)
    out: list[tuple[Any, ...]] = []
    for name, args in CALLS:
        try:
            out.append(("returns", _plain(getattr(backend, name)(*_fill(args, prefix)), base)))
        except Exception as exc:
            out.append(("raises", type(exc).__name__, _plain(str(exc), base)))
    return out


@pytest.fixture(scope="module", params=[True, False], ids=["virtual", "host-paths"])
def outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    virtual = request.param
    bases = tmp_path_factory.mktemp("original"), tmp_path_factory.mktemp("safefs")
    results = [_run_all(cls, b, virtual) for cls, b in zip((Original, DropIn), bases, strict=True)]
    assert sorted(p.name for p in (bases[1] / "outside").iterdir()) == ["secret"], "nothing planted outside"
    return virtual, list(zip(*results, strict=True))


def _refused(original: Any, drop_in: Any) -> None:
    """The drop-in refused (raised the original's ValueError, or answered an error or nothing)
    and never returned the secret; the original let it through."""
    assert SECRET not in repr(drop_in)
    assert SECRET in repr(original) or "planted" in repr(original) or original[0] == "returns"


@pytest.mark.parametrize("index", range(len(CALLS)), ids=[f"{i}-{n}" for i, (n, _) in enumerate(CALLS)])
def test_each_call_agrees_or_differs_as_listed(outcomes: Any, index: int) -> None:
    virtual, pairs = outcomes
    original, drop_in = pairs[index]
    expected = (VIRTUAL if virtual else NON_VIRTUAL).get(index)
    assert_as_listed(original, drop_in, expected, _refused)


def test_a_refusal_is_the_original_error_without_the_host_path(outcomes: Any) -> None:
    virtual, pairs = outcomes
    original, drop_in = pairs[35]
    assert drop_in[:2] == ("raises", "ValueError")
    if virtual:
        assert drop_in[2] == "Path:/out-link/secret outside root directory"
        assert original[:2] == ("raises", "ValueError") and "<base>" in original[2]
    else:  # the path as the agent gave it, and nothing else
        assert drop_in[2] == "Path:<base>/ws/out-link/secret outside root directory"


# -- the invariant, over paths built from the tree's names ------------------------------------

COMPONENTS = ["a.txt", "sub", "b.txt", "..", ".", "rel-link", "out-link", "secret", "outside", "ws", "", "~"]


@pytest.fixture(scope="module")
def twin_backends(tmp_path_factory: pytest.TempPathFactory) -> Any:
    bases = tmp_path_factory.mktemp("p-original"), tmp_path_factory.mktemp("p-safefs")
    roots = [twin_tree.build(b) for b in bases]
    return bases, roots


def _read(backend: Any, path: str) -> Any:
    try:
        result = backend.read(path)
    except ValueError:
        return ValueError
    return result.file_data["content"] if result.file_data is not None else "error"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=5),
    virtual=st.booleans(),
    absolute=st.booleans(),
)
def test_a_read_never_leaves_the_root_and_agrees_inside(
    twin_backends: Any, parts: list[str], virtual: bool, absolute: bool
) -> None:
    """Whatever path is asked, the drop-in returns a file of ``root_dir``, an error result or
    the original's ValueError; never the outside secret; and what it reads, the original reads."""
    _bases, roots = twin_backends
    rel = "/".join(parts)
    results = []
    for cls, root in zip((Original, DropIn), roots, strict=True):
        path = f"{root}/{rel}" if absolute and not virtual else "/" + rel
        results.append(_read(cls(root_dir=root, virtual_mode=virtual), path))
    from_original, from_drop_in = results
    assert from_drop_in != SECRET
    if isinstance(from_drop_in, str) and from_drop_in != "error":
        assert from_drop_in == from_original
    if from_original == SECRET:
        assert from_drop_in in (ValueError, "error")
    elif isinstance(from_original, str) and from_original != "error" and from_drop_in != from_original:
        assert documented("**A path that leaves the directory and comes back in is refused**")


# -- glob patterns: the original's matcher (wcmatch) against the drop-in's (RE2) ---------------

GLOB_PIECES = ["*", "**", "?", "a", ".", "b", "/", "[ab]", "[!a]", "{a,b}", ".x", "py"]
PATH_NAMES = ["a", "b", ".a", ".x", "ab", "a.py", ".hidden", "x.py", "ba"]
BRACKET_OR_BRACE_AT_START = "A bracket or brace at the start of a name may match a leading dot there"


def _starts_a_name_with_bracket_or_brace(pattern: str) -> bool:
    return any(part[:1] in ("[", "{") or "*{" in part or "*[" in part for part in pattern.split("/"))


@settings(max_examples=400, deadline=None)
@given(
    pattern=st.lists(st.sampled_from(GLOB_PIECES), min_size=1, max_size=5).map("".join),
    path=st.lists(st.sampled_from(PATH_NAMES), min_size=1, max_size=4).map("/".join),
)
def test_a_glob_matches_as_the_original_matches(pattern: str, path: str) -> None:
    """The include-glob rule (name at any depth without ``/``, anchored with one, names starting
    with a dot hidden from wildcards) decides as deepagents' own matcher decides, except where a
    bracket or a brace starts a name (listed in docs/integrations.md)."""
    from deepagents.backends.utils import compile_grep_include_glob

    from safefs.integrations.deepagents import _include_glob

    try:
        original = compile_grep_include_glob(pattern)(path)
    except Exception:
        return  # a pattern the original refuses: the drop-in refuses it with the original's error
    ours = _include_glob(pattern)(path)
    if ours != original:
        assert _starts_a_name_with_bracket_or_brace(pattern), (pattern, path, original, ours)
        assert documented(BRACKET_OR_BRACE_AT_START)


@pytest.mark.parametrize("virtual", [True, False])
def test_an_edit_replaces_a_hard_link_to_an_outside_file_and_never_writes_through(
    tmp_path: Path, virtual: bool
) -> None:
    """A hard link inside ``root_dir`` to an outside inode (made by someone with access to both)
    is replaced by the drop-in's atomic write; the original rewrites the shared inode in place,
    so an edit of the link changes the outside file."""
    outside = tmp_path / "outside.txt"
    results = {}
    for name, cls in (("original", Original), ("drop-in", DropIn)):
        outside.write_text("keep me\n")
        base = tmp_path / name
        base.mkdir()
        (base / "link.txt").hardlink_to(outside)
        backend = cls(root_dir=base, virtual_mode=virtual)
        prefix = "" if virtual else str(base)
        assert backend.edit(f"{prefix}/link.txt", "keep", "CHANGED").error is None
        assert (base / "link.txt").read_text() == "CHANGED me\n"
        results[name] = outside.read_text()
        (base / "link.txt").unlink()
        if name == "drop-in":
            backend.close()
    print(f"outside file after an edit of the link: {results}")
    assert results["drop-in"] == "keep me\n"
    assert results["original"] == "CHANGED me\n"
