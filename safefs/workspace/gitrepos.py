"""Where git finds repositories in a tree, and which files it then reads, by git's own rules.

git run in a directory looks for its repository upward from there (``setup_git_directory``): in
each directory D, first ``D/.git`` (a directory, or a file ``gitdir: <path>`` naming one), then D
itself as a bare repository, until a ``GIT_CEILING_DIRECTORIES`` entry or the filesystem's root.
A directory is a git directory to it (``is_git_directory``) when it holds a valid ``HEAD`` and,
in it or in the directory its ``commondir`` file names, ``objects`` and ``refs``. Nothing else
marks a repository: not its name, not a ``config``. So a directory under any name holding those
entries is a repository to a ``git`` run in or below it, and a ``.git`` that is not one (an
empty directory) does not stop the search: git goes on to the directory itself and upward.

What could narrow this is the person's own setting, never the repository's, and each defaults
to the widest: ``GIT_CEILING_DIRECTORIES`` is unset; ``safe.bareRepository`` (``discovery.bare``
in its proposal) is ``all``, so bare repositories are found; ``safe.directory`` refuses only a
repository owned by another user, and what the agent writes belongs to the workspace's owner.
So every directory of a workspace is a place the person may run git, and a repository anywhere
in it is one git will use, with its configuration and hooks.

A repository's configuration is read from its ``config`` and ``config.worktree``, from the
``config`` of its ``commondir``, and from every file an ``include.path`` or
``includeIf.<condition>.path`` names, whatever the condition (relative to the including file,
recursively, to git's depth of 10); ``core.hooksPath`` names its hooks. Submodules are found
as any other repository: by their ``.git``.

:func:`looks_like_git_dir` judges one directory by its entries' names, more widely than git (an
entry of the name counts, whatever it holds or is); :func:`find_repositories` walks a tree for
every repository in it and every path their configuration names.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field

import safefs

DOT_GIT = ".git"
MAX_CONFIG_BYTES = 1 << 20  # a larger config is not read (what it names is not found)
MAX_INCLUDE_DEPTH = 10  # git's own limit on nested includes
MAX_DIRECTORIES: int | None = None  # no tree is too large: the walk is made once per run
HUSKY_HOOKS = "_"  # husky's hooks path is <its directory>/_, whose scripts run <its directory>/<hook>

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=(.*)$")  # no lazy group: linear on any line
_COMMENT = re.compile(r"\s[;#]")


def _fold(name: str) -> str:
    # A case-insensitive volume (macOS, Windows, a casefolded ext4 directory) takes "head" for
    # "HEAD"; judging folded names is never narrower than git.
    return name.casefold()


def _spellings(name: str) -> frozenset[str]:
    """Every spelling of the ASCII ``name`` that folds to it (``HEAD``, ``head``, ``HeAd``...): no
    other character folds to an ASCII letter but U+212A (Kelvin, k) and U+017F (long s), neither
    in these names."""
    spellings = {""}
    for char in name:
        spellings = {s + c for s in spellings for c in {char.lower(), char.upper()}}
    return frozenset(spellings)


# Checked against a directory's listing as a set, before any name is folded one by one: a walk
# of a large tree spends its time here.
_HEADS = _spellings("head")
_DOT_GITS = _spellings(".git")


def looks_like_git_dir(names: set[str] | frozenset[str]) -> bool:
    """Whether a directory with entries of these names may be a git directory: ``HEAD``, and
    either ``commondir`` or both ``objects`` and ``refs`` (git also validates ``HEAD``'s text and
    may find ``objects`` and ``refs`` through ``commondir``; any entry of the name counts here)."""
    folded = {_fold(name) for name in names}
    return "head" in folded and ("commondir" in folded or {"objects", "refs"} <= folded)


def config_values(text: str, section: str, key: str, *, any_subsection: bool = False) -> list[str]:
    """The values of ``section.key`` in git-config text (``section.<any>.key`` with
    ``any_subsection``); enough of the syntax for the keys read here (quotes stripped, no
    continuation lines), in linear time on any line."""
    values, current, subsection = [], "", False
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header:
            current, subsection = header.group(1).lower(), header.group(2) is not None
            line = line[header.end() :]
        entry = _ENTRY.match(line)
        if entry and current == section and (subsection == any_subsection) and entry.group(1).lower() == key:
            value = _COMMENT.split(entry.group(2).strip(), maxsplit=1)[0].strip()
            values.append(value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value)
    return values


def read_small_text(root: safefs.Root, path: str) -> str | None:
    """The text of the regular file ``path`` (links followed, as git follows them), or None."""
    try:
        if not root.is_file(path) or root.stat(path).st_size > MAX_CONFIG_BYTES:
            return None
        return root.read_bytes(path).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def inside(root: safefs.Root, path: str, *, base: str = ".") -> str | None:
    """``path`` (absolute, or relative to ``base``) as a canonical workspace path; None when it
    lies outside (``~`` is the person's home, outside too)."""
    if not path or path.startswith("~") or "\0" in path:
        return None
    spelled = path if path.startswith("/") else f"{base}/{path}"
    try:
        resolved: str = root.resolve(spelled)
    except (safefs.PathEscapeError, OSError, ValueError):
        return None
    return resolved


def gitfile_target(root: safefs.Root, pointer: str) -> str | None:
    """The git directory a ``.git`` file (``gitdir: <path>``) names, when inside the tree."""
    text = read_small_text(root, pointer)
    if text is None or not text.startswith("gitdir:"):
        return None
    first = text[len("gitdir:") :].split("\n", 1)[0].strip()
    return inside(root, first, base=posixpath.dirname(pointer) or ".")


@dataclass
class Repositories:
    """What :func:`find_repositories` found, every path canonical and relative to the root.

    ``dot_git``: every ``.git`` entry that is a directory or a file, valid or not;
    ``links``: ``.git`` entries that are symbolic links; ``git_dirs``: every other directory git
    takes as a git directory (bare repositories under any name, what a ``.git`` file names,
    ``commondir`` targets); ``configs``: config files git reads for them that exist, included
    ones too; ``named``: paths their configuration names that git would read if they existed
    (``include`` targets that do not, hooks paths), each with ``"file"`` or ``"dir"``;
    ``spelled``: each path a config names, as git spells it (the value and the directory it is
    relative to) with where it leads now and the git directory whose config names it, to see
    later whether a link on the way was replaced;
    ``unreadable``: directories the walk could not list (what they hold is unknown)."""

    dot_git: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    git_dirs: list[str] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    named: list[tuple[str, str]] = field(default_factory=list)
    spelled: list[tuple[str, str, str, str]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def repositories(self) -> list[str]:
        """Every git directory and ``.git`` entry found."""
        return list(dict.fromkeys(self.dot_git + self.links + self.git_dirs))


class TreeTooLarge(OSError):
    """A tree with more directories than can be checked for repositories."""


def _join(top: str, name: str) -> str:
    return name if top in (".", "") else f"{top}/{name}"


def find_repositories(
    root: safefs.Root,
    *,
    max_directories: int | None = MAX_DIRECTORIES,
    enter_all_but: frozenset[str] | None = None,
) -> Repositories:
    """Every repository in the tree of ``root``, and the files and directories git reads for
    them (module docstring). A git directory found is not entered (what lies in it is its own),
    unless ``enter_all_but`` is given: then every one but those is (repositories nested in
    new ones are found too). :class:`TreeTooLarge` past ``max_directories`` directories (no
    limit by default). The repository enclosing the workspace, found as git finds it
    (:func:`enclosing_named`), adds what it names inside the workspace to ``named``."""

    def enter(path: str) -> bool:
        return enter_all_but is not None and path not in enter_all_but

    found = Repositories()
    seen = 0
    expected: set[str] = set()
    for top, dirs, files in root.walk("."):
        seen += 1
        if max_directories is not None and seen > max_directories:
            raise TreeTooLarge(
                f"the workspace has more than {max_directories} directories, too many to check "
                "for git repositories"
            )
        here = top.removeprefix("./") if top != "." else "."
        expected.discard(here)
        names = set(dirs).union(files)
        if not names.isdisjoint(_HEADS) and looks_like_git_dir(names):
            found.git_dirs.append(here)
            if not enter(here):
                dirs.clear()
                continue
        if not names.isdisjoint(_DOT_GITS):
            for name in _DOT_GITS.intersection(files):
                path = _join(here, name)
                (found.links if root.is_symlink(path) else found.dot_git).append(path)
            for name in _DOT_GITS.intersection(dirs):
                found.dot_git.append(_join(here, name))
            dirs[:] = [name for name in dirs if name not in _DOT_GITS or enter(_join(here, name))]
        expected.update(_join(here, name) for name in dirs)  # every one, to see which is not walked
    # A directory listed but never walked could not be opened (no read permission, say): git
    # needs only search permission to find a repository in it.
    found.unreadable = sorted(path for path in expected if root.is_dir(path) and not root.is_symlink(path))
    follow(root, found)
    for named in enclosing_named(root):
        if named not in found.named:
            found.named.append(named)
    return found


def _parents_of(path: str) -> list[str]:
    """``path`` (absolute, canonical) and every directory above it, nearest first."""
    found = [path]
    while path != "/":
        path = posixpath.dirname(path)
        found.append(path)
    return found


def _ceilings() -> set[str]:
    value = os.environ.get("GIT_CEILING_DIRECTORIES", "")
    return {entry.rstrip("/") or "/" for entry in value.split(":") if entry.startswith("/")}


def enclosing_named(root: safefs.Root) -> list[tuple[str, str]]:
    """What the repository enclosing the workspace names inside it: git run in the workspace
    (with no repository of its own) looks upward, directory by directory, for ``.git`` or a bare
    repository, stopping below a ``GIT_CEILING_DIRECTORIES`` entry; the first one found is used,
    with its config, the files it includes and its hooks path. Those lying in the workspace are
    returned (workspace-relative, ``"file"`` or ``"dir"``); husky's directory with its hooks."""
    try:
        workspace = os.readlink(f"/proc/self/fd/{root.fileno()}")
    except OSError:
        workspace = root.path
    if not workspace.startswith("/"):
        return []
    ceilings = _ceilings()
    for directory in _parents_of(workspace)[1:]:
        if directory in ceilings:
            return []
        try:
            with safefs.Root(directory) as above:
                named = _named_by(root, above, workspace)
        except (OSError, ValueError):
            continue
        if named is not None:
            return named
    return []


def _named_by(root: safefs.Root, above: safefs.Root, workspace: str) -> list[tuple[str, str]] | None:
    """What the repository in ``above`` (its ``.git``, or itself bare) names in the workspace;
    None when ``above`` holds none."""
    if above.is_dir(DOT_GIT):
        git_dir = DOT_GIT
    elif above.is_file(DOT_GIT):
        target = (read_small_text(above, DOT_GIT) or "").removeprefix("gitdir:").split("\n", 1)[0].strip()
        if not target:
            return None
        git_dir = target if target.startswith("/") else f"{above.path}/{target}"
    else:
        try:
            names = set(above.listdir("."))
        except OSError:
            return None
        if not looks_like_git_dir(names):
            return None
        git_dir = "."
    work_tree = above.path
    found = Repositories()
    git_abs = git_dir if git_dir.startswith("/") else posixpath.normpath(f"{above.path}/{git_dir}")
    for name in ("config", "config.worktree"):
        _read_outside_config(root, found, f"{git_abs}/{name}", work_tree, depth=0)
    inside_git = inside(root, git_abs)
    if inside_git is not None and inside_git != ".":
        found.named.append((inside_git, "dir"))
    return found.named


def _read_outside_config(
    root: safefs.Root, found: Repositories, path: str, work_tree: str, *, depth: int
) -> None:
    """A config file of the enclosing repository (absolute ``path``, read through its own
    directory), and what it names in the workspace."""
    directory, name = posixpath.split(path)
    try:
        with safefs.Root(directory) as holder:
            text = read_small_text(holder, name)
    except (OSError, ValueError):
        return
    if text is None:
        return
    mine = inside(root, path)
    if mine is not None:
        found.named.append((mine, "file"))
    for hooks in config_values(text, "core", "hookspath"):
        spelled = hooks if hooks.startswith("/") else f"{work_tree}/{hooks}"
        target = inside(root, spelled)
        if target is not None and target != ".":
            found.named.append((target, "dir"))
            if posixpath.basename(target) == HUSKY_HOOKS and posixpath.dirname(target):
                found.named.append((posixpath.dirname(target), "dir"))
    if depth >= MAX_INCLUDE_DEPTH:
        return
    included = config_values(text, "include", "path") + config_values(
        text, "includeif", "path", any_subsection=True
    )
    for value in included:
        if value.startswith("~"):
            continue
        spelled = value if value.startswith("/") else f"{directory}/{value}"
        target = inside(root, spelled)
        if target is not None and target != ".":
            found.named.append((target, "file"))
        _read_outside_config(root, found, posixpath.normpath(spelled), work_tree, depth=depth + 1)


def follow(root: safefs.Root, found: Repositories) -> None:
    """Add what the repositories found point at: ``.git`` files' directories, ``commondir``
    targets, config files and what they include, hooks paths."""
    # (git directory, the top of its work tree: where a relative hooks path starts)
    pending = [(git_dir, git_dir) for git_dir in found.git_dirs]
    for entry in found.dot_git:
        work_tree = posixpath.dirname(entry) or "."
        if root.is_dir(entry):
            pending.append((entry, work_tree))
        else:
            target = gitfile_target(root, entry)
            if target is not None and target != ".":
                pending.append((target, work_tree))
    done: set[tuple[str, str]] = set()
    while pending:
        git_dir, work_tree = pending.pop()
        if (git_dir, work_tree) in done:
            continue
        done.add((git_dir, work_tree))
        if git_dir not in found.git_dirs and git_dir not in found.dot_git:
            found.git_dirs.append(git_dir)
        common = read_small_text(root, f"{git_dir}/commondir")
        if common is not None and common.strip():
            target = inside(root, common.strip(), base=git_dir)
            if target is not None and target != ".":
                pending.append((target, work_tree))
        for name in ("config", "config.worktree"):
            _read_config(root, found, f"{git_dir}/{name}", work_tree, git_dir, depth=0)


def _read_config(
    root: safefs.Root, found: Repositories, path: str, work_tree: str, git_dir: str, *, depth: int
) -> None:
    text = read_small_text(root, path)
    if text is None:
        return
    if path not in found.configs:
        found.configs.append(path)
    base = posixpath.dirname(path) or "."
    for hooks in config_values(text, "core", "hookspath"):
        # A relative hooks path is relative to where hooks run: the top of the work tree.
        target = inside(root, hooks, base=work_tree)
        if target is None or target == ".":
            continue
        found.spelled.append((hooks, work_tree, target, git_dir))
        targets = [target]
        if posixpath.basename(target) == HUSKY_HOOKS and posixpath.dirname(target):
            targets.append(posixpath.dirname(target))  # husky's scripts, which its hooks run
        for each in targets:
            if (each, "dir") not in found.named:
                found.named.append((each, "dir"))
    if depth >= MAX_INCLUDE_DEPTH:
        return
    included = config_values(text, "include", "path") + config_values(
        text, "includeif", "path", any_subsection=True
    )
    for value in included:
        target = inside(root, value, base=base)
        if target is None or target == "." or target in found.configs:
            continue
        found.spelled.append((value, base, target, git_dir))
        if root.exists(target):
            _read_config(root, found, target, work_tree, git_dir, depth=depth + 1)
        elif (target, "file") not in found.named:
            found.named.append((target, "file"))
