"""The installed safefs-mcp, driven by the real MCP client over stdio: the tool table matches
the official filesystem server's, and every tool works and fails as it should."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from safefs.mcp.node_format import js_date
from tests.mcp.client import Client, mcp_client
from tests.mcp.conftest import Arena, make_arena

OFFICIAL = json.loads((Path(__file__).with_name("official_tools.json")).read_text())
OURS_ONLY = {"search_file_contents"}
WRITERS = {"write_file", "edit_file", "create_directory", "move_file"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Arena, Client]]:
    arena = make_arena(tmp_path_factory.mktemp("stdio"))
    with mcp_client(str(arena.ws)) as client:
        yield arena, client


def _schema_view(schema: Any) -> Any:
    """A schema without descriptions: what a client's validation depends on."""
    if isinstance(schema, dict):
        return {k: _schema_view(v) for k, v in schema.items() if k not in ("description", "$schema")}
    if isinstance(schema, list):
        return [_schema_view(v) for v in schema]
    return schema


def test_tool_names_are_the_official_ones_plus_content_search(served: tuple[Arena, Client]) -> None:
    names = {t.name for t in served[1].tools()}
    assert names == set(OFFICIAL["tools"]) | OURS_ONLY


@pytest.mark.parametrize("name", sorted(OFFICIAL["tools"]))
def test_schema_and_annotations_match_the_official_server(served: tuple[Arena, Client], name: str) -> None:
    official = OFFICIAL["tools"][name]
    tool = {t.name: t for t in served[1].tools()}[name]
    ours = _schema_view(tool.input_schema)
    assert ours["type"] == "object"
    assert ours["required"] == official["required"]
    for prop, spec in official["properties"].items():
        assert ours["properties"][prop] == spec, prop  # same type, items, enum and default
    extra = set(ours["properties"]) - set(official["properties"])
    assert extra <= {"offset", "limit", "maxDepth", "includeIgnored", "lineNumbers"}  # additions are optional
    assert tool.annotations is not None
    hints = tool.annotations.model_dump(by_alias=True, exclude_none=True)
    assert {k: hints[k] for k in official["annotations"]} == official["annotations"]


def test_read_only_lists_no_writing_tool_and_delete_needs_its_flag(arena: Arena) -> None:
    with mcp_client("--read-only", "--allow-delete", str(arena.ws)) as client:
        tools = client.tools()
        assert all(t.annotations and t.annotations.read_only_hint for t in tools)
        assert not WRITERS & {t.name for t in tools}
        error, text = client.text("write_file", {"path": "new.txt", "content": "x"})
        assert error and text == "Unknown tool: write_file"
    assert not (arena.ws / "new.txt").exists()
    with mcp_client(str(arena.ws)) as client:
        assert "delete_file" not in {t.name for t in client.tools()}
    with mcp_client("--allow-delete", str(arena.ws)) as client:
        delete = {t.name: t for t in client.tools()}["delete_file"]
        assert delete.annotations and delete.annotations.destructive_hint
        assert client.text("delete_file", {"path": "hello.txt"}) == (
            False,
            "Successfully deleted file hello.txt",
        )
        assert client.text("delete_file", {"path": "sub"})[1] == "Directory not empty: 'sub'"
        assert client.text("delete_file", {"path": "link_out"})[0] is False  # the link only
    assert not (arena.ws / "hello.txt").exists() and (arena.outside / "secret.txt").exists()


def ok(client: Client, name: str, args: dict[str, Any]) -> str:
    error, text = client.text(name, args)
    assert not error, text
    return text


def test_read_text_file(served: tuple[Arena, Client]) -> None:
    arena, client = served
    assert ok(client, "read_text_file", {"path": "hello.txt"}) == "hello from inside\n"
    assert ok(client, "read_file", {"path": str(arena.ws / "hello.txt")}) == "hello from inside\n"
    assert ok(client, "read_text_file", {"path": "sub/lines.txt", "head": 2}) == "line 1\nline 2"
    assert ok(client, "read_text_file", {"path": "sub/lines.txt", "tail": 2}) == "line 9\nline 10"
    assert ok(client, "read_text_file", {"path": "sub/lines.txt", "offset": 4, "limit": 2}) == (
        "[lines 4-5 of 10; call read_text_file with offset=6 to continue]\nline 4\nline 5\n"
    )
    assert ok(client, "read_text_file", {"path": "link_in"}) == "hello from inside\n"


