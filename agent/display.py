"""Text made safe to put on a terminal: what the agent prints cannot drive the terminal.

Every byte the agent shows a person (the model's text, tool-result summaries, the ``ask``
prompt, error lines) goes through :func:`visible`. Escape sequences (ESC, CSI ``ESC [``, OSC
``ESC ]`` such as a title change or an OSC 52 clipboard write, BEL), the 8-bit C1 controls
(``\\x9b`` is a CSI on its own), carriage return and backspace (which overwrite what was shown),
and the invisible and direction-changing characters that make text read differently from what
it is, are each replaced by a visible escape (``\\x1b``, ``\\u202e``). Newline and tab stay.
A lone surrogate, which no stream can encode, is shown the same way.
"""

from __future__ import annotations

import re

# C0 but tab and newline, DEL and C1; the Arabic letter mark; zero-width and direction marks;
# line and paragraph separators; bidi embeddings, overrides and isolates; word joiner and
# invisible operators; the byte order mark; lone surrogates.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character but tab and newline, and every invisible or
    direction-changing character, shown as an escape."""
    return _HIDDEN.sub(_escape, text)
