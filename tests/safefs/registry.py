"""The one registry of operations every table of safefs tests draws from.

Each entry is one way of calling the public ``Root`` API on a path: its name (the parametrize
id), the public methods it exercises, whether it follows a final symlink, the confined call and,
where ``os`` has one, the same call through plain ``os`` (for the compare-os table). The scenario
table, the compare-os table, the differential test and the race tables take their operations
from here by name; a test checks that every public method of ``Root`` appears.
"""

from __future__ import annotations

import errno
import os
import stat as S
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import safefs

DATA = b"new bytes from the test\n"  # what every write writes
TEXT = "more\n"  # what every open() for writing writes
SRC = "zz_src"  # the other path of a two-path operation *to* the case path
MOVED = "zz_moved"  # ... and *from* it
LINK_TARGET = "zz_tgt"  # the target of every new symlink
NEW_MODE = 0o751
BORN_MODE = 0o640  # the mode= / perm= a new file or directory is asked to be born with
TIMES_NS = (1_000_000_123, 2_000_000_456)  # what every utime sets


def born(mode: int = BORN_MODE) -> int:
    """The mode bits a new node asked for ``mode`` gets: less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


@dataclass(frozen=True)
class Operation:
    name: str
    methods: tuple[str, ...]  # the public Root methods it calls
    follows: bool  # follows a final symlink (False: acts on the final name itself)
    run: Callable[[safefs.Root, str, str], Any]  # (root, path, the other path)
    plain: Callable[[str, str], Any] | None = None  # the same through os, if os has it
    changes_tree: bool = False
    other: str = ""  # the other path, for a two-path operation
    scenario: bool = True  # in the scenario table (False: its methods are covered there already)
    like: str = ""  # in the scenario table, expected to behave as this operation

    def call(self, root: safefs.Root, path: str) -> Any:
        return self.run(root, path, self.other)

    def call_plain(self, path: str) -> Any:
        assert self.plain is not None
        return self.plain(path, self.other)

    def __str__(self) -> str:
        return self.name


def _read_file(p: str, mode: str = "rb") -> Any:
    with open(p, mode) as f:  # not pathlib: it would drop a trailing slash
        return f.read()


def _read_heads(root: safefs.Root, p: str) -> bytes:
    """The case path read twice in one batch, a missing name between: each read of it comes
    back as read_head's would (its error raised here), the same both times."""
    first, missing, again = root.read_heads([p, "zz_missing_in_batch", p], 1 << 20)
    assert isinstance(missing, FileNotFoundError) and missing.filename == "zz_missing_in_batch"
    if isinstance(first, OSError):
        assert type(again) is type(first) and again.errno == first.errno, (first, again)
        raise first
    assert again == first
    return first


def _open_read(root: safefs.Root, p: str, mode: str) -> Any:
    with root.open(p, mode) as f:
        return f.read()


def _open_write(opener: Callable[[str, str], Any], p: str, mode: str) -> Any:
    with opener(p, mode) as f:
        f.write(TEXT if "b" not in mode else TEXT.encode())
        f.seek(0)
        return f.read() if "+" in mode else ""


def _rewrite(opener: Callable[[str, str], Any], p: str) -> Any:
    """Read the file and write the same bytes back in place (through the followed name)."""
    with opener(p, "r+b") as f:
        old = f.read()
        f.seek(0)
        f.write(old)
        return old


def _write_plain(p: str, data: bytes) -> int:
    with open(p, "wb") as f:
        return f.write(data)


def _touch_plain(p: str, mode: int = 0o666) -> None:
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, mode))


def _write_plain_mode(p: str, data: bytes) -> int:
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, BORN_MODE)
    with open(fd, "wb") as f:
        return f.write(data)


def _open_perm(opener: Callable[..., Any]) -> Callable[[str, str], Any]:
    """``opener(path, mode, perm=BORN_MODE)`` as a two-argument opener."""
    return lambda p, mode: opener(p, mode, perm=BORN_MODE)