def test_read_text_file_of_a_big_file_is_cut_with_directions(served: tuple[Arena, Client]) -> None:
    arena, client = served
    (arena.ws / "big.txt").write_text("".join(f"{i:09d}\n" for i in range(1, 10001)))
    text = ok(client, "read_text_file", {"path": "big.txt"})
    assert len(text) <= 30_000
    shown, note = text.rsplit("\n\n", 1)
    last = int(shown.splitlines()[-1])
    assert note == (
        f"[cut at 30000 characters: lines 1-{last} of 10000 shown; call read_text_file "
        f"with offset={last + 1} to read on]"
    )
    rest = ok(client, "read_text_file", {"path": "big.txt", "offset": last + 1, "limit": 1})
    assert rest == (
        f"[lines {last + 1}-{last + 1} of 10000; call read_text_file with "
        f"offset={last + 2} to continue]\n{last + 1:09d}\n"
    )


def test_undecodable_bytes_are_replaced(served: tuple[Arena, Client]) -> None:
    arena, client = served
    (arena.ws / "latin1.txt").write_bytes(b"caf\xe9\n")
    assert ok(client, "read_text_file", {"path": "latin1.txt"}) == "caf\ufffd\n"


@pytest.mark.parametrize(
    "args, message",
    [
        ({"path": "missing.txt"}, "No such file or directory: 'missing.txt'"),
        ({"path": "sub"}, "Is a directory: 'sub'"),
        (
            {"path": "hello.txt", "head": 1, "tail": 1},
            "Cannot specify both head and tail parameters simultaneously",
        ),
        ({"path": "hello.txt", "head": 1.5}, "head must be a whole number of lines, got 1.5"),
        ({"path": "hello.txt", "offset": 0}, "offset must be 1 or more"),
        ({"path": ""}, "invalid path: path must not be empty"),
        (
            {"path": "hello.txt", "head": "x"},
            "Input validation error: Invalid arguments for tool read_text_file: 'x' is not of type "
            "'number' at head",
        ),
        (
            {},
            "Input validation error: Invalid arguments for tool read_text_file: 'path' is a "
            "required property",
        ),
    ],
)
def test_read_text_file_errors(served: tuple[Arena, Client], args: dict[str, Any], message: str) -> None:
    error, text = served[1].text("read_text_file", args)
    assert error and text.startswith(message), text


def test_fifo_fails_at_once(served: tuple[Arena, Client]) -> None:
    arena, client = served
    os.mkfifo(arena.ws / "pipe")
    try:
        assert client.text("read_text_file", {"path": "pipe"}) == (True, "not a regular file: 'pipe'")
        assert client.call("read_media_file", {"path": "pipe"}).is_error
        assert "pipe" in ok(client, "list_directory", {"path": "."})
        assert "pipe" not in ok(client, "search_file_contents", {"path": ".", "pattern": "."})
    finally:
        os.unlink(arena.ws / "pipe")


def test_read_multiple_files(served: tuple[Arena, Client]) -> None:
    text = ok(served[1], "read_multiple_files", {"paths": ["hello.txt", "nope", "link_file"]})
    assert text == (
        "hello.txt:\nhello from inside\n\n\n---\n"  # the official layout
        "nope: Error - No such file or directory: 'nope'\n---\n"
        "link_file: Error - path escapes workspace: 'link_file'"
    )
    error, text = served[1].text("read_multiple_files", {"paths": []})
    assert error and "should be non-empty" in text


def test_read_media_file(served: tuple[Arena, Client]) -> None:
    arena, client = served
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    (arena.ws / "pic.png").write_bytes(png)
    result = client.call("read_media_file", {"path": "pic.png"})
    block = result.content[0]
    assert isinstance(block, types.ImageContent)
    assert (block.mime_type, base64.b64decode(block.data)) == ("image/png", png)
    result = client.call("read_media_file", {"path": "hello.txt"})
    resource = result.content[0]
    assert isinstance(resource, types.EmbeddedResource)
    assert isinstance(resource.resource, types.BlobResourceContents)
    assert resource.resource.mime_type == "application/octet-stream"
    assert str(resource.resource.uri) == f"file://{arena.ws}/hello.txt"


