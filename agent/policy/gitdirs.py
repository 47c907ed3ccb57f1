"""Git's repositories and the file tools: no write makes a repository, or changes one or a file
git reads for it, anywhere in the workspace.

git takes a directory under any name for a repository by its entries (``HEAD`` and ``objects``
and ``refs``, or ``commondir``), not by a ``.git`` name (:mod:`safefs.workspace.gitrepos`), and
reads config from files a repository's config includes and hooks from its ``core.hooksPath``.
So, beside the fixed rule on ``.git`` at any depth (:mod:`agent.policy.sensitive`):

- :func:`refuse_repository_writes` judges each write when it is made: a write into a directory
  that is a git directory, or one that would make a directory one (the entry that completes
  ``HEAD`` + ``objects`` + ``refs``, or ``HEAD`` + ``commondir``), is refused in every mode. The
  tree is looked at then, so a repository made since the run started is seen too.
- :func:`git_rules` turns what the workspace's repositories name, found when the run starts by
  walking the whole workspace, into path rules: the git directory a ``.git`` file or a
  ``commondir`` names, every config file included (``include.path``, ``includeIf.*.path``,
  whether it exists yet or not) as git directories (never written, whatever ``--allow-path``
  says), and hooks paths as protected configuration. A write tool cannot change what they are
  read from (each lies under a git rule), and a command finds all of it read-only
  (:mod:`safefs.sandbox.git`).
"""

from __future__ import annotations

import errno
import posixpath
from collections.abc import Iterable

import safefs
from agent.messages import ToolCall
from agent.policy.approval import ALLOW, Decision, Policy, deny
from agent.policy.sensitive import GIT_DIRECTORY, PROTECTED_CONFIG, PathRule, escape
from agent.policy.targets import paths_of, target, writes
from agent.tools.base import Tool
from safefs.workspace.gitrepos import find_repositories, looks_like_git_dir

REPOSITORY_RULE = "git-repository"


def git_rules(root: safefs.Root) -> list[PathRule]:
    """Rules for the paths the workspace's repositories name (see the module's description).
    The walk is made once, when the run starts, whatever the size of the tree."""
    found = find_repositories(root)
    rules: list[PathRule] = []
    in_git_dirs = [path for path in found.git_dirs if path != "."]
    included = [path for path in found.configs if not _under_git_dir(path, found.dot_git + in_git_dirs)]
    missing = [path for path, kind in found.named if kind == "file"]
    for path in in_git_dirs + included + missing:
        rules.append(PathRule(escape(path), GIT_DIRECTORY, writes_only=True, fixed=True))
    for path, kind in found.named:
        if kind == "dir":
            rules.append(PathRule(escape(path), PROTECTED_CONFIG, writes_only=True))
    return list(dict.fromkeys(rules))


def _under_git_dir(path: str, git_dirs: list[str]) -> bool:
    return any(path.startswith(git_dir + "/") for git_dir in git_dirs)


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
        if looks_like_git_dir(names):
            return f"{directory!r} is a git repository (it holds HEAD, objects and refs, or commondir)"
        if looks_like_git_dir(names | {child}):
            return (
                f"{posixpath.join(directory, child)!r} would make {directory!r} a git repository, "
                "which git outside the agent would use (its config and hooks run code)"
            )
    return None


def refuse_repository_writes(root: safefs.Root, *, tools: Iterable[Tool] | None = None) -> Policy:
    """Refuse, in every mode, a write into a git directory or one that would make a directory
    one (:func:`repository_problem`), judged on each path as given and canonically."""
    paths = paths_of(tools)

    def policy(call: ToolCall) -> Decision:
        if not writes(call):
            return ALLOW
        for path in paths(call):
            found = target(root, path)
            if found is None:
                continue  # the operation refuses this path itself (an escape, say)
            for candidate in found.candidates():
                problem = repository_problem(root, candidate)
                if problem is not None:
                    return deny(f"write to {path!r} denied: {problem}", decided_by=f"rule:{REPOSITORY_RULE}")
        return ALLOW

    return policy
