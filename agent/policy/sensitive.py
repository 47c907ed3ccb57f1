"""The built-in sensitive-path list, and path rules adjusted by ``--allow-path``/``--deny-path``.

Patterns use ``.gitignore`` syntax (through ``pathspec``): a pattern without a slash matches a
name at any depth (``.env``, ``*.pem``), a trailing slash matches a directory and everything
beneath it (``.ssh/``), a pattern with a slash inside is anchored to the workspace root unless
it starts with ``**/``. They are matched against canonical root-relative paths
(``agent.policy.targets``), so a symlink alias is judged by what it reaches.

Precedence: a ``--deny-path`` pattern denies; otherwise an ``--allow-path`` pattern allows;
otherwise the built-in lists below decide. This list is the one place they are defined; the
README's table is checked against it by a test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pathspec

# Never read or written by a tool: credentials, keys and the files that hold them.
SENSITIVE_PATHS: tuple[str, ...] = (
    ".env",
    ".env.*",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".ssh/",
    ".aws/",
    ".gnupg/",
    ".azure/",
    "**/.config/gcloud/",
    "**/.kube/config",
    "**/.docker/config.json",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
    ".git-credentials",
    ".vault-token",
    "credentials*.json",
    "secrets.*",
    "*.tfstate",
)

# Never written by a tool: files that something else runs later (git, a shell, direnv), so a
# write there is code execution deferred until the person next uses the workspace.
DEFERRED_EXECUTION_PATHS: tuple[str, ...] = (
    "**/.git/hooks/",
    "**/.git/config",
    "**/.git/modules/**/hooks/",
    "**/.git/modules/**/config",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    "**/.config/fish/",
)

SENSITIVE = "sensitive path"
DEFERRED_EXECUTION = "deferred-execution path"
DENIED_BY_OPTION = "path denied by --deny-path"


class PatternError(ValueError):
    """A ``--allow-path``/``--deny-path`` pattern that cannot be used."""


def _spec(pattern: str) -> pathspec.GitIgnoreSpec:
    text = pattern.strip()
    if not text or text.startswith("#"):
        raise PatternError(f"empty path pattern {pattern!r}")
    if text.startswith("!"):
        raise PatternError(
            f"path pattern {pattern!r} starts with '!': use --allow-path to let a path through"
        )
    return pathspec.GitIgnoreSpec.from_lines([text])


@dataclass(frozen=True)
class PathRule:
    """One pattern, what kind of rule it is, and whether it denies reads too."""

    pattern: str
    kind: str
    writes_only: bool = False
    _spec: pathspec.GitIgnoreSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_spec", _spec(self.pattern))

    def matches(self, path: str, *, directory: bool = False) -> bool:
        """Whether the root-relative ``path`` falls under this rule; ``directory`` says the path
        names a directory (so ``.ssh/`` matches ``.ssh`` itself)."""
        path = path.removeprefix("./")
        if path in ("", "."):
            return False
        if self._spec.match_file(path):
            return True
        return directory and bool(self._spec.match_file(path.rstrip("/") + "/"))

    def describe(self) -> str:
        if self.kind == DENIED_BY_OPTION:
            return f"{self.kind} {self.pattern!r}"
        return f"{self.kind} (built-in rule {self.pattern!r}; --allow-path overrides it)"


def builtin_rules() -> list[PathRule]:
    return [PathRule(p, SENSITIVE) for p in SENSITIVE_PATHS] + [
        PathRule(p, DEFERRED_EXECUTION, writes_only=True) for p in DEFERRED_EXECUTION_PATHS
    ]


def _any_of(rules: list[PathRule]) -> re.Pattern[str] | None:
    """One regex matching wherever any of ``rules`` may match, so the common case (no rule
    matches) costs one match instead of one per rule. None when it cannot be built."""
    try:
        parts = [
            pattern.regex.pattern.replace("(?P<ps_d>", "(?:")
            for rule in rules
            for pattern in rule._spec.patterns
            if isinstance(pattern, pathspec.RegexPattern) and pattern.regex is not None
        ]
        return re.compile("|".join(f"(?:{part})" for part in parts)) if parts else None
    except (re.error, AttributeError):
        return None


class _Group:
    """Rules tried in order, behind a combined prefilter."""

    def __init__(self, rules: list[PathRule]) -> None:
        self.rules = rules
        self._any = _any_of(rules)

    def first(self, path: str, directory: bool) -> PathRule | None:
        if not self.rules:
            return None
        if self._any is not None:
            path = path.removeprefix("./")
            candidates = [path, path.rstrip("/") + "/"] if directory else [path]
            if not any(self._any.match(c) for c in candidates):
                return None
        return next((r for r in self.rules if r.matches(path, directory=directory)), None)


class PathRules:
    """The rules in force: ``deny`` patterns, then ``allow`` patterns, then the built-in lists
    (unless ``builtin=False``). Raises :class:`PatternError` for an unusable pattern."""

    def __init__(self, *, allow: Iterable[str] = (), deny: Iterable[str] = (), builtin: bool = True) -> None:
        self.deny = [PathRule(p, DENIED_BY_OPTION) for p in deny]
        self.allow = [PathRule(p, "allowed by --allow-path") for p in allow]
        self.builtin = builtin_rules() if builtin else []
        self._deny, self._allow = _Group(self.deny), _Group(self.allow)
        self._reads = _Group([r for r in self.builtin if not r.writes_only])
        self._writes = _Group(self.builtin)

    def denial(self, path: str, *, writing: bool, directory: bool = False) -> PathRule | None:
        """The rule denying access to ``path`` (a write when ``writing``), or None."""
        rule = self._deny.first(path, directory)
        if rule is not None:
            return rule
        if self._allow.first(path, directory) is not None:
            return None
        return (self._writes if writing else self._reads).first(path, directory)
