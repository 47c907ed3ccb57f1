"""File names that are not valid UTF-8, shown as text and taken back.

Python decodes such a name with ``surrogateescape``: byte 0xE9 becomes U+DCE9, which no JSON
encoder or UTF-8 writer accepts. :func:`shown` writes each such byte as an escape, ``\\xe9``,
so every name fits in a result; :func:`from_shown` turns that spelling
back into the name the file system holds, so a client can pass a listed name back as a path.
A lone surrogate that is not an escaped byte (from JSON ``\\ud800``) is shown as ``\\ud800``.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTE = re.compile(r"\\x([89a-f][0-9a-f])")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` with every surrogate escaped: valid UTF-8 and JSON whatever the name held."""
    if not _SURROGATE.search(text):  # the common case costs one scan
        return text
    return _SURROGATE.sub(_escape, text)


def from_shown(path: str) -> str:
    """A path as :func:`shown` spells it, back as the name on disk (``\\xe9`` is byte 0xE9).

    Only bytes 0x80-0xFF are taken as escapes, since an ASCII byte always decodes and is never
    escaped; a name that holds the four characters ``\\xe9`` itself cannot be named."""
    if "\\x" not in path:
        return path
    return _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), path)
