"""Turning what a caller passes into a root-relative byte path, without touching the disk.

Threat model: docs/threat-model.md.
"""

from __future__ import annotations

import os
from typing import Union

from safefs.errors import PathEscapeError

PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

SPECIAL_NAMES = (b".", b"..")


def to_bytes(path: PathArg) -> bytes:
    """The path as bytes. NUL is refused rather than silently truncating the name."""
    raw = os.fspath(path)
    data = raw if isinstance(raw, bytes) else os.fsencode(raw)
    if 0 in data:  # a NUL byte (an int operand: no TypeError raised and cleared first)
        raise ValueError("embedded null byte in path")
    return data


def components(path: bytes) -> list[bytes]:
    return [c for c in path.split(b"/") if c and c != b"."]


def relative_to_root(path: bytes, anchors: tuple[bytes, ...]) -> bytes:
    """A caller's path as a path relative to the root.

    A relative path is returned as is. An absolute one is accepted only when it lies lexically
    under one of the root's absolute spellings (as given, or its realpath); the remainder is then
    taken relative to the root. ``..`` is never collapsed here: the resolvers judge it physically.
    """
    if not path:
        raise FileNotFoundError(2, "No such file or directory", "")
    if not path.startswith(b"/"):
        return path
    parts = path.split(b"/")
    for anchor in anchors:
        want = components(anchor)
        got: list[bytes] = []
        i = 0
        # Walk the given path's leading parts, skipping empty and "." ones, until the anchor is
        # matched component by component (so "/ws-other" never matches "/ws").
        while len(got) < len(want) and i < len(parts):
            part = parts[i]
            i += 1
            if part in (b"", b"."):
                continue
            got.append(part)
        if got == want:
            rest = b"/".join(parts[i:])
            return rest.lstrip(b"/") or (b"./" if path.endswith(b"/") else b".")
    raise PathEscapeError()


def split_parent(rel: bytes) -> tuple[bytes, bytes, bool]:
    """``a/b/c/`` -> (``a/b``, ``c``, True): parent path, final name, trailing slash."""
    stripped = rel.rstrip(b"/")
    trailing = len(stripped) != len(rel)
    if not stripped:  # "/" cannot reach here; "" was refused earlier
        return b".", b".", trailing
    i = stripped.rfind(b"/")
    if i < 0:
        return b".", stripped, trailing
    parent = stripped[:i].rstrip(b"/") or b"."
    return parent, stripped[i + 1 :], trailing


def join(parent: bytes, child: bytes) -> bytes:
    if parent in (b"", b"."):
        return child
    return parent + b"/" + child
