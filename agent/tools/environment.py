"""The environment a ``bash`` child gets: an allowlist of harmless names, never a denylist.

A prompt-injected model that is allowed to run commands will try ``env``; whatever is not in the
child's environment it cannot print. A denylist of credential-looking names always misses some
(``MYSQL_PWD``, ``PGPASS``, ``GH_PAT``, ``CI_JOB_JWT``, a password inside ``DATABASE_URL``), so
only the names below pass, plus those the operator lists. The model API key is dropped even
then, by name and by value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

MODEL_KEY_VARIABLE = "ANTHROPIC_API_KEY"
ALLOWED_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "TZ",
        "NO_COLOR",
        "PAGER",
        "EDITOR",
        "TMPDIR",
    }
)
ALLOWED_PREFIXES = ("LC_",)


def is_allowed(name: str) -> bool:
    return name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)


def scrub_environment(
    environ: Mapping[str, str], *, allow: Iterable[str] = (), secret_values: Iterable[str] = ()
) -> dict[str, str]:
    """The part of ``environ`` a command may see.

    ``allow``: further names to pass (exact, case-sensitive). ``secret_values``: values (such as
    the model API key) no variable may carry, whatever its name and whatever ``allow`` says;
    empty strings are ignored.
    """
    allowed = set(allow)
    secrets = [value for value in secret_values if value]
    kept: dict[str, str] = {}
    for name, value in environ.items():
        if name.upper() == MODEL_KEY_VARIABLE:
            continue
        if not (is_allowed(name) or name in allowed):
            continue
        if any(secret in value for secret in secrets):
            continue
        kept[name] = value
    return kept
