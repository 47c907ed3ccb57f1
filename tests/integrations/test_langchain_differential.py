"""The same tool calls to langchain-community's file management tools and to the drop-ins, on
twin trees: every result text must be equal (host paths spelled ``<base>``, listings compared as
sets), or the difference must be one of ``DIFFERENCES``, behaviours docs/integrations.md lists.
A path leading outside is refused by both, in the same words; the race test shows where the
original's check loses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_community.agent_toolkits")

from langchain_community.agent_toolkits import FileManagementToolkit as Original
from langchain_community.tools.file_management.utils import INVALID_PATH_TEMPLATE

from safefs.integrations.langchain import FileManagementToolkit as DropIn
from tests.integrations.support import assert_as_listed

LISTINGS = {"list_directory", "file_search"}  # directory order differs; the drop-in's is sorted

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"file_path": "a.txt"}),
    ("read_file", {"file_path": "sub/b.txt"}),
    ("read_file", {"file_path": "crlf.txt"}),
    ("read_file", {"file_path": "missing"}),
    ("read_file", {"file_path": "sub"}),
    ("read_file", {"file_path": "rel-link"}),
    ("read_file", {"file_path": "bin.dat"}),
    ("read_file", {"file_path": "{root}/a.txt"}),
    ("write_file", {"file_path": "new/deep/c.txt", "text": "new\n"}),
    ("read_file", {"file_path": "new/deep/c.txt"}),
    ("write_file", {"file_path": "new/deep/c.txt", "text": "more\n", "append": True}),
    ("read_file", {"file_path": "new/deep/c.txt"}),
    ("write_file", {"file_path": "sub", "text": "x"}),
    ("copy_file", {"source_path": "a.txt", "destination_path": "a-copy.txt"}),
    ("read_file", {"file_path": "a-copy.txt"}),
    ("copy_file", {"source_path": "a.txt", "destination_path": "sub"}),
    ("read_file", {"file_path": "sub/a.txt"}),
    ("copy_file", {"source_path": "rel-link", "destination_path": "link-copy"}),
    ("read_file", {"file_path": "link-copy"}),
    ("copy_file", {"source_path": "missing", "destination_path": "x"}),
    ("move_file", {"source_path": "a-copy.txt", "destination_path": "moved.txt"}),
    ("read_file", {"file_path": "moved.txt"}),
    ("move_file", {"source_path": "moved.txt", "destination_path": "sub"}),
    ("read_file", {"file_path": "sub/moved.txt"}),
    ("move_file", {"source_path": "missing", "destination_path": "y"}),
    ("file_delete", {"file_path": "sub/moved.txt"}),
    ("file_delete", {"file_path": "missing"}),
    ("file_delete", {"file_path": "sub"}),
    ("list_directory", {}),
    ("list_directory", {"dir_path": "sub"}),
    ("list_directory", {"dir_path": "missing"}),
    ("list_directory", {"dir_path": "empty"}),
    ("file_search", {"pattern": "*.txt"}),
    ("file_search", {"pattern": "*.txt", "dir_path": "sub"}),
    ("file_search", {"pattern": "nothing*"}),
    ("file_search", {"pattern": "*", "dir_path": "missing"}),
    ("file_search", {"pattern": "[ab].txt"}),
    # Leading outside: both refuse with the same text (the original judges the resolved path).
    ("read_file", {"file_path": "../outside/secret"}),
    ("read_file", {"file_path": "out-link/secret"}),
    ("write_file", {"file_path": "out-link/planted", "text": "x"}),
    ("list_directory", {"dir_path": "out-link"}),
    ("copy_file", {"source_path": "out-link/secret", "destination_path": "stolen"}),
    ("file_delete", {"file_path": "{base}/outside/secret"}),
    # A destination outside: the original's move crashes on its own refusal (UnboundLocalError).
    ("move_file", {"source_path": "a.txt", "destination_path": "../outside/taken"}),
    # A symlink leading out, met inside a search: os.walk lists it, never entered.
    ("file_search", {"pattern": "*link*"}),
    # An absolute symlink that leads inside.
    ("read_file", {"file_path": "abs-link"}),
]

DIFFERENCES: dict[int, str] = {
    4: "**Error texts name the path as the model gave it**",
    12: "**Error texts name the path as the model gave it**",
    19: "**Error texts name the path as the model gave it**",
    27: "**Error texts name the path as the model gave it**",
    30: "**Error texts name the path as the model gave it**",
    43: "**`move_file` refuses an outside destination**",
    44: "**`file_search` lists a symlink leading outside as a file**",
}


def _tree(base: Path) -> Path:
    root, outside = base / "ws", base / "outside"
    (root / "sub").mkdir(parents=True)
    (root / "empty").mkdir()
    outside.mkdir()
    (root / "a.txt").write_bytes(b"alpha\n")
    (root / "sub" / "b.txt").write_bytes(b"beta\n")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\rthree\n")
    (root / "bin.dat").write_bytes(b"\xff\xfe\x00binary")
    (root / "rel-link").symlink_to("a.txt")
    (root / "out-link").symlink_to("../outside")
    (root / "abs-link").symlink_to(root / "a.txt")
    (outside / "secret").write_bytes(b"secret\n")
    return root


def _call(tools: dict[str, Any], base: Path, name: str, args: dict[str, Any]) -> tuple[str, Any]:
    filled = {k: v.format(root=base / "ws", base=base) if isinstance(v, str) else v for k, v in args.items()}
    try:
        text = tools[name].run(filled)
    except Exception as exc:
        return ("raises", type(exc).__name__)
    text = text.replace(str(base), "<base>")
    if name in LISTINGS and not text.startswith(("Error", "No files")):
        return ("returns", sorted(text.split("\n")))
    return ("returns", text)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, Any]]:
    bases = tmp_path_factory.mktemp("original"), tmp_path_factory.mktemp("safefs")
    toolsets = [
        {t.name: t for t in kit(root_dir=str(_tree(base))).get_tools()}
        for kit, base in zip((Original, DropIn), bases, strict=True)
    ]
    pairs = [
        (_call(toolsets[0], bases[0], name, args), _call(toolsets[1], bases[1], name, args))
        for name, args in CALLS
    ]
    assert sorted(os.listdir(bases[1] / "outside")) == ["secret"]
    return pairs


@pytest.mark.parametrize("index", range(len(CALLS)), ids=[f"{i}-{n}" for i, (n, _) in enumerate(CALLS)])
def test_each_call_agrees_or_differs_as_listed(outcomes: list[tuple[Any, Any]], index: int) -> None:
    assert_as_listed(*outcomes[index], DIFFERENCES.get(index))


def test_the_refusal_is_the_original_text(outcomes: list[tuple[Any, Any]]) -> None:
    """Where both refuse, the drop-in says it in the original's own words."""
    assert outcomes[37][1] == (
        "returns",
        INVALID_PATH_TEMPLATE.format(arg_name="file_path", value="../outside/secret"),
    )
