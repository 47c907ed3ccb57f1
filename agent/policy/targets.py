"""What a tool call would really touch: its paths, canonical and relative to the workspace root.

A rule judged on the path as the model spelled it is easy to walk around: ``innocent.txt`` may
be a symlink to ``secrets/db.txt``. So each path is canonicalised the way the operation itself
will follow it. ``Root.resolve`` does that when the path's parent exists. A write creates missing
parents, so a path such as ``docs/alias -> ../secrets/new/x`` (a dangling link into a missing
directory) must still be judged as ``secrets/new/x``: :func:`canonical_path` then walks the
existing components itself, following links as the write would, and appends the missing rest.

This is a judgement made before the call runs, not a confinement boundary: safefs is the
boundary, and the tree may change between the check and the call.
"""

from __future__ import annotations

import errno
import posixpath
import stat
from collections import deque
from collections.abc import Callable

import safefs
from safefs import PathEscapeError

MAX_SYMLINKS = 40  # the kernel's budget, which safefs keeps too

# Which arguments of each tool name a path, and the default when the argument is absent.
PATH_ARGUMENTS: dict[str, tuple[str, str | None]] = {
    "read": ("path", None),
    "write": ("path", None),
    "edit": ("path", None),
    "list": ("path", "."),
    "glob": ("path", "."),
    "grep": ("path", "."),
}
# Tools whose path names a directory whose entries the tool reports.
DIRECTORY_TOOLS = frozenset({"list", "glob", "grep"})
# Tools that change the file their path names.
WRITING_TOOLS = frozenset({"write", "edit"})


def call_path(name: str, args: object) -> str | None:
    """The path argument of a call to tool ``name`` (its default when omitted), or None when
    the tool takes no path or the argument is not a string."""
    spec = PATH_ARGUMENTS.get(name)
    if spec is None or not isinstance(args, dict):
        return None
    key, default = spec
    value = args.get(key, default)
    return value if isinstance(value, str) else None


def _relative(root: safefs.Root, path: str) -> str | None:
    """``path`` relative to the root, or None when it is absolute and not beneath it."""
    if not path.startswith("/"):
        return path
    base = root.path.rstrip("/")
    if path == base:
        return "."
    if path.startswith(base + "/"):
        return path[len(base) + 1:]
    return None


def _walk(root: safefs.Root, rel: str) -> str | None:
    """Canonicalise ``rel`` component by component, following links as an operation would and
    keeping what does not exist yet as plain names. None when the path leaves the root (or
    meets a link where the root refuses links)."""
    done = "."  # canonical, and made only of real directories, so ``..`` is its lexical parent
    parts = deque(rel.split("/"))
    links = 0
    while parts:
        name = parts.popleft()
        if name in ("", "."):
            continue
        if name == "..":
            if done == ".":
                if root.symlinks != "in_root":
                    return None
                continue
            done = posixpath.dirname(done) or "."
            continue
        candidate = name if done == "." else f"{done}/{name}"
        try:
            mode = root.lstat(candidate).st_mode
        except FileNotFoundError:
            rest = posixpath.normpath("/".join([candidate, *parts]))
            return None if rest.startswith("..") else rest
        if not stat.S_ISLNK(mode):
            done = candidate
            continue
        links += 1
        if links > MAX_SYMLINKS or root.symlinks == "none":
            return None
        target = root.readlink(candidate)
        if target.startswith("/"):
            if root.symlinks != "in_root":
                return None
            done = "."
        parts.extendleft(reversed(target.split("/")))
    return done


# Errors with which the operation itself refuses the path, whatever a rule would say.
_REFUSED = (errno.ELOOP, errno.ENOTDIR, errno.ENAMETOOLONG)


def canonical_path(root: safefs.Root, path: str) -> str | None:
    """The canonical root-relative path ``path`` designates, or None when the operation will
    refuse it (it escapes the root, loops, or is malformed). When it cannot be worked out for
    another reason (a directory that cannot be listed, say), the path normalised lexically is
    returned, so a rule still judges something rather than nothing."""
    if not path or "\0" in path:
        return None
    try:
        return str(root.resolve(path))
    except FileNotFoundError:
        pass  # a missing parent, perhaps behind a dangling link: walk it ourselves
    except (OSError, ValueError) as exc:
        return _after_failure(exc, path)
    rel = _relative(root, path)
    if rel is None:
        return None
    try:
        return _walk(root, rel)
    except (OSError, ValueError) as exc:
        return _after_failure(exc, path)


def _after_failure(exc: OSError | ValueError, path: str) -> str | None:
    if isinstance(exc, (PathEscapeError, ValueError)) or exc.errno in _REFUSED:
        return None
    return _lexical(path)


def _lexical(path: str) -> str:
    return posixpath.normpath(path).lstrip("/")


Canonicalise = Callable[[str], "str | None"]


def canonicaliser(root: safefs.Root | None) -> Canonicalise:
    """``canonical_path`` bound to ``root``; without a root, the path normalised lexically."""
    if root is None:
        return lambda path: _lexical(path) if path else None
    return lambda path: canonical_path(root, path)
