"""``Root(absolute_links="anchored")``: where an absolute link target lying under one of the
root's own absolute paths (its anchors) leads, spelled from the root.

Threat model: docs/threat-model.md.

Tools that write absolute paths leave links such as ``data -> /home/u/ws/shared`` inside the
workspace ``/home/u/ws``. A program following it from the host's ``/`` lands back inside; safefs
follows such a target from the root's directory fd instead, so it never leaves the root whatever
happens to the host path meanwhile. Compared by whole components (``""`` and ``.`` dropped, as
the kernel drops them); any other absolute target, a ``..`` within the anchor's part included,
stays an escape.
"""

from __future__ import annotations

from collections.abc import Sequence


def beneath_anchors(target: bytes, anchors: Sequence[bytes]) -> bytes | None:
    """The root-relative rest of the absolute ``target`` (``.`` for the root itself, a trailing
    slash kept) when it lies under one of ``anchors``; None otherwise."""
    parts = [p for p in target.split(b"/") if p and p != b"."]
    for anchor in anchors:
        prefix = [p for p in anchor.split(b"/") if p and p != b"."]
        if parts[: len(prefix)] == prefix:
            rest = parts[len(prefix) :]
            if not rest:
                return b"."
            return b"/".join(rest) + (b"/" if target.endswith(b"/") else b"")
    return None
