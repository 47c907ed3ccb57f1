"""The system calls of the native read, as strace sees them in a child process.

A whole ``read_bytes`` is one C call; these tests pin down what that call asks of the kernel: with
openat2, a single name is one openat2 that follows no link (a link there goes to the scoped openat2
after all; a longer path, or ``..``, only ever to the scoped one), then the ``fstat``, the read and
the close; the walk closes the directories it held each exactly once,
one ``close_range`` per run of consecutive fd numbers. Skipped where strace (or ptrace) is not
available.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from safefs import _fastpath, _sys

pytestmark = [
    pytest.mark.skipif(not _fastpath.AVAILABLE, reason="native extension not built"),
    pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="strace is Linux's"),
]

TRACED = "openat,openat2,newfstatat,fstat,statx,read,close,close_range,write"
MARK = "safefs-syscall-mark"
# strace -o lines: name(args) = result [ERRNO (text)]
LINE = re.compile(r"^(?P<name>\w+)\((?P<args>.*)\)\s+=\s+(?P<ret>-?\d+)(?: (?P<err>E\w+))?")

CHILD = """
import os, sys, safefs
root = safefs.Root(sys.argv[1], resolver=sys.argv[2], symlinks=sys.argv[3])
rel = sys.argv[4]
mark = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
def read():
    try:
        return root.read_bytes(rel)
    except OSError as exc:
        return exc.errno
