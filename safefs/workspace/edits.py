"""Exact-text edits of a workspace file, applied atomically as compare-and-swap, reported as a
unified diff of the changed region.

An edit names text that must occur in the file exactly; it must occur once (occurrences that
overlap count: ``"x = 1\\nx = 1"`` occurs twice in three ``x = 1`` lines), unless the caller asks
for every occurrence. Text that is missing or ambiguous is refused with a message that says how
to fix the call: an edit never lands on a guess. Several edits are applied in turn to the text
in memory and written once: all of them or none.

Taking turns: the file is read under an exclusive ``flock``, and the lock counts only while the
path still names the locked file. An editor that waited while another replaced the file (every
edit renames a new file into place) finds the path naming a new file, and locks that one
instead: edits through safefs, in this process or another, run one after the other and never
spend a retry on each other.

Compare-and-swap: the new content is written to a temp file beside the file the path leads to,
and then the name the rename replaces must still be the file that was read (same device, inode,
size, ``mtime_ns`` and ``ctime_ns``). If it is not (a writer that takes no lock replaced or
changed it), the temp file is removed and the edit is applied again to the new content, up to
``CAS_ATTEMPTS`` times, then refused. The new file then goes in by ``Root.exchange``
(``renameat2(RENAME_EXCHANGE)``), which leaves the displaced file at the temp name, where it is
checked once more: a write that landed between the check and the exchange is put back in place
(or a still newer one left there) and the edit applied again, so a write that replaces the file
is never overwritten. What remains: a writer holding the file open that writes into it after
that last check (its write goes to the displaced file, which is removed), and one that rewrites
the file in place within one tick of the file system's clock, with the same size. Where the
exchange is refused (no renameat2, or a file system without it) a rename follows the check, and
a write landing in the microseconds between them is lost too.

Line ends: a file whose line breaks are CRLF (more CRLF than bare LF in its first 64 Ki
characters) gets CRLF in the text an edit inserts, whatever the caller wrote. The diff splits
lines where git's diff does, at ``\n`` only: a form feed, a lone CR, U+0085 or U+2028 is part
of a line.

The diff covers only the region that changed, plus ``CONTEXT_LINES`` around it: the cost of an
edit is a read, a replace and a write, not a diff of the whole file.
"""

from __future__ import annotations

import difflib
import errno
import fcntl
import os
import re
import stat as stat_mod
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

import safefs
from safefs.replacing import create_temp_beside, kept_permissions
from safefs.workspace.errors import PATH, WorkspaceError, os_failure, require_path
from safefs.workspace.limits import MAX_RESULT_CHARS, cut_text

MAX_EDIT_BYTES = 64 << 20  # an edit holds the file twice in memory; larger ones are refused
MAX_EDITS = 100
CAS_ATTEMPTS = 3
LOCK_SECONDS = 10.0
CONTEXT_LINES = 3
_COMPARE_BLOCK = 1 << 16
_SWAP_ROUNDS = 8
CRLF_SAMPLE = 1 << 16
_exchange_works = True  # False once the platform or file system refused RENAME_EXCHANGE


@dataclass(frozen=True)
class Edit:
    old: str
    new: str
    replace_all: bool = False


def occurrences(text: str, old: str, *, at_most: int) -> int:
    """How many times ``old`` occurs in ``text``, overlapping ones included (up to ``at_most``)."""
    found = 0
    pos = text.find(old)
    while pos >= 0 and found < at_most:
        found += 1
        pos = text.find(old, pos + 1)
    return found


def _encodable(text: str, label: str, what: str) -> None:
    try:
        text.encode("utf-8", "strict")
    except UnicodeEncodeError:
        raise WorkspaceError(
            f"{label}: the {what} is not encodable as UTF-8 (it holds a lone surrogate)"
        ) from None


def _uses_crlf(text: str) -> bool:
    """Whether the file's line breaks are CRLF: in its first ``CRLF_SAMPLE`` characters (a
    file's line ends are judged without counting all of a large file), more CRLF than bare LF."""
    sample = text[:CRLF_SAMPLE]
    crlf = sample.count("\r\n")
    return crlf > 0 and 2 * crlf > sample.count("\n")


_BARE_LF = re.compile(r"(?<!\r)\n")


def _crlf(text: str) -> str:
    """``text`` with each bare LF as CRLF (a CRLF already there stays one)."""
    return _BARE_LF.sub("\r\n", text) if "\n" in text else text