def test_write_edit_create_move(served: tuple[Arena, Client]) -> None:
    arena, client = served
    assert (
        ok(client, "write_file", {"path": "w/new.txt", "content": "a\nb\nb\n"})
        == "Successfully wrote to w/new.txt"
    )
    assert (arena.ws / "w" / "new.txt").read_text() == "a\nb\nb\n"
    edit = {"path": "w/new.txt", "edits": [{"oldText": "a\n", "newText": "A\n"}]}
    diff = ok(client, "edit_file", {**edit, "dryRun": True})
    absolute = arena.ws / "w" / "new.txt"  # the official server names the absolute path, three times
    assert diff.startswith(
        f"```diff\nIndex: {absolute}\n{'=' * 67}\n--- {absolute}\toriginal\n+++ {absolute}\tmodified\n"
    )
    assert "-a\n+A\n" in diff
    assert (arena.ws / "w" / "new.txt").read_text() == "a\nb\nb\n"  # a dry run writes nothing
    ok(client, "edit_file", edit)
    assert (arena.ws / "w" / "new.txt").read_text() == "A\nb\nb\n"
    error, text = client.text("edit_file", {"path": "w/new.txt", "edits": [{"oldText": "b", "newText": "c"}]})
    assert error and "text occurs 2 times" in text  # ambiguous: refused, not the first one
    error, text = client.text(
        "edit_file", {"path": "w/new.txt", "edits": [{"oldText": "zzz", "newText": "c"}]}
    )
    assert error and "text not found" in text
    assert (arena.ws / "w" / "new.txt").read_text() == "A\nb\nb\n"
    assert ok(client, "create_directory", {"path": "w/x/y"}) == "Successfully created directory w/x/y"
    ok(client, "create_directory", {"path": "w/x/y"})  # exists: fine
    assert (
        ok(client, "move_file", {"source": "w/new.txt", "destination": "w/x/moved.txt"})
        == "Successfully moved w/new.txt to w/x/moved.txt"
    )
    (arena.ws / "w" / "keep.txt").write_text("keep")
    error, text = client.text("move_file", {"source": "w/x/moved.txt", "destination": "w/keep.txt"})
    assert error and text == "destination exists, not replaced: 'w/keep.txt'"
    assert (arena.ws / "w" / "keep.txt").read_text() == "keep"
    error, text = client.text("write_file", {"path": "sub", "content": "x"})
    assert error and text == "Is a directory: 'sub'"


def test_listings(served: tuple[Arena, Client]) -> None:
    arena, client = served
    (arena.ws / "tree" / "a" / "b").mkdir(parents=True)
    (arena.ws / "tree" / "a" / "b" / "deep.txt").write_text("deep")
    (arena.ws / "tree" / "top.txt").write_text("0123456789")
    assert ok(client, "list_directory", {"path": "tree"}) == "[DIR] a\n[FILE] top.txt"
    sized = ok(client, "list_directory_with_sizes", {"path": "tree"})
    assert sized.splitlines()[1] == f"[FILE] {'top.txt'.ljust(30)} {'10 B'.rjust(10)}"
    assert sized.endswith("Total: 1 files, 1 directories\nCombined size: 10 B")
    listing = ok(client, "list_directory", {"path": "."})
    assert "[LINK] link_out -> outside the workspace (not followed)" in listing
    assert "[LINK] link_in -> hello.txt" in listing
    tree = json.loads(ok(client, "directory_tree", {"path": "tree"}))
    assert tree == [
        {
            "name": "a",
            "type": "directory",
            "children": [
                {"name": "b", "type": "directory", "children": [{"name": "deep.txt", "type": "file"}]}
            ],
        },
        {"name": "top.txt", "type": "file"},
    ]
    shallow = json.loads(ok(client, "directory_tree", {"path": "tree", "maxDepth": 1}))
    assert shallow[0] == {"name": "a", "type": "directory", "children": [], "truncated": True}
    excluded = json.loads(ok(client, "directory_tree", {"path": "tree", "excludePatterns": ["b"]}))
    assert excluded[0]["children"] == []


def test_directory_tree_is_capped_and_stays_json(served: tuple[Arena, Client]) -> None:
    arena, client = served
    many = arena.ws / "many"
    many.mkdir()
    for i in range(3000):
        (many / f"file-with-a-long-name-{i:05d}.txt").touch()
    text = ok(client, "directory_tree", {"path": "many"})
    assert len(text) <= 30_000
    tree = json.loads(text)
    assert tree[-1]["type"] == "truncated" and "more entries not shown" in tree[-1]["name"]
    listing = ok(client, "list_directory", {"path": "many"})
    assert len(listing) <= 30_000 and "more entries not shown" in listing


def test_search_files_and_contents(served: tuple[Arena, Client]) -> None:
    arena, client = served
    found = ok(client, "search_files", {"path": "sub", "pattern": "**/*.txt"})
    assert found == f"{arena.ws}/sub/lines.txt"
    assert ok(client, "search_files", {"path": ".", "pattern": "*.nothing"}) == "No matches found"
    everything = ok(client, "search_files", {"path": ".", "pattern": "**"})
    assert f"{arena.ws}/link_out" in everything  # the link is listed...
    assert "secret" not in everything  # ...and never entered
    hits = ok(client, "search_file_contents", {"path": ".", "pattern": "LINE 1\\b", "ignoreCase": True})
    assert hits.splitlines()[0] == f"{arena.ws}/sub/lines.txt:1:line 1"
    assert "secret" not in ok(client, "search_file_contents", {"path": ".", "pattern": "secret"})


