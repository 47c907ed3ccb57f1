"""Files that start code when a person opens the folder or runs a tool there: an editor's tasks,
an agent's commands and settings, a shell's rc file, direnv's ``.envrc``, a git or hook
manager's config, a CI workflow, a ``Makefile``. A write there is code run later, outside any
sandbox, by the person. Each is a path relative to the top of a workspace or of a repository's
work tree (a trailing ``/``: a directory and everything in it), with who runs it.

The list is Claude Code's sandbox-runtime's (``.vscode``, ``.idea``, ``.claude/commands``,
``.claude/agents``, ``.claude/settings*.json``, shell rc files, ``.mcp.json``, ``.gitconfig``,
``.gitmodules``) and ``.envrc``, ``.pre-commit-config.yaml``, ``.github/workflows``,
``Makefile`` and ``.husky/``; docs/permissions.md shows it as a table, kept equal to this one by
a test.
"""

from __future__ import annotations

STARTER_FILES: tuple[tuple[str, str], ...] = (
    (".vscode/", "VS Code: tasks, launch configurations, settings naming programs"),
    (".idea/", "JetBrains IDEs: run configurations, external tools"),
    (".claude/commands/", "Claude Code: slash commands"),
    (".claude/agents/", "Claude Code: subagents"),
    (".claude/settings.json", "Claude Code: hooks, permissions"),
    (".claude/settings.local.json", "Claude Code: hooks, permissions"),
    (".mcp.json", "MCP clients: servers started from the folder"),
    (".gitconfig", "git, when included or copied: aliases, fsmonitor, hooks"),
    (".gitmodules", "git: submodule URLs and update commands"),
    (".bashrc", "bash"),
    (".bash_profile", "bash"),
    (".bash_login", "bash"),
    (".profile", "sh, bash"),
    (".zshrc", "zsh"),
    (".zshenv", "zsh"),
    (".zprofile", "zsh"),
    (".zlogin", "zsh"),
    (".envrc", "direnv: runs on entering the directory"),
    (".pre-commit-config.yaml", "pre-commit: hooks run at each commit"),
    (".github/workflows/", "GitHub Actions: run on push"),
    ("Makefile", "make"),
    (".husky/", "husky: git hooks"),
)


def starter_paths() -> tuple[str, ...]:
    """The paths alone, without the trailing ``/``."""
    return tuple(path.rstrip("/") for path, _who in STARTER_FILES)
