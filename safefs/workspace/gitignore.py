"""``.gitignore`` rules met during a walk, matched with ``pathspec`` (git's own wildmatch rules).

A ``.gitignore`` applies to the directory holding it and everything below; a deeper file's
decision wins over a shallower one's, and a directory that is ignored is not entered (so, as in
git, nothing below it can be re-included). The files are read through safefs, at most
``MAX_GITIGNORE_BYTES`` of each.
"""

from __future__ import annotations

import pathspec

import safefs

MAX_GITIGNORE_BYTES = 1 << 20


class GitIgnore:
    """The rules in force for one directory: its own ``.gitignore`` and its ancestors'."""

    def __init__(self, specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()) -> None:
        self._specs = specs  # (path prefix of the directory, its rules), shallow first

    def enter(self, root: safefs.Root, directory: str, has_gitignore: bool) -> GitIgnore:
        """The rules for ``directory`` (root-relative), reading its ``.gitignore`` if it has one."""
        if not has_gitignore:
            return self
        prefix = "" if directory in ("", ".", "./") else directory.rstrip("/") + "/"
        try:
            with root.open(prefix + ".gitignore", "rb") as stream:
                data = stream.read(MAX_GITIGNORE_BYTES)
        except OSError:
            return self  # missing or unreadable rules are no rules; the walk goes on
        lines = data.decode("utf-8", "replace").splitlines()
        return GitIgnore((*self._specs, (prefix, pathspec.GitIgnoreSpec.from_lines(lines))))

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Is ``path`` (spelled as the walk spells it) ignored?"""
        for prefix, spec in reversed(self._specs):
            if not path.startswith(prefix):
                continue
            rel = path[len(prefix) :]
            result = spec.check_file(rel + "/" if is_dir else rel)
            if result.include is not None:
                return bool(result.include)
        return False
