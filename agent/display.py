"""Text made safe to put on a terminal: what the agent prints cannot drive the terminal.

Every byte the agent shows a person (the model's text, tool-result summaries, the ``ask``
prompt, error lines) goes through :func:`visible`. Escape sequences (ESC, CSI ``ESC [``, OSC
``ESC ]`` such as a title change or an OSC 52 clipboard write, BEL), the 8-bit C1 controls
(``\\x9b`` is a CSI on its own), carriage return, vertical tab, form feed and backspace (which
overwrite what was shown or start a line bash does not start), the file, group and record
separators, NEL and the Unicode line and paragraph separators (where ``str.splitlines`` cuts a
line and bash does not), and the invisible, direction-changing and space-like characters that make
text read differently from what it is (zero-width characters, bidi overrides and isolates, a
no-break space that looks like the space bash splits words at) are each replaced by a visible
escape (``\\x1b``, ``\\u202e``). Which characters those are is Unicode's word: the categories of
controls (Cc), formats (Cf), separators (Zl, Zp, Zs but the ASCII space), surrogates (Cs) and
unassigned code points (Cn), and the invisible fillers and variation selectors. Newline and tab
stay.

The ``ask`` prompt shows what will run, so it goes further (:func:`literal`): every non-ASCII
character that could be read as shell syntax or as nothing is escaped too. Which those are is
again Unicode's word: punctuation (quotes, dashes, brackets: categories Pc, Pd, Ps, Pe, Pi, Pf,
Po), math and modifier symbols (Sm, Sk: a minus sign, an acute accent), modifier letters (Lm: a
modifier apostrophe), combining marks (Mn, Mc, Me: a stroke overlay, an inherent vowel, a
variation selector) and any character whose compatibility form holds ASCII punctuation (a
fullwidth quotation mark, a parenthesized digit); besides, the braille blank and the fillers. A
newline in a single-line field (a file name in a diff header) is escaped as well.
"""

from __future__ import annotations

import re
import unicodedata

# Every character outside printable ASCII is a candidate; the category decides.
_CANDIDATE = re.compile("[^\t\n\x20-\x7e]")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Cn", "Zl", "Zp", "Zs"})
# Invisible letters, marks and symbols: combining grapheme joiner, Hangul fillers, the braille
# blank, variation selectors.
_INVISIBLE = frozenset(
    {0x034F, 0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)}
)


def hidden(char: str) -> bool:
    """Whether ``char`` (one character) would not show as itself on a terminal."""
    code = ord(char)
    if code < 0x80:
        return char not in "\t\n" and not 0x20 <= code <= 0x7E
    return unicodedata.category(char) in _HIDDEN_CATEGORIES or code in _INVISIBLE


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if not hidden(char):
        return char
    return _escaped(char)


def visible(text: str) -> str:
    """``text`` with every control character but tab and newline, and every invisible,
    separating or direction-changing character, shown as an escape."""
    return _CANDIDATE.sub(_escape, text)


# What the prompt escapes besides the hidden characters: punctuation, math and modifier symbols,
# modifier letters, combining marks.
_LOOKALIKE_CATEGORIES = frozenset(
    {"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sk", "Lm", "Mn", "Mc", "Me"}
)


def lookalike(char: str) -> bool:
    """Whether ``char`` (one character, not ASCII) could be read as shell syntax or as nothing:
    hidden, or a quote, dash, bracket or operator other than the ASCII one, a modifier, a
    combining mark, or a character whose compatibility form holds ASCII punctuation."""
    if hidden(char) or unicodedata.category(char) in _LOOKALIKE_CATEGORIES:
        return True
    return any(c < "\x80" and not c.isalnum() for c in unicodedata.normalize("NFKC", char))


def _escaped(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _escape_lookalike(match: re.Match[str]) -> str:
    char = match.group(0)
    # A newline reaches here only from a single-line field.
    shown_escaped = char == "\n" or (hidden(char) if char < "\x80" else lookalike(char))
    return _escaped(char) if shown_escaped else char


_NEWLINE_TOO = re.compile("[^\t\x20-\x7e]")


def literal(text: str, *, one_line: bool = False) -> str:
    """``text`` as the ``ask`` prompt shows it: :func:`visible`, and every non-ASCII character
    that could be read as shell syntax or as nothing escaped (``\\u2018``); with ``one_line``,
    a newline too (``\\x0a``), so a name cannot start a line of its own."""
    return (_NEWLINE_TOO if one_line else _CANDIDATE).sub(_escape_lookalike, text)
