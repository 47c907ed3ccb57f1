"""Texts written the way the official (Node) server writes them, so a client that reads its
results reads ours: sizes, dates, the order of names, listing tags and the edit diff."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Sequence

from safefs.workspace.edits import Hunk
from safefs.workspace.limits import MAX_RESULT_CHARS, cut_text
from safefs.workspace.listing import Listed


def format_size(size: int) -> str:
    """Sizes as the official server prints them: ``0 B``, ``512 B``, ``1.50 KB``."""
    units = ["B", "KB", "MB", "GB", "TB"]
    if size <= 0:
        return "0 B"
    i = 0
    while i + 1 < len(units) and size >= 1024 ** (i + 1):
        i += 1
    return f"{size} B" if i == 0 else f"{size / 1024**i:.2f} {units[i]}"


def listing_tag(item: Listed) -> str:
    """One line of ``list_directory``: ``[DIR] name``, ``[FILE] name``, and, where the official
    server shows a link as what it leads to, ``[LINK] name -> target``."""
    entry = item.entry
    if entry.kind == "dir":
        return f"[DIR] {entry.name}"
    if entry.kind == "link":
        return f"[LINK] {entry.name} -> {item.link}"
    return f"[FILE] {entry.name}"


def locale_order(name: str) -> tuple[str, str, str]:
    """A sort key close to JavaScript's ``localeCompare``, which the official server sorts by:
    letters compared without case and accents first (``a``, ``Ä``, ``B``), then the accents,
    then lower case before upper."""
    decomposed = unicodedata.normalize("NFD", name)
    base = "".join(c for c in decomposed if not unicodedata.combining(c))
    return base.casefold(), decomposed.casefold(), decomposed.swapcase()


def js_date(seconds: float) -> str:
    """A time as JavaScript's ``Date.toString()`` prints it, which the official server shows."""
    t = time.localtime(seconds)
    offset = time.strftime("%z", t)
    return time.strftime(f"%a %b %d %Y %H:%M:%S GMT{offset} ({time.strftime('%Z', t)})", t)


def edit_diff(path: str, hunks: Sequence[Hunk], limit: int = MAX_RESULT_CHARS) -> str:
    """An edit's diff as the official server returns it (jsdiff's ``createTwoFilesPatch``): an
    ``Index:`` line and a rule, ``---``/``+++`` lines naming ``path`` (present also when
    nothing changed), every hunk count written (difflib leaves out a count of one), all in a
    fence longer than any run of backticks inside."""
    header = f"Index: {path}\n{'=' * 67}\n--- {path}\toriginal\n+++ {path}\tmodified\n"
    body = "".join(
        f"@@ -{h.old_start},{h.old_count} +{h.new_start},{h.new_count} @@\n" + "".join(h.lines) for h in hunks
    )
    diff = header + cut_text(body, limit - len(header), "read the file to see the rest of the change")
    fence = "```"
    while fence in diff:
        fence += "`"
    return f"{fence}diff\n{diff}{fence}\n\n"