first = read()  # imports and the per-thread buffer are done before the marks
{setup}
os.write(mark, b"{mark}")
again = read()
os.write(mark, b"{mark}")
{teardown}
assert again == first, (first, again)
print(repr(again))
"""


Call = tuple[str, str, int, "str | None"]  # name, arguments, result, errno name


def traced_read(
    tmp_path: Path,
    root: Path,
    rel: str,
    resolver: str,
    symlinks: str = "beneath",
    setup: str = "",
    teardown: str = "",
) -> tuple[list[Call], str]:
    """The traced system calls of one ``read_bytes(rel)`` (between the marks), and what it
    returned (repr of the bytes, or the errno)."""
    code = CHILD.format(mark=MARK, setup=setup, teardown=teardown)
    return traced(tmp_path, code, str(root), resolver, symlinks, rel)


def traced(tmp_path: Path, code: str, *args: str) -> tuple[list[Call], str]:
    """The traced system calls of ``python -c code args...`` between its two marks, and what it
    printed."""
    out = tmp_path / "strace.out"
    strace = ["strace", "-qq", "-e", f"trace={TRACED}", "-o", str(out)]
    proc = subprocess.run(
        [*strace, sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0 and "ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    calls: list[Call] = []
    inside = False
    for line in out.read_text().splitlines():
        if MARK in line:
            if inside:
                break
            inside = True
            continue
        m = LINE.match(line)
        if inside and m:
            calls.append((m["name"], m["args"], int(m["ret"]), m["err"]))
    return calls, proc.stdout.strip()


def names(calls: list[Call]) -> list[str]:
    stat_calls = {"newfstatat", "fstat", "statx"}
    return ["fstat" if name in stat_calls else name for name, *_ in calls]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    (root / "f").write_bytes(b"x" * 4096)
    (root / "d" / "g").write_bytes(b"g")
    os.symlink("f", root / "link")
    (root / "..f").write_bytes(b"dots")
    os.symlink("d/g", root / "deep-link")
    os.symlink("d", root / "dir-link")
    return root


needs_openat2 = pytest.mark.skipif(not _sys.HAVE_NATIVE, reason="openat2 needs Linux")


SCOPED = {"beneath": "RESOLVE_BENEATH", "none": "RESOLVE_BENEATH", "in_root": "RESOLVE_IN_ROOT"}


def resolve_flags(call: Call) -> set[str]:
    m = re.search(r"resolve=([A-Z_|]+)", call[1])
    assert m, call
    return set(m[1].split("|"))


@needs_openat2
@pytest.mark.parametrize("symlinks", ["beneath", "none", "in_root"])
@pytest.mark.parametrize(("rel", "content"), [("f", b"x" * 4096), ("..f", b"dots")])
def test_a_single_name_is_one_openat2_following_no_link(
    tmp_path: Path, tree: Path, symlinks: str, rel: str, content: bytes
) -> None:
    """A single name, no link: one openat2 that follows no link (so it cannot leave the root)
    and is not scoped, then the fstat, the read and the close."""
    calls, got = traced_read(tmp_path, tree, rel, "openat2", symlinks)
    assert names(calls) == ["openat2", "fstat", "read", "close"], calls
    assert resolve_flags(calls[0]) == {"RESOLVE_NO_SYMLINKS", "RESOLVE_NO_MAGICLINKS"}
    assert "O_CLOEXEC" in calls[0][1]
    fd = calls[0][2]
    assert calls[2][1].startswith(f"{fd}, ") and calls[3][1] == str(fd)
    assert got == repr(content)


@needs_openat2
@pytest.mark.parametrize("symlinks", ["beneath", "none", "in_root"])
@pytest.mark.parametrize("rel", ["d/g", "./f", "f/", "d/../f", "../ws/f", "d/..", "..", ".", "d/g/../../f"])
def test_any_other_path_is_only_ever_resolved_scoped(
    tmp_path: Path, tree: Path, symlinks: str, rel: str
) -> None:
    """Two names or more, ``.`` or ``..`` anywhere: the first and only open is the scoped
    openat2 of the mode, never the one that follows no link (which ``..`` would lead out of the
    root, and which a directory moved out of the root meanwhile would take along)."""
    calls, _ = traced_read(tmp_path, tree, rel, "openat2", symlinks)
    opens = [c for c in calls if c[0] in ("openat", "openat2")]
    assert len(opens) == 1, calls
    assert opens[0][0] == "openat2" and SCOPED[symlinks] in resolve_flags(opens[0]), calls


@needs_openat2
@pytest.mark.parametrize(
    ("symlinks", "rel", "expected"),
    [
        ("beneath", "link", repr(b"x" * 4096)),
        ("in_root", "link", repr(b"x" * 4096)),
        ("beneath", "deep-link", repr(b"g")),
        ("beneath", "dir-link", "21"),  # EISDIR, after the scoped openat2
        ("none", "link", "40"),  # ELOOP: RESOLVE_NO_SYMLINKS
    ],
)
def test_a_single_link_name_goes_to_the_scoped_openat2(
    tmp_path: Path, tree: Path, symlinks: str, rel: str, expected: str
) -> None:
    """The openat2 that follows no link meets the link (ELOOP); the scoped openat2 then
    resolves the name as the mode says, so ``symlinks=`` means what it always meant."""
    calls, got = traced_read(tmp_path, tree, rel, "openat2", symlinks)
    assert calls[0][0] == "openat2" and calls[0][3] == "ELOOP", calls
    assert "RESOLVE_NO_SYMLINKS" in resolve_flags(calls[0]), calls
    assert calls[1][0] == "openat2" and SCOPED[symlinks] in resolve_flags(calls[1]), calls
    assert got == expected
    if expected.startswith("b"):
        assert names(calls)[2:] == ["fstat", "read", "close"], calls


def test_the_walk_closes_each_held_fd_once_one_close_range_per_run(tmp_path: Path) -> None:
    """Another fd sits between the walk's fds (a hole below it is taken first): the walk's
    directory fds are two runs of consecutive numbers. Each is closed exactly once, the other fd
    never, and each run with one call where the kernel has close_range."""
    root = tmp_path / "ws"
    rel = "/".join(f"b{i}" for i in range(1, 9)) + "/f"
    (root / rel).parent.mkdir(parents=True)
    (root / rel).write_bytes(b"deep")
    # Three fds in a row; the middle one closed: the walk's first fd takes the hole, the rest
    # come after the third, which is not the walk's and must stay open.
    setup = (
        "a, b, c = (os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC) for _ in range(3))\n"
        "assert (b, c) == (a + 1, a + 2)\n"
        "os.close(b)\n"
    )
    teardown = "os.fstat(c)\nprint(b, c)\n"
    calls, got = traced_read(tmp_path, root, rel, "walk", setup=setup, teardown=teardown)
    fds, result = got.splitlines()
    assert result == repr(b"deep")
    hole, other = map(int, fds.split())
    opened = [ret for name, _, ret, err in calls if name == "openat" and ret >= 0]
    assert len(opened) == 9  # eight directories and the file
    dirs, file_fd = opened[:-1], opened[-1]
    assert dirs[0] == hole and other not in opened
    closed: list[int] = []
    closers = []
    for name, args, ret, _ in calls:
        if name == "close":
            closed.append(int(args))
        elif name == "close_range" and ret == 0:
            low, high = (int(x) for x in args.split(", ")[:2])
            closed.extend(range(low, high + 1))
        else:
            continue
        closers.append(name)
    assert sorted(closed) == sorted(opened), calls  # each exactly once, and only the walk's
    assert closed[-1] == file_fd
    if kernel_at_least(5, 9):  # close_range: one call per run ([hole], [other + 1 ...]), the file
        assert closers == ["close", "close_range", "close"], calls


def kernel_at_least(*version: int) -> bool:
    release = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return release is not None and tuple(map(int, release.groups())) >= version


HEADS_CHILD = """
import os, sys, safefs
root = safefs.Root(sys.argv[1], resolver=sys.argv[2], symlinks=sys.argv[3])
rels = sys.argv[4:]
mark = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
def read():
    return [r.errno if isinstance(r, OSError) else r for r in root.read_heads(rels, 100)]
