"""The same calls to safefs-mcp and to the official filesystem server, on twin trees, each
driven by the real MCP client: every result is the same (the tree's path aside), or refused by
safefs-mcp for safety, or a difference listed in docs/mcp.md's table (named here by its row).

The official server comes from the npm registry (``make official-mcp`` installs it into the
git-ignored ``.bench-node/``; the first run does it too); without node/npm the test is skipped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from safefs_bench.mcp_client import SyncClient, mcp_session, official_server
from tests.mcp.client import server_command

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
DATE = re.compile(r"\w{3} \w{3} \d\d \d{4} \d\d:\d\d:\d\d GMT[+-]\d{4} \([^)]*\)")

# (tool, arguments, how the results may differ: None = equal, "refused" = ours is an error,
# or the row of the differences table that explains it)
CALLS: list[tuple[str, dict[str, Any], str | None]] = [
    ("list_allowed_directories", {}, None),
    ("read_text_file", {"path": "a.txt"}, None),
    ("read_text_file", {"path": "a.txt", "head": 2}, None),
    ("read_text_file", {"path": "a.txt", "tail": 2}, "`tail` of a file ending in a newline"),
    ("read_text_file", {"path": "a.txt", "head": 0}, "`head`/`tail` of 0"),
    ("read_text_file", {"path": "WS/./a.txt", "head": 1}, None),
    ("read_text_file", {"path": "WS//a.txt", "head": 1}, None),
    ("read_text_file", {"path": "WS/../ws/a.txt", "head": 1}, "`..` in an absolute path"),
    ("read_text_file", {"path": unicodedata.normalize("NFC", "é.txt")}, None),
    ("read_text_file", {"path": "missing.txt"}, "Error texts"),
    ("read_text_file", {"path": "link_out/secret.txt"}, "refused"),
    ("read_text_file", {"path": "crlf.txt"}, None),
    ("read_text_file", {"path": "abs_link"}, "Absolute in-root links refused"),
    ("read_text_file", {"path": "a.txt", "head": -1}, "Negative or fractional counts"),
    ("read_text_file", {"path": "a.txt", "head": 1.5}, "Negative or fractional counts"),
    ("read_text_file", {"path": ""}, "An empty path and an empty pattern refused"),
    ("search_files", {"path": ".", "pattern": ""}, "An empty path and an empty pattern refused"),
    ("search_files", {"path": ".", "pattern": "./*.md"}, "`./*.md`"),
    ("write_file", {"path": "dangling", "content": "via link\n"}, "A write through a dangling in-root link"),
    ("read_file", {"path": "a.txt"}, None),
    ("read_multiple_files", {"paths": ["a.txt", "sub/x.md"]}, None),
    ("read_media_file", {"path": "my café.bin"}, None),
    ("read_media_file", {"path": "pic.png"}, None),
    ("write_file", {"path": "new.txt", "content": "made\n"}, None),
    ("write_file", {"path": "C:\\evil.txt", "content": "x"}, None),
    ("create_directory", {"path": "C:\\newdir"}, None),
    ("create_directory", {"path": "made/deeper"}, None),
    (
        "edit_file",
        {"path": "a.txt", "edits": [{"oldText": "two", "newText": "TWO"}], "dryRun": True},
        "Diff context",
    ),
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": "two", "newText": "two"}], "dryRun": True}, None),
    ("edit_file", {"path": "edit.txt", "edits": [{"oldText": "x", "newText": "y"}]}, None),
    ("list_directory", {"path": "."}, "Symlinks in listings"),
    ("list_directory", {"path": "sub"}, None),
    ("list_directory_with_sizes", {"path": "."}, "Symlinks in listings"),
    ("list_directory_with_sizes", {"path": "sub"}, None),
    ("list_directory_with_sizes", {"path": ".", "sortBy": "size"}, "`sortBy: size`"),
    ("directory_tree", {"path": "sub"}, None),
    ("search_files", {"path": ".", "pattern": "**/*.md"}, None),
    ("search_files", {"path": "./sub", "pattern": "*.md"}, None),
    ("search_files", {"path": ".", "pattern": "nothing-*"}, None),
    ("get_file_info", {"path": "a.txt"}, None),
    ("get_file_info", {"path": "sub"}, None),
    ("move_file", {"source": "move_me.txt", "destination": "moved.txt"}, None),
]


def twin(ws: Path) -> None:
    ws.mkdir(parents=True)
    (ws / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)).replace("line 2", "two"))
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (ws / "edit.txt").write_text("x\n")
    (ws / "move_me.txt").write_text("m\n")
    (ws / "my café.bin").write_bytes(b"\x00\x01")
    (ws / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (ws / unicodedata.normalize("NFD", "é.txt")).write_text("nfd\n")
    (ws / "B.txt").write_text("bb")
    (ws / "_u.txt").write_text("u")
    (ws / "sub").mkdir()
    (ws / "sub" / "x.md").write_text("x\n")
    (ws.parent / "outside").mkdir()
    (ws.parent / "outside" / "secret.txt").write_text("secret\n")
    (ws / "link_out").symlink_to(ws.parent / "outside")
    (ws / "abs_link").symlink_to(ws / "a.txt")
    (ws / "dangling").symlink_to("not_yet.txt")
    (ws / "t.md").write_text("t\n")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, SyncClient]]]:
    official, note = official_server()
    if official is None:
        pytest.skip(note)
    started: dict[str, tuple[Path, SyncClient]] = {}
    with ExitStack() as stack:
        for name, command in (("safefs-mcp", server_command()), ("official", official)):
            ws = tmp_path_factory.mktemp(name.replace("-", "")) / "ws"
            twin(ws)
            started[name] = (ws, stack.enter_context(mcp_session(command, str(ws))))
        yield started


def _result(client: SyncClient, ws: Path, tool: str, args: dict[str, Any]) -> tuple[bool, list[Any]]:
    spelled = {k: v.replace("WS", str(ws)) if isinstance(v, str) else v for k, v in args.items()}
    result = client.call(tool, spelled)
    blocks = [b.model_dump(by_alias=True, exclude_none=True) for b in result.content]
    text = repr(blocks).replace(str(ws), "WS").replace(str(ws.parent), "BASE")
    return bool(result.is_error), [DATE.sub("DATE", text)]


def _table_rows() -> str:
    return DOC.read_text().split("## ", 2)[1]  # the first section: the differences table


@pytest.mark.parametrize(("tool", "args", "allowed"), CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_same_call_to_both_servers(
    servers: dict[str, tuple[Path, SyncClient]], tool: str, args: dict[str, Any], allowed: str | None
) -> None:
    ours = _result(servers["safefs-mcp"][1], servers["safefs-mcp"][0], tool, args)
    theirs = _result(servers["official"][1], servers["official"][0], tool, args)
    if allowed is None:
        assert ours == theirs
    elif allowed == "refused":
        assert ours[0], ours  # refused by safefs-mcp, whatever the official server did
    else:
        assert allowed in _table_rows(), f"docs/mcp.md's table has no row {allowed!r}"
        if ours == theirs:
            pytest.fail(f"the results are equal now: drop {allowed!r} from the call and the table")