def _apply_one(text: str, edit: Edit, label: str) -> tuple[str, int]:
    if not edit.old:
        raise WorkspaceError(f"{label}: the text to replace must not be empty")
    _encodable(edit.old, label, "text to replace")
    _encodable(edit.new, label, "new text")
    old, new = edit.old, edit.new
    count = occurrences(text, old, at_most=2)
    if count == 0 and "\n" in old and "\r\n" not in old and _uses_crlf(text):
        # The file uses CRLF line ends; the caller wrote LF ones.
        old = _crlf(old)
        count = occurrences(text, old, at_most=2)
    if "\n" in new and _uses_crlf(text):
        new = _crlf(new)  # what is inserted keeps the file's line ends
    if count == 0:
        raise WorkspaceError(
            f"{label}: text not found; read the file and copy the exact text, "
            "including whitespace and line breaks"
        )
    if edit.replace_all:
        replaced = text.count(old)
        return text.replace(old, new), replaced
    if count > 1:
        total = occurrences(text, old, at_most=1 << 30)
        overlapping = total != text.count(old)
        raise WorkspaceError(
            f"{label}: text occurs {total} times{' (some overlapping)' if overlapping else ''}; "
            "include more surrounding lines so that it is unique, or replace every occurrence"
        )
    return text.replace(old, new, 1), 1


def apply_edits(text: str, edits: Sequence[Edit], path: str) -> tuple[str, int]:
    """The text after every edit in turn, and how many replacements were made; one edit that
    fails fails them all."""
    if len(edits) > MAX_EDITS:
        raise WorkspaceError(f"too many edits in one call: {len(edits)}, at most {MAX_EDITS}")
    done = 0
    for i, edit in enumerate(edits):
        label = f"edit of {PATH}" if len(edits) == 1 else f"edit {i + 1} of {PATH}"
        try:
            text, count = _apply_one(text, edit, label)
        except WorkspaceError as exc:  # the label named the path: keep it as data
            raise WorkspaceError.naming(exc.message, path) if PATH in exc.message else exc from None
        done += count
    return text, done


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i : i + _COMPARE_BLOCK] == b[i : i + _COMPARE_BLOCK]:
        i += _COMPARE_BLOCK
    while i < n and a[i] == b[i]:
        i += 1
    return min(i, n)


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common tail of ``a`` and ``b``, at most ``limit``."""
    i = 0
    while (
        i + _COMPARE_BLOCK <= limit
        and a[len(a) - i - _COMPARE_BLOCK : len(a) - i] == b[len(b) - i - _COMPARE_BLOCK : len(b) - i]
    ):
        i += _COMPARE_BLOCK
    while i < limit and a[len(a) - i - 1] == b[len(b) - i - 1]:
        i += 1
    return i


def diff_lines(text: str) -> list[str]:
    """``text`` as git's diff sees its lines: each ends at ``\n`` (kept), the last perhaps
    without one. Not ``str.splitlines``, which also ends a line at a form feed, a lone CR,
    U+001C-U+001E, U+0085, U+2028 and U+2029."""
    lines = text.split("\n")
    last = lines.pop()
    out = [line + "\n" for line in lines]
    if last:
        out.append(last)
    return out


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


@dataclass(frozen=True)
class Hunk:
    """One hunk of a unified diff, as data: where it starts in each file (1-based; the line
    before an empty range), how many lines it covers there, and its lines after the ``@@``
    header, each ending in a line break (a ``\\ No newline at end of file`` line included)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]


