"""Replacing exact secret values (the model API key) in text before it is shown or stored."""

from __future__ import annotations

import json
from collections.abc import Iterable

REDACTED = "[REDACTED]"


class Redactor:
    """Replaces each non-empty secret, and its JSON-escaped spelling, with ``[REDACTED]``.

    Empty values are ignored: replacing "" would insert the marker between every character.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        spellings: set[str] = set()
        for secret in secrets:
            if secret:
                spellings.add(secret)
                spellings.add(json.dumps(secret, ensure_ascii=True)[1:-1])
        # Longest first, so a secret containing another is replaced whole.
        self._spellings = sorted(spellings, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._spellings)

    def __call__(self, text: str) -> str:
        for spelling in self._spellings:
            text = text.replace(spelling, REDACTED)
        return text
