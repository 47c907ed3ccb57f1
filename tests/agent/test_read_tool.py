"""read: strict UTF-8 through safefs, cat -n numbering, line ranges, bounded memory, refusals as results."""

from __future__ import annotations

import os
import subprocess
import threading
import tracemalloc
from pathlib import Path

import pytest

from agent.tools import ReadTool
from agent.tools.base import ToolOutput
from tests.agent.conftest import AgentWorkspace


def read(ws: AgentWorkspace, path: object) -> ToolOutput:
    return ReadTool(ws.root).execute({"path": path})


def numbered(lines: list[str], first: int = 1) -> str:
    """``cat -n`` output, computed the slow, obvious way."""
    return "".join(f"{str(n).rjust(6)}\t{line}\n" for n, line in enumerate(lines, first))


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
    assert rendered.startswith("z" * 8000 + "\n[truncated 4000 characters") and rendered.endswith("z" * 8000)


def test_a_range_of_invalid_utf8_names_the_offset(ws: AgentWorkspace) -> None:
    (ws.path / "bad.txt").write_bytes(b"fine\nbad \xff here\n")
    out = ReadTool(ws.root).execute({"path": "bad.txt", "offset": 1})
    assert out == ToolOutput("not valid UTF-8: 'bad.txt' (invalid UTF-8 at byte offset 9)", is_error=True)


NUMBERED = "".join(f"line {i}\n" for i in range(1, 101))


def test_reads_a_file_numbered_like_cat_n(ws: AgentWorkspace) -> None:
    assert read(ws, "hello.txt") == ToolOutput("     1\thello from inside\n")
    (ws.path / "n.txt").write_text(NUMBERED)
    shown = subprocess.run(["cat", "-n", str(ws.path / "n.txt")], capture_output=True, text=True).stdout
    assert read(ws, "n.txt").content == shown


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            {"limit": 2},
            numbered(["line 1", "line 2"]) + "[lines 1-2 of 100 shown; read with offset=3 to continue]",
        ),
        ({"offset": 99}, numbered(["line 99", "line 100"], 99)),
        ({"offset": 100, "limit": 5}, numbered(["line 100"], 100)),
        ({"offset": 101}, "[offset 101 is past the end: the file has 100 lines]"),
    ],
)
def test_line_ranges(ws: AgentWorkspace, args: dict[str, int], expected: str) -> None:
    (ws.path / "n.txt").write_text(NUMBERED)
    assert ReadTool(ws.root).execute({"path": "n.txt", **args}) == ToolOutput(expected)


def test_a_plain_read_shows_the_first_2000_lines_and_says_how_to_go_on(ws: AgentWorkspace) -> None:
    (ws.path / "long.txt").write_text("".join(f"{i}\n" for i in range(1, 2736)))
    out = read(ws, "long.txt").content.splitlines()
    assert out[0] == "     1\t1" and out[1999] == "  2000\t2000"
    assert out[-1] == "[lines 1-2000 of 2735 shown; read with offset=2001 to continue]"


def test_the_character_cap_cuts_at_a_whole_line(ws: AgentWorkspace) -> None:
    (ws.path / "wide.txt").write_text(("x" * 99 + "\n") * 1000)
    out = read(ws, "wide.txt").content
    assert len(out) <= 30_000
    last = out.splitlines()[-1]
    assert last.startswith("[lines 1-") and "stopped at 30000 characters" in last
    shown = int(last.split("-")[1].split(" ")[0])
    assert out.splitlines()[shown - 1] == f"{str(shown).rjust(6)}\t" + "x" * 99


def test_every_part_of_a_big_file_is_reachable_through_ranges(ws: AgentWorkspace) -> None:
    lines = [f"row {i} " + "y" * (i % 50) for i in range(1, 20001)]
    (ws.path / "big.txt").write_text("\n".join(lines) + "\n")
    seen: list[str] = []
    offset = 1
    while True:
        out = ReadTool(ws.root).execute({"path": "big.txt", "offset": offset}).content.split("\n")
        body = [line.split("\t", 1)[1] for line in out if "\t" in line]
        seen.extend(body)
        if not out[-1].startswith("[lines"):
            break
        offset = int(out[-1].rsplit("offset=", 1)[1].split(" ")[0])
    assert seen == lines


def test_an_over_long_line_is_cut_and_says_so(ws: AgentWorkspace) -> None:
    (ws.path / "one.txt").write_text("z" * 50_000 + "\nnext\n")
    out = read(ws, "one.txt").content
    assert len(out) <= 30_000
    assert out.endswith(
        "[line 1 is longer than 30000 characters and was cut; read with offset=2 to continue]"
    )


def test_a_multibyte_character_split_across_chunks_is_decoded(ws: AgentWorkspace) -> None:
    from agent.tools.read import CHUNK_BYTES

    text = "a" * (CHUNK_BYTES - 2) + "\N{GRINNING FACE}\n" + "b\n"
    (ws.path / "s.txt").write_text(text, encoding="utf-8")
    out = ReadTool(ws.root).execute({"path": "s.txt", "offset": 2}).content
    assert out == "     2\tb\n"


@pytest.mark.parametrize("data, offset", [(b"ok\xff", 2), (b"a\n" * 100 + b"\xc3(", 200)])
def test_invalid_utf8_in_the_range_is_an_error_result_naming_the_offset(
    ws: AgentWorkspace, data: bytes, offset: int
) -> None:
    (ws.path / "bin").write_bytes(data)
    assert read(ws, "bin") == ToolOutput(
        f"not valid UTF-8: 'bin' (invalid UTF-8 at byte offset {offset})", is_error=True
    )


def test_a_ranged_read_of_a_1_gib_file_decodes_only_the_range(ws: AgentWorkspace) -> None:
    big = ws.path / "huge.txt"
    with open(big, "wb") as f:
        f.write(b"".join(b"line %d\n" % i for i in range(1, 101)))
        f.truncate(1 << 30)  # then sparse NULs: one long last line
    tracemalloc.start()
    try:
        out = ReadTool(ws.root).execute({"path": "huge.txt", "offset": 10, "limit": 2})
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"peak traced memory for lines 10-11 of 1 GiB: {peak} bytes")
    assert out == ToolOutput(
        numbered(["line 10", "line 11"], 10)
        + "[lines 10-11 of at least 101 shown; read with offset=12 to continue]"
    )
    assert peak < 8 << 20  # a chunk or two, not the file
    # A file that ends within the counted stretch past the range gets its exact line count.
    (ws.path / "n.txt").write_text(NUMBERED)
    assert (
        ReadTool(ws.root)
        .execute({"path": "n.txt", "limit": 1})
        .content.endswith("[lines 1-1 of 100 shown; read with offset=2 to continue]")
    )


def test_a_long_read_stops_when_cancelled(ws: AgentWorkspace) -> None:
    with open(ws.path / "huge.bin", "wb") as f:
        f.truncate(1 << 30)
    cancel = threading.Event()
    cancel.set()
    out = ReadTool(ws.root).execute({"path": "huge.bin"}, cancel)
    assert out == ToolOutput("read of 'huge.bin' cancelled", is_error=True)


@pytest.mark.parametrize(
    "args, message",
    [
        ({"offset": 0}, "is less than the minimum of 1"),
        ({"limit": 0}, "is less than the minimum of 1"),
    ],
)
def test_bad_ranges_are_error_results(ws: AgentWorkspace, args: dict[str, object], message: str) -> None:
    out = ReadTool(ws.root).execute({"path": "hello.txt", **args})
    assert out.is_error and message in out.content
