"""The directories a server may touch, and how a path given by a client is mapped into one.

Each DIR on the command line is opened as given, as a :class:`safefs.Root`: the kernel resolves
it, so ``lnk/../ROOT`` is the directory the link's parent holds, not the one the string seems to
name, and the server names each directory as its Root does (``Root.path``). A client path is
accepted when it is relative (taken against the first DIR) or absolute under one of a DIR's own
spellings (``Root.anchors``: as opened and its realpath, each only if it denotes the directory
held), compared by ``Root.relative`` by whole components (so ``/work_evil`` is not under
``/work``). The rest is resolved by safefs beneath the directory's fd: ``..`` or a symlink that
leads out is refused there, whatever the string looked like. ``~`` is a name, never expanded.

A client path is first taken back from the spelling results show it in
(:func:`safefs.workspace.names.from_shown`: ``caf\\xe9.txt`` names the byte 0xE9).

What a client's roots do is :mod:`safefs.mcp.roots`' business; here are the two ways of
building directories from them: :meth:`Directories.narrowed` (each root inside a DIR becomes a
sub-root opened through safefs, a root outside every DIR is ignored) and
:meth:`Directories.open_roots` (the roots themselves, as the official server serves them).
"""

from __future__ import annotations

import errno
import re
import sys
import unicodedata
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import safefs
from safefs.workspace.errors import PATH, WorkspaceError, os_failure, require_path
from safefs.workspace.names import from_shown

NO_DIRECTORIES = "no allowed directories"
# What a client root that names no usable directory fails with: it is then ignored. Any other
# failure (EMFILE at the fd limit, ENOMEM, EIO) says nothing about the root, and narrowing fails
# as a whole (:class:`RootsUnopenable`) rather than quietly leaving the root out.
NOT_A_DIRECTORY = frozenset(
    {errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.ELOOP, errno.ENAMETOOLONG, errno.EXDEV}
)


class RootsUnopenable(OSError):
    """A client root could not be opened for a reason that is not about the root itself."""


def _ignorable(exc: OSError) -> bool:
    """Whether ``exc`` says the root names no usable directory (so it may be ignored)."""
    return isinstance(exc, safefs.PathEscapeError) or exc.errno in NOT_A_DIRECTORY


def _unopenable(exc: OSError) -> RootsUnopenable:
    return RootsUnopenable(exc.errno, exc.strerror or type(exc).__name__)


WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")  # C:\x, C:/x, \\server\share


@dataclass(frozen=True)
class Directory:
    root: safefs.Root
    owned: bool = True  # False for a DIR kept as it is by narrowing: its owner closes it

    @property
    def display(self) -> str:
        """The directory's absolute path, as its Root names it."""
        return self.root.path


def escape(path: str) -> WorkspaceError:
    return WorkspaceError.naming(f"{safefs.ESCAPE_MESSAGE}: {PATH}", path)


class Directories:
    def __init__(self, directories: Sequence[Directory], note: str = "") -> None:
        self.directories = list(directories)
        self.note = note  # why these are served, when the client's roots were not used

    @classmethod
    def open(cls, paths: Sequence[str]) -> Directories:
        """Open every DIR as given; OSError names the one that failed."""
        opened: list[Directory] = []
        try:
            for path in paths:
                opened.append(Directory(safefs.Root(path)))
        except BaseException:
            for d in opened:
                d.root.close()
            raise
        return cls(opened)

    def close(self) -> None:
        for d in self.directories:
            if d.owned:
                d.root.close()

    def locate(self, path: str) -> tuple[Directory, str]:
        """The directory a client path lies in and the path relative to it: for an absolute path
        the deepest directory holding it (the one it is least far below), for a relative one the
        first (every directory takes it as it is)."""
        require_path(path)
        if WINDOWS_PATH.match(path):  # as the official server: never a literal name "C:\x"
            raise WorkspaceError(f"Access denied - Windows-style path received on a POSIX host: {path}")
        if not self.directories:
            raise WorkspaceError(f"{NO_DIRECTORIES}: {self.note}" if self.note else NO_DIRECTORIES)
        on_disk = from_shown(path)
        best: tuple[Directory, str] | None = None
        for d in self.directories:
            try:
                rel: str = d.root.relative(on_disk)
            except safefs.PathEscapeError:
                continue
            except OSError as exc:  # a path too long for any directory
                raise os_failure(exc, path) from None
            if best is None or _depth_below(rel) < _depth_below(best[1]):
                best = (d, rel)
        if best is None:
            raise escape(path)
        return best[0], unicode_equivalent(best[0].root, best[1])

    def spellings(self, paths: Iterable[str]) -> dict[str, str]:
        """For each client path that names something under a directory, its path relative to
        that directory (what the workspace operations are given, and name in their errors)
        mapped back to the client's spelling. A relative path that is also one of ``paths`` is
        left out: it already is a spelling the client sent."""
        given = list(paths)
        out: dict[str, str] = {}
        for path in given:
            try:
                rel = self.locate(path)[1]
            except WorkspaceError:
                continue
            if rel not in given:
                out.setdefault(rel, path)
        return out

    def displays(self) -> list[str]:
        return [d.display for d in self.directories]

    def narrowed(self, uris: Iterable[str]) -> Directories:
        """The part of these directories that lies inside the client's roots (file URIs or
        absolute paths). A root that holds a whole DIR keeps the DIR; a root inside a DIR is
        opened beneath it through safefs, so a root that names a symlink out of a DIR is
        refused, not followed. :class:`RootsUnopenable` when a root could not be opened for a
        reason other than naming no usable directory (nothing opened here is left open)."""
        out: list[Directory] = []
        try:
            for uri in uris:
                path = root_path(uri)
                if path is None:
                    continue
                held = _open_outer(path)
                try:
                    for d in self.directories:
                        if held is not None and _holds(held, d.root):
                            out.append(Directory(d.root, owned=False))
                            continue
                        sub = _inside(d.root, path)
                        if sub is not None:
                            out.append(Directory(sub))
                finally:
                    if held is not None:
                        held.close()
        except RootsUnopenable:
            Directories(out).close()
            raise
        kept: dict[str, Directory] = {}
        for d in out:
            if d.display in kept and d.owned:
                d.root.close()  # the same directory twice
            else:
                kept.setdefault(d.display, d)
        return Directories(list(kept.values()))

    @classmethod
    def open_roots(cls, uris: Iterable[str]) -> Directories:
        """The client's roots themselves, each opened as a Root (a root that is not a directory
        is ignored, said on stderr): what the official server serves."""
        opened: dict[str, Directory] = {}
        for uri in uris:
            path = root_path(uri)
            if path is None:
                continue
            try:
                d = Directory(safefs.Root(path))
            except OSError as exc:
                if not _ignorable(exc):
                    Directories(list(opened.values())).close()
                    raise _unopenable(exc) from None
                print(f"safefs-mcp: client root ignored ({exc.strerror}): {path}", file=sys.stderr)
                continue
            if d.display in opened:
                d.root.close()
            else:
                opened[d.display] = d
        return cls(list(opened.values()))