def unified_diff(
    old: str, new: str, path: str, *, limit: int = MAX_RESULT_CHARS, hunks: list[Hunk] | None = None
) -> str:
    """A unified diff of ``old`` -> ``new`` computed over the changed region and its context
    only, with line numbers of the whole file. ``hunks``, when given, receives the same diff as
    data, whole (the text is cut at ``limit``), for a caller that writes it in its own format."""
    if old == new:
        return ""
    start = _common_prefix(old, new)
    tail = _common_suffix(old, new, min(len(old), len(new)) - start)
    # Widen to whole lines, then CONTEXT_LINES more on each side.
    lo = old.rfind("\n", 0, start) + 1
    for _ in range(CONTEXT_LINES):
        if lo == 0:
            break
        lo = old.rfind("\n", 0, lo - 1) + 1
    old_end = len(old) - tail
    hi = old.find("\n", old_end)
    hi = len(old) if hi < 0 else hi + 1
    for _ in range(CONTEXT_LINES):
        if hi >= len(old):
            break
        nxt = old.find("\n", hi)
        hi = len(old) if nxt < 0 else nxt + 1
    new_hi = hi - len(old) + len(new)
    first_line = old.count("\n", 0, lo)
    lines = difflib.unified_diff(
        diff_lines(old[lo:hi]),
        diff_lines(new[lo:new_hi]),
        fromfile=path,
        tofile=path,
        fromfiledate="original",
        tofiledate="modified",
        n=CONTEXT_LINES,
    )
    out: list[str] = []
    headers: list[tuple[int, int, int, int, int]] = []  # where each hunk starts in ``out``, and its range
    for line in lines:
        match = _HUNK.match(line)
        if match is not None:
            a, b = int(match.group(1)) + first_line, int(match.group(3)) + first_line
            line = f"@@ -{a}{match.group(2) or ''} +{b}{match.group(4) or ''} @@\n"
            headers.append((len(out), a, _count(match.group(2)), b, _count(match.group(4))))
        out.extend([line] if line.endswith("\n") else [line + "\n", "\\ No newline at end of file\n"])
    if hunks is not None:
        ends = [h[0] for h in headers[1:]] + [len(out)]
        for (at, a, a_count, b, b_count), end in zip(headers, ends, strict=True):
            hunks.append(Hunk(a, a_count, b, b_count, tuple(out[at + 1 : end])))
    return cut_text("".join(out), limit, "read the file to see the rest of the change")


def _count(group: str | None) -> int:
    """A hunk header's line count: difflib leaves out a count of one."""
    return 1 if group is None else int(group[1:])


@dataclass(frozen=True)
class EditResult:
    diff: str
    replacements: int
    attempts: int = 1  # reads it took: more than 1 when the file changed under the edit
    hunks: tuple[Hunk, ...] = ()  # the diff as data, whole


def _edit_result(old: str, new: str, path: str, replacements: int, attempt: int) -> EditResult:
    hunks: list[Hunk] = []
    diff = unified_diff(old, new, path, hunks=hunks)
    return EditResult(diff, replacements, attempt, tuple(hunks))


