"""Writes that would give git outside code to run: refused before they are made.

git runs what a repository names (hooks, ``core.fsmonitor``, filters) whenever someone runs it
there. A write tool must therefore not:

- write into a ``.git`` (any case) or any directory git takes for a git directory, nor add the
  entry that makes a directory one (:func:`repository_problem`);
- write a path that a repository on the way to it names: its config's included files, its
  hooks path, husky's directory above a hooks path ``<dir>/_`` (git finds that repository as it
  does, upward from the written path, within the workspace);
- write a path that the repository enclosing the workspace names in it
  (:func:`safefs.workspace.gitrepos.enclosing_named`).

Each check lists the directories on the path and reads the configs of the repositories found
there: the cost grows with the path's depth, not with the tree.
"""

from __future__ import annotations

import errno
import posixpath

import safefs
from safefs.workspace import gitrepos


def repository_problem(root: safefs.Root, path: str) -> str | None:
    """Why a write creating or changing the root-relative ``path`` would touch a repository,
    or None. Each directory on the way is judged with the entry the write adds to it. A
    directory that cannot be listed is a refusal (fail closed)."""
    parts = [part for part in path.split("/") if part not in ("", ".")]
    for depth, child in enumerate(parts):
        directory = "/".join(parts[:depth]) or "."
        try:
            names = set(root.listdir(directory))
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                names = set()  # made by the write: it holds only what the write puts there
            else:
                return f"{directory!r} cannot be checked for a git repository ({exc.strerror})"
        if gitrepos.looks_like_git_dir(names):
            return f"{directory!r} is a git repository (it holds HEAD, objects and refs, or commondir)"
        if gitrepos.looks_like_git_dir(names | {child}):
            return (
                f"{posixpath.join(directory, child)!r} would make {directory!r} a git repository, "
                "which git outside would use (its config and hooks run code)"
            )
    return None


def _under(path: str, other: str) -> bool:
    return other == "." or path == other or path.startswith(other + "/")


def named_problem(root: safefs.Root, path: str) -> str | None:
    """Why ``path`` (root-relative, canonical) is one a repository's config names, or None."""
    parts = [part for part in path.split("/") if part not in ("", ".")]
    for depth in range(len(parts), -1, -1):
        directory = "/".join(parts[:depth]) or "."
        try:
            names = root.listdir(directory) if root.is_dir(directory) else []
        except OSError:
            continue  # repository_problem has refused what cannot be listed on the way
        dot_gits = [name for name in names if name.casefold() == gitrepos.DOT_GIT]
        if not dot_gits:
            continue
        found = gitrepos.Repositories(
            dot_git=[posixpath.join(directory, name) if depth else name for name in dot_gits]
        )
        gitrepos.follow(root, found)
        for target in [*found.configs, *(named for named, _ in found.named)]:
            if target != "." and _under(path, target):
                return f"{target!r} is read by git for the repository at {directory!r} (its config or hooks)"
    for target, _kind in gitrepos.enclosing_named(root):
        if _under(path, target):
            return f"{target!r} is read by git for the repository that encloses this directory"
    return None


def write_problem(root: safefs.Root, path: str) -> str | None:
    """Why a write to ``path`` (root-relative, as given) must not be made, or None: judged on
    the path as given and on where it leads (links followed beneath the root)."""
    candidates = [path]
    try:
        candidates.append(root.resolve(path))
    except (safefs.PathEscapeError, OSError, ValueError):
        pass  # the operation refuses this path itself
    for candidate in dict.fromkeys(candidates):
        parts = [part for part in candidate.split("/") if part not in ("", ".")]
        if any(part.casefold() == gitrepos.DOT_GIT for part in parts):
            return f"{candidate!r} lies in a .git, which git outside would use"
        problem = repository_problem(root, candidate) or named_problem(root, candidate)
        if problem is not None:
            return problem
    return None
