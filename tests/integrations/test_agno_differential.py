"""The same calls to agno's ``FileTools`` and to the drop-in, on twin trees: every result must be
equal (host paths spelled ``<base>``, listings compared as sets), or the difference must be one of
``DIFFERENCES``, each a behaviour docs/integrations.md lists. A path leading outside is refused by
both, in the same words; the race test shows where the original's check loses."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("agno.tools.file")

from agno.tools.file import FileTools as Original

from safefs.integrations.agno import FileTools as DropIn
from tests.integrations import twin_tree
from tests.integrations.support import assert_as_listed, documented

LISTINGS = {"list_files"}  # directory order; the drop-in's is sorted
SEARCHES = {"search_files"}  # pathlib's glob order; the drop-in's is sorted

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"file_name": "a.txt"}),
    ("read_file", {"file_name": "sub/b.txt"}),
    ("read_file", {"file_name": "crlf.txt"}),
    ("read_file", {"file_name": "bin.dat"}),
    ("read_file", {"file_name": "missing"}),
    ("read_file", {"file_name": "sub"}),
    ("read_file", {"file_name": "rel-link"}),
    ("read_file", {"file_name": "{root}/a.txt"}),
    ("read_file", {"file_name": "a.txt. "}),
    ("read_file", {"file_name": "sub\\b.txt"}),
    ("read_file", {"file_name": ""}),
    ("read_file", {"file_name": "CON"}),
    ("read_file", {"file_name": "a.txt", "encoding": "no-such-codec"}),
    ("read_file_chunk", {"file_name": "lines.txt", "start_line": 1, "end_line": 2}),
    ("read_file_chunk", {"file_name": "lines.txt", "start_line": 3, "end_line": 99}),
    ("save_file", {"contents": "new\n", "file_name": "new/deep/c.txt"}),
    ("read_file", {"file_name": "new/deep/c.txt"}),
    ("save_file", {"contents": "again\n", "file_name": "new/deep/c.txt", "overwrite": False}),
    ("save_file", {"contents": "x", "file_name": "sub"}),
    ("save_file", {"contents": "x", "file_name": "a.txt/x"}),
    ("replace_file_chunk", {"file_name": "lines.txt", "start_line": 1, "end_line": 2, "chunk": "B\nC"}),
    ("read_file", {"file_name": "lines.txt"}),
    ("replace_file_chunk", {"file_name": "lines.txt", "start_line": 2, "end_line": 1, "chunk": "x"}),
    ("replace_file_chunk", {"file_name": "lines.txt", "start_line": 0, "end_line": 9, "chunk": "x"}),
    ("replace_file_chunk", {"file_name": "missing", "start_line": 0, "end_line": 0, "chunk": "x"}),
    ("delete_file", {"file_name": "new/deep/c.txt"}),
    ("delete_file", {"file_name": "new/deep"}),
    ("delete_file", {"file_name": "missing"}),
    ("delete_file", {"file_name": "sub"}),
    ("list_files", {}),
    ("list_files", {"directory": "sub"}),
    ("list_files", {"directory": ""}),
    ("list_files", {"directory": "missing"}),
    ("list_files", {"directory": "a.txt"}),
    ("search_files", {"pattern": "*.txt"}),
    ("search_files", {"pattern": "**/*.txt"}),
    ("search_files", {"pattern": "sub/*"}),
    ("search_files", {"pattern": "  "}),
    ("search_files", {"pattern": "/etc/*"}),
    ("search_content", {"query": "alpha"}),
    ("search_content", {"query": "beta", "directory": "sub"}),
    ("search_content", {"query": "x", "directory": "missing"}),
    ("search_content", {"query": ""}),
    # Leading outside: both refuse with the same text.
    ("read_file", {"file_name": "../outside/secret"}),
    ("read_file", {"file_name": "out-link/secret"}),
    ("read_file", {"file_name": "{base}/outside/secret"}),
    ("read_file_chunk", {"file_name": "out-link/secret", "start_line": 0, "end_line": 1}),
    ("save_file", {"contents": "x", "file_name": "../planted"}),
    ("save_file", {"contents": "x", "file_name": "out-link/planted"}),
    ("replace_file_chunk", {"file_name": "out-link/secret", "start_line": 0, "end_line": 0, "chunk": "x"}),
    ("delete_file", {"file_name": "out-link/secret"}),
    ("list_files", {"directory": "out-link"}),
    ("list_files", {"directory": ".."}),
    ("search_files", {"pattern": "../outside/*"}),
    ("search_files", {"pattern": "out-link/*"}),
    ("search_content", {"query": "secret", "directory": "out-link"}),
    ("search_content", {"query": "secret"}),
    # An absolute symlink that leads inside.
    ("read_file", {"file_name": "abs-link"}),
    # pathlib's trailing "**" yields directories alone, the one it starts from first.
    ("search_files", {"pattern": "sub/**"}),
]

NAMES_THE_PATH = "**Error texts name the path as the model gave it**"
ABSOLUTE_LINK = "**An absolute symlink is refused**"
DIFFERENCES: dict[int, str] = {
    **dict.fromkeys((4, 5, 18, 19, 24, 27, 28, 32, 33), NAMES_THE_PATH),
    58: "**A pattern ending in `**` matches files too**",
}


def _tree(base: Path) -> Path:
    root = twin_tree.build(base)
    (root / "lines.txt").write_bytes(b"0\n1\n2\n3\n")
    return root


def _call(tools: Any, base: Path, name: str, args: dict[str, Any]) -> Any:
    root = base / "ws"
    filled = {k: v.format(root=root, base=base) if isinstance(v, str) else v for k, v in args.items()}
    text = getattr(tools, name)(**filled)
    assert isinstance(text, str)
    text = text.replace(str(base), "<base>")
    if name in LISTINGS and text.startswith("["):
        return sorted(json.loads(text))
    if name in SEARCHES and text.startswith("{"):
        found = json.loads(text)
        found["files"] = sorted(found["files"])
        return found
    return text


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, Any]]:
    bases = [tmp_path_factory.mktemp("original"), tmp_path_factory.mktemp("safefs")]
    tools = []
    for cls, base in zip((Original, DropIn), bases, strict=True):
        _tree(base)
        tools.append(cls(base_dir=base / "ws", all=True))
    pairs = [
        (_call(tools[0], bases[0], name, args), _call(tools[1], bases[1], name, args)) for name, args in CALLS
    ]
    tools[1].close()
    assert sorted(p.name for p in (bases[1] / "outside").iterdir()) == ["secret"], "nothing planted outside"
    assert (bases[1] / "outside" / "secret").read_bytes() == twin_tree.SECRET
    return pairs


@pytest.mark.parametrize("index", range(len(CALLS)), ids=[f"{i}-{n}" for i, (n, _) in enumerate(CALLS)])
def test_each_call_agrees_or_differs_as_listed(outcomes: list[tuple[Any, Any]], index: int) -> None:
    original, drop_in = outcomes[index]
    expected = DIFFERENCES.get(index)
    assert_as_listed(original, drop_in, expected)
    if expected == NAMES_THE_PATH:  # the same error, naming another spelling of the path
        assert _without_paths(original) == _without_paths(drop_in)


# -- the invariant, over paths built from a tree's names --------------------------------------

COMES_BACK = "**A path that leaves the directory and comes back in is refused**"
LEXICAL_DOTS = "**A `/`, `.` or `..` after a name that is no directory is an error**"
COMPONENTS = ["a.txt", "sub", "b.txt", "..", ".", "rel-link", "out-link", "secret", "outside", "ws", ""]
REFUSALS = ("Error reading file", "Error saving file", "Incorrect file_name")
ERRNO_PATH = re.compile(r"(\[Errno \d+\] [^:]*): '[^']*'")


def _without_paths(text: str) -> str:
    return ERRNO_PATH.sub(r"\1", text)


@pytest.fixture(scope="module")
def twin_tools(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Any]]:
    bases = [tmp_path_factory.mktemp("p-original"), tmp_path_factory.mktemp("p-safefs")]
    for base in bases:
        _tree(base)
    return [(bases[0], Original(base_dir=bases[0] / "ws")), (bases[1], DropIn(base_dir=bases[1] / "ws"))]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=5),
    absolute=st.booleans(),
    op=st.sampled_from(["read_file", "list_files", "read_file_chunk"]),
)
def test_a_call_never_leaves_base_dir_and_agrees_inside(
    twin_tools: list[tuple[Path, Any]], parts: list[str], absolute: bool, op: str
) -> None:
    """Whatever path is asked, the drop-in never shows the outside secret; where the original
    succeeds inside, the drop-in returns the same, except as docs/integrations.md lists; error
    texts agree but for the path they name."""
    rel = "/".join(parts)
    results = []
    for base, tools in twin_tools:
        path = f"{base}/ws/{rel}" if absolute else rel
        if op == "read_file":
            text = tools.read_file(file_name=path)
        elif op == "read_file_chunk":
            text = tools.read_file_chunk(file_name=path, start_line=0, end_line=5)
        else:
            text = tools.list_files(directory=path)
        results.append(_call_text(text, base, op))
    from_original, from_drop_in = results
    assert "secret" not in from_drop_in.split("\n")
    if from_original == from_drop_in:
        return
    if from_drop_in in (*REFUSALS, "{}") and ".." in parts:
        assert documented(COMES_BACK)
    elif from_drop_in.startswith("Error") and _without_paths(from_original) == _without_paths(from_drop_in):
        assert documented(NAMES_THE_PATH)
    elif {".", "..", ""} & set(parts) and from_drop_in.startswith("Error"):
        assert documented(LEXICAL_DOTS)
    elif "abs-link" in from_original:
        assert documented(ABSOLUTE_LINK)
    else:
        pytest.fail(f"{op}({rel!r}, absolute={absolute}): {from_original!r} != {from_drop_in!r}")


def _call_text(text: str, base: Path, op: str) -> str:
    text = text.replace(str(base), "<base>")
    if op == "list_files" and text.startswith("["):
        return "\n".join(sorted(json.loads(text)))
    return text
