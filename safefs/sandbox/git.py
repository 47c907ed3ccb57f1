"""Git's state and a command: nothing a command leaves may be a repository, a config or a hook
that git outside the sandbox will use.

git runs code its repository names (hooks, ``core.fsmonitor``, ``core.sshCommand``, filters,
aliases) whenever someone runs git there, outside the sandbox, and it finds a repository in any
directory by its entries, under any name (:mod:`safefs.workspace.gitrepos`). So:

- **Before the first command** every repository in the workspace is found (and again when a
  path of the plan is gone or a repository not in it was seen), and read-only to each command:
  each ``.git`` (directory or pointer file), each bare repository, what a pointer file or a
  ``commondir`` names, every config file they include, ``core.hooksPath`` and husky's directory
  above a hooks path ``<dir>/_``, and what the repository enclosing the workspace names in it
  (bind mounts: Landlock can only add rights beneath a directory, never take them away). What a
  config names that does not exist yet gets an empty placeholder made for it (a directory at its
  first missing component; an empty file for an include, so git reads it as nothing), as Codex
  does, removed when the sandbox is closed; so does a missing ``.git`` at the workspace root.
- **Every directory above a read-only path is pinned**: bound onto itself, so it can be neither
  renamed, removed nor replaced (a mount point cannot be), because a rename of a parent moves
  the mounts below it along and leaves its old name free for a fresh repository.
- **After each command** the directories the kernel recorded a change in
  (:mod:`safefs.sandbox.changes`; the whole workspace when it kept no complete record), and
  every directory above each, are judged, and every repository that was not there before is
  disabled: every entry of its that folds to ``HEAD`` is set aside to a name ending in
  ``.untrusted`` that nothing beside it has (without ``HEAD``, git does not take a directory
  for a repository, so it neither reads its config nor runs its hooks), a new ``.git`` pointer
  file or link too. So is one whose config spells a path through a link that leads elsewhere
  now. The kernel cannot stop a command from making files named ``HEAD``, ``objects`` and
  ``refs`` in a directory it may write (Landlock and seccomp see no names), so this part is a
  judgement of what changed and not a kernel rule; no process of the command is left to race
  it (the sandbox kills them all when it returns).

Every path is canonical and relative to the workspace (resolved by :class:`safefs.Root`), so the
launcher binds exactly it, following no link.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import safefs
from safefs.workspace import gitrepos, starters

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
    spelled: list[tuple[str, str, str, str]] = field(default_factory=list)
    stale: bool = False  # a repository not in it was seen: the next command plans afresh
    # the tops of the workspace and of each work tree, and the starter files there (device, inode)
    tops: list[str] = field(default_factory=list)
    starters: dict[str, tuple[int, int]] = field(default_factory=dict)

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


def _starter_places(plan: GitPlan) -> list[str]:
    return [path if top == "." else f"{top}/{path}" for top in plan.tops for path in starters.starter_paths()]


def _protect_starters(root: safefs.Root, plan: GitPlan) -> None:
    """The starter files at each top: read-only (a link: where it leads, in the workspace), and
    remembered by inode, so that one made or replaced by a command is seen after it."""
    for path in _starter_places(plan):
        try:
            st = root.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        plan.starters[path] = (st.st_dev, st.st_ino)
        if not root.is_symlink(path):
            plan.add(path)
            continue
        target = gitrepos.inside(root, path)
        if target is not None and target != "." and root.exists(target):
            plan.add(target)


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
    if found.unreadable:
        raise OSError(f"{found.unreadable[0]} cannot be read, so the repositories in it cannot be protected")
    plan = GitPlan(
        repositories=frozenset(found.repositories()),
        hidden=hidden_files(root, hidden),
        spelled=list(found.spelled),
    )
    plan.tops = sorted({"."} | {posixpath.dirname(path) or "." for path in found.dot_git}, key=_depth)
    try:
        _protect_starters(root, plan)
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


def disable_new_repositories(
    root: safefs.Root, plan: GitPlan, changed: Mapping[str, Iterable[str]] | None = None
) -> list[str]:
    """After a command: disable every repository that was not there when ``plan`` was made, and
    every one whose config names a path through a link that now leads elsewhere (see the
    module's description). ``changed``: the directories the kernel recorded a change in, with
    the names changed (:mod:`safefs.sandbox.changes`); each, and every directory above it, is
    judged. ``None``: the whole workspace is searched. Returns what was done, one line each;
    ``OSError`` when the workspace cannot be judged or a repository cannot be disabled."""
    done: list[str] = []
    places = dict.fromkeys(_searched(root, plan)) if changed is None else _with_parents(changed)
    listings: dict[str, list[str]] = {}
    for place in sorted(places, key=_depth):
        _judge(root, plan, place, places[place], listings, done)
    if changed is not None:
        done += _unplanned(root, plan, places, listings, set(changed))
    done += _relinked(root, plan)
    return done


def set_aside_new_starters(
    root: safefs.Root, plan: GitPlan, changed: Mapping[str, Iterable[str]] | None
) -> list[tuple[str, str]]:
    """Starter files at a top that were not there (or were another file) when the plan was
    made: set aside when the command made them (the record says so, or there is no record);
    made by someone else, they are read-only from the next command on. Returns each set aside,
    as its path and the path it was set aside to."""
    touched: set[str] | None = None
    if changed is not None:
        touched = set(changed)
        touched.update(posixpath.join(d, n) if d != "." else n for d, names in changed.items() for n in names)
    done: list[tuple[str, str]] = []
    for path in _starter_places(plan):
        try:
            st = root.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        if plan.starters.get(path) == (st.st_dev, st.st_ino):
            continue
        if touched is not None and not any(_under(where, path) for where in touched):
            plan.stale = True
            continue
        parent = posixpath.dirname(path) or "."
        done.append((path, _set_aside(root, path, list(root.listdir(parent)))))
    return done


def restore_starter(root: safefs.Root, path: str, aside: str) -> None:
    """Put a starter file set aside back (the person chose to keep it); ``FileExistsError``
    when something has taken its name since. From the next command on it is read-only, as one
    the person made."""
    root.rename(aside, path, replace=False)


def _unplanned(
    root: safefs.Root,
    plan: GitPlan,
    places: Mapping[str, set[str] | None],
    listings: dict[str, list[str]],
    changed: set[str],
) -> list[str]:
    """Repositories made since the plan by someone else (the person, between commands), found
    as ``.git`` at or above a changed directory: each is disabled when the command changed
    its git directory or a path its config names, and the plan is marked ``stale``."""
    done: list[str] = []
    for place, names in places.items():
        for name in _listing(root, place, listings) or []:
            path = name if place == "." else f"{place}/{name}"
            if name.casefold() != gitrepos.DOT_GIT or path in plan.repositories or _protected(plan, path):
                continue  # not a .git, or one there when planned (a placeholder: read-only since)
            if names is None or gitrepos.DOT_GIT in names or not root.exists(path, follow_symlinks=False):
                continue  # judged as the command's own
            plan.stale = True
            found = gitrepos.Repositories(dot_git=[path])
            gitrepos.follow(root, found)
            reaches = found.git_dirs + found.dot_git + found.configs + [named for named, _ in found.named]
            if not any(_under(where, target) for where in changed for target in reaches):
                continue
            if root.is_dir(path) and not root.is_symlink(path):
                done += _disable_git_dir(root, path, _listing(root, path, listings) or [], listings)
            else:
                done.append(
                    f"{path} -> {_set_aside(root, path, list(_listing(root, place, listings) or []))}"
                )
                listings.pop(place, None)
    return done


def _searched(root: safefs.Root, plan: GitPlan) -> list[str]:
    """Every directory that may hold or be a new repository, by a search of the workspace; a
    directory the command left unreadable is made readable to the agent (its owner) first."""
    for _attempt in range(2):
        # The repositories there before were read-only to the command: nothing in them is new,
        # so they are not entered. Every other directory is, new repositories included.
        found = gitrepos.find_repositories(root, enter_all_but=plan.repositories)
        if not found.unreadable:
            places = {posixpath.dirname(path) or "." for path in found.repositories()}
            return sorted(places | set(found.repositories()))
        for path in found.unreadable:
            _make_listable(root, path)
    raise OSError(f"cannot read {found.unreadable[0]} to judge what the command left there")


def _with_parents(changed: Mapping[str, Iterable[str]]) -> dict[str, set[str] | None]:
    """Each changed directory with its changed names, and every directory above it with none:
    a change inside a directory git takes for a repository is a change to that repository."""
    places: dict[str, set[str] | None] = {
        path: {name.casefold() for name in names} for path, names in changed.items()
    }
    for path in changed:
        while path != ".":
            path = posixpath.dirname(path) or "."
            places.setdefault(path, set())
    return places


def _make_listable(root: safefs.Root, path: str) -> None:
    try:
        root.chmod(path, root.stat(path, follow_symlinks=False).st_mode & 0o7777 | 0o700)
    except OSError as exc:
        raise OSError(f"cannot read {path} to judge what the command left there: {exc.strerror}") from exc


def _listing(root: safefs.Root, path: str, listings: dict[str, list[str]]) -> list[str] | None:
    """The names in directory ``path`` (None: not a directory, or gone); one the command left
    unreadable is made readable first, and one that cannot be listed is an error."""
    if path not in listings:
        try:
            if root.is_symlink(path) or not root.is_dir(path):
                return None
            try:
                listings[path] = list(root.listdir(path))
            except PermissionError:
                _make_listable(root, path)
                listings[path] = list(root.listdir(path))
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
    return listings[path]


def _judge(
    root: safefs.Root,
    plan: GitPlan,
    place: str,
    changed: set[str] | None,
    listings: dict[str, list[str]],
    done: list[str],
) -> None:
    """Disable ``place`` if it is a git directory that was not one before, and every entry in
    it that git reads as ``.git``, was not there before and was changed (``changed``: the
    folded names changed in it; ``None``: any)."""
    names = _listing(root, place, listings)
    if names is None or _protected(plan, place):
        return
    if place not in plan.repositories and gitrepos.looks_like_git_dir(set(names)):
        done += _disable_git_dir(root, place, names, listings)
    for name in list(names):
        if name.casefold() != gitrepos.DOT_GIT or (changed is not None and gitrepos.DOT_GIT not in changed):
            continue
        path = name if place == "." else f"{place}/{name}"
        if path in plan.repositories:
            continue
        if root.is_dir(path) and not root.is_symlink(path):
            # a directory: without a HEAD git passes it over (and looks further up)
            inner = _listing(root, path, listings) or []
            if gitrepos.looks_like_git_dir(set(inner)):
                done += _disable_git_dir(root, path, inner, listings)
            continue
        done.append(f"{path} -> {_set_aside(root, path, names)}")
        listings.pop(place, None)


def _protected(plan: GitPlan, path: str) -> bool:
    """Whether ``path`` lies in what was read-only to the command (nothing there is new)."""
    return any(_under(path, other) for other in plan.read_only)


def _disable_git_dir(
    root: safefs.Root, git_dir: str, names: list[str], listings: dict[str, list[str]]
) -> list[str]:
    """Set aside every entry of ``git_dir`` that git may read as its ``HEAD`` (each spelling a
    case-insensitive volume takes for it): without one, git does not take it for a repository."""
    done = []
    for name in [name for name in names if name.casefold() == "head"]:
        head = name if git_dir == "." else f"{git_dir}/{name}"
        done.append(f"{head} -> {_set_aside(root, head, names)}")
    listings.pop(git_dir, None)
    return done


def _relinked(root: safefs.Root, plan: GitPlan) -> list[str]:
    """The repositories whose config names a path (an include, a hooks path) that leads
    elsewhere now than when the plan was made (a link on the way replaced): disabled."""
    done: list[str] = []
    for value, base, target, git_dir in plan.spelled:
        if gitrepos.inside(root, value, base=base) == target:
            continue
        names = list(root.listdir(git_dir)) if root.is_dir(git_dir) else []
        done += [
            f"{line} (its config's {value!r} leads elsewhere now)"
            for line in _disable_git_dir(root, git_dir, names, {})
        ]
    return done


def _set_aside(root: safefs.Root, path: str, beside: list[str]) -> str:
    """Rename ``path`` to a name ending in ``.untrusted`` that nothing beside it has, in any
    case (``beside``: the names in its directory, which nothing changes any more: the command's
    processes are all gone); returns the new path. A directory the command left without write
    permission gets it back first (the agent owns it)."""
    parent = posixpath.dirname(path) or "."
    taken = {name.casefold() for name in beside}
    for n in range(len(taken) + 2):
        new = f"{path}{UNTRUSTED}" + (f".{n}" if n else "")
        if posixpath.basename(new).casefold() in taken:
            continue
        try:
            root.rename(path, new, replace=False)
        except FileExistsError:
            continue
        except PermissionError:
            root.chmod(parent, root.stat(parent).st_mode & 0o7777 | 0o700)
            root.rename(path, new, replace=False)
        beside.append(posixpath.basename(new))
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
