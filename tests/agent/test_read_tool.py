"""read: strict UTF-8 through safefs, exact truncation, bounded memory, refusals as results."""

from __future__ import annotations

import os
import threading
import tracemalloc
from pathlib import Path

import pytest

from agent.tools import ReadTool
from agent.tools.base import ToolOutput
from tests.agent.conftest import AgentWorkspace


def read(ws: AgentWorkspace, path: object) -> ToolOutput:
    return ReadTool(ws.root).execute({"path": path})


def cut(text: str) -> str:
    """The 16,000-character rule, computed the slow, obvious way."""
    first = text[:8000].count("\n") + 1
    last = text[:-8000].count("\n") + 1
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    marker = (
        f"[truncated {len(text) - 16000} characters, within lines {first}-{last} of {lines}; "
        "read with offset and limit to see them]"
    )
    return f"{text[:8000]}\n{marker}\n{text[-8000:]}"


def test_reads_a_file(ws: AgentWorkspace) -> None:
    assert read(ws, "hello.txt") == ToolOutput("hello from inside\n")
    (ws.path / "d").mkdir()
    (ws.path / "d" / "n.txt").write_text("nested ✓\n", encoding="utf-8")
    assert read(ws, "d/n.txt") == ToolOutput("nested ✓\n")
    assert read(ws, str(ws.path / "d" / "n.txt")) == ToolOutput("nested ✓\n")  # absolute inside


def test_exactly_16000_characters_is_not_truncated(ws: AgentWorkspace) -> None:
    text = "é" * 16000  # 32,000 bytes: the limit is in characters, not bytes
    (ws.path / "f.txt").write_text(text, encoding="utf-8")
    assert read(ws, "f.txt") == ToolOutput(text)


@pytest.mark.parametrize("total, unit", [(16001, "a"), (30000, "é"), (70000, "€"), (200000, "x")])
def test_truncation_format_is_exact(ws: AgentWorkspace, total: int, unit: str) -> None:
    # Position-dependent characters, so a head or tail taken from the wrong place shows.
    text = "".join(unit if i % 97 else str(i % 10) for i in range(total))
    (ws.path / "big.txt").write_text(text, encoding="utf-8")
    assert read(ws, "big.txt") == ToolOutput(cut(text))


def test_multibyte_character_split_across_chunks_is_decoded(ws: AgentWorkspace) -> None:
    from agent.tools.read import CHUNK_BYTES

    # A 4-byte character straddling the first chunk boundary.
    text = "a" * (CHUNK_BYTES - 2) + "😀" + "b" * 100
    (ws.path / "s.txt").write_text(text, encoding="utf-8")
    out = read(ws, "s.txt")
    assert out == ToolOutput(cut(text))


@pytest.mark.parametrize(
    "data, offset", [(b"ok\xff", 2), (b"a" * 70000 + b"\xc3(", 70000), (b"a" * 70000 + b"\xe2\x82", 70000)]
)
def test_invalid_utf8_is_an_error_result_naming_the_offset(
    ws: AgentWorkspace, data: bytes, offset: int
) -> None:
    (ws.path / "bin").write_bytes(data)
    out = read(ws, "bin")
    assert out.is_error
    assert out.content == f"not valid UTF-8: 'bin' (invalid UTF-8 at byte offset {offset})"


def test_a_1_gib_file_is_not_loaded_whole(ws: AgentWorkspace) -> None:
    big = ws.path / "huge.bin"
    with open(big, "wb") as f:
        f.truncate(1 << 30)  # sparse: NUL bytes, valid UTF-8, nothing on disk
    tracemalloc.start()
    try:
        out = read(ws, "huge.bin")
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"peak traced memory reading 1 GiB: {peak} bytes")
    assert not out.is_error
    marker = (
        f"[truncated {(1 << 30) - 16000} characters, within lines 1-1 of 1; read with offset "
        "and limit to see them]"
    )
    assert out.content == "\0" * 8000 + f"\n{marker}\n" + "\0" * 8000
    assert peak < 16 << 20  # a few chunks, not the file


def test_a_fifo_is_refused_at_once(each_backend: AgentWorkspace) -> None:
    ws = each_backend
    os.mkfifo(ws.path / "pipe")
    outcome: list[ToolOutput] = []
    reader = threading.Thread(target=lambda: outcome.append(read(ws, "pipe")), daemon=True)
    reader.start()
    reader.join(20)  # a guard against hanging the suite, not a timing claim
    if reader.is_alive():
        with open(ws.path / "pipe", "wb"):  # unblock the reader so the thread can finish
            pass
        pytest.fail("read blocked on a FIFO with no writer")
    assert outcome == [ToolOutput("not a regular file: 'pipe'", is_error=True)]


@pytest.mark.parametrize(
    "path, message",
    [
        ("missing.txt", "No such file or directory: 'missing.txt'"),
        (".", "Is a directory: '.'"),
        ("hello.txt/x", "Not a directory: 'hello.txt/x'"),
    ],
)
def test_os_errors_name_the_given_path(ws: AgentWorkspace, path: str, message: str) -> None:
    assert read(ws, path) == ToolOutput(message, is_error=True)


def test_escapes_are_refused_without_leaking(each_backend: AgentWorkspace) -> None:
    ws = each_backend
    os.symlink(ws.outside / "secret.txt", ws.path / "abs-link")
    os.symlink("../outside", ws.path / "rel-link")
    attempts = [
        "../work-other/secret.txt",
        str(ws.sibling / "secret.txt"),  # shares the workspace path as a string prefix
        str(ws.outside / "secret.txt"),
        "../outside/secret.txt",
        "abs-link",
        "rel-link/secret.txt",
        "/etc/passwd",
    ]
    for path in attempts:
        out = read(ws, path)
        assert out == ToolOutput(f"path escapes workspace: {path!r}", is_error=True)
        assert "secret" not in out.content.replace(path, "")
        assert str(ws.path) not in out.content.replace(path, "")