def test_file_info_and_allowed_directories(served: tuple[Arena, Client]) -> None:
    arena, client = served
    info = dict(
        line.split(": ", 1) for line in ok(client, "get_file_info", {"path": "hello.txt"}).splitlines()
    )
    assert list(info) == ["size", "created", "modified", "accessed", "isDirectory", "isFile", "permissions"]
    assert (info["size"], info["isFile"], info["isDirectory"]) == ("18", "true", "false")
    assert info["permissions"] == oct((arena.ws / "hello.txt").stat().st_mode)[-3:]
    assert ok(client, "list_allowed_directories", {}) == f"Allowed directories:\n{arena.ws}"


def test_unknown_tool_and_bad_arguments_are_error_results(served: tuple[Arena, Client]) -> None:
    client = served[1]
    assert client.text("no_such_tool", {}) == (True, "Unknown tool: no_such_tool")
    error, text = client.text("move_file", {"source": "hello.txt"})
    assert error and "'destination' is a required property" in text


def test_an_error_names_an_absolute_path_as_the_client_gave_it(served: tuple[Arena, Client]) -> None:
    arena, client = served
    ws = str(arena.ws)
    assert client.text("read_text_file", {"path": f"{ws}/missing.txt"}) == (
        True,
        f"No such file or directory: '{ws}/missing.txt'",
    )
    assert client.text("read_text_file", {"path": f"{ws}/link_out/secret.txt"}) == (
        True,
        f"path escapes workspace: '{ws}/link_out/secret.txt'",
    )
    assert client.text("move_file", {"source": f"{ws}/missing.txt", "destination": "gone.txt"}) == (
        True,
        f"No such file or directory: '{ws}/missing.txt' -> 'gone.txt'",
    )
    error, text = client.text(
        "edit_file", {"path": f"{ws}/hello.txt", "edits": [{"oldText": "absent", "newText": "x"}]}
    )
    assert error and text.startswith(f"edit of '{ws}/hello.txt': text not found"), text
    assert ok(client, "read_multiple_files", {"paths": [f"{ws}/sub"]}) == (
        f"{ws}/sub: Error - Is a directory: '{ws}/sub'"
    )


def test_a_large_message_goes_through(served: tuple[Arena, Client]) -> None:
    arena, client = served
    content = "0123456789abcde\n" * (1 << 16)  # 1 MiB in one JSON-RPC line
    assert ok(client, "write_file", {"path": "large.txt", "content": content})
    assert (arena.ws / "large.txt").read_text() == content
    assert ok(client, "read_text_file", {"path": "large.txt", "tail": 1}) == "0123456789abcde"


def test_one_line_longer_than_the_cap_is_cut_and_says_so(served: tuple[Arena, Client]) -> None:
    arena, client = served
    (arena.ws / "wide.txt").write_text("w" * 50_000 + "\nsecond\n")
    text = ok(client, "read_text_file", {"path": "wide.txt"})
    body, note = text.rsplit("\n", 1)
    assert body == "w" * len(body) and len(text) <= 30_000
    assert note == (
        "[cut at 30000 characters: line 1 of 2 is longer than that, and the rest of it "
        "is not shown; call read_text_file with offset=2 to read on]"
    )
    assert ok(client, "read_text_file", {"path": "wide.txt", "offset": 2}).endswith("\nsecond\n")


def test_created_is_the_birth_time_not_the_change_time(tmp_path: Path) -> None:
    if shutil.which("stat") is None:
        pytest.skip("coreutils stat is needed to read the birth time independently")
    (tmp_path / "born.txt").write_text("x\n")
    time.sleep(1.1)  # so the change time below lands in another second than the birth
    os.chmod(tmp_path / "born.txt", 0o600)
    birth = int(
        subprocess.run(
            ["stat", "-c", "%W", str(tmp_path / "born.txt")], capture_output=True, text=True
        ).stdout
    )
    with mcp_client(str(tmp_path)) as client:
        error, text = client.text("get_file_info", {"path": "born.txt"})
    assert not error
    created = next(line for line in text.splitlines() if line.startswith("created: "))
    assert created == ("created: unknown" if birth == 0 else f"created: {js_date(birth)}")
    assert created != f"created: {js_date(os.stat(tmp_path / 'born.txt').st_ctime)}"
