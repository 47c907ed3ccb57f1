"""The same calls to crewai-tools' ``FileReadTool``, ``FileWriterTool`` and
``DirectoryReadTool`` and to the drop-ins, on twin trees: every result text must be equal (host
paths spelled ``<base>``, listings compared as sets), or the difference must be one of
``DIFFERENCES``, each a behaviour docs/integrations.md lists."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("crewai_tools")

import crewai_tools as original

from safefs.integrations import crewai as drop_in
from tests.integrations import twin_tree

DOCS = Path(__file__).parents[2] / "docs" / "integrations.md"

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read", {"file_path": "a.txt"}),
    ("read", {"file_path": "sub/b.txt"}),
    ("read", {"file_path": "lines.txt", "start_line": 2, "line_count": 2}),
    ("read", {"file_path": "lines.txt", "start_line": 9}),
    ("read", {"file_path": "crlf.txt"}),
    ("read", {"file_path": "bin.dat"}),
    ("read", {"file_path": "missing"}),
    ("read", {"file_path": "sub"}),
    ("read", {"file_path": "rel-link"}),
    ("read", {"file_path": "{root}/a.txt"}),
    ("write", {"filename": "c.txt", "content": "new\n"}),
    ("read", {"file_path": "c.txt"}),
    ("write", {"filename": "c.txt", "content": "again\n"}),
    ("write", {"filename": "c.txt", "content": "again\n", "overwrite": "yes"}),
    ("read", {"file_path": "c.txt"}),
    ("write", {"filename": "deep/d.txt", "content": "d", "directory": "made"}),
    ("read", {"file_path": "made/deep/d.txt"}),
    ("write", {"filename": "x", "content": "x", "directory": "a.txt"}),
    ("write", {"filename": "sub", "content": "x", "overwrite": True}),
    ("write", {"filename": "e.txt", "content": "x", "overwrite": "maybe"}),
    ("list", {"directory": "."}),
    ("list", {"directory": "sub"}),
    ("list", {"directory": "missing"}),
    # Leading outside: both refuse.
    ("read", {"file_path": "../outside/secret"}),
    ("read", {"file_path": "out-link/secret"}),
    ("read", {"file_path": "{base}/outside/secret"}),
    ("write", {"filename": "../planted", "content": "x"}),
    ("write", {"filename": "planted", "content": "x", "directory": "../outside"}),
    ("write", {"filename": "planted", "content": "x", "directory": "out-link"}),
    ("write", {"filename": "out-link/planted", "content": "x"}),
    ("list", {"directory": "out-link"}),
    ("list", {"directory": ".."}),
    # An absolute symlink that leads inside.
    ("read", {"file_path": "abs-link"}),
]

DIFFERENCES: dict[int, str] = {
    20: "**`DirectoryReadTool` lists a symlink leading outside as a file**",
    22: "Error texts name the path as the agent gave it",
    30: "do not advertise `CREWAI_TOOLS_ALLOW_UNSAFE_PATHS`",
    31: "do not advertise `CREWAI_TOOLS_ALLOW_UNSAFE_PATHS`",
}


def _tree(base: Path) -> Path:
    root = twin_tree.build(base)
    (root / "lines.txt").write_bytes(b"1\n2\n3\n4\n5\n")
    return root


@contextmanager
def _cwd(path: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _call(module: Any, base: Path, name: str, args: dict[str, Any]) -> tuple[str, Any]:
    root = base / "ws"
    filled = {k: v.format(root=root, base=base) if isinstance(v, str) else v for k, v in args.items()}
    try:
        with _cwd(root):
            if name == "read":
                text = module.FileReadTool(base_dir=str(root))._run(**filled)
            elif name == "write":
                text = module.FileWriterTool(base_dir=str(root))._run(**filled)
            else:
                text = module.DirectoryReadTool()._run(**filled)
    except Exception as exc:
        return ("raises", _hide(f"{type(exc).__name__}: {exc}", base))
    text = _hide(str(text), base)
    if name == "list":  # "File paths: \n-<first>\n- <second>...", in directory order
        return ("returns", sorted(line.lstrip("- ") for line in text.split("\n")))
    return ("returns", text)


def _hide(text: str, base: Path) -> str:
    return text.replace(str(base), "<base>").replace(f"'{base.name}'", "'<base>'")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, Any]]:
    bases = [tmp_path_factory.mktemp("original"), tmp_path_factory.mktemp("safefs")]
    for base in bases:
        _tree(base)
    pairs = [
        (_call(original, bases[0], name, args), _call(drop_in, bases[1], name, args)) for name, args in CALLS
    ]
    assert sorted(os.listdir(bases[1] / "outside")) == ["secret"], "the drop-in touched nothing outside"
    return pairs


@pytest.mark.parametrize("index", range(len(CALLS)), ids=[f"{i}-{n}" for i, (n, _) in enumerate(CALLS)])
def test_each_call_agrees_or_differs_as_listed(outcomes: list[tuple[Any, Any]], index: int) -> None:
    original_outcome, drop_in_outcome = outcomes[index]
    expected = DIFFERENCES.get(index)
    if expected is None:
        assert drop_in_outcome == original_outcome
    else:
        assert drop_in_outcome != original_outcome
        assert expected in " ".join(DOCS.read_text().split()), f"docs/integrations.md must list: {expected}"


# -- the invariant, over paths built from a tree's names --------------------------------------

COMES_BACK = "**A path that leaves the directory and comes back in is refused**"
LEXICAL_DOTS = "**A `/`, `.` or `..` after a name that is no directory is an error**"
COMPONENTS = ["a.txt", "sub", "b.txt", "..", ".", "rel-link", "out-link", "secret", "outside", "ws", ""]


@pytest.fixture(scope="module")
def twin_bases(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    bases = [tmp_path_factory.mktemp("p-original"), tmp_path_factory.mktemp("p-safefs")]
    for base in bases:
        _tree(base)
    return bases


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=5), absolute=st.booleans())
def test_a_read_never_leaves_base_dir_and_agrees_inside(
    twin_bases: list[Path], parts: list[str], absolute: bool
) -> None:
    """Whatever path is asked, the drop-in never returns the outside secret, and where the
    original reads a file inside, the drop-in reads the same (text results compared with the
    host path hidden), except where ``/``, ``.`` or ``..`` follows a name that is no directory."""
    rel = "/".join(parts)
    results = []
    for module, base in zip((original, drop_in), twin_bases, strict=True):
        path = f"{base}/ws/{rel}" if absolute else rel
        results.append(_hide(module.FileReadTool(base_dir=str(base / "ws"))._run(file_path=path), base))
    from_original, from_drop_in = results
    assert "secret" not in from_drop_in.split("\n")
    if not from_original.startswith("Error") and from_original != "secret\n":
        if ".." in parts and "outside the allowed directory" in from_drop_in:
            assert COMES_BACK in " ".join(DOCS.read_text().split())
        elif {".", "..", ""} & set(parts) and from_drop_in.startswith("Error"):
            assert LEXICAL_DOTS in " ".join(DOCS.read_text().split())
        else:
            assert from_drop_in == from_original