def _lock(fd: int, deadline: float, path: str) -> bool:
    """Wait for the exclusive flock on ``fd``; False on a file system without flock (the
    compare-and-swap still guards)."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise WorkspaceError.naming(
                    f"file is being edited by someone else; try again: {PATH}", path
                ) from None
            time.sleep(0.002)
        except OSError:
            return False


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, stat_mod.S_IFMT(st.st_mode))


def _open_locked(root: safefs.Root, path: str, *, lock: bool) -> IO[bytes]:
    """The file open for reading and, with ``lock``, holding its exclusive flock while the path
    still names it. An editor that waited while another renamed a new file into place locks the
    new file: editors take turns, one at a time, and none sees the file change under it (but
    for a writer that takes no lock). Waiting is bounded by ``LOCK_SECONDS``."""
    deadline = time.monotonic() + LOCK_SECONDS
    while True:
        stream: IO[bytes] = root.open(path, "rb")  # a FIFO or device is refused, never opened
        if not lock:
            return stream
        try:
            if not _lock(stream.fileno(), deadline, path):
                return stream
            if _same_file(os.fstat(stream.fileno()), root.stat(path)):
                return stream
        except BaseException:
            stream.close()
            raise
        stream.close()  # replaced while this editor waited: lock the file the path names now
        if time.monotonic() > deadline:
            raise WorkspaceError.naming(f"file is being edited by someone else; try again: {PATH}", path)


def _replace_if_unchanged(root: safefs.Root, path: str, read_as: os.stat_result, data: bytes) -> bool:
    """Replace the file ``path`` leads to with ``data`` if it is still the file ``read_as``
    describes; False, having changed nothing, if it is not."""
    target: str = root.resolve(path, strict=True)  # a symlink is written through, as write_bytes does
    parent, _, name = target.rpartition("/")
    with root.opendir(parent or ".") as directory:
        temp, out = create_temp_beside(directory, name)  # a new name: no entry there is touched
        try:
            with out:
                os.fchmod(out.fileno(), kept_permissions(read_as.st_mode))  # as write_bytes keeps it
                out.write(data)
                out.flush()
                ours = os.fstat(out.fileno())
                # Locked before it takes the name: an editor that opens it while this one may
                # still put a writer's file back waits, then finds which file the name holds.
                _lock(out.fileno(), time.monotonic(), path)
                # The compare-and-swap, on the name the new file replaces: a write that landed
                # while the new content was being written is seen here, and nothing is moved.
                if _identity(directory.stat(name, follow_symlinks=False)) != _identity(read_as):
                    directory.remove(temp)
                    return False
                if _exchange_works:
                    return _swap_in(directory, temp, name, read_as, ours)
                directory.rename(temp, name)  # a write landing since the check is lost: the window
        except BaseException:
            try:
                directory.remove(temp)
            except OSError:
                pass
            raise
    return True


def _swap_in(
    directory: safefs.Root, temp: str, name: str, read_as: os.stat_result, ours: os.stat_result
) -> bool:
    """Exchange the new file ``temp`` in for ``name``, then judge the file it displaced: the one
    that was read (True, and it is removed), or one a writer put there since the check (False,
    the writer's file put back in place, or a still newer one left where it landed)."""
    global _exchange_works
    try:
        directory.exchange(temp, name)
    except (FileNotFoundError, IsADirectoryError, safefs.NotRegularFileError):
        directory.remove(temp)  # no longer the file that was read: nothing was moved
        return False
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise
        _exchange_works = False  # no RENAME_EXCHANGE here: the rename, with its window, from now on
        directory.rename(temp, name)
        return True
    # The rename changed the displaced file's ctime: what identifies it now is the rest.
    if _identity(directory.stat(temp, follow_symlinks=False))[:4] == _identity(read_as)[:4]:
        directory.remove(temp)
        return True
    # A writer's file was displaced: it goes back. Should a newer write have replaced ours at
    # ``name`` meanwhile, the exchange brings that one back instead, and it is put in place in
    # turn (each further round needs another write within microseconds). What is left at
    # ``temp`` is ours, or the file the newer write superseded.
    expected = ours
    for _ in range(_SWAP_ROUNDS):
        placed = directory.stat(temp, follow_symlinks=False)
        directory.exchange(temp, name)
        back = directory.stat(temp, follow_symlinks=False)
        if _same_file(back, expected):
            break
        expected = placed
    directory.remove(temp)
    return False


def edit_file(root: safefs.Root, path: str, edits: Sequence[Edit], *, dry_run: bool = False) -> EditResult:
    """Apply ``edits`` to the UTF-8 file at ``path`` and write it back atomically, as a
    compare-and-swap against the file that was read."""
    require_path(path)
    if not edits:
        raise WorkspaceError("no edits given")
    for attempt in range(1, CAS_ATTEMPTS + 1):
        try:
            with _open_locked(root, path, lock=not dry_run) as stream:
                read_as = os.fstat(stream.fileno())
                if read_as.st_size > MAX_EDIT_BYTES:
                    raise WorkspaceError.naming(
                        f"file too large to edit: {PATH} is over {MAX_EDIT_BYTES >> 20} MiB", path
                    )
                data = stream.read(MAX_EDIT_BYTES + 1)
                if len(data) > MAX_EDIT_BYTES:
                    raise WorkspaceError.naming(
                        f"file too large to edit: {PATH} is over {MAX_EDIT_BYTES >> 20} MiB", path
                    )
                try:
                    text = data.decode("utf-8", "strict")
                except UnicodeDecodeError as exc:
                    raise WorkspaceError.naming(
                        f"not valid UTF-8: {PATH} (at byte offset {exc.start}); "
                        "only UTF-8 text files can be edited",
                        path,
                    ) from None
                new_text, replacements = apply_edits(text, edits, path)
                if dry_run or new_text == text:
                    return _edit_result(text, new_text, path, replacements, attempt)
                if _replace_if_unchanged(root, path, read_as, new_text.encode("utf-8", "strict")):
                    return _edit_result(text, new_text, path, replacements, attempt)
                # Changed since it was read, by a writer that takes no lock: apply the edits
                # to the new content.
        except OSError as exc:
            raise os_failure(exc, path) from None
    raise WorkspaceError.naming(
        f"file changed while it was being edited, {CAS_ATTEMPTS} times: {PATH}; read it again and retry", path
    )
