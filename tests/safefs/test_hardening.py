"""Hardening rules, each pinned on every backend and mode it applies to (or, where a rule is a
platform choice that cannot run here, the choice itself)."""

from __future__ import annotations

import errno
import gc
import os
import socket
import stat
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import safefs
from safefs import _atomic, _fastpath, _sys
from safefs._atomic import NATIVE_WRITE_MAX
from safefs.workspace import files as workspace_files
from tests.fds import new_fds, open_fds
from tests.safefs.conftest import Flavour, Workspace, build_tree

# -- every fd closed once, by its owner ------------------------------------------------------


@pytest.mark.parametrize(
    "options", [{"encoding": "no-such-codec"}, {"newline": "bogus"}], ids=["encoding", "newline"]
)
def test_bad_text_options_close_the_fd_once(
    options: dict[str, Any], flavour: Flavour, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["f"])
    before = open_fds()
    with pytest.raises((LookupError, ValueError)) as info:
        root.open("f", "r", **options)
    # A second close would have turned the error into EBADF (or closed someone else's fd).
    assert not isinstance(info.value, OSError)
    assert new_fds(before) == {}
    assert root.read_bytes("f") == b"content of f\n"


def test_bad_text_options_never_close_another_threads_fd(workspace: Workspace) -> None:
    """While one thread keeps failing to open text files with a bad codec, others keep opening
    Roots and reading through them, and a third keeps opening outside directories (so a number
    freed by a stray close is soon reused by one). Count double closes and outside reads."""
    build_tree(workspace.root_path, ["f"])
    (workspace.outside / "f").write_text("OUTSIDE\n")
    stop = threading.Event()
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def note(what: str) -> None:
        with lock:
            counts[what] += 1

    def bad_opener() -> None:
        with safefs.Root(workspace.root_path) as root:
            while not stop.is_set():
                try:
                    root.open("f", "r", encoding="no-such-codec")
                except LookupError:
                    note("bad-codec refused")
                except OSError as exc:
                    note("double close" if exc.errno == errno.EBADF else f"error {exc.errno}")

    def reader() -> None:
        while not stop.is_set():
            try:
                with safefs.Root(workspace.root_path) as root:
                    data = root.read_bytes("f")
            except OSError as exc:
                note("double close" if exc.errno == errno.EBADF else f"error {exc.errno}")
                continue
            note("inside read" if data == b"content of f\n" else "outside read")

    def reuser() -> None:
        while not stop.is_set():
            fd = os.open(workspace.outside, os.O_RDONLY | os.O_DIRECTORY)
            try:
                time.sleep(0)
            finally:
                try:
                    os.close(fd)
                except OSError:
                    note("double close")

    threads = [threading.Thread(target=t) for t in (bad_opener, reader, reader, reuser)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    stop.set()
    for t in threads:
        t.join()
    print(f"[threads] {dict(counts)}")
    assert counts["bad-codec refused"] > 0 and counts["inside read"] > 0
    assert counts["double close"] == 0
    assert counts["outside read"] == 0
    assert not [k for k in counts if k.startswith("error")], counts


# -- links that safefs creates or moves --------------------------------------------------------


def test_symlink_target_judged_physically(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["d/"])
    root.symlink(".", "u")
    with pytest.raises(safefs.PathEscapeError):
        root.symlink("u/../outside/secret", "esc")  # u/.. is the root's parent for the kernel
    with pytest.raises(safefs.PathEscapeError):
        root.symlink("../u/../outside", "d/esc")
    assert not os.path.lexists(workspace.root_path / "esc")
    assert not os.path.lexists(workspace.root_path / "d" / "esc")
    os.symlink("..", workspace.root_path / "up")  # planted by someone else: leads outside
    for target in ("up", "up/", "up/.", "up/outside", "d/../up/"):
        with pytest.raises(safefs.PathEscapeError):
            root.symlink(target, "via-up")
        assert not os.path.lexists(workspace.root_path / "via-up")
    root.symlink("u/d", "fine")  # through an existing link, still inside
    assert os.readlink(workspace.root_path / "fine") == "u/d"


@pytest.mark.parametrize("how", ["rename", "link"])
def test_moving_a_link_shallower_cannot_make_it_escape(
    how: str, flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["f", "d/"])
    root.symlink("../f", "d/l")  # inside: d/../f is f
    with pytest.raises(safefs.PathEscapeError):
        getattr(root, how)("d/l", "l")  # from the root, ../f is outside
    assert not os.path.lexists(workspace.root_path / "l")
    assert os.readlink(workspace.root_path / "d" / "l") == "../f"
    getattr(root, how)("d/l", "d/l2")  # the same directory: still inside
    assert os.readlink(workspace.root_path / "d" / "l2") == "../f"


def test_moving_a_directory_shallower_cannot_make_a_link_inside_escape(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["X", "a/b/c/", "a/b/keep/t"])
    root.symlink("../../X", "a/b/c/l")  # a/b/c/../../X is a/X: inside
    root.symlink("../keep/t", "a/b/c/same-tree")  # stays within a/b: moves with its target
    with pytest.raises(safefs.PathEscapeError):
        root.rename("a/b/c", "c")  # from c, ../../X is the root's parent's X
    assert os.readlink(workspace.root_path / "a" / "b" / "c" / "l") == "../../X"
    assert not os.path.lexists(workspace.root_path / "c")
    root.symlink("../../../X", "a/b/c/deeper")  # a/b/c/../../../X is X: inside
    with pytest.raises(safefs.PathEscapeError):
        root.rename("a/b", "b")  # a link deep in the moved tree is judged too: b/c/../../../X
    assert os.path.isdir(workspace.root_path / "a" / "b")
    root.rename("a/b/c", "a/b/c2")  # the same depth: still inside
    root.remove("a/b/c2/deeper")
    root.rename("a/b", "b")  # b/c2/l is b/c2/../../X = X: inside, so the move is allowed
    assert os.readlink(workspace.root_path / "b" / "c2" / "same-tree") == "../keep/t"
    root.mkdir("d1/d2", parents=True)
    root.rename("b", "d1/d2/b")  # deeper is always fine for ``..``
    assert os.readlink(workspace.root_path / "d1" / "d2" / "b" / "c2" / "l") == "../../X"


# -- privilege bits --------------------------------------------------------------------------


def test_atomic_write_drops_setuid_and_setgid(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["planted"])
    p = workspace.root_path / "planted"
    os.chmod(p, 0o6755)
    assert stat.S_IMODE(p.stat().st_mode) == 0o6755
    root.write_bytes("planted", b"the writer's content\n")
    assert stat.S_IMODE(p.stat().st_mode) == 0o755
    assert p.read_bytes() == b"the writer's content\n"


LARGE = b"x" * (NATIVE_WRITE_MAX + 1)  # past the one native call: O_TMPFILE, or a named temp


def _write_via(how: str, root: safefs.Root, rel: str) -> bytes:
    """Write ``rel`` by one of the write paths; returns the content written."""
    if how == "small":
        root.write_bytes(rel, b"small\n")
        return b"small\n"
    if how == "large":
        root.write_bytes(rel, LARGE)
        return LARGE
    if how == "large-named":  # no O_TMPFILE: the named temp file for the whole write
        root.write_bytes(rel, LARGE)
        return LARGE
    if how == "parents":
        root.write_text(rel, "parents\n", parents=True)
        return b"parents\n"
    workspace_files.write_text(root, rel, "workspace\n")  # the MCP server's and the agent's path
    return b"workspace\n"


@pytest.mark.parametrize("how", ["small", "large", "large-named", "parents", "workspace"])
def test_every_write_path_drops_setuid_and_setgid(
    flavour: Flavour,
    workspace: Workspace,
    open_root: Callable[..., safefs.Root],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    root = open_root(["d/planted"])
    p = workspace.root_path / "d" / "planted"
    os.chmod(p, 0o6755)
    if how == "large-named":
        monkeypatch.setattr(_atomic, "_tmpfile_works", False)
    written = _write_via(how, root, "d/planted")
    assert stat.S_IMODE(p.stat().st_mode) == 0o755
    assert p.read_bytes() == written


@pytest.mark.parametrize("how", ["small", "large", "large-named", "parents", "workspace"])
def test_every_write_path_keeps_the_bits_a_umask_would_clear(
    flavour: Flavour,
    workspace: Workspace,
    open_root: Callable[..., safefs.Root],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    """A replaced file keeps its permission bits, those the writer's umask would take from a new
    file included: the new inode is given them explicitly, not through the creation mode."""
    root = open_root(["d/planted"])
    p = workspace.root_path / "d" / "planted"
    os.chmod(p, 0o666)
    if how == "large-named":
        monkeypatch.setattr(_atomic, "_tmpfile_works", False)
    umask = os.umask(0o077)
    try:
        written = _write_via(how, root, "d/planted")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(p.stat().st_mode) == 0o666
    assert p.read_bytes() == written


def test_a_hard_link_planted_at_the_temp_name_is_never_written_through(
    flavour: Flavour,
    workspace: Workspace,
    open_root: Callable[..., safefs.Root],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another writer guesses the temp file's name and plants a hard link to a file of its
    choosing there: the temp file is created O_EXCL, so the planted name is skipped, and the
    file it links to is left as it was."""
    root = open_root(["victim", "target"])
    victim = workspace.root_path / "victim"
    names = iter([b".target.planted.safefs-tmp", b".target.fresh.safefs-tmp"])
    monkeypatch.setattr(_atomic, "temp_name", lambda name: next(names))
    monkeypatch.setattr(_atomic, "_tmpfile_works", False)  # the named temp file path
    os.link(victim, workspace.root_path / ".target.planted.safefs-tmp")
    root.write_bytes("target", LARGE)
    assert victim.read_bytes() == b"content of victim\n"
    assert (workspace.root_path / "target").read_bytes() == LARGE
    assert os.stat(victim).st_ino != os.stat(workspace.root_path / "target").st_ino


# -- deep trees ------------------------------------------------------------------------------

DEPTH = 1100  # beyond the interpreter's recursion limit


def test_deep_trees_work_without_recursion(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root()
    deep = "/".join(["d"] * DEPTH)
    root.mkdir(deep, parents=True)
    root.write_bytes(deep + "/x/f", b"deep\n", parents=True)
    assert (workspace.root_path / deep / "x" / "f").read_bytes() == b"deep\n"
    assert sum(1 for _ in root.walk("d")) == DEPTH + 1
    assert sum(1 for _ in root.walk("d", topdown=False)) == DEPTH + 1
    root.rmtree("d")
    assert os.listdir(workspace.root_path) == []


# -- one link budget per operation -----------------------------------------------------------


def _budget_tree(base: Path, before: int, after: int) -> str:
    """``before`` links on the way to the final name, then a chain of ``after`` at the end."""
    (base / "d").mkdir()
    os.symlink(".", base / "d" / "s")
    (base / "d" / "target").write_text("end of the chain\n")
    for i in range(after):
        os.symlink(f"c{i + 1}" if i + 1 < after else "target", base / "d" / f"c{i}")
    return "d/" + "s/" * before + "c0"


BUDGET_OPS: dict[str, Callable[[safefs.Root, str], object]] = {
    "read_bytes": lambda r, p: r.read_bytes(p),
    "open": lambda r, p: r.open(p, "rb").close(),
    "stat": lambda r, p: r.stat(p),
    "write_bytes": lambda r, p: r.write_bytes(p, b"x"),
    "resolve": lambda r, p: r.resolve(p),
    "touch": lambda r, p: r.touch(p),
    "chmod": lambda r, p: r.chmod(p, 0o644),
}


@pytest.mark.parametrize("op", BUDGET_OPS, ids=str)
@pytest.mark.parametrize(
    ("before", "after", "loops"), [(30, 30, True), (15, 20, False)], ids=["30+30", "15+20"]
)
def test_one_link_budget_per_operation(
    op: str,
    before: int,
    after: int,
    loops: bool,
    flavour: Flavour,
    workspace: Workspace,
    open_root: Callable[..., safefs.Root],
) -> None:
    path = _budget_tree(workspace.root_path, before, after)
    kernel_loops = False
    try:
        os.stat(workspace.root_path / path)
    except OSError as exc:
        kernel_loops = exc.errno == errno.ELOOP
    assert kernel_loops is loops  # the reference: what the kernel says
    root = open_root()
    if loops or flavour.symlinks == "none":
        with pytest.raises(OSError) as info:
            BUDGET_OPS[op](root, path)
        assert info.value.errno == errno.ELOOP
    else:
        BUDGET_OPS[op](root, path)


# -- absolute prefixes -----------------------------------------------------------------------


def test_absolute_prefix_must_denote_the_held_directory(flavour: Flavour, tmp_path: Path) -> None:
    (tmp_path / "real" / "x").mkdir(parents=True)
    (tmp_path / "real" / "ROOT").mkdir()
    (tmp_path / "real" / "ROOT" / "f").write_text("held\n")
    (tmp_path / "ROOT").mkdir()
    (tmp_path / "ROOT" / "f").write_text("another directory\n")
    (tmp_path / "lnk").symlink_to("real/x")
    with flavour.open(f"{tmp_path}/lnk/../ROOT") as root:
        assert root.read_bytes("f") == b"held\n"
        assert root.path == str(tmp_path / "real" / "ROOT")
        assert os.stat(root.path).st_ino == os.fstat(root.fileno()).st_ino
        with pytest.raises(safefs.PathEscapeError):
            root.read_bytes(str(tmp_path / "ROOT" / "f"))  # the lexical spelling: refused
        assert root.read_bytes(str(tmp_path / "real" / "ROOT" / "f")) == b"held\n"


# -- walk() and the caller's dirs ------------------------------------------------------------


@pytest.mark.parametrize("planted", ["..", "d/../../outside", ".", "a/b", ""])
def test_walk_accepts_only_names_in_dirs(
    planted: str, flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["d/e/f"])
    seen: list[str] = []
    with pytest.raises(ValueError, match="not a name"):
        for top, dirs, files in root.walk("."):
            seen.append(top)
            seen.extend(files)
            if top == ".":
                dirs.append(planted)
    assert not any("secret" in s or "outside" in s for s in seen), seen


def test_walk_still_allows_pruning(flavour: Flavour, open_root: Callable[..., safefs.Root]) -> None:
    root = open_root(["a/x", "b/y"])
    tops = []
    for top, dirs, _files in root.walk("."):
        tops.append(top)
        dirs[:] = [d for d in dirs if d != "b"]
    assert tops == [".", "./a"]


# -- without O_PATH (the macOS configuration) ------------------------------------------------


def test_chmod_never_opens_the_node(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    # A socket cannot be opened at all (ENXIO): chmod must change it without opening it.
    root = open_root(["d/"])
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(workspace.root_path / "d" / "sock"))
        root.chmod("d/sock", 0o600)
        assert stat.S_IMODE(os.lstat(workspace.root_path / "d" / "sock").st_mode) == 0o600
        fifo = workspace.root_path / "fifo"
        os.mkfifo(fifo)
        root.chmod("fifo", 0o640)  # must not block
        assert stat.S_IMODE(os.lstat(fifo).st_mode) == 0o640


def test_chmod_of_a_link_itself_is_refused_on_every_backend(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["f", "l => f"])
    before = stat.S_IMODE(os.stat(workspace.root_path / "f").st_mode)
    with pytest.raises(OSError) as info:
        root.chmod("l", 0o600, follow_symlinks=False)
    assert info.value.errno == errno.EOPNOTSUPP
    assert stat.S_IMODE(os.stat(workspace.root_path / "f").st_mode) == before


@pytest.mark.parametrize(
    ("platform", "want"), [("darwin", 0x40100000), ("freebsd14", 0x00040000), ("linux", 0), ("sunos5", 0)]
)
def test_search_only_directory_flag_choice(platform: str, want: int) -> None:
    # Cannot be exercised here (Linux has no O_SEARCH and root ignores --x): the choice is.
    assert _sys.search_flag(platform) == want
    expected_dir = (want or os.O_RDONLY) | _sys.O_DIRECTORY
    assert _sys.dir_flags(False, platform) == expected_dir
    if _sys.HAVE_O_PATH:
        assert _sys.dir_flags(True, platform) == _sys.O_PATH | _sys.O_DIRECTORY


def test_openat2_without_o_path_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(safefs.ResolverUnavailableError):
        safefs.Root(tmp_path, resolver="openat2", _use_o_path=False)
    with safefs.Root(tmp_path, _use_o_path=False) as root:  # auto: the walk, as documented
        assert root.resolver == "walk"


# -- resources -------------------------------------------------------------------------------


def test_no_unclosed_scandir_iterator(flavour: Flavour, open_root: Callable[..., safefs.Root]) -> None:
    root = open_root(["a/b/c/", "a/z", "a/y/"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert root.resolve("a/b/c") == "a/b/c"
        root.symlink("../z", "a/b/l")
        with root.opendir("a/b/c") as sub:
            assert sub.listdir() == []
        gc.collect()
    leaks = [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert not leaks, [str(w.message) for w in leaks]


# -- touch -----------------------------------------------------------------------------------


def test_touch_updates_the_time_without_opening(
    flavour: Flavour,
    workspace: Workspace,
    open_root: Callable[..., safefs.Root],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = open_root(["f", "l => f"])
    p = workspace.root_path / "f"
    os.utime(p, (1_000_000, 1_000_000))
    opened: list[int] = []
    for name in ("openat", "open_component", "openat2"):  # every way _sys opens
        real = getattr(_sys, name)

        def spy(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            fd = _real(*args, **kwargs)
            if fd >= 0 and stat.S_ISREG(os.fstat(fd).st_mode):  # openat2 answers -errno
                opened.append(fd)
            return fd

        monkeypatch.setattr(_sys, name, spy)
    root.touch("f")
    if flavour.symlinks != "none":
        root.touch("l")
    assert p.stat().st_mtime > 1_000_000 + 3600
    assert opened == []  # no regular file was opened: no write access needed
    assert p.read_bytes() == b"content of f\n"


# -- link() error order ----------------------------------------------------------------------


def test_link_missing_source_to_dir_slash_is_enoent(
    flavour: Flavour, workspace: Workspace, open_root: Callable[..., safefs.Root]
) -> None:
    root = open_root(["d/"])
    with pytest.raises(FileNotFoundError):
        root.link("missing", "d/")
    with pytest.raises(FileNotFoundError):
        os.link(workspace.root_path / "missing", str(workspace.root_path / "d") + "/")


# -- parents made by descending --------------------------------------------------------------


def test_parents_created_with_one_mkdirat_per_level(
    flavour: Flavour,
    workspace: Workspace,
    open_root: Callable[..., safefs.Root],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A counting shim around the system calls: 8 missing levels take 8 mkdirat, and lookups
    from the root stay constant (one per level would mean a re-resolution per level)."""
    root = open_root()
    calls: Counter[str] = Counter()
    root_fd = root.fileno()
    for name in ("mkdirat", "openat", "open_component", "openat2", "fstatat", "readlinkat"):
        real = getattr(_sys, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            if args and args[0] == root_fd and _name != "mkdirat":
                calls["from the root"] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(_sys, name, counted)
    levels = "/".join(f"l{i}" for i in range(8))
    root.write_bytes(levels + "/f", b"deep\n", parents=True)
    print(f"[syscalls] {dict(calls)}")
    assert (workspace.root_path / levels / "f").read_bytes() == b"deep\n"
    assert calls["mkdirat"] == 8
    assert calls["from the root"] <= 3
    opens = calls["openat"] + calls["open_component"] + calls["openat2"]
    assert opens <= 2 * 8 + 3  # per level: the failed open and the open of the new directory


# -- the one flag policy ----------------------------------------------------------------------

O_CREAT, O_RDONLY, O_WRONLY = os.O_CREAT, os.O_RDONLY, os.O_WRONLY
ALWAYS = _sys.O_CLOEXEC | _sys.O_NOCTTY


@pytest.mark.parametrize(
    ("flags", "mode", "follow", "want_flags", "want_mode"),
    [
        (O_RDONLY, 0o666, False, O_RDONLY | ALWAYS | _sys.O_NOFOLLOW, 0),
        (O_RDONLY, 0o666, True, O_RDONLY | ALWAYS, 0),
        (O_WRONLY | O_CREAT, 0o640, False, O_WRONLY | O_CREAT | ALWAYS | _sys.O_NOFOLLOW, 0o640),
        # O_PATH takes only the flags it accepts (openat2 says EINVAL to any other) and no NOCTTY.
        (_sys.O_PATH | _sys.O_NONBLOCK | O_CREAT, 0o666, True, _sys.O_PATH | _sys.O_CLOEXEC, 0),
        (
            _sys.O_PATH | _sys.O_DIRECTORY,
            0,
            False,
            _sys.O_PATH | _sys.O_DIRECTORY | _sys.O_CLOEXEC | _sys.O_NOFOLLOW,
            0,
        ),
        (
            O_WRONLY | _sys.O_TMPFILE,
            0o600,
            False,
            O_WRONLY | _sys.O_TMPFILE | ALWAYS | _sys.O_NOFOLLOW,
            0o600 if _sys.O_TMPFILE else 0,
        ),
    ],
    ids=["read", "read-follow", "create", "o-path-masked", "o-path-dir", "tmpfile"],
)
def test_open_flag_policy(flags: int, mode: int, follow: bool, want_flags: int, want_mode: int) -> None:
    if flags & _sys.O_PATH and not _sys.HAVE_O_PATH:
        pytest.skip("no O_PATH on this platform")
    assert _sys.open_how(flags, mode, follow=follow) == (want_flags, want_mode)
    assert _sys.open_flags(flags, follow=follow) == want_flags


# -- openat2: EAGAIN retried in one place, a bounded number of times ---------------------------


@pytest.mark.skipif(not _sys.HAVE_NATIVE, reason="native extension not built")
@pytest.mark.parametrize("operation", ["read_bytes", "stat", "write_bytes"])
def test_openat2_eagain_is_retried_then_reported(
    tmp_path: Path, operation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if a rename somewhere raced with every ".." step: the kernel's EAGAIN is asked again
    up to MAX_EAGAIN_RETRIES times, on the read path, an ordinary open and a lookup alike; one
    more is a clean EAGAIN error naming the caller's path."""
    from safefs._resolve.openat2 import MAX_EAGAIN_RETRIES, Openat2Resolver

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x")
    real = _sys.openat2
    refusals = 0

    def raced(*args: Any) -> int:
        nonlocal refusals
        if refusals:
            refusals -= 1
            return -errno.EAGAIN
        return real(*args)

    monkeypatch.setattr(_sys, "openat2", raced)
    runs: dict[str, Callable[[safefs.Root], object]] = {
        "read_bytes": lambda r: r.read_bytes("d/../d/f"),
        "stat": lambda r: r.stat("d/../d/f"),
        "write_bytes": lambda r: r.write_bytes("d/../d/f", b"y"),
    }
    run = runs[operation]
    with safefs.Root(tmp_path, resolver="openat2") as root:
        # read_bytes retries in C where the extension is built, in a loop this cannot reach:
        # its Python path is the one that is told EAGAIN here.
        resolver = root._resolver
        assert isinstance(resolver, Openat2Resolver)
        monkeypatch.setattr(resolver, "read_bytes", resolver._read_python)
        refusals = MAX_EAGAIN_RETRIES
        run(root)
        assert refusals == 0
        refusals = MAX_EAGAIN_RETRIES + 1
        with pytest.raises(OSError) as info:
            run(root)
        assert info.value.errno == errno.EAGAIN and info.value.filename == "d/../d/f"
        assert refusals == 0


# -- native types ------------------------------------------------------------------------------


@pytest.mark.skipif(not _fastpath.AVAILABLE, reason="native extension not built")
def test_native_reader_cannot_be_built_uninitialised() -> None:
    # In a child: before the fix this crashed the interpreter (SIGSEGV), not the test.
    code = (
        "import os, safefs._native_read as n\n"
        "try:\n"
        "    n.Reader.__new__(n.Reader).read(os.open('.', os.O_RDONLY), b'x')\n"
        "except TypeError as exc:\n"
        "    print('TypeError', exc)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, (run.returncode, run.stderr)
    assert run.stdout.startswith("TypeError"), run.stdout
