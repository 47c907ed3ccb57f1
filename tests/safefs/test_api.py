"""API behaviour of ``safefs.Root`` beyond confinement: what each call does, and how it fails.

Every test runs for each backend and ``symlinks=`` mode through the ``open_root`` fixture.
"""

from __future__ import annotations

import copy
import errno
import gc
import io
import os
import pickle
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import safefs
from safefs import _atomic, _sys
from tests.safefs.conftest import Flavour, Workspace

OpenRoot = Callable[..., safefs.Root]


@contextmanager
def no_hang(seconds: int = 5, what: str = "call") -> Iterator[None]:
    """Turn a blocking call into a test failure instead of a stuck run."""

    def alarm(signum: int, frame: Any) -> None:
        raise AssertionError(f"{what} blocked for {seconds}s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def leftovers(directory: Path) -> list[str]:
    return [n for n in os.listdir(directory) if n.endswith(_atomic.TEMP_SUFFIX.decode())]


# -- open ----------------------------------------------------------------------------------------


def test_open_modes(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["f"])
    host = workspace.root_path
    with root.open("f") as f:
        assert isinstance(f, io.TextIOWrapper)
        assert f.read() == "content of f\n"
    with root.open("f", "rb") as fb:
        assert isinstance(fb, io.BufferedReader)
        assert fb.read() == b"content of f\n"
    with root.open("f", "a") as f:
        f.write("appended\n")
    assert (host / "f").read_text() == "content of f\nappended\n"
    with root.open("f", "r+") as f:
        assert f.read(7) == "content"
        f.seek(0)
        f.write("CONTENT")
    assert (host / "f").read_text() == "CONTENT of f\nappended\n"
    with root.open("f", "w") as f:  # truncates
        f.write("short")
    assert (host / "f").read_text() == "short"
    with root.open("new", "xb") as fb2:
        fb2.write(b"\x00\xff")
    assert (host / "new").read_bytes() == b"\x00\xff"
    with pytest.raises(FileExistsError):
        root.open("new", "x")
    with root.open("g", "w+", encoding="latin-1") as f:
        f.write("\xe9")
        f.seek(0)
        assert f.read() == "\xe9"
    assert (host / "g").read_bytes() == b"\xe9"


@pytest.mark.parametrize("mode", ["", "rw", "rr", "q", "rbt", "b", "+"])
def test_open_refuses_bad_modes(open_root: OpenRoot, mode: str) -> None:
    root = open_root(["f"])
    with pytest.raises(ValueError, match="invalid mode"):
        root.open("f", mode)


def test_open_a_directory_is_isadirectoryerror(open_root: OpenRoot) -> None:
    root = open_root(["d/"])
    for mode in ("r", "rb", "a"):
        with pytest.raises(IsADirectoryError):
            root.open("d", mode)


def test_chmod(open_root: OpenRoot, workspace: Workspace, flavour: Flavour) -> None:
    root = open_root(["f", "d/", "lf => f"])
    host = workspace.root_path
    root.chmod("f", 0o600)
    root.chmod("d", 0o700)
    assert stat.S_IMODE((host / "f").stat().st_mode) == 0o600
    assert stat.S_IMODE((host / "d").stat().st_mode) == 0o700
    root.chmod("f", 0o640, follow_symlinks=False)  # not a link: changed as usual
    assert stat.S_IMODE((host / "f").stat().st_mode) == 0o640
    # A symlink's own mode cannot be changed on Linux: refused the same way by every backend,
    # and the target is left alone.
    with pytest.raises(OSError) as info:
        root.chmod("lf", 0o777, follow_symlinks=False)
    assert info.value.errno == errno.EOPNOTSUPP
    assert stat.S_IMODE((host / "f").stat().st_mode) == 0o640
    if flavour.symlinks != "none":
        root.chmod("lf", 0o604)
        assert stat.S_IMODE((host / "f").stat().st_mode) == 0o604


def test_read_head_is_bounded_by_its_size(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["d/"])
    (workspace.root_path / "big").write_bytes(b"0123456789" * 100_000)
    (workspace.root_path / "empty").write_bytes(b"")
    assert root.read_head("big", 5) == b"01234"
    assert root.read_head("big", 0) == b""
    assert root.read_head("big", 2 << 20) == b"0123456789" * 100_000  # shorter: the whole file
    assert root.read_head("empty", 10) == b""
    with pytest.raises(IsADirectoryError):
        root.read_head("d", 10)
    with pytest.raises(ValueError, match="negative"):
        root.read_head("big", -1)
    with pytest.raises(FileNotFoundError) as info:
        root.read_head("missing", 10)
    assert info.value.filename == "missing"
    # Around the native scratch buffer (64 KiB): read there whole, or handed back to be read on.
    for length in (0, 1, 65535, 65536, 65537, 200_000):
        data = bytes(range(256)) * (length // 256) + b"x" * (length % 256)
        (workspace.root_path / "sized").write_bytes(data)
        for size in (0, 1, 65535, 65536, 65537, 1 << 20):
            assert root.read_head("sized", size) == data[:size], (length, size)


def _outcome(root: safefs.Root, path: Any, size: int) -> object:
    """What read_head gave: its bytes, or its error's type, errno and filename."""
    try:
        return root.read_head(path, size)
    except OSError as exc:
        return (type(exc), exc.errno, exc.filename)


def _as_outcome(got: bytes | OSError) -> object:
    return (type(got), got.errno, got.filename) if isinstance(got, OSError) else got


def test_read_heads_is_read_head_of_each(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(
        [
            "d/sub/",
            "d/f",
            "f",
            "lf => f",
            "d/up => ../f",
            "dl => d",
            "loop => loop",
            "esc => ../outside/secret",
            "abs => $ROOT/f",
            "dang => nowhere",
        ]
    )
    host = workspace.root_path
    os.mkfifo(host / "fifo")
    (host / "outside-sibling").write_bytes(b"")
    sizes = {"empty": 0, "one": 1, "block": 65536, "big": 300_000, "huge": 1_500_000}
    for name, length in sizes.items():
        (host / name).write_bytes(bytes(range(256)) * (length // 256) + b"x" * (length % 256))
    paths: list[Any] = [
        "f", "lf", "d/up", "dl/f", "d/f", "d", ".", "d/sub/", "fifo", "missing", "d/missing",
        "f/x", "loop", "esc", "abs", "dang", "../outside/secret", "d/../../x", "/etc/passwd",
        str(host / "f"), b"d/f", Path("f"), "", *sizes,
    ]  # fmt: skip
    paths += paths  # more than one C call's buffer (1 MiB) of the large files
    with no_hang():
        for size in (0, 1, 100, 65536, 65537, 1 << 20, 2 << 20):
            batch = root.read_heads(paths, size)
            assert len(batch) == len(paths)
            for path, got in zip(paths, batch, strict=True):
                assert _as_outcome(got) == _outcome(root, path, size), (path, size)
    assert root.read_heads([], 10) == []
    assert root.read_heads(iter(["f", "d/f"]), 100) == [b"content of f\n", b"content of d/f\n"]
    with pytest.raises(ValueError, match="negative"):
        root.read_heads(["f"], -1)
    with pytest.raises(ValueError, match="null byte"):
        root.read_heads(["f", "d/\0"], 10)


def test_read_and_write_text(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root()
    assert root.write_text("t", "h\xe9llo\n", encoding="latin-1") == 6
    assert (workspace.root_path / "t").read_bytes() == b"h\xe9llo\n"
    assert root.read_text("t", encoding="latin-1") == "h\xe9llo\n"
    with pytest.raises(UnicodeDecodeError):
        root.read_text("t")
    assert root.read_text("t", errors="replace") == "h\ufffdllo\n"


# -- atomic writes -------------------------------------------------------------------------------


def test_write_keeps_permission_bits(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["f"])
    (workspace.root_path / "f").chmod(0o640)
    root.write_bytes("f", b"new")
    st = (workspace.root_path / "f").stat()
    assert stat.S_IMODE(st.st_mode) == 0o640
    # A new file gets the usual 0o666 narrowed by the umask.
    umask = os.umask(0o022)
    os.umask(umask)
    root.write_bytes("g", b"new")
    assert stat.S_IMODE((workspace.root_path / "g").stat().st_mode) == 0o666 & ~umask


def test_write_replaces_a_hard_linked_target(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["f"])
    host = workspace.root_path
    os.link(host / "f", host / "other-name")
    old_inode = (host / "f").stat().st_ino
    root.write_bytes("f", b"replaced")
    assert (host / "f").read_bytes() == b"replaced"
    assert (host / "f").stat().st_ino != old_inode
    assert (host / "other-name").read_bytes() == b"content of f\n"  # the shared inode untouched


def test_write_through_an_inside_symlink_lands_at_the_target(
    open_root: OpenRoot, workspace: Workspace, flavour: Flavour
) -> None:
    root = open_root(["d/target", "link => d/target"])
    host = workspace.root_path
    if flavour.symlinks == "none":
        with pytest.raises(OSError) as info:
            root.write_bytes("link", b"through")
        assert info.value.errno == errno.ELOOP
        assert (host / "d/target").read_text() == "content of d/target\n"
        return
    root.write_bytes("link", b"through")
    assert os.readlink(host / "link") == "d/target"  # the link itself is kept
    assert (host / "d/target").read_bytes() == b"through"
    assert not leftovers(host) and not leftovers(host / "d")


@pytest.mark.parametrize("tmpfile", [True, False], ids=["o_tmpfile", "named-temp"])
def test_failed_write_leaves_no_temp_file_and_the_old_content(
    open_root: OpenRoot, workspace: Workspace, monkeypatch: pytest.MonkeyPatch, tmpfile: bool
) -> None:
    if not tmpfile:  # the path taken where the filesystem has no O_TMPFILE (and on macOS)
        monkeypatch.setattr(_atomic, "_tmpfile_works", False)
    root = open_root(["d/f"])

    # A buffer, but not a contiguous one: writing it fails after the temporary file was created.
    unwritable = memoryview(b"new content")[::2]
    with pytest.raises(TypeError):
        root.write_bytes("d/f", unwritable)
    assert os.listdir(workspace.root_path / "d") == ["f"]
    assert (workspace.root_path / "d/f").read_text() == "content of d/f\n"


def test_data_of_the_wrong_type_is_refused_before_anything_is_made(
    open_root: OpenRoot, workspace: Workspace
) -> None:
    root = open_root()
    with pytest.raises(TypeError):
        root.write_bytes("a/b/c", "text, not bytes", parents=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="data must be str, not bytes"):  # as pathlib says it
        root.write_text("x/y", b"bytes, not text", parents=True)  # type: ignore[arg-type]
    assert os.listdir(workspace.root_path) == []


def test_write_parents(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root()
    with pytest.raises(FileNotFoundError):
        root.write_bytes("a/b/c", b"x")
    assert not (workspace.root_path / "a").exists()
    root.write_bytes("a/b/c", b"x", parents=True)
    assert (workspace.root_path / "a/b/c").read_bytes() == b"x"
    root.write_text("a/b2/c", "y", parents=True)  # some parents exist already
    assert (workspace.root_path / "a/b2/c").read_text() == "y"


def test_write_parents_never_creates_outside(
    open_root: OpenRoot, workspace: Workspace, flavour: Flavour
) -> None:
    root = open_root(["evil => ../outside"])
    before = workspace.snapshot_outside()
    with pytest.raises(OSError) as info:
        root.write_bytes("evil/new/deeper/f", b"x", parents=True)
    if flavour.symlinks == "beneath":
        assert isinstance(info.value, safefs.PathEscapeError)
    assert workspace.snapshot_outside() == before


def test_write_durable(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["f"])
    assert root.write_bytes("f", b"durable", durable=True) == 7
    assert root.write_bytes("new", bytearray(b"durable2"), durable=True) == 8
    assert root.write_bytes("view", memoryview(b"abcdef")[2:], durable=True) == 4
    assert (workspace.root_path / "f").read_bytes() == b"durable"
    assert (workspace.root_path / "new").read_bytes() == b"durable2"
    assert (workspace.root_path / "view").read_bytes() == b"cdef"
    assert not leftovers(workspace.root_path)


def test_write_a_large_file(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root()
    data = os.urandom(3 * 1024 * 1024 + 17)
    root.write_bytes("big", data)
    assert root.read_bytes("big") == data


def test_touch(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["f"])
    root.touch("f")
    assert (workspace.root_path / "f").read_text() == "content of f\n"
    root.touch("new")
    assert (workspace.root_path / "new").read_bytes() == b""
    with pytest.raises(FileExistsError):
        root.touch("f", exist_ok=False)


# -- directories ---------------------------------------------------------------------------------


def test_mkdir_parents_and_exist_ok(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["d/", "f"])
    host = workspace.root_path
    root.mkdir("new", 0o750)
    assert stat.S_IMODE((host / "new").stat().st_mode) == 0o750 & ~_umask()
    with pytest.raises(FileExistsError):
        root.mkdir("d")
    root.mkdir("d", exist_ok=True)
    with pytest.raises(FileExistsError):
        root.mkdir("f", exist_ok=True)  # exists, but not as a directory
    with pytest.raises(FileNotFoundError):
        root.mkdir("x/y/z")
    root.mkdir("x/y/z", parents=True)
    assert (host / "x/y/z").is_dir()
    with pytest.raises(FileExistsError):
        root.mkdir("x/y/z", parents=True)
    root.mkdir("x/y/z", parents=True, exist_ok=True)
    with pytest.raises(NotADirectoryError):
        root.mkdir("f/sub", parents=True)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_rename_no_clobber(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["a", "b", "d/"])
    host = workspace.root_path
    with pytest.raises(FileExistsError) as info:
        root.rename("a", "b", replace=False)
    assert (info.value.filename, info.value.filename2) == ("a", "b")
    assert (host / "a").read_text() == "content of a\n"
    assert (host / "b").read_text() == "content of b\n"
    with pytest.raises(FileExistsError):
        root.rename("a", "d", replace=False)
    root.rename("a", "c", replace=False)
    assert (host / "c").read_text() == "content of a\n" and not (host / "a").exists()
    root.rename("c", "b")  # replace=True by default
    assert (host / "b").read_text() == "content of a\n" and not (host / "c").exists()
    root.replace("b", "d/b")
    assert (host / "d/b").read_text() == "content of a\n"
    root.rename("d", "e", replace=False)  # directories too
    assert (host / "e/b").is_file()


def test_mkdir_parents_never_creates_outside(
    open_root: OpenRoot, workspace: Workspace, flavour: Flavour
) -> None:
    root = open_root(["evil => ../outside/dir", "abs => $ROOT/../outside"])
    before = workspace.snapshot_outside()
    for path in ("../outside/new/deeper", "evil/new/deeper", "abs/new/deeper"):
        if flavour.symlinks == "in_root" and path.startswith(".."):
            root.mkdir(path, parents=True)  # ".." stops at the root: lands inside
            assert (workspace.root_path / "outside/new/deeper").is_dir()
            continue
        with pytest.raises(OSError) as info:
            root.mkdir(path, parents=True)
        if flavour.symlinks == "beneath":
            assert isinstance(info.value, safefs.PathEscapeError), (path, info.value)
        elif flavour.symlinks == "in_root":
            # The links are rooted at ROOT, where their targets do not exist; as os.makedirs
            # through a dangling link, that is FileNotFoundError.
            assert isinstance(info.value, FileNotFoundError), (path, info.value)
    assert workspace.snapshot_outside() == before


def test_symlink_refuses_targets_leaving_the_root(
    open_root: OpenRoot, workspace: Workspace, flavour: Flavour
) -> None:
    root = open_root(["d/e/", "f"])
    host = workspace.root_path
    refused = [
        ("/etc/passwd", "l1"),
        (str(host / "f"), "l2"),
        ("..", "l3"),
        ("../ROOT/f", "l4"),
        ("d/../../x", "l5"),
        ("../../f", "d/l6"),
        ("../../../f", "d/e/l7"),
        ("./../f", "l8"),
    ]
    for target, name in refused:
        with pytest.raises(safefs.PathEscapeError) as info:
            root.symlink(target, name)
        assert (info.value.filename, info.value.filename2) == (name, target)
        assert not os.path.lexists(host / name)
    allowed = [
        ("f", "a1"),
        ("d/e/../../f", "a2"),
        ("../f", "d/a3"),
        ("../../f", "d/e/a4"),
        ("..", "d/a5"),
        ("missing", "a6"),
        (".", "a7"),
    ]
    for target, name in allowed:
        root.symlink(target, name)
        assert os.readlink(host / name) == target
    with pytest.raises(FileExistsError):
        root.symlink("f", "a1")
    with pytest.raises(FileNotFoundError):
        root.symlink("", "empty-target")
    if flavour.symlinks == "none":
        return
    # Judged from where the link really is: "d2" is a link to "d/e", so "d2/x" lives two levels
    # down and may climb two levels, not one.
    root.symlink("d/e", "d2")
    root.symlink("../../f", "d2/ok")
    assert os.readlink(host / "d/e/ok") == "../../f"
    with pytest.raises(safefs.PathEscapeError):
        root.symlink("../../../f", "d2/bad")


def test_rename_no_clobber_without_renameat2(
    open_root: OpenRoot, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As on a kernel or filesystem without RENAME_NOREPLACE: link + unlink keeps the promise
    # for files, and a directory is refused clearly rather than renamed with a clobber risk.
    def unavailable(*args: object) -> None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    monkeypatch.setattr(_sys, "renameat2", unavailable)
    root = open_root(["a", "b", "d/", "l => a"])
    host = workspace.root_path
    with pytest.raises(FileExistsError):
        root.rename("a", "b", replace=False)
    assert (host / "a").read_text() == "content of a\n"
    assert (host / "b").read_text() == "content of b\n"
    root.rename("a", "c", replace=False)
    assert (host / "c").read_text() == "content of a\n" and not (host / "a").exists()
    root.rename("l", "l2", replace=False)  # a symlink is moved, not followed
    assert os.readlink(host / "l2") == "a" and not os.path.lexists(host / "l")
    with pytest.raises(OSError) as info:
        root.rename("d", "e", replace=False)
    assert info.value.errno == errno.EOPNOTSUPP
    assert (host / "d").is_dir() and not (host / "e").exists()


def test_walk_never_follows_links(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(
        ["top/a/f1", "top/a/b/f2", "top/in => a", "top/out => ../../outside", "top/dangling => nowhere"]
    )
    seen = list(root.walk("top"))
    assert [(d, sorted(ds), sorted(fs)) for d, ds, fs in seen] == [
        ("top", ["a"], ["dangling", "in", "out"]),
        ("top/a", ["b"], ["f1"]),
        ("top/a/b", [], ["f2"]),
    ]
    bottom_up = [d for d, _ds, _fs in root.walk("top", topdown=False)]
    assert bottom_up == ["top/a/b", "top/a", "top"]
    assert next(iter(root.walk(b"top")))[0] == b"top"
    assert sorted(d for d, _ds, _fs in root.walk()) == [".", "./top", "./top/a", "./top/a/b"]


def test_rmtree_never_follows_links(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(
        ["keep/f", "top/a/f", "top/in => ../keep", "top/a/out => ../../../outside", "linkdir => keep"]
    )
    before = workspace.snapshot_outside()
    root.rmtree("top")
    assert not (workspace.root_path / "top").exists()
    assert (workspace.root_path / "keep/f").is_file()
    assert workspace.snapshot_outside() == before
    with pytest.raises(NotADirectoryError):
        root.rmtree("linkdir")  # a link to a directory is not a tree to remove
    assert (workspace.root_path / "keep/f").is_file()
    with pytest.raises(NotADirectoryError):
        root.rmtree("keep/f")
    with pytest.raises(FileNotFoundError):
        root.rmtree("missing")
    with pytest.raises(OSError):
        root.rmtree(".")
    assert (workspace.root_path / "keep/f").is_file()


def test_scandir_entries(open_root: OpenRoot, workspace: Workspace, flavour: Flavour) -> None:
    root = open_root(
        ["d/f", "d/sub/", "d/lf => f", "d/ld => sub", "d/out => ../../outside", "d/dangling => nowhere"]
    )
    entries = {e.name: e for e in root.scandir("d")}
    assert set(entries) == {"f", "sub", "lf", "ld", "out", "dangling"}
    assert entries["f"].path == os.path.join("d", "f")
    assert os.fspath(entries["f"]) == os.path.join("d", "f")
    assert entries["f"].is_file() and not entries["f"].is_dir() and not entries["f"].is_symlink()
    assert entries["sub"].is_dir() and not entries["sub"].is_file()
    assert entries["f"].inode() == (workspace.root_path / "d/f").stat().st_ino
    assert entries["f"].stat().st_size == len("content of d/f\n")
    for name in ("lf", "ld", "out", "dangling"):
        e = entries[name]
        assert e.is_symlink()
        assert not e.is_dir(follow_symlinks=False) and not e.is_file(follow_symlinks=False)
        assert stat.S_ISLNK(e.stat(follow_symlinks=False).st_mode)
    follows = flavour.symlinks != "none"
    assert entries["lf"].is_file() is follows
    assert entries["ld"].is_dir() is follows
    # Following a link out of the root answers "no", never looks outside.
    assert not entries["out"].is_dir() and not entries["dangling"].is_file()
    assert sorted(root.iterdir("d")) == sorted(os.path.join("d", n) for n in entries)
    assert sorted(root.listdir()) == ["d"]
    assert [e.path for e in root.scandir()] == ["d"]


def test_scandir_with_lstat_keeps_what_the_listing_saw(
    open_root: OpenRoot, workspace: Workspace, flavour: Flavour
) -> None:
    root = open_root(["d/f", "d/sub/", "d/lf => f", "d/out => ../../outside"])
    entries = {e.name: e for e in root.scandir("d", lstat=True)}
    on_disk = {name: os.lstat(workspace.root_path / "d" / name) for name in entries}
    for name, e in entries.items():
        assert e.stat(follow_symlinks=False) == on_disk[name]
    # Replaced after the listing: the kept lstat is the listing's, as os.DirEntry keeps its own.
    (workspace.root_path / "d/f").write_bytes(b"longer than it was when listed\n")
    assert entries["f"].stat().st_size == on_disk["f"].st_size
    assert entries["sub"].stat() == on_disk["sub"]
    # A link is followed through the root, never answered from the kept lstat.
    if flavour.symlinks == "none":
        with pytest.raises(OSError):
            entries["lf"].stat()
    else:
        assert entries["lf"].stat().st_size == len(b"longer than it was when listed\n")
    with pytest.raises(OSError):
        entries["out"].stat()
    with pytest.raises(TypeError):
        safefs.DirEntry()


# -- names ---------------------------------------------------------------------------------------


def test_bytes_and_non_utf8_names(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["d/"])
    name = b"caf\xe9-\xff"
    root.write_bytes(b"d/" + name, b"latin")
    assert os.listdir(os.fsencode(workspace.root_path / "d")) == [name]
    assert root.listdir(b"d") == [name]
    assert root.listdir("d") == [os.fsdecode(name)]
    assert root.read_bytes(b"d/" + name) == b"latin"
    assert root.read_bytes("d/" + os.fsdecode(name)) == b"latin"
    assert root.resolve(b"d/" + name) == b"d/" + name
    assert [e.path for e in root.scandir(b"d")] == [b"d/" + name]
    root.rename(b"d/" + name, b"d/plain")
    assert root.read_bytes(Path("d/plain")) == b"latin"  # path-like too
    unicode = "d/\u65e5\u672c-\U0001f600"
    root.write_text(unicode, "ok")
    assert root.read_text(unicode) == "ok"
    assert (workspace.root_path / unicode).read_text() == "ok"
    with pytest.raises(FileNotFoundError) as info:
        root.read_bytes(b"d/\xfe")
    assert info.value.filename == b"d/\xfe"


def _raise_first(results: list[bytes | OSError]) -> bytes:
    """The first result of a read_heads: its bytes, or its error raised."""
    if isinstance(results[0], OSError):
        raise results[0]
    return results[0]


PATH_OPS: list[tuple[str, Callable[[safefs.Root, Any], object]]] = [
    ("read_bytes", lambda r, p: r.read_bytes(p)),
    ("read_head", lambda r, p: r.read_head(p, 10)),
    ("read_heads", lambda r, p: _raise_first(r.read_heads([p], 10))),
    ("open", lambda r, p: r.open(p)),
    ("write_bytes", lambda r, p: r.write_bytes(p, b"x")),
    ("stat", lambda r, p: r.stat(p)),
    ("lstat", lambda r, p: r.lstat(p)),
    ("exists", lambda r, p: r.exists(p)),
    ("mkdir", lambda r, p: r.mkdir(p)),
    ("listdir", lambda r, p: r.listdir(p)),
    ("remove", lambda r, p: r.remove(p)),
    ("rmdir", lambda r, p: r.rmdir(p)),
    ("rename_from", lambda r, p: r.rename(p, "f2")),
    ("rename_to", lambda r, p: r.rename("f", p)),
    ("link_to", lambda r, p: r.link("f", p)),
    ("readlink", lambda r, p: r.readlink(p)),
    ("symlink", lambda r, p: r.symlink("f", p)),
    ("symlink_target", lambda r, p: r.symlink(p, "new-link")),
    ("chmod", lambda r, p: r.chmod(p, 0o600)),
    ("resolve", lambda r, p: r.resolve(p)),
    ("opendir", lambda r, p: r.opendir(p)),
    ("touch", lambda r, p: r.touch(p)),
    ("rmtree", lambda r, p: r.rmtree(p)),
    ("read_text", lambda r, p: r.read_text(p)),
    ("write_text", lambda r, p: r.write_text(p, "x")),
    ("is_file", lambda r, p: r.is_file(p)),
    ("is_dir", lambda r, p: r.is_dir(p)),
    ("is_symlink", lambda r, p: r.is_symlink(p)),
    ("scandir", lambda r, p: r.scandir(p)),
    ("iterdir", lambda r, p: r.iterdir(p)),
    ("walk", lambda r, p: r.walk(p)),
    ("link_from", lambda r, p: r.link(p, "f3")),
    ("rename_noreplace", lambda r, p: r.rename("f", p, replace=False)),
    ("replace", lambda r, p: r.replace("f", p)),
    ("unlink", lambda r, p: r.unlink(p)),
]


@pytest.mark.parametrize("path", ["f\0", b"d/\0x", "d/\0"], ids=["str", "bytes", "dir"])
def test_nul_is_valueerror_everywhere(open_root: OpenRoot, workspace: Workspace, path: Any) -> None:
    root = open_root(["f", "d/"])
    before = sorted(os.listdir(workspace.root_path))
    for name, op in PATH_OPS:
        with pytest.raises(ValueError, match="null byte"):
            op(root, path)
            pytest.fail(f"{name} accepted a NUL byte")
    assert sorted(os.listdir(workspace.root_path)) == before
    assert (workspace.root_path / "f").read_text() == "content of f\n"


def test_relative_spells_a_path_as_every_operation_takes_it(
    open_root: OpenRoot, workspace: Workspace
) -> None:
    root = open_root(["d/f"])
    host = str(workspace.root_path)
    assert root.relative("d/../x") == "d/../x"  # nothing is resolved or collapsed
    assert root.relative(host) == "."
    assert root.relative(host + "//d/./f") == "d/./f"
    assert root.relative(os.fsencode(host) + b"/d/f") == b"d/f"
    assert root.relative(Path(host) / "d") == "d"
    for outside in (host + "-other/x", str(workspace.base), "/etc/passwd"):
        with pytest.raises(safefs.PathEscapeError) as info:
            root.relative(outside)
        assert info.value.filename == outside
        with pytest.raises(safefs.PathEscapeError):
            root.read_bytes(outside)  # the operations apply the very same rule
    with pytest.raises(FileNotFoundError):
        root.relative("")
    assert root.anchors[0] == host and all(a.startswith("/") for a in root.anchors)


def test_the_realpath_spelling_is_an_anchor(flavour: Flavour, workspace: Workspace) -> None:
    # BASE/link/ROOT, with link -> the real base: both spellings reach the same directory.
    link = workspace.base / "link"
    link.symlink_to(workspace.base)
    (workspace.root_path / "f").write_text("f\n")
    with flavour.open(link / "ROOT") as root:
        assert set(root.anchors) == {str(link / "ROOT"), str(workspace.root_path)}
        assert root.relative(str(workspace.root_path / "secrets/new/x")) == "secrets/new/x"
        assert root.resolve(str(workspace.root_path / "secrets/new/x")) == "secrets/new/x"
        assert root.read_text(str(workspace.root_path / "f")) == "f\n"


def test_a_spelling_that_is_another_directory_is_no_anchor(flavour: Flavour, workspace: Workspace) -> None:
    # BASE/lnk/../ROOT: the kernel follows lnk first, so it is BASE/real/ROOT, not BASE/ROOT.
    (workspace.base / "real" / "x").mkdir(parents=True)
    (workspace.base / "real" / "ROOT").mkdir()
    (workspace.base / "lnk").symlink_to("real/x")
    with flavour.open(str(workspace.base / "lnk") + "/../ROOT") as root:
        assert str(workspace.root_path) not in root.anchors
        assert root.anchors == (str(workspace.base / "real" / "ROOT"),)
        with pytest.raises(safefs.PathEscapeError):
            root.relative(str(workspace.root_path / "f"))


def test_resolve_appends_a_missing_tail(open_root: OpenRoot, flavour: Flavour) -> None:
    root = open_root(["d/f", "alias => d/new/../new2/x"])
    assert root.resolve("d/missing/deeper/x") == "d/missing/deeper/x"
    assert root.resolve("d/missing/../f") == "d/f"  # the missing name is taken back
    assert root.resolve("missing/") == "missing"
    if flavour.symlinks == "none":
        with pytest.raises(OSError) as info:
            root.resolve("alias")
        assert info.value.errno == errno.ELOOP
    else:
        assert root.resolve("alias") == "d/new2/x"  # a dangling link into missing directories
    with pytest.raises(FileNotFoundError):
        root.resolve("d/missing/x", strict=True)
    with pytest.raises(FileNotFoundError):
        root.resolve("d/missing", strict=True)
    assert root.resolve("d/f", strict=True) == "d/f"
    with pytest.raises(NotADirectoryError):
        root.resolve("d/f/x")
    if flavour.symlinks == "in_root":
        assert root.resolve("missing/../../x") == "x"
    else:
        with pytest.raises(safefs.PathEscapeError):
            root.resolve("missing/../../x")


def test_empty_path_is_an_error_everywhere(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["f"])
    for name, op in PATH_OPS:
        if name in ("exists", "is_file", "is_dir", "is_symlink"):
            assert op(root, "") is False, name  # as os.path.exists("")
            continue
        with pytest.raises(FileNotFoundError) as info:
            op(root, "")
            pytest.fail(f"{name} accepted an empty path")
        assert "" in (info.value.filename, info.value.filename2), name
    assert sorted(os.listdir(workspace.root_path)) == ["f"]


def test_absolute_paths_under_the_root(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["d/f"])
    host = str(workspace.root_path)
    assert root.read_bytes(host + "/d/f") == b"content of d/f\n"
    assert root.read_bytes(os.fsencode(host) + b"/d/f") == b"content of d/f\n"
    assert root.read_bytes(Path(host) / "d" / "f") == b"content of d/f\n"
    assert root.resolve(host) == "."
    assert root.resolve(host + "/") == "."
    assert root.resolve(host + "//d/./f") == "d/f"
    root.write_bytes(host + "/d/g", b"abs")
    assert (workspace.root_path / "d/g").read_bytes() == b"abs"
    assert sorted(root.listdir(host + "/d")) == ["f", "g"]
    for outside in (
        str(workspace.outside / "secret"),
        "/etc/passwd",
        "/",
        host + "-other/x",
        host[:-1],
        str(workspace.base),
    ):
        with pytest.raises(safefs.PathEscapeError) as info:
            root.read_bytes(outside)
        assert info.value.filename == outside


def test_absolute_paths_via_a_symlinked_root_path(flavour: Flavour, workspace: Workspace) -> None:
    # The root opened through a symlink: both the spelling given and its realpath are "under".
    alias = workspace.base / "alias"
    alias.symlink_to(workspace.base)
    (workspace.root_path / "f").write_text("via alias\n")
    via_alias = alias / "ROOT"
    with flavour.open(via_alias) as root:
        assert root.read_bytes(str(via_alias / "f")) == b"via alias\n"
        assert root.read_bytes(str(workspace.root_path / "f")) == b"via alias\n"
        assert root.read_bytes(os.path.realpath(via_alias / "f")) == b"via alias\n"
        for bad in (
            str(alias / "outside" / "secret"),
            str(alias / "ROOT-other" / "f"),
            str(workspace.base / "ROOT-other" / "f"),
        ):
            with pytest.raises(safefs.PathEscapeError):
                root.read_bytes(bad)


def test_root_spellings(flavour: Flavour, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    (workspace.root_path / "f").write_text("x\n")
    monkeypatch.chdir(workspace.base)
    abs_f = str(workspace.root_path / "f")
    for spelling in ("ROOT", "ROOT/", "./ROOT", "outside/../ROOT", str(workspace.root_path) + "//"):
        with flavour.open(spelling) as root:
            assert root.path == str(workspace.root_path), spelling
            assert root.read_bytes("f") == b"x\n"
            assert root.read_bytes(abs_f) == b"x\n"  # absolute paths still recognised
            with pytest.raises(safefs.PathEscapeError):
                root.read_bytes(str(workspace.outside / "secret"))
    monkeypatch.chdir("/")
    with flavour.open(workspace.base / "ROOT") as root:
        assert root.read_bytes("f") == b"x\n"  # the cwd plays no part once open


def test_sibling_prefix_is_refused(open_root: OpenRoot, workspace: Workspace, flavour: Flavour) -> None:
    sibling = workspace.base / "ROOT-other"
    sibling.mkdir()
    (sibling / "secret").write_text("sibling\n")
    root = open_root(["f"])
    with pytest.raises(safefs.PathEscapeError):
        root.read_bytes(str(sibling / "secret"))
    with pytest.raises(safefs.PathEscapeError):
        root.write_bytes(str(sibling / "secret"), b"overwritten")
    if flavour.symlinks == "in_root":
        with pytest.raises(FileNotFoundError):  # "../" stops at the root: ROOT/ROOT-other
            root.read_bytes("../ROOT-other/secret")
    else:
        with pytest.raises(safefs.PathEscapeError):
            root.read_bytes("../ROOT-other/secret")
    assert (sibling / "secret").read_text() == "sibling\n"
    assert sorted(os.listdir(sibling)) == ["secret"]


def test_tilde_is_a_name(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root()
    root.mkdir("~")
    root.write_bytes("~/x", b"tilde")
    assert (workspace.root_path / "~" / "x").read_bytes() == b"tilde"
    assert root.read_bytes("~/x") == b"tilde"
    assert root.resolve("~/x") == "~/x"
    assert root.listdir() == ["~"]
    with pytest.raises(FileNotFoundError):
        root.read_bytes("~root/.profile")


# -- special files -------------------------------------------------------------------------------


def test_fifo_is_refused_at_once(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["f"])
    os.mkfifo(workspace.root_path / "fifo")
    with no_hang():
        for call in (
            lambda: root.read_bytes("fifo"),
            lambda: root.read_head("fifo", 10),
            lambda: _raise_first(root.read_heads(["fifo"], 10)),
            lambda: root.open("fifo"),
            lambda: root.read_text("fifo"),
            lambda: root.open("fifo", "rb"),
            lambda: root.write_bytes("fifo", b"x"),
            lambda: root.open("fifo", "a"),
        ):
            with pytest.raises(OSError) as info:
                call()
            # Nothing to read or write there: refused, as "not a regular file" where it opened.
            assert info.value.errno in (errno.EINVAL, errno.ENXIO), info.value
            assert info.value.filename == "fifo"
        with pytest.raises(safefs.NotRegularFileError, match="not a regular file"):
            root.read_bytes("fifo")
        assert stat.S_ISFIFO(root.stat("fifo").st_mode)  # metadata is fine
        assert stat.S_ISFIFO(os.lstat(workspace.root_path / "fifo").st_mode)  # not replaced


def test_no_operation_hangs_on_a_fifo(open_root: OpenRoot, workspace: Workspace) -> None:
    host = workspace.root_path
    root = open_root()
    for name, op in PATH_OPS:
        for path in ("fifo", "lfifo", "fifo/", "d/../fifo"):
            for entry in host.iterdir():  # the root directory itself stays: the Root holds it
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
            (host / "d").mkdir()
            (host / "f").write_text("f")
            os.mkfifo(host / "fifo")
            os.symlink("fifo", host / "lfifo")
            with no_hang(3, f"{name}({path!r})"):
                try:
                    result = op(root, path)
                    if isinstance(result, Iterator):
                        list(result)
                    close = getattr(result, "close", None)
                    if close is not None:
                        close()
                except OSError:
                    pass  # refusing is fine; blocking is not


def test_socket_is_refused_at_once(
    open_root: OpenRoot, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = open_root()
    monkeypatch.chdir(workspace.root_path)  # socket paths are limited to ~100 bytes
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind("sock")
        sock.listen(1)
        with no_hang():
            for call in (
                lambda: root.read_bytes("sock"),
                lambda: root.open("sock", "rb"),
                lambda: root.write_bytes("sock", b"x"),
            ):
                with pytest.raises(OSError) as info:
                    call()
                assert info.value.errno in (errno.EINVAL, errno.ENXIO), info.value
        assert stat.S_ISSOCK(root.stat("sock").st_mode)
    finally:
        sock.close()


def test_device_is_refused(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root()
    try:
        os.mknod(workspace.root_path / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs privilege")
    with no_hang():
        with pytest.raises(safefs.NotRegularFileError):
            root.read_bytes("null")
        with pytest.raises(safefs.NotRegularFileError):
            root.write_bytes("null", b"x")
    assert stat.S_ISCHR(os.lstat(workspace.root_path / "null").st_mode)


# -- errors --------------------------------------------------------------------------------------


def test_errors_carry_the_callers_path_never_the_host_path(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["f", "d/", "loop => loop", "out => ../outside"])
    host = str(workspace.root_path)
    failing: list[tuple[Any, Callable[[], object]]] = [
        ("missing", lambda: root.read_bytes("missing")),
        ("d", lambda: root.read_bytes("d")),
        ("f/x", lambda: root.stat("f/x")),
        ("loop", lambda: root.read_bytes("loop")),
        ("out/secret", lambda: root.read_bytes("out/secret")),
        ("out/x", lambda: root.write_bytes("out/x", b"")),
        ("d", lambda: root.mkdir("d")),
        ("d", lambda: root.remove("d")),
        ("f", lambda: root.rmdir("f")),
        ("f", lambda: root.readlink("f")),
        ("f", lambda: root.symlink("x", "f")),
        ("nope", lambda: root.opendir("nope")),
        (b"missing", lambda: root.listdir(b"missing")),
        (Path("missing"), lambda: root.stat(Path("missing"))),
    ]
    for path, call in failing:
        with pytest.raises(OSError) as info:
            call()
        err = info.value
        assert err.filename == path or err.filename == os.fspath(path), (path, err)
        assert host not in str(err) and host not in repr(err.args), err
    with pytest.raises(OSError) as info:
        root.rename("missing", "d/new")
    assert (info.value.filename, info.value.filename2) == ("missing", "d/new")
    assert host not in str(info.value)


def test_path_escape_error(open_root: OpenRoot, flavour: Flavour) -> None:
    root = open_root()
    # "../x" escapes except in_root mode; an absolute path elsewhere escapes in every mode.
    path = "/etc/passwd" if flavour.symlinks == "in_root" else "../x"
    with pytest.raises(safefs.PathEscapeError) as info:
        root.read_bytes(path)
    err = info.value
    assert isinstance(err, PermissionError) and isinstance(err, OSError)
    assert err.errno == errno.EXDEV
    assert err.filename == path
    assert str(err) == f"path escapes workspace: {path!r}"
    assert safefs.ESCAPE_MESSAGE == "path escapes workspace"
    with pytest.raises(PermissionError):  # callers catching PermissionError see it too
        root.stat(path)


def test_closed_root_raises_valueerror(flavour: Flavour, workspace: Workspace) -> None:
    (workspace.root_path / "f").write_text("x")
    with flavour.open(workspace.root_path) as root:
        assert root.read_bytes("f") == b"x"
        assert not root.closed
    assert root.closed
    root.close()  # closing twice is harmless
    for name, op in PATH_OPS:
        with pytest.raises(ValueError, match="closed"):
            op(root, "f")
            pytest.fail(f"{name} worked on a closed Root")
    with pytest.raises(ValueError, match="closed"):
        root.fileno()
    assert "closed" in repr(root)


def test_root_itself(flavour: Flavour, workspace: Workspace) -> None:
    missing = workspace.base / "missing"
    with pytest.raises(FileNotFoundError) as info:
        flavour.open(missing)
    assert info.value.filename == missing  # the caller's own argument, as os reports it
    (workspace.root_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError) as info2:
        flavour.open(str(workspace.root_path / "f"))
    assert info2.value.filename == str(workspace.root_path / "f")
    with flavour.open(workspace.root_path) as root:
        assert root.path == str(workspace.root_path)
        assert root.symlinks == flavour.symlinks
        assert root.resolver == ("openat2" if flavour.backend == "openat2" else "walk")
        assert root.resolve() == "."
        assert os.get_inheritable(root.fileno()) is False
        assert stat.S_ISDIR(os.fstat(root.fileno()).st_mode)
    with flavour.open(os.fsencode(workspace.root_path)) as root:
        assert root.read_bytes("f") == b"x"


def test_root_usable_from_several_threads(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root([f"d{i}/f" for i in range(4)])
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(50):
                root.write_bytes(f"d{i}/w{j}", b"%d" % j)
                assert root.read_bytes(f"d{i}/w{j}") == b"%d" % j
                assert root.read_bytes(f"d{(i + 1) % 4}/f") == f"content of d{(i + 1) % 4}/f\n".encode()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(len(os.listdir(workspace.root_path / f"d{i}")) == 51 for i in range(4))


# -- resolvers -----------------------------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="openat2 is Linux only")
def test_auto_is_openat2_here(workspace: Workspace) -> None:
    assert _sys.HAVE_NATIVE, "the native extension was not built"
    with safefs.Root(workspace.root_path) as root:
        assert root.resolver == "openat2"


def test_openat2_without_the_extension_is_a_clear_error(workspace: Workspace) -> None:
    # A fresh interpreter in which the extension cannot be imported, as on an install without
    # a compiler: "auto" quietly uses the walk, an explicit "openat2" says why it cannot.
    code = (
        "import sys\n"
        "sys.modules['safefs._native'] = None\n"
        "import safefs\n"
        f"print(safefs.Root({str(workspace.root_path)!r}).resolver)\n"
        "try:\n"
        f"    safefs.Root({str(workspace.root_path)!r}, resolver='openat2')\n"
        "except safefs.ResolverUnavailableError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    lines = out.stdout.splitlines()
    assert lines[0] == "walk"
    assert lines[1].startswith("ResolverUnavailableError")
    assert "openat2 resolver unavailable: the native extension is not built" in lines[1]
    assert "Traceback" not in out.stderr


# -- opendir -------------------------------------------------------------------------------------


def test_opendir(open_root: OpenRoot, workspace: Workspace, flavour: Flavour) -> None:
    root = open_root(["sub/f", "sub/inner/g", "top-secret"])
    with root.opendir("sub") as sub:
        assert sub.resolver == root.resolver and sub.symlinks == root.symlinks
        assert sub.path == str(workspace.root_path / "sub")
        assert sorted(sub.listdir()) == ["f", "inner"]
        assert sub.read_bytes("inner/g") == b"content of sub/inner/g\n"
        assert sub.read_bytes(str(workspace.root_path / "sub" / "f")) == b"content of sub/f\n"
        sub.write_bytes("new", b"n")
        assert (workspace.root_path / "sub/new").read_bytes() == b"n"
        with pytest.raises(safefs.PathEscapeError):
            sub.read_bytes(str(workspace.root_path / "top-secret"))
        if flavour.symlinks == "in_root":
            with pytest.raises(FileNotFoundError):
                sub.read_bytes("../top-secret")  # ".." stops at the sub-root
        else:
            with pytest.raises(safefs.PathEscapeError):
                sub.read_bytes("../top-secret")  # the parent root is outside the sub-root
        with sub.opendir("inner") as inner:
            assert inner.resolve("g") == "g"
            assert inner.listdir() == ["g"]
        root.close()  # the sub-root holds its own fd
        assert sub.read_bytes("f") == b"content of sub/f\n"
    with pytest.raises(ValueError):
        root.opendir("sub")


def test_opendir_of_a_file_or_missing(open_root: OpenRoot) -> None:
    root = open_root(["f"])
    with pytest.raises(NotADirectoryError):
        root.opendir("f")
    with pytest.raises(FileNotFoundError):
        root.opendir("missing")
    with root.opendir(".") as same:
        assert same.listdir() == ["f"]


# -- magic links ---------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux procfs")
def test_magic_links_are_never_followed(
    flavour: Flavour, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /proc/self/cwd and /proc/self/fd/N jump straight to an inode, whatever their text says.
    (workspace.root_path / "f").write_text("reachable only through a magic link\n")
    monkeypatch.chdir(workspace.root_path)
    with open(workspace.root_path / "f") as held, flavour.open("/proc/self") as proc:
        for path in ("cwd/f", "cwd/", f"fd/{held.fileno()}", "root/etc/hostname"):
            with pytest.raises(OSError):
                proc.read_bytes(path)
            with pytest.raises(OSError):
                proc.stat(path)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux procfs")
def test_magic_links_refused_with_the_kernels_error(
    flavour: Flavour, workspace: Workspace, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    # Every backend refuses a magic link as openat2's RESOLVE_NO_MAGICLINKS does, and resolve()
    # says what the operations say.
    monkeypatch.chdir(workspace.root_path)
    with flavour.open("/proc/self") as proc:
        for path in ("cwd/", "cwd/f", "root", "root/etc", "exe"):
            for call in (proc.read_bytes, proc.listdir, proc.stat, proc.resolve):
                with pytest.raises(OSError) as info:
                    call(path)
                assert info.value.errno == errno.ELOOP, (call.__name__, path, info.value)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux procfs")
def test_the_walk_never_lists_proc_through_self_root(flavour: Flavour) -> None:
    # In in_root mode /proc/self/root's text ("/") would name the Root itself: still refused.
    with flavour.open("/proc") as proc:
        assert "self" in proc.listdir(".")
        for path in ("self/root", "self/root/", "thread-self/root/self/root"):
            with pytest.raises(OSError) as info:
                proc.listdir(path)
            assert info.value.errno == errno.ELOOP, (path, info.value)
        if flavour.symlinks != "none":
            assert proc.resolve("self") != "self"  # an ordinary procfs link: followed


# -- one owner per fd --------------------------------------------------------------------------


def test_a_root_cannot_be_copied_or_pickled(open_root: OpenRoot, workspace: Workspace) -> None:
    root = open_root(["f"])
    for make in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="owns a directory fd"):
            make(root)
    gc.collect()  # no second owner was made to close the fd on collection
    os.fstat(root.fileno())
    assert root.read_bytes("f") == b"content of f\n"


def test_read_heads_refuses_one_path(open_root: OpenRoot) -> None:
    root = open_root(["notes.txt"])
    for one in ("notes.txt", b"notes.txt", Path("notes.txt")):
        with pytest.raises(TypeError, match="iterable of paths"):
            root.read_heads(one, 64)  # type: ignore[arg-type]  # (the point)
    assert root.read_heads(["notes.txt"], 64) == [b"content of notes.txt\n"]


def test_open_w_truncates_in_place_and_the_readme_says_so(open_root: OpenRoot, workspace: Workspace) -> None:
    # write_bytes replaces the inode (a reader sees old or new); open("w") truncates the same one.
    root = open_root(["f"])
    before = os.stat(workspace.root_path / "f").st_ino
    root.write_bytes("f", b"new")
    replaced = os.stat(workspace.root_path / "f").st_ino
    assert replaced != before
    with root.open("f", "w") as f:
        f.write("again")
    assert os.stat(workspace.root_path / "f").st_ino == replaced
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "Writes are atomic" not in readme
    assert '`open(path, "w")` truncates in place' in readme


# -- modes of new files ------------------------------------------------------------------------


@pytest.mark.parametrize("size", [10, 1 << 20], ids=["native-write", "large-write"])
@pytest.mark.parametrize("parents", [False, True], ids=["", "parents"])
def test_a_new_file_is_born_with_the_mode_asked(
    open_root: OpenRoot, workspace: Workspace, size: int, parents: bool
) -> None:
    root = open_root(["d/", "d/kept"])
    os.chmod(workspace.root_path / "d" / "kept", 0o604)
    old = os.umask(0o022)
    try:
        root.write_bytes("d/secret", b"s" * size, mode=0o600, parents=parents)
        root.write_bytes("d/kept", b"k" * size, mode=0o600, parents=parents)  # exists: kept
        root.write_text("d/text", "t", mode=0o640, parents=parents)
        root.touch("d/touched", 0o666)
    finally:
        os.umask(old)
    modes = {
        n: stat.S_IMODE(os.stat(workspace.root_path / "d" / n).st_mode)
        for n in os.listdir(workspace.root_path / "d")
    }
    assert modes == {"secret": 0o600, "kept": 0o604, "text": 0o640, "touched": 0o644}