def _open_plain_perm(p: str, mode: str) -> Any:
    flags = {"x": os.O_WRONLY | os.O_CREAT | os.O_EXCL}[mode]
    return open(os.open(p, flags, BORN_MODE), "w")


def _entries(entries: Any) -> list[tuple[str, bool, bool, bool]]:
    # (Following links from an entry is left out: os raises ELOOP where safefs says False.)
    return sorted(
        (e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False), e.is_symlink())
        for e in entries
    )


def _scandir_plain(p: str) -> list[tuple[str, bool, bool, bool]]:
    with os.scandir(p) as it:
        return _entries(it)


def _opendir(root: safefs.Root, p: str) -> list[tuple[str, bool, bool, bool]]:
    with root.opendir(p) as sub:
        return _entries(sub.scandir())


def _open_root(root: safefs.Root, p: str) -> list[tuple[str, bool, bool, bool]]:
    with root.open_root(p) as sub:
        return _entries(sub.scandir())


def _glob(root: safefs.Root, p: str, pattern: str) -> list[str]:
    """The entries of directory ``p`` that ``pattern`` matches below it, as glob lists them."""
    return sorted(root.glob(f"{p}/{pattern}" if p not in (".", "") else pattern))


def _same_owner(root: safefs.Root, p: str, follow: bool) -> None:
    """chown to the owner and group the process already has: resolved and changed, nothing
    observable moves (an unprivileged test cannot give a file away)."""
    (root.chown if follow else root.lchown)(p, os.getuid(), os.getgid())


def _copy_plain(src: str, dst: str) -> None:
    """A copy as open(2) sees it (shutil.copyfile turns the EISDIR of ``new/`` into ENOENT)."""
    with open(src, "rb") as source, open(dst, "wb") as target:
        target.write(source.read())


def _copytree(root: safefs.Root, p: str, o: str) -> list[tuple[str, list[str], list[str]]]:
    root.copytree(p, o)
    return _walk(root, o)


def _walk(root: safefs.Root, p: str) -> list[tuple[str, list[str], list[str]]]:
    return [(top, sorted(dirs), sorted(files)) for top, dirs, files in root.walk(p)]


def _walk_plain(p: str) -> list[tuple[str, list[str], list[str]]]:
    """os.walk(followlinks=False), with links to directories counted as files, as safefs
    documents; an error opening the top is raised (os.walk would swallow it)."""
    os.scandir(p).close()
    out = []
    for top, dirs, files in os.walk(p):
        links = [d for d in dirs if os.path.islink(os.path.join(top, d))]
        out.append((top, sorted(set(dirs) - set(links)), sorted(files + links)))
    return out


def _mode(p: str, follow: bool = True) -> int | None:
    """pathlib's exists()/is_*() rule (False for ENOENT, ENOTDIR, EBADF, ELOOP, any other error
    raised), on the path exactly as given: pathlib itself would drop a trailing slash."""
    try:
        return (os.stat(p) if follow else os.lstat(p)).st_mode
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            return None
        raise


def _kind(st: os.stat_result) -> tuple[int, int | None]:
    return S.S_IFMT(st.st_mode), st.st_size if S.S_ISREG(st.st_mode) else None


def _is(kind: Callable[[int], bool], mode: int | None) -> bool:
    return mode is not None and kind(mode)


