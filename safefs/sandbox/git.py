"""Git's state and a command: nothing a command leaves may be a repository, a config or a hook
that git outside the sandbox will use.

git runs code its repository names (hooks, ``core.fsmonitor``, ``core.sshCommand``, filters,
aliases) whenever someone runs git there, outside the sandbox, and it finds a repository in any
directory by its entries, under any name (:mod:`safefs.workspace.gitrepos`). So:

- **Before each command** every repository in the workspace is found, and read-only to it: each
  ``.git`` (directory or pointer file), each bare repository, what a pointer file or a
  ``commondir`` names, every config file they include, and ``core.hooksPath`` (bind mounts:
  Landlock can only add rights beneath a directory, never take them away). What a config names
  that does not exist yet gets an empty placeholder made for it (a directory at its first
  missing component; an empty file for an include, so git reads it as nothing), as Codex does,
  removed when the sandbox is closed; so does a missing ``.git`` at the workspace root.
- **Every directory above a read-only path is pinned**: bound onto itself, so it can be neither
  renamed, removed nor replaced (a mount point cannot be), because a rename of a parent moves
  the mounts below it along and leaves its old name free for a fresh repository.
- **After each command** the workspace is searched again, and every repository that was not
  there before is disabled: its ``HEAD`` is renamed to ``HEAD.untrusted`` (without ``HEAD``,
  git does not take a directory for a repository, so it neither reads its config nor runs its
  hooks), a new ``.git`` pointer file or link to ``.git.untrusted``. The kernel cannot stop a
  command from making files named ``HEAD``, ``objects`` and ``refs`` in a directory it may
  write (Landlock and seccomp see no names), so this part is a search and not a kernel rule;
  no process of the command is left to race it (the sandbox kills them all when it returns).

Every path is canonical and relative to the workspace (resolved by :class:`safefs.Root`), so the
launcher binds exactly it, following no link.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field

import safefs
from safefs.workspace import gitrepos

UNTRUSTED = ".untrusted"


@dataclass
class GitPlan:
    """``read_only``: the paths to bind read-only; ``hidden``: files to cover (a run's own
    record); ``pinned``: the directories above both, made mount points; ``placeholders``: what
    was made for it (empty directories and files, removed by :func:`remove_placeholders`);
    ``repositories``: the repositories there when planned."""

    read_only: list[str] = field(default_factory=list)
    pinned: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    repositories: frozenset[str] = frozenset()
    hidden: list[str] = field(default_factory=list)

    def add(self, path: str) -> None:
        if path not in self.read_only:
            self.read_only.append(path)

    def finish(self) -> None:
        """Keep the shallowest of nested read-only paths, and pin every directory above them."""
        kept: list[str] = []
        for path in sorted(self.read_only, key=_depth):
            if not any(_under(path, other) for other in kept):
                kept.append(path)
        self.read_only = kept
        self.hidden = [path for path in self.hidden if not any(_under(path, other) for other in kept)]
        pinned: set[str] = set()
        for path in kept + self.hidden:
            parent = posixpath.dirname(path)
            while parent and not any(_under(parent, other) for other in kept):
                pinned.add(parent)
                parent = posixpath.dirname(parent)
        self.pinned = sorted(pinned, key=_depth)  # a parent is bound before what lies below it


def _depth(path: str) -> tuple[int, str]:
    return path.count("/"), path


def _under(path: str, other: str) -> bool:
    return path == other or path.startswith(other + "/")


def _first_missing(root: safefs.Root, path: str) -> str | None:
    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        if not root.exists(prefix, follow_symlinks=False):
            return prefix
    return None


def _protect(root: safefs.Root, plan: GitPlan, path: str, kind: str = "dir") -> None:
    """Bind ``path`` read-only, or a placeholder where it would be made: an empty directory at
    its first missing component, or for a file the missing directories and an empty file."""
    if path == ".":
        return  # the workspace itself is the command's to write
    missing = _first_missing(root, path)
    if missing is None:
        plan.add(path)
        return
    try:
        if kind == "file":
            for part in _parts_from(missing, path)[:-1]:
                root.mkdir(part, mode=0o755)
                plan.placeholders.append(part)
            root.write_bytes(path, b"")
            root.chmod(path, 0o444)
            plan.placeholders.append(path)
            plan.add(path)
        else:
            root.mkdir(missing, mode=0o555)
            plan.placeholders.append(missing)
            plan.add(missing)
    except OSError as exc:
        # The agent cannot make it here (a read-only directory above, say): the command must
        # not be the one to, so the nearest existing directory above is read-only to it.
        parent = posixpath.dirname(missing)
        if not parent:
            raise OSError(f"cannot protect {path}, which git would read: {exc.strerror}") from exc
        plan.add(parent)


def _parts_from(first: str, path: str) -> list[str]:
    """``first`` and each longer prefix of ``path`` down to ``path`` itself."""
    parts = path.split("/")
    return ["/".join(parts[:end]) for end in range(first.count("/") + 1, len(parts) + 1)]


def hidden_files(root: safefs.Root, paths: Iterable[str]) -> list[str]:
    """The files of ``paths`` (absolute) that lie in the workspace now, canonical and relative,
    with the ``.partial`` files set aside beside them."""
    found: list[str] = []
    for path in paths:
        try:
            located = root.resolve(root.relative(path))
            if located == "." or not root.is_file(located):
                continue
            directory, name = posixpath.split(located)
            found.append(located)
            found += [
                posixpath.join(directory, other)
                for other in root.listdir(directory or ".")
                if other.startswith(name + ".partial") and root.is_file(posixpath.join(directory, other))
            ]
        except (safefs.PathEscapeError, OSError, ValueError):
            continue  # outside the workspace (or gone): out of the command's reach already
    return list(dict.fromkeys(found))


def plan_protection(root: safefs.Root, *, hidden: Iterable[str] = ()) -> GitPlan:
    """The read-only and pinned paths for the workspace's repositories now, and the ``hidden``
    files (absolute paths) that lie in it. ``OSError`` when they cannot be protected (a
    ``.git`` that is a symbolic link; a tree too large to search): the command must then not
    run."""
    found = gitrepos.find_repositories(root)
    if found.links:
        raise OSError(f"{found.links[0]} is a symbolic link, which the sandbox cannot pin in place")
    if "." in found.git_dirs:
        raise OSError("the workspace is itself a git directory, whose config a command could rewrite")
    plan = GitPlan(repositories=frozenset(found.repositories()), hidden=hidden_files(root, hidden))
    try:
        if not root.exists(gitrepos.DOT_GIT, follow_symlinks=False):
            _protect(root, plan, gitrepos.DOT_GIT)
        for path in found.dot_git + found.git_dirs + found.configs:
            _protect(root, plan, path)
        for path, kind in found.named:
            _protect(root, plan, path, kind)
        plan.finish()
    except BaseException:
        remove_placeholders(root, plan)
        raise
    return plan


def disable_new_repositories(root: safefs.Root, plan: GitPlan) -> list[str]:
    """After a command: disable every repository that was not there when ``plan`` was made (see
    the module's description). Returns what was done, one line each; ``OSError`` when the
    workspace cannot be searched or a repository cannot be disabled."""
    done: list[str] = []
    # The repositories there before were read-only to the command: nothing in them is new, so
    # they are not entered. Every other directory is, new repositories included.
    found = gitrepos.find_repositories(
        root, max_directories=gitrepos.MAX_DIRECTORIES * 10, enter_all_but=plan.repositories
    )
    for path in found.repositories():
        if path in plan.repositories:
            continue
        is_dot_git = posixpath.basename(path).casefold() == gitrepos.DOT_GIT
        if is_dot_git and (root.is_symlink(path) or not root.is_dir(path)):
            done.append(f"{path} -> {_set_aside(root, path)}")
            continue
        head = _head_of(root, path)
        if head is not None:
            done.append(f"{head} -> {_set_aside(root, head)}")
    return done


def _head_of(root: safefs.Root, git_dir: str) -> str | None:
    try:
        names = root.listdir(git_dir)
    except NotADirectoryError:
        return None
    head = next((name for name in names if name.casefold() == "head"), None)
    return None if head is None else head if git_dir == "." else f"{git_dir}/{head}"


def _set_aside(root: safefs.Root, path: str) -> str:
    """Rename ``path`` to a free name ending in ``.untrusted``; returns the new path. A directory
    the command left without write permission gets it back first (the agent owns it)."""
    parent = posixpath.dirname(path) or "."
    for n in range(100):
        new = f"{path}{UNTRUSTED}" + (f".{n}" if n else "")
        try:
            root.rename(path, new, replace=False)
        except FileExistsError:
            continue
        except PermissionError:
            root.chmod(parent, root.stat(parent).st_mode & 0o7777 | 0o700)
            root.rename(path, new, replace=False)
        return new
    raise OSError(f"cannot disable the repository at {path}: no free name beside it")


def remove_placeholders(root: safefs.Root, plan: GitPlan) -> None:
    """Remove the placeholders made (each is empty: the commands saw it read-only)."""
    for path in reversed(plan.placeholders):
        with contextlib.suppress(OSError, ValueError):  # ValueError: the Root is closed already
            if root.is_dir(path) and not root.is_symlink(path):
                root.rmdir(path)
            else:
                root.remove(path)
    plan.placeholders.clear()
