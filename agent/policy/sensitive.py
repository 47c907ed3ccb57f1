"""The built-in sensitive-path list, and path rules adjusted by ``--allow-path``/``--deny-path``.

Patterns use ``.gitignore`` syntax (through ``pathspec``): a pattern without a slash matches a
name at any depth (``.env``, ``*.pem``), a trailing slash matches a directory and everything
beneath it (``.ssh/``), a pattern with a slash inside is anchored to the workspace root unless
it starts with ``**/``. They are matched against canonical root-relative paths
(``agent.policy.targets``), so a symlink alias is judged by what it reaches.

Paths and patterns are compared folded (NFC, then case-folded: :func:`fold`) on every platform.

Precedence: a ``--deny-path`` pattern denies; otherwise a built-in rule denies unless an
``--allow-path`` pattern covers the part of the path the rule names (the directory ``.ssh`` for
``.ssh/``, the whole path for ``*.pem``), so an allow pattern matches whole path components and
never lifts a rule through a name deeper down. Git's own directories are never lifted. This list
is the one place they are defined; ``docs/permissions.md`` lists them, checked by a test.
"""

from __future__ import annotations

import re
import unicodedata
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

# Never written by a tool unless an explicit ``--allow-path`` says so (and in ``ask`` mode
# always asked): configuration that git, an editor, an agent, a hook manager or a shell reads and
# acts on later, so a write there is code execution deferred until the person next uses the
# workspace (``core.fsmonitor`` in ``.git/config`` runs at the next ``git status``).
PROTECTED_CONFIG_PATHS: tuple[str, ...] = (
    ".gitmodules",
    ".gitconfig",
    "/Makefile",
    ".vscode/",
    ".idea/",
    ".claude/",
    ".mcp.json",
    ".husky/",
    ".pre-commit-config.yaml",
    "**/.github/workflows/",
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
    ".inputrc",
    "**/.config/fish/",
)

# Never written by a tool in any mode but ``ask`` (where the person is asked each time), not even
# with ``--allow-path``: git's own directory at any depth (``commondir``, ``config.worktree``,
# ``info/``, ``modules/``, hooks, config) and a ``.git`` pointer file of a linked worktree or
# submodule, which could name another directory as the repository.
GIT_PATHS: tuple[str, ...] = (".git",)

SENSITIVE = "sensitive path"
PROTECTED_CONFIG = "protected config path"
GIT_DIRECTORY = "git repository path"
RUN_RECORD = "the run's own session and audit log"
DENIED_BY_OPTION = "path denied by --deny-path"
ALLOWED_BY_OPTION = "allowed by --allow-path"


class PatternError(ValueError):
    """A ``--allow-path``/``--deny-path`` pattern that cannot be used."""


def fold(text: str) -> str:
    """``text`` as every rule compares it: NFC, then case-folded. On macOS's default APFS and on
    Windows, ``.ENV`` and ``.GIT/hooks`` are ``.env`` and ``.git/hooks``; on Linux they are
    other files, but a rule that misses them there would miss them on a case-insensitive
    volume mounted there too, so the comparison is the same everywhere."""
    return unicodedata.normalize("NFC", text).casefold()


def escape(path: str) -> str:
    """``path`` as a ``.gitignore`` pattern matching exactly it (and what lies beneath),
    anchored at the workspace root."""
    escaped = re.sub(r"([\\*?\[\]!#])", r"\\\1", path.strip("/"))
    return "/" + (escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped)


def _spec(pattern: str) -> pathspec.GitIgnoreSpec:
    text = pattern.strip()
    if not text or text.startswith("#"):
        raise PatternError(f"empty path pattern {pattern!r}")
    if text.startswith("!"):
        raise PatternError(
            f"path pattern {pattern!r} starts with '!': use --allow-path to let a path through"
        )
    return pathspec.GitIgnoreSpec.from_lines([fold(text)])