first = read()
os.write(mark, b"{mark}")
again = read()
os.write(mark, b"{mark}")
assert again == first, (first, again)
print(repr(again))
"""


@pytest.mark.parametrize("resolver", ["openat2", "walk"])
def test_a_batch_of_read_heads_opens_each_file_by_the_resolver_and_closes_it_once(
    tmp_path: Path, tree: Path, resolver: str
) -> None:
    """One read_heads batch: every open is the resolver's (openat2 only, with its resolve flags;
    the walk's openat), close-on-exec, and every fd opened is closed exactly once, also for a
    file longer than the head asked for and for the paths that fail."""
    if resolver == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("openat2 needs Linux")
    rels = ["f", "d/g", "link", "missing", "d", "../ws/f", "dir-link", "deep-link", "f"]
    calls, printed = traced(tmp_path, HEADS_CHILD.format(mark=MARK), str(tree), resolver, "beneath", *rels)
    expected = [b"x" * 100, b"g", b"x" * 100, 2, 21, 18, 21, b"g", b"x" * 100]
    assert printed == repr(expected)
    opened: list[int] = []
    closed: list[int] = []
    for name, args, ret, _err in calls:
        if name in ("openat", "openat2"):
            assert name == ("openat2" if resolver == "openat2" else "openat"), calls
            assert "O_CLOEXEC" in args, args
            if resolver == "openat2":
                assert resolve_flags((name, args, ret, _err)) & {"RESOLVE_BENEATH", "RESOLVE_NO_SYMLINKS"}
            if ret >= 0:
                opened.append(ret)
        elif name == "close":
            closed.append(int(args))
        elif name == "close_range":
            low, high = (int(x) for x in args.split(", ")[:2])
            closed.extend(range(low, high + 1))
    assert sorted(opened) == sorted(closed), calls
    assert len([c for c in calls if c[0] == "read"]) >= 5  # the five files read


FLOOR_CHILD = """
import os, sys, safefs
sys.path.insert(0, sys.argv[4])
from benchmarks import floor
root = safefs.Root(sys.argv[1], resolver=sys.argv[2])
rel = sys.argv[3]
make = floor.walk_reader if sys.argv[2] == "walk" else floor.openat2_reader
floor_read = make(root.fileno(), rel, 65536)
mark = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
assert len(root.read_bytes(rel)) == floor_read() == 4096  # imports and buffers, untraced
os.write(mark, b"{mark}")
{first}
os.write(mark, b"{mark}")
"""


@pytest.mark.parametrize("resolver", ["walk", "openat2"])
def test_the_benchmarks_floor_makes_exactly_the_reads_system_calls(tmp_path: Path, resolver: str) -> None:
    """benchmarks/floor.c is a fair floor: the same calls, with the same flags, as read_bytes at
    depth 16 (fd numbers aside), nothing more and nothing less."""
    if resolver == "openat2" and not _sys.HAVE_NATIVE:
        pytest.skip("openat2 needs the extension")
    root = tmp_path / "ws"
    rel = "/".join([*(f"b{i}" for i in range(1, 16)), "f"])
    (root / rel).parent.mkdir(parents=True)
    (root / rel).write_bytes(b"f" * 4096)
    repo = str(Path(__file__).resolve().parents[2])

    def shape(calls: list[Call]) -> list[tuple[str, str]]:
        return [(name, re.sub(r"\b\d+\b", "N", args.split(", ", 1)[-1])) for name, args, *_ in calls]

    seen = []
    for first in ("root.read_bytes(rel)", "floor_read()"):
        code = FLOOR_CHILD.format(mark=MARK, first=first)
        calls, _out = traced(tmp_path, code, str(root), resolver, rel, repo)
        seen.append(shape(calls))
    assert seen[0] == seen[1], seen
    assert [name for name, _ in seen[0]].count("openat" if resolver == "walk" else "openat2") == (
        16 if resolver == "walk" else 1
    )


SCAN_CHILD = """
import os, sys, safefs
root = safefs.Root(sys.argv[1], resolver=sys.argv[2])
root.scandir("many", lstat=True)  # imports done before the marks
mark = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
os.write(mark, b"{mark}")
entries = list(root.scandir("many", lstat=True))
sizes = sorted(e.stat(follow_symlinks=False).st_size for e in entries if not e.is_symlink())
sizes += sorted(e.stat().st_size for e in entries if not e.is_symlink())
os.write(mark, b"{mark}")
print(len(entries), sorted(sizes) == sorted(2 * list(range(8))))
"""


@pytest.mark.parametrize("resolver", ["walk", pytest.param("openat2", marks=needs_openat2)])
def test_scandir_with_lstat_is_one_fstatat_per_entry_that_follows_nothing(
    tmp_path: Path, resolver: str
) -> None:
    """A listing with sizes costs what os.scandir and DirEntry.stat() cost: one fstatat per
    entry on the held directory fd, by name, never following (a link included); asking the
    entries for their lstat afterwards, or for the stat of a non-link, costs nothing more."""
    root = tmp_path / "ws"
    (root / "many").mkdir(parents=True)
    for i in range(8):
        (root / "many" / f"f{i}").write_bytes(b"x" * i)
    os.symlink("f1", root / "many" / "link")
    calls, printed = traced(tmp_path, SCAN_CHILD.format(mark=MARK), str(root), resolver)
    assert printed == "9 True"
    by_name = [c for c in calls if c[0] == "newfstatat" and c[1].split(", ")[1] != '""']
    assert len(by_name) == 9, calls
    assert all("AT_SYMLINK_NOFOLLOW" in args for _, args, _, _ in by_name), by_name