OPERATIONS: list[Operation] = [
    # -- reading
    Operation(
        "read_bytes", ("read_bytes",), True, lambda r, p, o: r.read_bytes(p), lambda p, o: _read_file(p)
    ),
    Operation(
        "read_text",
        ("read_text",),
        True,
        lambda r, p, o: r.read_text(p),
        lambda p, o: _read_file(p, "r"),
        like="read_bytes",
    ),
    Operation(
        "read_head",
        ("read_head",),
        True,
        lambda r, p, o: r.read_head(p, 1 << 20),
        lambda p, o: _read_file(p),  # every file of the tables is shorter than the size asked
        like="read_bytes",
    ),
    Operation(
        "read_heads",
        ("read_heads",),
        True,
        lambda r, p, o: _read_heads(r, p),
        lambda p, o: _read_file(p),
        like="read_bytes",
    ),
    Operation("open", ("open",), True, lambda r, p, o: _open_read(r, p, "rb"), lambda p, o: _read_file(p)),
    Operation(
        "open_text",
        ("open",),
        True,
        lambda r, p, o: _open_read(r, p, "r"),
        lambda p, o: _read_file(p, "r"),
        scenario=False,
    ),
    Operation("stat", ("stat",), True, lambda r, p, o: _kind(r.stat(p)), lambda p, o: _kind(os.stat(p))),
    Operation("lstat", ("lstat",), False, lambda r, p, o: _kind(r.lstat(p)), lambda p, o: _kind(os.lstat(p))),
    Operation("exists", ("exists",), True, lambda r, p, o: r.exists(p), lambda p, o: _mode(p) is not None),
    Operation(
        "is_file",
        ("is_file",),
        True,
        lambda r, p, o: r.is_file(p),
        lambda p, o: _is(S.S_ISREG, _mode(p)),
        like="exists",
    ),
    Operation(
        "is_dir",
        ("is_dir",),
        True,
        lambda r, p, o: r.is_dir(p),
        lambda p, o: _is(S.S_ISDIR, _mode(p)),
        like="exists",
    ),
    Operation(
        "is_symlink",
        ("is_symlink",),
        False,
        lambda r, p, o: r.is_symlink(p),
        lambda p, o: _is(S.S_ISLNK, _mode(p, follow=False)),
    ),
    Operation(
        "listdir",
        ("listdir",),
        True,
        lambda r, p, o: sorted(r.listdir(p)),
        lambda p, o: sorted(os.listdir(p)),
    ),
    Operation(
        "iterdir",
        ("iterdir",),
        True,
        lambda r, p, o: sorted(os.path.basename(os.fspath(q)) for q in r.iterdir(p)),
        lambda p, o: sorted(os.listdir(p)),
        like="listdir",
    ),
    Operation(
        "scandir", ("scandir",), True, lambda r, p, o: _entries(r.scandir(p)), lambda p, o: _scandir_plain(p)
    ),
    Operation("opendir", ("opendir",), True, lambda r, p, o: _opendir(r, p), lambda p, o: _scandir_plain(p)),
    Operation("walk", ("walk",), True, lambda r, p, o: _walk(r, p), lambda p, o: _walk_plain(p)),
    Operation("resolve", ("resolve",), True, lambda r, p, o: r.resolve(p)),
    Operation(
        "resolve_strict", ("resolve",), True, lambda r, p, o: r.resolve(p, strict=True), scenario=False
    ),
    # No disk access at all: the spelling every operation starts from (tests in test_api.py).
    Operation("relative", ("relative",), False, lambda r, p, o: r.relative(p), scenario=False),
    Operation("readlink", ("readlink",), False, lambda r, p, o: r.readlink(p), lambda p, o: os.readlink(p)),
    # -- writing
    Operation(
        "write_bytes",
        ("write_bytes",),
        True,
        lambda r, p, o: r.write_bytes(p, DATA),
        lambda p, o: _write_plain(p, DATA),
        True,
    ),
    Operation(
        "write_text",
        ("write_text",),
        True,
        lambda r, p, o: r.write_text(p, DATA.decode()),
        lambda p, o: _write_plain(p, DATA),
        True,
        like="write_bytes",
    ),
    Operation(
        "open_w",
        ("open",),
        True,
        lambda r, p, o: _open_write(r.open, p, "w"),
        lambda p, o: _open_write(open, p, "w"),
        True,
    ),
    Operation(
        "open_a+",
        ("open",),
        True,
        lambda r, p, o: _open_write(r.open, p, "a+"),
        lambda p, o: _open_write(open, p, "a+"),
        True,
        scenario=False,
    ),
    Operation(
        "open_r+",
        ("open",),
        True,
        lambda r, p, o: _open_write(r.open, p, "r+"),
        lambda p, o: _open_write(open, p, "r+"),
        True,
        scenario=False,
    ),
    Operation(
        "open_rewrite",
        ("open",),
        True,
        lambda r, p, o: _rewrite(r.open, p),
        lambda p, o: _rewrite(open, p),
        True,
        scenario=False,
    ),
    Operation(
        "open_x",
        ("open",),
        False,
        lambda r, p, o: _open_write(r.open, p, "x"),
        lambda p, o: _open_write(open, p, "x"),
        True,
    ),
    Operation("touch", ("touch",), True, lambda r, p, o: r.touch(p), lambda p, o: _touch_plain(p), True),
    Operation(
        "touch_mode",
        ("touch",),
        True,
        lambda r, p, o: r.touch(p, BORN_MODE),
        lambda p, o: _touch_plain(p, BORN_MODE),
        True,
        like="touch",
    ),
    Operation(
        "write_bytes_mode",
        ("write_bytes",),
        True,
        lambda r, p, o: r.write_bytes(p, DATA, mode=BORN_MODE),
        lambda p, o: _write_plain_mode(p, DATA),
        True,
        like="write_bytes",
    ),
    Operation(
        "write_text_mode",
        ("write_text",),
        True,
        lambda r, p, o: r.write_text(p, DATA.decode(), mode=BORN_MODE),
        lambda p, o: _write_plain_mode(p, DATA),
        True,
        like="write_bytes",
        scenario=False,
    ),
    Operation(
        "open_x_perm",
        ("open",),
        False,
        lambda r, p, o: _open_write(_open_perm(r.open), p, "x"),
        lambda p, o: _open_write(_open_plain_perm, p, "x"),
        True,
        like="open_x",
    ),
    Operation(
        "utime",
        ("utime",),
        True,
        lambda r, p, o: r.utime(p, ns=TIMES_NS),
        lambda p, o: os.utime(p, ns=TIMES_NS),
        True,
        like="chmod",
    ),
    Operation(
        "utime_nofollow",
        ("utime",),
        False,
        lambda r, p, o: r.utime(p, ns=TIMES_NS, follow_symlinks=False),
        lambda p, o: os.utime(p, ns=TIMES_NS, follow_symlinks=False),
        True,
    ),
    Operation(
        "chmod",
        ("chmod",),
        True,
        lambda r, p, o: r.chmod(p, NEW_MODE),
        lambda p, o: os.chmod(p, NEW_MODE),
        True,
    ),
    # -- directories
    Operation("mkdir", ("mkdir",), False, lambda r, p, o: r.mkdir(p), lambda p, o: os.mkdir(p), True),
    Operation(
        "mkdir_mode",
        ("mkdir",),
        False,
        lambda r, p, o: r.mkdir(p, BORN_MODE),
        lambda p, o: os.mkdir(p, BORN_MODE),
        True,
        like="mkdir",
    ),
    Operation(
        "makedirs",
        ("mkdir",),
        False,
        lambda r, p, o: r.mkdir(p, parents=True),
        lambda p, o: os.makedirs(p),
        True,
        scenario=False,
    ),
    Operation(
        "makedirs_exist_ok",
        ("mkdir",),
        True,
        lambda r, p, o: r.mkdir(p, parents=True, exist_ok=True),
        lambda p, o: os.makedirs(p, exist_ok=True),
        True,
        scenario=False,
    ),
    Operation("rmdir", ("rmdir",), False, lambda r, p, o: r.rmdir(p), lambda p, o: os.rmdir(p), True),
    Operation("rmtree", ("rmtree",), False, lambda r, p, o: r.rmtree(p), changes_tree=True),
    Operation("remove_all", ("remove_all",), False, lambda r, p, o: r.remove_all(p), changes_tree=True),
    # -- names
    Operation("remove", ("remove",), False, lambda r, p, o: r.remove(p), lambda p, o: os.unlink(p), True),
    Operation(
        "unlink",
        ("unlink",),
        False,
        lambda r, p, o: r.unlink(p),
        lambda p, o: os.unlink(p),
        True,
        like="remove",
    ),
    Operation(
        "rename_from",
        ("rename",),
        False,
        lambda r, p, o: r.rename(p, o),
        lambda p, o: os.rename(p, o),
        True,
        MOVED,
    ),
    Operation(
        "rename_to",
        ("rename",),
        False,
        lambda r, p, o: r.rename(o, p),
        lambda p, o: os.rename(o, p),
        True,
        SRC,
    ),
    Operation(
        "replace_to",
        ("replace",),
        False,
        lambda r, p, o: r.replace(o, p),
        lambda p, o: os.replace(o, p),
        True,
        SRC,
        like="rename_to",
    ),
    Operation(
        "rename_noreplace_to",
        ("rename",),
        False,
        lambda r, p, o: r.rename(o, p, replace=False),
        None,
        True,
        SRC,
    ),
    Operation(
        "exchange_to",
        ("exchange",),
        False,
        lambda r, p, o: r.exchange(o, p),
        None,
        True,
        SRC,
    ),
    Operation(
        "link_from",
        ("link",),
        False,
        lambda r, p, o: r.link(p, o),
        lambda p, o: os.link(p, o, follow_symlinks=False),
        True,
        MOVED,
    ),
    Operation(
        "link_to", ("link",), False, lambda r, p, o: r.link(o, p), lambda p, o: os.link(o, p), True, SRC
    ),
    Operation(
        "symlink",
        ("symlink",),
        False,
        lambda r, p, o: r.symlink(LINK_TARGET, p),
        lambda p, o: os.symlink(LINK_TARGET, p),
        True,
    ),
    # -- copy, move, owner, glob, sub-roots (safefs._copy, _owner, _glob)
    Operation(
        "copy_to",
        ("copy",),
        True,
        lambda r, p, o: r.copy(o, p),
        lambda p, o: _copy_plain(o, p),
        True,
        SRC,
        like="write_bytes",
    ),
    Operation(
        "copy_from",
        ("copy",),
        True,
        lambda r, p, o: r.copy(p, o),
        lambda p, o: _copy_plain(p, o),
        True,
        MOVED,
        like="read_bytes",
    ),
    Operation(
        "copytree_from",
        ("copytree",),
        True,
        lambda r, p, o: _copytree(r, p, o),
        None,
        True,
        MOVED,
        scenario=False,
    ),
    Operation(
        "move_from", ("move",), False, lambda r, p, o: r.move(p, o), None, True, MOVED, like="rename_from"
    ),
    Operation("move_to", ("move",), False, lambda r, p, o: r.move(o, p), None, True, SRC, like="rename_to"),
    Operation("chown", ("chown",), True, lambda r, p, o: _same_owner(r, p, True), like="chmod"),
    Operation("lchown", ("lchown",), False, lambda r, p, o: _same_owner(r, p, False), like="lstat"),
    Operation("glob", ("glob",), True, lambda r, p, o: _glob(r, p, "*"), scenario=False),
    Operation("rglob", ("rglob",), True, lambda r, p, o: sorted(r.rglob("*")), scenario=False),
    Operation("open_root", ("open_root",), True, lambda r, p, o: _open_root(r, p), like="opendir"),
    Operation("path_of", ("path_of",), True, lambda r, p, o: r.path_of(p).read_bytes(), scenario=False),
]
BY_NAME = {op.name: op for op in OPERATIONS}
# Methods that take no path inside the root: the Root's own lifecycle.
LIFECYCLE = {"close", "fileno"}


def public_methods() -> set[str]:
    return {
        name for name in dir(safefs.Root) if not name.startswith("_") and callable(getattr(safefs.Root, name))
    }