@dataclass(frozen=True)
class PathRule:
    """One pattern, what kind of rule it is, whether it denies reads too, and whether
    ``--allow-path`` can lift it (``fixed``: never)."""

    pattern: str
    kind: str
    writes_only: bool = False
    fixed: bool = False
    _spec: pathspec.GitIgnoreSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_spec", _spec(self.pattern))

    def matches(self, path: str, *, directory: bool = False) -> bool:
        """Whether the root-relative ``path`` falls under this rule; ``directory`` says the path
        names a directory (so ``.ssh/`` matches ``.ssh`` itself)."""
        return self._matches_folded(fold(path.removeprefix("./")), directory)

    def _matches_folded(self, path: str, directory: bool) -> bool:
        if path in ("", "."):
            return False
        if self._spec.match_file(path):
            return True
        return directory and bool(self._spec.match_file(path.rstrip("/") + "/"))

    def first_part(self, path: str, directory: bool) -> str | None:
        """The shortest leading part of the (folded) ``path`` this rule matches (``.ssh`` of
        ``.ssh/fixtures/id_rsa`` for ``.ssh/``, the whole path for ``id_rsa*``), or None."""
        parts = path.strip("/").split("/")
        for end in range(1, len(parts)):
            prefix = "/".join(parts[:end])
            if self._matches_folded(prefix, True):
                return prefix
        return path if self._matches_folded(path, directory) else None

    @property
    def anchored(self) -> bool:
        """Whether the pattern names a place (it has a slash before its end), not just a name
        that may stand at any depth."""
        return "/" in self.pattern.strip().rstrip("/")

    def lifts(self, rule: PathRule, path: str, directory: bool) -> bool:
        """Whether this allow pattern lifts ``rule`` for the (folded) ``path``: it must cover
        the part ``rule`` denies (``.ssh/`` lifts ``.ssh/``), or name ``path`` itself by its
        place (``.ssh/known_hosts``). A bare name deeper down does not: ``fixtures/`` does not
        lift ``.ssh/`` for ``.ssh/fixtures/id_rsa``, nor ``config`` for ``.aws/config``."""
        allowed, denied = self.first_part(path, directory), rule.first_part(path, directory)
        if allowed is None or denied is None:
            return False
        if denied == allowed or denied.startswith(allowed + "/"):
            return True
        return allowed == path and self.anchored

    def describe(self) -> str:
        if self.kind == DENIED_BY_OPTION:
            return f"{self.kind} {self.pattern!r}"
        if self.fixed:
            return f"{self.kind} (rule {self.pattern!r}; no option lifts it)"
        return f"{self.kind} (built-in rule {self.pattern!r}; --allow-path overrides it)"


def builtin_rules() -> list[PathRule]:
    return (
        [PathRule(p, SENSITIVE) for p in SENSITIVE_PATHS]
        + [PathRule(p, GIT_DIRECTORY, writes_only=True, fixed=True) for p in GIT_PATHS]
        + [PathRule(p, PROTECTED_CONFIG, writes_only=True) for p in PROTECTED_CONFIG_PATHS]
    )


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
    """Rules tried in order, behind a combined prefilter. Paths given here are folded."""

    def __init__(self, rules: list[PathRule]) -> None:
        self.rules = rules
        self._any = _any_of(rules)

    def matching(self, path: str, directory: bool) -> list[PathRule]:
        if not self.rules:
            return []
        if self._any is not None:
            candidates = [path, path.rstrip("/") + "/"] if directory else [path]
            if not any(self._any.match(c) for c in candidates):
                return []
        return [r for r in self.rules if r._matches_folded(path, directory)]


class PathRules:
    """The rules in force: ``deny`` patterns, then ``allow`` patterns, then the built-in lists
    (unless ``builtin=False``) and ``extra`` rules (the run's own files, the git directories
    the workspace's ``.git`` names). Raises :class:`PatternError` for an unusable pattern.

    Every comparison is on folded paths (:func:`fold`). An allow pattern lifts a rule only when
    it covers the part of the path the rule denies, or names the path itself by its place
    (:meth:`PathRule.lifts`), and never a ``fixed`` rule."""

    def __init__(
        self,
        *,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        builtin: bool = True,
        extra: Iterable[PathRule] = (),
    ) -> None:
        self.deny = [PathRule(p, DENIED_BY_OPTION) for p in deny]
        self.allow = [PathRule(p, ALLOWED_BY_OPTION) for p in allow]
        self.builtin = (builtin_rules() if builtin else []) + list(extra)
        self._deny = _Group(self.deny)
        self._reads = _Group([r for r in self.builtin if not r.writes_only])
        self._writes = _Group(self.builtin)

    def _lifted(self, rule: PathRule, path: str, directory: bool) -> bool:
        return not rule.fixed and any(allow.lifts(rule, path, directory) for allow in self.allow)

    def denial(
        self, path: str, *, writing: bool, directory: bool = False, skip: frozenset[str] = frozenset()
    ) -> PathRule | None:
        """The rule denying access to ``path`` (a write when ``writing``), or None; rules of the
        kinds in ``skip`` are passed over (in ``ask`` mode the person decides those)."""
        folded = fold(path.removeprefix("./"))
        if folded in ("", "."):
            return None
        denied = self._deny.matching(folded, directory)
        if denied:
            return denied[0]
        group = self._writes if writing else self._reads
        return next(
            (
                r
                for r in group.matching(folded, directory)
                if r.kind not in skip and not self._lifted(r, folded, directory)
            ),
            None,
        )

    def protected(self, path: str, *, directory: bool = False) -> PathRule | None:
        """The protected-config or git rule ``path`` falls under, whatever ``--allow-path``
        says: in ``ask`` mode such a write is asked about every time."""
        folded = fold(path.removeprefix("./"))
        if folded in ("", "."):
            return None
        return next(
            (r for r in self._writes.matching(folded, directory) if r.kind in ASKED_EVERY_TIME),
            None,
        )


# The rule kinds a person in ``ask`` mode is asked about every time, instead of a denial.
ASKED_EVERY_TIME = frozenset({PROTECTED_CONFIG, GIT_DIRECTORY})