def unicode_equivalent(root: safefs.Root, rel: str) -> str:
    """``rel`` with each missing non-ASCII component replaced by the one entry of its directory
    that is the same text in another Unicode normalisation (``é`` as one code point or as ``e``
    and an accent: macOS stores the second). Left as given when none or several match, so
    nothing is guessed; an ASCII path costs nothing."""
    if rel.isascii():
        return rel
    done: list[str] = []
    for part in rel.split("/"):
        if part.isascii():
            done.append(part)
            continue
        try:
            root.lstat("/".join([*done, part]))
            done.append(part)
            continue
        except FileNotFoundError:
            pass
        except OSError:  # an escape or a loop: the operation itself reports it
            return rel
        try:
            names = root.listdir("/".join(done) or ".")
        except OSError:
            return rel
        wanted = unicodedata.normalize("NFC", part)
        same = [n for n in names if unicodedata.normalize("NFC", n) == wanted]
        if len(same) != 1:
            return rel
        done.append(same[0])
    return "/".join(done)


def _depth_below(rel: str) -> int:
    """How far below its directory a path relative to it lies, for choosing the deepest DIR:
    every DIR holding an absolute path leaves a tail of it, the deepest one the shortest."""
    return 0 if rel in (".", "./") else len(rel)


def _open_outer(path: str) -> safefs.Root | None:
    """A client root opened only to learn its spellings (``Root.anchors``); nothing is served
    through it. None when there is no directory there: it then holds no DIR."""
    try:
        return safefs.Root(path)
    except OSError as exc:
        if not _ignorable(exc):
            raise _unopenable(exc) from None
        return None


def _holds(outer: safefs.Root, inner: safefs.Root) -> bool:
    """Whether ``outer`` holds the whole of ``inner``: one of the spellings of ``inner`` lies
    under one of ``outer``'s, as safefs compares them."""
    for anchor in inner.anchors:
        try:
            outer.relative(anchor)
        except OSError:
            continue
        return True
    return False


def _inside(root: safefs.Root, path: str) -> safefs.Root | None:
    """The client root ``path`` opened beneath ``root`` through safefs, or None when it does not
    lie under ``root`` or cannot be opened there (said on stderr)."""
    try:
        rel = root.relative(path)
    except OSError:
        return None
    try:
        sub: safefs.Root = root.opendir(rel)
    except OSError as exc:
        if not _ignorable(exc):
            raise _unopenable(exc) from None
        print(f"safefs-mcp: client root ignored ({exc.strerror}): {path}", file=sys.stderr)
        return None
    return sub


def root_path(uri: str) -> str | None:
    """The absolute path of a client root (``file://`` URI or absolute path), or None."""
    if uri.startswith("file://"):
        parsed = urllib.parse.urlparse(uri)
        if parsed.netloc not in ("", "localhost"):
            return None
        path = urllib.parse.unquote(parsed.path)
    else:
        path = uri
    return path if path.startswith("/") and "\0" not in path else None