def test_host_workspace_path_never_appears_in_errors(ws: AgentWorkspace) -> None:
    (ws.path / "d").mkdir()
    for path in ["nope", "d", "d/nope/x", "../x", "hello.txt/", "a\0b", ""]:
        out = read(ws, path)
        assert out.is_error
        assert str(ws.path) not in out.content, out.content


@pytest.mark.parametrize(
    "args, problem",
    [
        ({}, "missing required field 'path'"),
        ({"path": 3}, "field 'path' must be of type string"),
        ({"path": "a", "extra": 1}, "unexpected field 'extra'"),
        ({"path": ""}, "invalid path: path must not be empty"),
        ({"path": "a\0b"}, "invalid path: path must not contain a NUL character"),
        ("hello.txt", "input must be a JSON object"),
    ],
)
def test_bad_input_is_an_error_result(ws: AgentWorkspace, args: object, problem: str) -> None:
    out = ReadTool(ws.root).execute(args)
    assert out.is_error
    assert problem in out.content


def test_file_growing_past_the_small_read_is_streamed(ws: AgentWorkspace, tmp_path: Path) -> None:
    from agent.tools.read import read_bounded

    text = "z" * 20000
    with open(tmp_path / "g.txt", "w") as f:
        f.write(text)
    with open(tmp_path / "g.txt", "rb") as stream:
        rendered = read_bounded(stream, size_hint=10)  # stale size from before it grew
    assert rendered == cut(text)


def test_a_long_read_stops_when_cancelled(ws: AgentWorkspace) -> None:
    with open(ws.path / "huge.bin", "wb") as f:
        f.truncate(1 << 30)
    cancel = threading.Event()
    cancel.set()  # already requested: the read stops after its first chunk
    out = ReadTool(ws.root).execute({"path": "huge.bin"}, cancel)
    assert out == ToolOutput("read of 'huge.bin' cancelled", is_error=True)
    # A small file is read whole in one go; there is nothing to interrupt.
    assert ReadTool(ws.root).execute({"path": "hello.txt"}, cancel) == ToolOutput("hello from inside\n")


NUMBERED = "".join(f"line {i}\n" for i in range(1, 101))


@pytest.mark.parametrize(
    "args, expected",
    [
        ({"offset": 1, "limit": 2}, "[lines 1-2 of 100; read with offset=3 to continue]\nline 1\nline 2\n"),
        ({"offset": 99}, "[lines 99-100 of 100]\nline 99\nline 100\n"),
        ({"limit": 1}, "[lines 1-1 of 100; read with offset=2 to continue]\nline 1\n"),
        ({"offset": 100, "limit": 5}, "[lines 100-100 of 100]\nline 100\n"),
        ({"offset": 101}, "[offset 101 is past the end: the file has 100 lines]\n"),
    ],
)
def test_line_ranges(ws: AgentWorkspace, args: dict[str, int], expected: str) -> None:
    (ws.path / "n.txt").write_text(NUMBERED)
    assert ReadTool(ws.root).execute({"path": "n.txt", **args}) == ToolOutput(expected)


def test_every_part_of_a_big_file_is_reachable_through_ranges(ws: AgentWorkspace) -> None:
    text = "".join(f"{i:07d} " + "x" * (i % 50) + "\n" for i in range(20000))
    (ws.path / "big.txt").write_text(text)
    whole = read(ws, "big.txt").content
    assert "[truncated" in whole and "read with offset and limit" in whole
    pieces, offset = [], 1
    while True:
        out = ReadTool(ws.root).execute({"path": "big.txt", "offset": offset, "limit": 5000})
        header, body = out.content.split("\n", 1)
        assert len(out.content) <= 30_000 + 200
        pieces.append(body)
        if "to continue" not in header:
            break
        offset = int(header.rsplit("offset=", 1)[1].split()[0])
    assert "".join(pieces) == text  # nothing lost, nothing repeated


def test_an_over_long_line_is_cut_and_says_so(ws: AgentWorkspace) -> None:
    (ws.path / "one.txt").write_text("y" * 100_000 + "\nnext\n")
    out = ReadTool(ws.root).execute({"path": "one.txt", "offset": 1, "limit": 1})
    header, body = out.content.split("\n", 1)
    assert header == (
        "[lines 1-1 of 2; line 1 is longer than 30000 characters and was cut; read with offset=2 to continue]"
    )
    assert body == "y" * 30_000


@pytest.mark.parametrize(
    "args, message",
    [
        ({"offset": 0}, "offset must be 1 or more (lines are numbered from 1), got 0"),
        ({"limit": 0}, "limit must be 1 or more, got 0"),
        ({"offset": "3"}, "field 'offset' must be of type integer"),
    ],
)
def test_bad_ranges_are_error_results(ws: AgentWorkspace, args: dict[str, object], message: str) -> None:
    out = ReadTool(ws.root).execute({"path": "hello.txt", **args})
    assert out.is_error and message in out.content


def test_a_range_of_invalid_utf8_names_the_offset(ws: AgentWorkspace) -> None:
    (ws.path / "bad.txt").write_bytes(b"fine\nbad \xff here\n")
    out = ReadTool(ws.root).execute({"path": "bad.txt", "offset": 1})
    assert out == ToolOutput("not valid UTF-8: 'bad.txt' (invalid UTF-8 at byte offset 9)", is_error=True)
