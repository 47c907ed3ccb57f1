"""grep and glob: linear-time matching, output modes and paging, deadlines, cancels, other threads
going on during a search, the policy hook, and a walk that always says when it stopped."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import safefs
from safefs.workspace import search
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.search import (
    BINARY_SNIFF_BYTES,
    BLOCK_BYTES,
    READ_BATCH,
    compile_search,
    glob,
    grep,
    required_literal,
)
from safefs.workspace.walk import STOP_CANCELLED, STOP_ENTRIES, STOP_TIME, Walk


@pytest.fixture
def tree(tmp_path: Path) -> safefs.Root:
    files = {
        "src/a.py": "import os\ndef alpha():\n    return 'needle'\n\n\nx = 'Needle'\n",
        "src/b.js": "const needle = 1;\n",
        "docs/c.md": "no match here\n",
        "node_modules/lib/d.js": "needle in dependency\n",
        ".gitignore": "node_modules/\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return safefs.Root(str(tmp_path))


def finishes(work: object, seconds: float = 10.0) -> bool:
    """Runs ``work`` in a thread; whether it finished within ``seconds`` (a hang is a failure,
    not a stuck test run)."""
    done = threading.Event()

    def run() -> None:
        try:
            work()  # type: ignore[operator]
        except WorkspaceError:
            pass
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(seconds)


def test_output_modes(tree: safefs.Root) -> None:
    assert grep(tree, "needle", mode="files_with_matches").entries == ["src/a.py", "src/b.js"]
    assert grep(tree, "needle", mode="count", ignore_case=True).entries == ["src/a.py:2", "src/b.js:1"]
    assert grep(tree, "needle", mode="content").entries == [
        "src/a.py:3:    return 'needle'",
        "src/b.js:1:const needle = 1;",
    ]
    assert grep(tree, "needle", "src/a.py", mode="content", ignore_case=True, before=1, after=1).entries == [
        "src/a.py-2-def alpha():",
        "src/a.py:3:    return 'needle'",
        "src/a.py-4-",
        "src/a.py-5-",
        "src/a.py:6:x = 'Needle'",
    ]


def test_literal_type_glob_and_paging(tree: safefs.Root) -> None:
    assert grep(tree, "'needle'", literal=True, mode="files_with_matches").entries == ["src/a.py"]
    assert grep(tree, "(", literal=True, mode="count").entries == ["src/a.py:1"]
    assert grep(tree, "needle", file_type="js", mode="files_with_matches").entries == ["src/b.js"]
    assert grep(tree, "needle", file_glob="*.py", mode="files_with_matches").entries == ["src/a.py"]
    first = grep(tree, "e", mode="files_with_matches", head_limit=1)
    rest = grep(tree, "e", mode="files_with_matches", offset=1)
    assert first.entries_total == rest.entries_total == 4
    assert first.entries == [".gitignore"] and rest.entries == ["docs/c.md", "src/a.py", "src/b.js"]
    assert grep(tree, "needle", mode="content", ignore_case=True, offset=1, head_limit=1).entries == [
        "src/a.py:6:x = 'Needle'"
    ]


def test_ignored_files_are_not_searched_unless_named_or_asked(tree: safefs.Root) -> None:
    assert "node_modules/lib/d.js" not in grep(tree, "needle", mode="files_with_matches").entries
    assert grep(tree, "needle", "node_modules/lib", mode="files_with_matches").entries == [
        "node_modules/lib/d.js"
    ]
    assert "node_modules/lib/d.js" in grep(tree, "needle", mode="files_with_matches", ignore=False).entries


def test_hidden_paths_are_neither_searched_nor_counted(tree: safefs.Root) -> None:
    result = grep(tree, "needle", mode="content", hide=lambda e: e.real == "src/a.py")
    assert result.entries == ["src/b.js:1:const needle = 1;"]
    assert (result.files_searched, result.files_matched, result.lines_matched) == (3, 1, 1)
    assert glob(tree, "**/*.py", hide=lambda e: e.real == "src").matches == []


def test_a_backtracking_pattern_returns_at_once(tree: safefs.Root, tmp_path: Path) -> None:
    (tmp_path / "line.txt").write_text("word " * 40 + "!\n")
    assert finishes(lambda: grep(tree, r"(\w+\s?)+$", mode="content"))
    assert grep(tree, r"(\w+\s?)+$", "line.txt", mode="count").entries == []
    assert grep(tree, r"(x+x+)+y", "line.txt", mode="count").entries == []


@pytest.mark.parametrize(
    "pattern, construct",
    [
        ("(a)\\1", "back-references (\\1)"),
        ("(?=x)", "look-ahead"),
        ("(?<!x)", "negative look-behind"),
        ("a{2000}", "repetition"),
    ],
)
def test_an_unsupported_construct_is_named(tree: safefs.Root, pattern: str, construct: str) -> None:
    with pytest.raises(WorkspaceError) as caught:
        grep(tree, pattern)
    assert construct in str(caught.value) and "\n" not in str(caught.value)


def test_hostile_globs_match_in_linear_time(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["d"] * 30)
    deep.mkdir(parents=True)
    (deep / "f").write_text("")
    (tmp_path / ("a" * 100)).write_text("")
    with safefs.Root(str(tmp_path)) as root:
        assert finishes(lambda: glob(root, "/".join(["**"] * 10) + "/zz"))
        assert finishes(lambda: glob(root, "*a" * 8 + "b"))
        assert glob(root, "*a" * 8 + "b").matches == []
        assert [m.rel for m in glob(root, "*a" * 8).matches] == ["a" * 100]


def test_a_search_past_its_deadline_is_partial_and_says_so(tree: safefs.Root) -> None:
    result = grep(tree, "needle", seconds=0.0)
    assert result.stop == STOP_TIME and "partial" in result.note()


def test_a_walk_that_stops_says_so_even_when_nothing_matched(tmp_path: Path) -> None:
    (tmp_path / "aaa").mkdir()
    for i in range(50):
        (tmp_path / "aaa" / f"{i}.txt").write_text("")
    (tmp_path / "src.py").write_text("")
    with safefs.Root(str(tmp_path)) as root:
        walk = Walk(root, max_visited=10)
        assert len(list(walk)) == 10 and walk.stop == STOP_ENTRIES
        assert "stopped after 10 entries, 10 entries seen" in walk.note()


def test_a_cancel_reaches_a_running_search_within_half_a_second(tmp_path: Path) -> None:
    with open(tmp_path / "big.txt", "wb") as f:
        f.write((b"x" * 200 + b"\n") * 150_000)  # 30 MB, under the grep size cap
    for i in range(200):
        (tmp_path / f"f{i}.txt").write_bytes((b"y" * 200 + b"\n") * 5000)
    cancel = threading.Event()
    outcome: dict[str, object] = {}
    with safefs.Root(str(tmp_path)) as root:

        def search() -> None:
            outcome["result"] = grep(root, r"[a-w]+\d{3}", cancel=cancel)
            outcome["returned"] = time.monotonic()

        worker = threading.Thread(target=search)
        worker.start()
        time.sleep(0.2)
        assert worker.is_alive(), "the search finished before it could be cancelled"
        cancel.set()
        asked = time.monotonic()
        worker.join(timeout=5)
    latency = float(outcome["returned"]) - asked  # type: ignore[arg-type]
    print(f"cancel reached the search after {latency * 1000:.1f} ms")
    assert outcome["result"].stop == STOP_CANCELLED  # type: ignore[attr-defined]
    assert latency < 0.5


def test_other_threads_go_on_while_a_search_runs(tmp_path: Path) -> None:
    for i in range(300):
        (tmp_path / f"f{i}.txt").write_bytes((b"z" * 100 + b"\n") * 10_000)
    with safefs.Root(str(tmp_path)) as root:
        worker = threading.Thread(target=lambda: grep(root, r"(\w+\s?)+\d$", seconds=20))
        worker.start()
        done = 0
        while worker.is_alive() and done < 200:
            root.stat("f0.txt")  # a second, trivial call
            done += 1
            time.sleep(0.001)
        alive = worker.is_alive()
        worker.join(timeout=30)
    print(f"trivial calls completed while the search ran: {done}")
    assert alive and done == 200


def count_listings(root: safefs.Root) -> list[str]:
    """The directories ``root.scandir`` lists from now on, in a list that grows as it does."""
    listed: list[str] = []
    real_scandir = root.scandir

    def counting_scandir(path: str = ".") -> object:
        listed.append(path)
        return real_scandir(path)

    root.scandir = counting_scandir  # type: ignore[method-assign, assignment]
    return listed


def test_an_ignored_tree_is_never_entered(tmp_path: Path) -> None:
    for i in range(200):
        (tmp_path / "node_modules" / f"dep{i}" / "lib").mkdir(parents=True)
        (tmp_path / "node_modules" / f"dep{i}" / "lib" / "x.py").write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / ".gitignore").write_text("node_modules/\n")
    with safefs.Root(str(tmp_path)) as root:
        listed = count_listings(root)
        assert [m.rel for m in glob(root, "**/*.py").matches] == ["src/app.py"]
        assert sorted(listed) == [".", "src"]  # the 400 directories below node_modules: none
        listed.clear()
        assert len(glob(root, "**/*.py", ignore=False).matches) == 201
        print(f"directories listed: ignoring 2, not ignoring {len(listed)}")


@pytest.mark.slow  # a tree of 100,000 files
@pytest.mark.skipif(shutil.which("git") is None, reason="compares with git ls-files")
def test_glob_beside_an_ignored_node_modules_of_100k_files(tmp_path: Path) -> None:
    """A repository with a real-sized ignored ``node_modules/`` (100,000 files): glob gives what
    git lists, and lists exactly the directories it lists without that tree (its cost, counted
    in directory listings rather than timed, does not grow with the ignored tree)."""
    repo = tmp_path / "repo"
    for name in ("src/app.py", "src/lib/util.py", "tests/test_app.py", "README.md", "setup.py"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x = 1\n")
    (repo / ".gitignore").write_text("node_modules/\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)

    def listings() -> tuple[list[str], list[str]]:
        with safefs.Root(str(repo)) as root:
            listed = count_listings(root)
            return [m.rel for m in glob(root, "**/*.py").matches], sorted(listed)

    without, listed_without = listings()
    for i in range(1000):  # 1,000 packages of 100 files, .py among them
        package = repo / "node_modules" / f"pkg{i:04}"
        package.mkdir(parents=True)
        for j in range(100):
            os.close(
                os.open(package / f"m{j:02}.{'py' if j % 10 == 0 else 'js'}", os.O_CREAT | os.O_WRONLY, 0o644)
            )
    try:
        found, listed_with = listings()
        listed_files = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "-co", "--exclude-standard", "--", "*.py"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        print(f"glob: {len(found)} paths, git: {len(listed_files)}; directories listed: {len(listed_with)}")
        assert sorted(found) == sorted(listed_files) == sorted(without)
        assert listed_with == listed_without
    finally:
        shutil.rmtree(repo / "node_modules")


@pytest.mark.parametrize("size", [100, BLOCK_BYTES - 1, BLOCK_BYTES, BLOCK_BYTES + 1, 3 * BLOCK_BYTES + 7])
def test_a_file_read_whole_or_streamed_gives_the_same_answer(tmp_path: Path, size: int) -> None:
    # Lines of varied length, a match on the first line, near every block edge and on the last
    # line, which has no newline: files up to a block are read whole, longer ones streamed.
    lines: list[bytes] = [b"hit first"]
    total = len(lines[0]) + 1
    n = 0
    while total < size:
        n += 1
        line = (b"hit %d" % n if n % 97 == 0 else b"x" * (n % 150)) + b"\n"
        lines.append(line.rstrip(b"\n"))
        total += len(line)
    tail = b"\nhit last"
    data = b"\n".join(lines)[: size - len(tail)] + tail
    assert len(data) == size
    (tmp_path / "f.txt").write_bytes(data)
    expected = [f"f.txt:{i}:{t.decode()}" for i, t in enumerate(data.split(b"\n"), 1) if b"hit" in t]
    with safefs.Root(str(tmp_path)) as root:
        assert grep(root, "hit", mode="content").entries == expected
        assert grep(root, "hit", mode="count").entries == [f"f.txt:{len(expected)}"]
        assert grep(root, "hit", mode="files_with_matches").entries == ["f.txt"]
        assert grep(root, "absent", mode="files_with_matches").entries == []
        context = grep(root, "hit last", mode="content", before=1).entries
        last = data.count(b"\n") + 1
        assert context[-1] == expected[-1] and context[0].startswith(f"f.txt-{last - 1}-")


def test_binary_and_large_files_are_skipped_and_counted_whatever_their_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "small.bin").write_bytes(b"needle\0" + b"x" * 100)
    (tmp_path / "long.bin").write_bytes(b"needle\0" + b"x" * BLOCK_BYTES)
    late = b"x" * (BINARY_SNIFF_BYTES + 10) + b"\0needle\n"  # a NUL past the sniffed start
    (tmp_path / "late.txt").write_bytes(late)
    (tmp_path / "huge.txt").write_bytes(b"needle\n" * (BLOCK_BYTES // 3))
    monkeypatch.setattr("safefs.workspace.search.MAX_GREP_FILE_BYTES", BLOCK_BYTES * 2)
    with safefs.Root(str(tmp_path)) as root:
        result = grep(root, "needle", mode="files_with_matches")
    assert result.entries == ["late.txt"]
    assert (result.binary_skipped, result.large_skipped, result.files_searched) == (2, 1, 1)


@settings(max_examples=500, deadline=None)
@given(
    start=st.text(alphabet="abé", min_size=1, max_size=3),
    then=st.sampled_from(["", "?", "*", "+", "{0,2}", "{2}", "|", ".", "(", "[b]", "\\d", "$"]),
    rest=st.text(alphabet="ab.|?*+()[]\\1^$é", max_size=5),
    text=st.text(alphabet="abé1\n", max_size=20),
    literal=st.booleans(),
)
def test_the_bytes_every_match_holds_are_in_every_match(
    start: str, then: str, rest: str, text: str, literal: bool
) -> None:
    pattern = start + then + rest
    try:
        regex = compile_search(pattern, literal=literal)
    except WorkspaceError:
        return  # refused by RE2: nothing to search with
    needle = required_literal(pattern, literal=literal)
    data = text.encode()
    if regex.search(data) is not None:
        assert needle is None or needle in data, (pattern, needle)


def test_the_literal_start_of_a_pattern() -> None:
    assert required_literal(r"needle_\d+") == b"needle_"
    assert required_literal("ab?") == required_literal("ab*c") == required_literal("ab{0,2}") == b"a"
    assert required_literal("ab+") == b"ab"
    assert required_literal("a|b") is None and required_literal("^foo") is None
    assert required_literal("foo", ignore_case=True) is None
    assert required_literal("a.b", literal=True) == b"a.b"


def _mixed_tree(base: Path) -> None:
    """More files than one read-ahead batch: matches, binaries, files over a block, links, a
    FIFO, a hidden directory, in several directories."""
    for d in range(4):
        directory = base / f"dir{d}"
        directory.mkdir()
        for i in range(READ_BATCH):
            n = d * READ_BATCH + i
            body = f"line one\nneedle {n}\nline three\n" if n % 7 == 0 else "nothing here\n" * 3
            if n % 31 == 0:
                body = "needle\0binary\n"
            (directory / f"f{i:03}.txt").write_text(body)
        (directory / "big.txt").write_bytes(b"filler\n" * (BLOCK_BYTES // 7) + b"needle at the end\n")
        os.symlink(f"f{0:03}.txt", directory / "link.txt")
        os.mkfifo(directory / "fifo.txt")
    (base / "secret").mkdir()
    for i in range(READ_BATCH + 5):
        (base / "secret" / f"s{i}.txt").write_text("needle, hidden\n")


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
def test_reading_ahead_in_batches_changes_nothing_but_the_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    _mixed_tree(tmp_path)
    hidden = lambda e: e.real == "secret"  # noqa: E731
    batches: list[list[str]] = []
    with safefs.Root(str(tmp_path)) as root:
        real_read_heads = root.read_heads

        def recording(paths: list[str], size: int) -> list[bytes | OSError]:
            batches.append(list(paths))
            assert len(paths) <= READ_BATCH and size == BLOCK_BYTES + 1
            return real_read_heads(paths, size)

        monkeypatch.setattr(root, "read_heads", recording)
        batched = grep(
            root, r"needle \d+|needle at", mode=mode, hide=hidden, after=1 if mode == "content" else 0
        )
        monkeypatch.setattr(search, "_read_ahead", _one_file_at_a_time)
        each = grep(
            root, r"needle \d+|needle at", mode=mode, hide=hidden, after=1 if mode == "content" else 0
        )
    assert len(batches) > 4, "the files were not read in batches"
    read = [p for batch in batches for p in batch]
    assert not [p for p in read if p.startswith("secret")], "a hidden file was read"
    assert len(read) == len(set(read))
    assert batched == each
    # Links and the FIFOs are listed by the walk but never read, as before.
    assert batched.binary_skipped == len(range(0, 4 * READ_BATCH, 31)) and batched.unreadable == 0
    assert batched.files_searched == 4 * READ_BATCH + 4 - batched.binary_skipped
    assert batched.files_matched > 4 * READ_BATCH // 7


def _one_file_at_a_time(
    root: safefs.Root, paths: Iterable[str], size: int
) -> Iterator[tuple[str, bytes | OSError]]:
    for path in paths:
        try:
            yield path, root.read_head(path, size)
        except OSError as exc:
            yield path, exc


def test_a_search_stopped_while_reading_ahead_leaves_no_thread(tmp_path: Path) -> None:
    _mixed_tree(tmp_path)
    before = threading.active_count()
    with safefs.Root(str(tmp_path)) as root:
        cancel = threading.Event()
        cancel.set()
        assert grep(root, "needle", cancel=cancel).stop == STOP_CANCELLED
        stopped = grep(root, "needle", seconds=0.0)
        assert stopped.stop == STOP_TIME
        full = grep(root, "needle", mode="count", max_results=1000)
        assert full.stop is None and full.files_matched > 0
    assert threading.active_count() == before


@pytest.mark.parametrize("whole", [True, False], ids=["read whole", "streamed"])
def test_a_pattern_matching_empty_text_matches_no_line_after_the_last_newline(
    tmp_path: Path, whole: bool
) -> None:
    lines = 40 if whole else 40_000  # 40,000 lines of 10 bytes: two blocks and more
    (tmp_path / "f.txt").write_text("".join(f"line {i:04}\n"[-10:] for i in range(lines)))
    root = safefs.Root(str(tmp_path))
    assert grep(root, "^$", mode="files_with_matches").entries == []  # no blank line
    for pattern in (".*", "^", "x*", "$"):
        assert grep(root, pattern, mode="count").entries == [f"f.txt:{lines}"], pattern
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "f.txt").write_text("a\n" * (lines // 2) + "\n" + "a\n" * (lines // 2))
    assert grep(root, "^$", mode="content").entries == [f"f.txt:{lines // 2 + 1}:"]


@pytest.mark.parametrize("pattern", [r"\Aline", "(?-m)^line", r"\d\z", r"(?-m)\d$"])
def test_a_pattern_on_the_edges_of_its_text_takes_each_line_as_its_text(tmp_path: Path, pattern: str) -> None:
    # As in ripgrep: \A and \z (and ^, $ without m) match at the start and end of every line,
    # not where a block of the file starts.
    (tmp_path / "f.txt").write_text("".join(f"line {i:04}\n" for i in range(40_000)) + "x line\n")
    root = safefs.Root(str(tmp_path))
    assert grep(root, pattern, mode="count").entries == ["f.txt:40000"]


def test_a_utf8_byte_order_mark_is_not_part_of_line_1(tmp_path: Path) -> None:
    (tmp_path / "a.cs").write_bytes(b"\xef\xbb\xbfusing System;\r\nclass A {}\r\n")
    (tmp_path / "big.cs").write_bytes(b"\xef\xbb\xbfusing System;\n" + b"// padding\n" * 30_000)
    root = safefs.Root(str(tmp_path))
    assert grep(root, "^using", mode="content").entries == ["a.cs:1:using System;", "big.cs:1:using System;"]
