"""What of git's state a command must find read-only, so that nothing it leaves runs later.

git runs code named by its repository (hooks, ``core.fsmonitor``, ``core.sshCommand``, filters,
aliases) whenever someone runs git there, outside the sandbox. That code can be named from many
files (``config``, ``config.worktree``, a ``commondir`` redirecting to another config, ``info/``,
``modules/*/config``), so the whole ``.git`` is read-only, as Codex keeps it, and so is:

- a ``.git`` pointer file (a linked worktree's, a submodule's) and the directory it names, with
  that directory's ``commondir``, when they lie in the workspace (Landlock already keeps the rest
  of the filesystem read-only);
- each submodule's ``.git`` listed in ``.gitmodules``;
- ``core.hooksPath`` when it lies in the work tree (husky's ``.husky/_``).

A path that does not exist yet would be created by the command: an empty directory is made at its
first missing component and bound read-only (Codex's placeholder); the sandbox removes it when
it is closed.
Every path is canonical and relative to the workspace (resolved by :class:`safefs.Root`), so the
launcher binds exactly it, following no link.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import safefs

MAX_CONFIG_BYTES = 1 << 20
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=(.*)$")  # no lazy group: linear on any line


@dataclass
class GitPlan:
    """``read_only``: the paths to bind read-only; ``placeholders``: those of them made for it
    (empty directories, removed by :func:`remove_placeholders`)."""

    read_only: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)

    def add(self, path: str) -> None:
        if path not in self.read_only and not any(path.startswith(p + "/") for p in self.read_only):
            self.read_only.append(path)


def config_values(text: str, section: str, key: str) -> list[str]:
    """The values of ``section.key`` (no subsection) in git-config text; enough of the syntax for
    the keys read here (quotes stripped, no includes, no continuation lines)."""
    values, current = [], ""
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header:
            current = header.group(1).lower() + ("." + header.group(2) if header.group(2) is not None else "")
            continue
        entry = _ENTRY.match(line)
        if entry and current == section and entry.group(1).lower() == key:
            value = re.split(r"\s[;#]", entry.group(2).strip(), maxsplit=1)[0].strip()
            values.append(value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value)
    return values


def _read(root: safefs.Root, path: str) -> str | None:
    try:
        if not root.is_file(path) or root.stat(path).st_size > MAX_CONFIG_BYTES:
            return None
        return root.read_bytes(path).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def _inside(root: safefs.Root, path: str, *, base: str = ".") -> str | None:
    """``path`` (absolute, or relative to ``base``) as a canonical workspace path; None outside."""
    spelled = path if path.startswith("/") else f"{base}/{path}"
    try:
        resolved: str = root.resolve(spelled)
    except (safefs.PathEscapeError, OSError, ValueError):
        return None
    return resolved


def _first_missing(root: safefs.Root, path: str) -> str | None:
    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        if not root.exists(prefix, follow_symlinks=False):
            return prefix
    return None


def _protect(root: safefs.Root, plan: GitPlan, path: str) -> None:
    """Bind ``path`` read-only, or a placeholder where it would be created."""
    if path == ".":
        return  # the workspace itself is the command's to write
    missing = _first_missing(root, path)
    if missing is None:
        plan.add(path)
        return
    try:
        root.mkdir(missing, mode=0o555)
    except OSError:
        return  # not creatable by the agent, so not by the command either
    plan.placeholders.append(missing)
    plan.add(missing)


def _gitdir_of_pointer(root: safefs.Root, pointer: str) -> str | None:
    text = _read(root, pointer)
    if text is None or not text.startswith("gitdir:"):
        return None
    base = pointer.rpartition("/")[0] or "."
    return _inside(root, text[len("gitdir:") :].strip(), base=base)


def _protect_git_entry(root: safefs.Root, plan: GitPlan, dotgit: str) -> str | None:
    """Protect one ``.git`` (a directory or a pointer file); returns its git directory when that
    lies in the workspace."""
    if root.is_symlink(dotgit):
        target = _inside(root, dotgit)
        if target is not None:
            _protect(root, plan, target)
        raise OSError(f"{dotgit} is a symbolic link, which the sandbox cannot pin in place")
    if root.is_dir(dotgit):
        _protect(root, plan, dotgit)
        return dotgit
    if root.is_file(dotgit):
        plan.add(dotgit)
        gitdir = _gitdir_of_pointer(root, dotgit)
        if gitdir is not None:
            _protect(root, plan, gitdir)
            common = _read(root, f"{gitdir}/commondir")
            if common is not None:
                common_dir = _inside(root, common.strip(), base=gitdir)
                if common_dir is not None:
                    _protect(root, plan, common_dir)
                    return common_dir
        return gitdir
    return None


def plan_protection(root: safefs.Root) -> GitPlan:
    """The read-only paths for the workspace's git state now. ``OSError`` when it cannot be
    protected (a ``.git`` that is a symbolic link): the command must then not run."""
    plan = GitPlan()
    try:
        if not root.exists(".git", follow_symlinks=False):
            _protect(root, plan, ".git")
            return plan
        gitdir = _protect_git_entry(root, plan, ".git")
        if gitdir is None:
            return plan
        for hooks in _config_hooks_paths(root, gitdir):
            target = _inside(root, hooks)
            if target is not None:
                _protect(root, plan, target)
        modules = _read(root, ".gitmodules") or ""
        for sub in config_values_any_subsection(modules, "submodule", "path"):
            sub_dir = _inside(root, sub)
            if sub_dir is not None and sub_dir != "." and root.exists(sub_dir, follow_symlinks=False):
                _protect_git_entry(root, plan, f"{sub_dir}/.git")
    except BaseException:
        remove_placeholders(root, plan)
        raise
    return plan


def _config_hooks_paths(root: safefs.Root, gitdir: str) -> Iterator[str]:
    for name in ("config", "config.worktree"):
        text = _read(root, f"{gitdir}/{name}")
        if text is not None:
            yield from config_values(text, "core", "hookspath")


def config_values_any_subsection(text: str, section: str, key: str) -> list[str]:
    """The values of ``section.<any subsection>.key``."""
    values, current = [], ""
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header:
            current = header.group(1).lower()
            continue
        entry = _ENTRY.match(line)
        if entry and current == section and entry.group(1).lower() == key:
            values.append(entry.group(2).strip().strip('"'))
    return values


def remove_placeholders(root: safefs.Root, plan: GitPlan) -> None:
    """Remove the placeholders made (each is empty: the commands saw it read-only)."""
    for path in reversed(plan.placeholders):
        with contextlib.suppress(OSError, ValueError):  # ValueError: the Root is closed already
            root.rmdir(path)
    plan.placeholders.clear()
