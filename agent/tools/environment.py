"""The environment a ``bash`` child gets: the parent's, minus the model API key and credentials.

A prompt-injected model that is allowed to run commands will try ``env``; whatever is not in the
child's environment it cannot print. Names that look like credentials are dropped unless the
operator lists them explicitly; the model API key is dropped even then, by name and by value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MODEL_KEY_VARIABLE = "ANTHROPIC_API_KEY"
CREDENTIAL_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)


def looks_like_credential(name: str) -> bool:
    return CREDENTIAL_NAME.search(name) is not None


def scrub_environment(environ: Mapping[str, str], *, allow: Iterable[str] = (),
                      secret_values: Iterable[str] = ()) -> dict[str, str]:
    """A copy of ``environ`` without credentials.

    ``allow``: names to keep although they look like credentials (exact, case-sensitive).
    ``secret_values``: values (such as the model API key) no variable may carry, whatever its
    name and whatever ``allow`` says; empty strings are ignored.
    """
    allowed = set(allow)
    secrets = [value for value in secret_values if value]
    kept: dict[str, str] = {}
    for name, value in environ.items():
        if name.upper() == MODEL_KEY_VARIABLE:
            continue
        if looks_like_credential(name) and name not in allowed:
            continue
        if any(secret in value for secret in secrets):
            continue
        kept[name] = value
    return kept
