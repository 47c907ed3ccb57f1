"""The EscapeRoute inputs (CVE-2025-53109, CVE-2025-53110) and their relatives, through every
tool that takes a path: each is refused, and nothing outside the workspace is read or changed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.mcp.client import Client, mcp_client
from tests.mcp.conftest import SECRET, SIBLING_SECRET, Arena, make_arena

# Spellings of a path outside the workspace; "{ws}" and "{base}" are filled in per arena.
ESCAPES = {
    "sibling prefix, absolute": "{base}/ws_evil/secret.txt",
    "sibling prefix, relative": "../ws_evil/secret.txt",
    "sibling prefix, bare directory": "{base}/ws_evil",
    "dot-dot out": "../outside/secret.txt",
    "absolute outside": "{base}/outside/secret.txt",
    "dot-dot after the root": "{ws}/../outside/secret.txt",
    "symlink to a file out": "link_file",
    "symlink to a directory out": "link_out",
    "through a symlink out": "link_out/secret.txt",
    "absolute through a symlink out": "{ws}/link_out/secret.txt",
    "symlink to the same-prefix sibling": "link_sibling/secret.txt",
    "absolute through the sibling link": "{ws}/link_sibling/secret.txt",
    "new name through a symlink out": "link_out/created.txt",
}

# Each tool with how a path goes into its arguments.
CALLS: dict[str, Any] = {
    "read_text_file": lambda p: {"path": p},
    "read_file": lambda p: {"path": p, "head": 1},
    "read_media_file": lambda p: {"path": p},
    "write_file": lambda p: {"path": p, "content": "pwned\n"},
    "edit_file": lambda p: {"path": p, "edits": [{"oldText": "secret", "newText": "pwned"}]},
    "create_directory": lambda p: {"path": p + "/newdir"},
    "list_directory": lambda p: {"path": p},
    "list_directory_with_sizes": lambda p: {"path": p},
    "directory_tree": lambda p: {"path": p},
    "move_file from": lambda p: {"source": p, "destination": "moved-in"},
    "move_file to": lambda p: {"source": "victim.txt", "destination": p + "/moved"},
    "search_files": lambda p: {"path": p, "pattern": "**"},
    "search_file_contents": lambda p: {"path": p, "pattern": "secret"},
    "get_file_info": lambda p: {"path": p},
    "delete_file": lambda p: {"path": p},
}
# A final symlink is an entry of the workspace: moving or deleting it acts on the link itself,
# inside, and touches nothing outside. Those calls may succeed; the outside check still applies.
ACTS_ON_THE_LINK = {
    ("move_file from", "symlink to a file out"),
    ("move_file from", "symlink to a directory out"),
    ("delete_file", "symlink to a file out"),
    ("delete_file", "symlink to a directory out"),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Arena, Client]]:
    arena = make_arena(tmp_path_factory.mktemp("escapes"))
    (arena.ws / "victim.txt").write_text("victim\n")
    with mcp_client("--allow-delete", str(arena.ws)) as client:
        yield arena, client


def _restore(arena: Arena) -> None:
    """Put back links a permitted call moved or deleted, so the next case meets the same tree."""
    for name, target in (("link_file", "../outside/secret.txt"), ("link_out", str(arena.outside))):
        if not os.path.lexists(arena.ws / name):
            os.symlink(target, arena.ws / name)
    moved = arena.ws / "moved-in"
    if os.path.lexists(moved):
        os.unlink(moved)


@pytest.mark.parametrize("case", sorted(ESCAPES))
@pytest.mark.parametrize("tool", sorted(CALLS))
def test_escape_is_refused_and_touches_nothing(served: tuple[Arena, Client], tool: str, case: str) -> None:
    arena, client = served
    path = ESCAPES[case].format(ws=arena.ws, base=arena.base)
    before = arena.outside_state()
    result = client.call(tool.split()[0], CALLS[tool](path))
    text = "".join(getattr(block, "text", "") for block in result.content)
    after = arena.outside_state()
    _restore(arena)
    assert after == before, "something outside the workspace changed"
    assert SECRET.strip() not in text and SIBLING_SECRET.strip() not in text
    if (tool, case) in ACTS_ON_THE_LINK:
        return
    assert result.is_error, text
    assert "path escapes workspace" in text, text
    assert str(arena.base) not in text.replace(path, ""), "a host path the client did not send"


def test_read_multiple_files_refuses_each_escape(served: tuple[Arena, Client]) -> None:
    arena, client = served
    paths = [p.format(ws=arena.ws, base=arena.base) for p in ESCAPES.values()]
    error, text = client.text("read_multiple_files", {"paths": paths})
    assert not error
    assert SECRET.strip() not in text and SIBLING_SECRET.strip() not in text
    assert text.count("Error - path escapes workspace") == len(paths)


def test_benign_spellings_inside_are_accepted(served: tuple[Arena, Client]) -> None:
    arena, client = served
    for path in [
        f"{arena.ws}/hello.txt",
        f"{arena.ws}//hello.txt",
        f"{arena.ws}/./hello.txt",
        "sub/../hello.txt",
        "./hello.txt",
        "link_in",
    ]:
        assert client.text("read_text_file", {"path": path}) == (False, "hello from inside\n"), path
    for path in [str(arena.ws), f"{arena.ws}/", "."]:
        assert not client.call("list_directory", {"path": path}).is_error, path


def test_tilde_is_a_name_never_the_home_directory(served: tuple[Arena, Client]) -> None:
    client = served[1]
    assert client.text("read_text_file", {"path": "~/.bashrc"}) == (
        True,
        "No such file or directory: '~/.bashrc'",
    )
