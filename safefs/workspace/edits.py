"""Exact-text edits of a workspace file, applied atomically, reported as a unified diff.

An edit names text that must occur in the file exactly; it must occur once, unless the caller
asks for every occurrence. Text that is missing or ambiguous is refused with a message that
says how to fix the call: an edit never lands on a guess.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import safefs
from safefs.workspace.errors import WorkspaceError, os_failure, require_path
from safefs.workspace.limits import MAX_RESULT_CHARS, cut_text

MAX_EDIT_BYTES = 64 << 20  # an edit holds the file twice in memory; larger ones are refused


@dataclass(frozen=True)
class Edit:
    old: str
    new: str
    replace_all: bool = False


def _apply_one(text: str, edit: Edit, label: str) -> tuple[str, int]:
    if not edit.old:
        raise WorkspaceError(f"{label}: the text to replace must not be empty")
    old, new = edit.old, edit.new
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        # The file uses CRLF line ends; the caller wrote LF ones.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        raise WorkspaceError(
            f"{label}: text not found; read the file and copy the exact text, "
            "including whitespace and line breaks"
        )
    if count > 1 and not edit.replace_all:
        raise WorkspaceError(
            f"{label}: text occurs {count} times; include more surrounding "
            "lines so that it is unique, or replace every occurrence"
        )
    return text.replace(old, new) if edit.replace_all else text.replace(old, new, 1), count


def apply_edits(text: str, edits: Sequence[Edit], path: str) -> tuple[str, int]:
    """The text after every edit in turn, and how many replacements were made."""
    done = 0
    for i, edit in enumerate(edits):
        label = f"edit of {path!r}" if len(edits) == 1 else f"edit {i + 1} of {path!r}"
        text, count = _apply_one(text, edit, label)
        done += count if edit.replace_all else 1
    return text, done


def unified_diff(old: str, new: str, path: str, *, limit: int = MAX_RESULT_CHARS) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=path,
        tofile=path,
        fromfiledate="original",
        tofiledate="modified",
    )
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return cut_text(text, limit, "read the file to see the rest of the change")


@dataclass(frozen=True)
class EditResult:
    diff: str
    replacements: int


def edit_file(root: safefs.Root, path: str, edits: Sequence[Edit], *, dry_run: bool = False) -> EditResult:
    """Apply ``edits`` to the UTF-8 file at ``path`` and write it back atomically."""
    require_path(path)
    if not edits:
        raise WorkspaceError("no edits given")
    try:
        with root.open(path, "rb") as stream:  # a FIFO or device is refused, never opened
            data = stream.read(MAX_EDIT_BYTES + 1)
    except OSError as exc:
        raise os_failure(exc, path) from None
    if len(data) > MAX_EDIT_BYTES:
        raise WorkspaceError(f"file too large to edit: {path!r} is over {MAX_EDIT_BYTES >> 20} MiB")
    try:
        text = data.decode("utf-8", "strict")
    except UnicodeDecodeError as exc:
        raise WorkspaceError(
            f"not valid UTF-8: {path!r} (at byte offset {exc.start}); only UTF-8 text files can be edited"
        ) from None
    new_text, replacements = apply_edits(text, edits, path)
    if not dry_run and new_text != text:
        try:
            root.write_bytes(path, new_text.encode("utf-8", "surrogatepass"))
        except OSError as exc:
            raise os_failure(exc, path) from None
    return EditResult(unified_diff(text, new_text, path), replacements)
