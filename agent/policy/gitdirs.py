"""Where git reads configuration and hooks from, beyond ``.git/`` itself, inside the workspace.

Two places are named by files git reads, so a rule written as a fixed pattern cannot know them:

- a linked worktree or submodule has a ``.git`` *file* (``gitdir: <dir>``) naming the repository
  directory; when that directory lies inside the workspace, it is git's directory as much as
  ``.git/`` is (its ``config`` and ``hooks/`` run code);
- ``core.hooksPath`` in a repository's ``config`` (or ``config.worktree``, or the ``config`` of the
  ``commondir`` a linked worktree shares) names the hooks directory.

Both are read once, when the run starts, from the workspace root's ``.git``. The model cannot
change them during the run: every file they are read from is under a git rule itself. A hooks
path outside the workspace (``~/.githooks``) is out of the tools' reach anyway.
"""

from __future__ import annotations

import re

import safefs
from agent.policy.sensitive import GIT_DIRECTORY, PROTECTED_CONFIG, PathRule, escape
from agent.policy.targets import canonical_path

MAX_CONFIG_BYTES = 1 << 20  # a git config larger than this is not read (it is protected anyway)

_GITDIR = re.compile(r"^gitdir:[ \t]*(?P<path>.+?)[ \t]*$", re.MULTILINE)
_SECTION = re.compile(r"^\s*\[(?P<name>[^\]\s\"]+)(?:\s+\"[^\"]*\")?\s*\]")
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(?P<value>.*?)\s*$", re.IGNORECASE)


def _small_text(root: safefs.Root, path: str) -> str | None:
    """The text of the regular file ``path`` (not through a final link), or None."""
    try:
        status = root.lstat(path)
        if status.st_mode & 0o170000 != 0o100000 or status.st_size > MAX_CONFIG_BYTES:
            return None
        text: str = root.read_text(path, errors="replace")
    except (OSError, ValueError, safefs.PathEscapeError):
        return None
    return text


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value.split(" #", 1)[0].split(" ;", 1)[0].strip()


def hooks_paths(config: str) -> list[str]:
    """The ``core.hooksPath`` values a git config file sets."""
    found, section = [], ""
    for line in config.splitlines():
        header = _SECTION.match(line)
        if header is not None:
            section = header.group("name").lower()
            line = line[header.end() :]
        setting = _HOOKS_PATH.match(line)
        if setting is not None and section == "core":
            value = _unquote(setting.group("value"))
            if value:
                found.append(value)
    return found


def _git_directories(root: safefs.Root) -> list[str]:
    """Canonical root-relative git directories of the workspace root's repository."""
    directories = [".git"]
    pointer = _small_text(root, ".git")
    if pointer is not None:
        named = _GITDIR.search(pointer)
        located = canonical_path(root, named.group("path")) if named else None
        if located not in (None, ".", ".git"):
            directories.append(str(located))
    for directory in list(directories):
        common = _small_text(root, f"{directory}/commondir")
        if common is not None and common.strip():
            path = common.strip()
            located = canonical_path(root, path if path.startswith("/") else f"{directory}/{path}")
            if located not in (None, "."):
                directories.append(str(located))
    return directories


def git_rules(root: safefs.Root) -> list[PathRule]:
    """Rules for the git directory a ``.git`` pointer names and for ``core.hooksPath``
    targets, where they lie inside the workspace (see the module's description)."""
    rules: list[PathRule] = []
    directories = _git_directories(root)
    for directory in directories[1:]:
        rules.append(PathRule(escape(directory), GIT_DIRECTORY, writes_only=True, fixed=True))
    for directory in directories:
        for name in ("config", "config.worktree"):
            config = _small_text(root, f"{directory}/{name}")
            for hooks in hooks_paths(config or ""):
                located = None if hooks.startswith("~") else canonical_path(root, hooks)
                if located not in (None, "."):
                    rules.append(PathRule(escape(str(located)), PROTECTED_CONFIG, writes_only=True))
    return rules
