"""How much one result may hold, and how a cut is announced."""

from __future__ import annotations

from collections.abc import Iterable

MAX_RESULT_CHARS = 30_000  # no result shown to a model is longer than about this
MAX_ENTRIES = 1_000  # listings, tree views, glob and grep results
MAX_LINE_CHARS = 500  # one grep match line
MAX_GREP_FILE_BYTES = 32 << 20  # larger files are skipped by grep, and counted
NOTE_CHARS = 200  # kept free under a cap for the line that says what was cut


def cut_text(text: str, limit: int, how_to_continue: str) -> str:
    """``text`` if it fits in ``limit`` characters, else its start and a line saying what was cut."""
    if len(text) <= limit:
        return text
    note = f"\n[cut: {len(text) - limit} more characters not shown; {how_to_continue}]"
    return text[: max(0, limit - len(note))] + note


def join_capped(
    lines: Iterable[str], *, limit: int = MAX_RESULT_CHARS, what: str, how_to_continue: str, more: int = 0
) -> str:
    """Lines joined by newlines up to ``limit`` characters; lines left out, and ``more`` already
    left out by the caller, are counted in a last line."""
    kept: list[str] = []
    size = 0
    left_out = more
    full = False
    budget = limit - NOTE_CHARS
    for line in lines:
        full = full or size + len(line) + 1 > budget
        if full:
            left_out += 1
            continue
        kept.append(line)
        size += len(line) + 1
    if left_out:
        kept.append(f"[{left_out} more {what} not shown; {how_to_continue}]")
    return "\n".join(kept)


def shorten_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    if len(line) <= limit:
        return line
    return f"{line[:limit]}[... {len(line) - limit} more characters]"


def truncate_middle(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and tail around a
    ``[truncated N characters]`` line (for command output, whose end matters as much as its
    start)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[truncated {cut} characters]\n{text[-half:]}"
