"""Regular expressions compiled to RE2, whose matching time is linear in the text.

Every pattern a caller controls (a grep pattern, a glob, a ``.gitignore`` line) is matched by
RE2 (google-re2): no backtracking, so no pattern, however nested, can make a search run for
ever. RE2 refuses what it cannot match in linear time (back-references, look-around, possessive
quantifiers...); the refusal names the construct, in one line.

Patterns are compiled to bytes patterns and matched against bytes: RE2 works on UTF-8 bytes,
and a ``str`` search would re-encode the whole text on every call.

RE2 does not release the interpreter lock while it matches, so callers match in bounded pieces
(a block of lines, a path) and check their deadline and cancel flag between pieces: each call is
short, and other threads run between calls.
"""

from __future__ import annotations

import functools
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from safefs.workspace.errors import WorkspaceError

MAX_PATTERN_CHARS = 10_000
# RE2 refuses a pattern whose compiled program exceeds this; the default (8 MiB) lets one
# pattern take a long time to compile.
MAX_PROGRAM_BYTES = 1 << 20

_EXPLAINED = {
    "invalid perl operator: (?=": "look-ahead (?=...) is not supported",
    "invalid perl operator: (?!": "negative look-ahead (?!...) is not supported",
    "invalid perl operator: (?<=": "look-behind (?<=...) is not supported",
    "invalid perl operator: (?<!": "negative look-behind (?<!...) is not supported",
    "invalid perl operator: (?>": "atomic groups (?>...) are not supported",
}


def _explain(reason: str) -> str:
    for prefix, explained in _EXPLAINED.items():
        if reason.startswith(prefix):
            return explained
    if reason.startswith("invalid escape sequence: \\") and reason[-1:].isdigit():
        return f"back-references ({reason.rsplit(': ', 1)[-1]}) are not supported"
    if reason.startswith("bad repetition operator"):
        return f"{reason} (repetition counts above 1000 are not supported)"
    return reason


Regex = Any  # re2's compiled pattern (the package ships no type information)


def _options(ignore_case: bool, literal: bool, lines: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print each refusal on stderr
    options.max_mem = MAX_PROGRAM_BYTES * (8 if lines else 1)
    options.case_sensitive = not ignore_case
    options.literal = literal
    options.dot_nl = False
    options.never_nl = lines  # a match never spans two lines, as in ripgrep
    return options


@functools.lru_cache(maxsize=512)
def compile_regex(
    pattern: str, *, ignore_case: bool = False, literal: bool = False, lines: bool = False, what: str = ""
) -> Regex:
    """``pattern`` compiled by RE2 for bytes text; WorkspaceError in one line when refused.

    ``lines``: for searching text line by line: ``^`` and ``$`` match at line ends and no match
    spans a newline."""
    what = what or "regular expression"
    if len(pattern) > MAX_PATTERN_CHARS:
        raise WorkspaceError(f"{what} too long: {len(pattern)} characters, at most {MAX_PATTERN_CHARS}")
    try:
        encoded = pattern.encode("utf-8", "strict")
    except UnicodeEncodeError:
        raise WorkspaceError(f"{what} is not encodable as UTF-8 (it holds a lone surrogate)") from None
    if lines and not literal:
        encoded = b"(?m)" + encoded
    try:
        return re2.compile(encoded, _options(ignore_case, literal, lines))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "refused"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        if lines and not literal:
            reason = str(reason).replace(": (?m)", ": ", 1)  # the flag was ours, not the caller's
        shown = pattern if len(pattern) <= 80 else pattern[:80] + "..."
        raise WorkspaceError(f"invalid {what} {shown!r}: {_explain(str(reason))}") from None


_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def escape(text: str) -> str:
    """``text`` as a pattern that matches it literally: ASCII punctuation escaped (RE2 refuses
    an escaped space or letter), everything else as it is."""
    return "".join("\\" + c if c in _PUNCTUATION else c for c in text)
