"""The directories a server may touch, and how a path given by a client is mapped into one.

Each DIR on the command line is held as a :class:`safefs.Root`. A path is accepted when it is
relative (taken against the first DIR) or absolute and lies under one of the DIRs, compared by
whole components (so ``/work_evil`` is not under ``/work``). The remainder is handed to safefs,
which resolves it beneath the directory's fd: ``..`` or a symlink that leads out is refused
there, whatever the string looked like. ``~`` is a name, never expanded.

A client's roots may narrow the set (each root under a DIR becomes a sub-root opened through
safefs), never widen it: a root outside every DIR is ignored.
"""

from __future__ import annotations

import os
import sys
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import safefs
from safefs.workspace.errors import WorkspaceError, require_path


@dataclass(frozen=True)
class Directory:
    display: str  # the absolute path as the operator (or the client's root) gave it
    anchors: tuple[str, ...]  # absolute spellings a client path may start with
    root: safefs.Root
    owned: bool = True  # False for a DIR kept as it is by narrowing: its owner closes it


def remainder(anchor: str, path: str) -> str | None:
    """``path`` relative to ``anchor`` when it lies under it by whole components, else None."""
    base = anchor.rstrip("/")
    if path == base or path == base + "/":
        return "."
    if path.startswith(base + "/"):
        return path[len(base) + 1:].lstrip("/") or "."
    return None


def escape(path: str) -> WorkspaceError:
    return WorkspaceError(f"{safefs.ESCAPE_MESSAGE}: {path!r}")


class Directories:
    def __init__(self, directories: Sequence[Directory]) -> None:
        self.directories = list(directories)

    @classmethod
    def open(cls, paths: Sequence[str]) -> Directories:
        """Open every DIR; OSError names the one that failed."""
        opened: list[Directory] = []
        try:
            for path in paths:
                absolute = os.path.abspath(path)
                root = safefs.Root(absolute)
                anchors = tuple(dict.fromkeys((absolute, os.path.realpath(absolute))))
                opened.append(Directory(absolute, anchors, root))
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
        """The directory a client path lies in and the path relative to it."""
        require_path(path)
        if not self.directories:
            raise WorkspaceError("no allowed directories: the client's roots lie outside the "
                                 "server's directories")
        if not path.startswith("/"):
            return self.directories[0], path
        best: tuple[int, Directory, str] | None = None
        for d in self.directories:
            for anchor in d.anchors:
                rest = remainder(anchor, path)
                if rest is not None and (best is None or len(anchor) > best[0]):
                    best = (len(anchor), d, rest)
        if best is None:
            raise escape(path)
        return best[1], best[2]

    def displays(self) -> list[str]:
        return [d.display for d in self.directories]

    def narrowed(self, uris: Iterable[str]) -> Directories:
        """The part of these directories that lies inside the client's roots (file URIs or
        absolute paths). Roots are opened beneath a DIR through safefs, so a root that names a
        symlink out of a DIR is refused, not followed."""
        out: list[Directory] = []
        for uri in uris:
            path = root_path(uri)
            if path is None:
                continue
            for d in self.directories:
                if any(remainder(path, anchor) is not None for anchor in d.anchors):
                    out.append(Directory(d.display, d.anchors, d.root, owned=False))
                    continue  # the root contains the whole DIR: keep the DIR
                rest = next((r for a in d.anchors if (r := remainder(a, path)) is not None), None)
                if rest is None:
                    continue
                try:
                    sub = d.root.opendir(rest)
                except OSError as exc:
                    print(f"safefs-mcp: client root ignored ({exc.strerror}): {path}",
                          file=sys.stderr)
                    continue
                out.append(Directory(path.rstrip("/") or "/", (path,), sub))
        kept: dict[str, Directory] = {}
        for d in out:
            if d.display in kept and d.owned:
                d.root.close()  # the same directory twice
            else:
                kept.setdefault(d.display, d)
        return Directories(list(kept.values()))


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
