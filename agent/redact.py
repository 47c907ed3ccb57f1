"""Keeping the model API key's exact value out of what is shown and what is stored.

Neither changes meaning. Content (tool results, file text, the prompt) is never rewritten; the
model sees it as it is. Two different places need two different means:

- :class:`Redactor`, for text shown to a person (stderr, stdout, error lines): the key where it
  stands as a token of its own becomes ``[REDACTED]``. A key of ``test`` leaves
  ``def test_add():`` alone, and an error echoing ``invalid x-api-key: test`` is redacted.
- :func:`hide_in_json`, for the session file: JSON may spell any character of a string as
  ``\\uXXXX``. Spelling one character of each run of the key that way keeps every byte the key
  could be found by out of the file, while ``json.loads`` returns exactly the same value. So the
  structure and the content survive, whatever the key. Runs of 8 characters of a longer key are
  hidden too, so a key cut in two by a truncation leaves neither half readable.

What cannot be hidden this way: a key that is also a piece of the JSON around the strings
(punctuation, digits, ``true``, ``false``, ``null``) or of every escape (``u``, and a key using
hex letters in both cases).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"
FRAGMENT = 8  # a run this long of a longer key counts as the key

_WORD = r"[\w-]"


def _spellings(secrets: Iterable[str]) -> list[str]:
    found: set[str] = set()
    for secret in secrets:
        if secret:
            found.add(secret)
            found.add(json.dumps(secret, ensure_ascii=True)[1:-1])
    # Longest first, so a secret containing another is replaced whole.
    return sorted(found, key=len, reverse=True)


class Redactor:
    """Replaces each non-empty secret standing as a token (not inside a longer word) with
    ``[REDACTED]``. Empty values are ignored."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        spellings = _spellings(secrets)
        self._pattern = (
            re.compile("|".join(f"(?<!{_WORD}){re.escape(s)}(?!{_WORD})" for s in spellings))
            if spellings
            else None
        )

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(REDACTED, text)


# One character of a JSON string literal's inside: an escape sequence or a raw character.
_UNIT = re.compile(r"\\u[0-9a-fA-F]{4}|\\.|.", re.S)


class JsonHider:
    """Encodes JSON values so no run of a secret appears in the text (see the module doc)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        grams: set[str] = set()
        for secret in secrets:
            if not secret:
                continue
            spelled = json.dumps(secret, ensure_ascii=True)[1:-1]
            n = min(len(spelled), FRAGMENT)
            grams.update(spelled[i : i + n] for i in range(len(spelled) - n + 1))
        # A lookahead finds every start, overlapping ones too.
        self._pattern = re.compile("(?=(" + "|".join(map(re.escape, sorted(grams))) + "))") if grams else None
        # Escapes spell hex digits; spell their letters in the case the secret does not use,
        # or "\u00e9" would show a key holding "e".
        letters = "".join(grams)
        self._hex_case = str.upper if re.search("[a-f]", letters) else str.lower

    def dumps(self, value: Any) -> str:
        """``json.dumps(value, ensure_ascii=True)`` in compact form, with secrets hidden."""
        if isinstance(value, dict):
            return "{" + ",".join(f"{self._string(str(k))}:{self.dumps(v)}" for k, v in value.items()) + "}"
        if isinstance(value, list | tuple):
            return "[" + ",".join(self.dumps(v) for v in value) + "]"
        if isinstance(value, str):
            return self._string(value)
        return json.dumps(value)

    def _string(self, text: str) -> str:
        literal = json.dumps(text, ensure_ascii=True)
        if self._pattern is None or not self._pattern.search(literal):
            return literal
        units = [
            f"\\u{self._hex_case(u[2:])}" if u.startswith("\\u") else u for u in _UNIT.findall(literal[1:-1])
        ]
        while self._escape_pass(units):
            pass
        return '"' + "".join(units) + '"'

    def _escape_pass(self, units: list[str]) -> bool:
        """Escape one raw character in each window that spells a run of a secret; True if any
        changed (an escape can form a new run with its neighbours, hence the repeat)."""
        assert self._pattern is not None
        text = "".join(units)
        starts: list[int] = []
        offset = 0
        for unit in units:
            starts.append(offset)
            offset += len(unit)
        changed = False
        last_escaped = -1  # offset of the unit escaped last in this pass
        for match in self._pattern.finditer(text):
            begin, end = match.start(), match.start() + len(match.group(1))
            if begin <= last_escaped < end:
                continue  # already broken by the previous escape
            first = bisect.bisect_right(starts, begin) - 1
            last = bisect.bisect_left(starts, end) - 1
            for index in range(last, first - 1, -1):  # rightmost first: it breaks later windows too
                if len(units[index]) <= 2:  # a raw character or a short escape such as \\n
                    char = json.loads('"' + units[index] + '"')
                    units[index] = f"\\u{self._hex_case(format(ord(char), '04x'))}"
                    last_escaped = starts[index]
                    changed = True
                    break
        return changed
