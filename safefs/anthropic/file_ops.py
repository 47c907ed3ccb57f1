"""The file tools of ``agent_toolset_20260401`` (read, write, edit, glob, grep) on safefs roots.

Each function is the body of one tool, synchronous, with the SDK's arguments, results and
``ToolError`` texts. Every path is opened beneath a :class:`safefs.Root` (see
:mod:`safefs.anthropic.context`); the checks the SDK makes with ``stat()`` on a path string
(regular file, size cap) are made here with ``fstat()`` on the descriptor that is then read.
"""

from __future__ import annotations

import base64
import errno
import os
import posixpath
from typing import IO, Any

from anthropic import NotGiven
from anthropic.lib.tools import ToolError

import safefs
from safefs.anthropic import sdk
from safefs.anthropic.context import AgentToolContext, Located, effective_cap
from safefs.workspace import WorkspaceError
from safefs.workspace.search import glob as workspace_glob
from safefs.workspace.search import grep as workspace_grep

BINARY_MEDIA_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
}
READ_CHUNK = 64 * 1024


def fs_reason(exc: OSError) -> str:
    """The SDK's wording for an OSError: stable, and never a host path."""
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    if isinstance(exc, NotADirectoryError):
        return "not a directory"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, FileExistsError):
        return "file already exists"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "too many levels of symbolic links"
    return (exc.strerror or "i/o error").lower()


def fs_error(ctx: AgentToolContext, op: str, file_path: str, exc: OSError) -> ToolError:
    if isinstance(exc, safefs.PathEscapeError):
        return ctx.outside(op, file_path)
    return ToolError(f"{op}: {file_path}: {fs_reason(exc)}")


def _open_regular(ctx: AgentToolContext, op: str, file_path: str, located: Located) -> IO[bytes]:
    try:
        return located.root.open(located.rel, "rb")
    except (safefs.NotRegularFileError, IsADirectoryError):
        raise ToolError(f"{op}: {file_path}: not a regular file") from None
    except OSError as exc:
        raise fs_error(ctx, op, file_path, exc) from None


# -- read --------------------------------------------------------------------------------------


def _binary_block(
    ctx: AgentToolContext, stream: IO[bytes], file_path: str, size: int, media_type: str
) -> dict[str, Any]:
    if media_type == "application/pdf":
        limit = effective_cap(ctx.max_pdf_bytes, sdk.DEFAULT_MAX_PDF_BYTES)
    else:
        b64_cap = effective_cap(ctx.max_image_base64_bytes, sdk.DEFAULT_MAX_IMAGE_BASE64_BYTES)
        limit = None if b64_cap is None else (b64_cap // 4) * 3
    # An explicitly configured max_file_bytes is a memory bound, so it binds media reads too.
    explicit = ctx.max_file_bytes
    if not isinstance(explicit, NotGiven) and explicit is not None:
        limit = explicit if limit is None else min(limit, explicit)
    if limit is not None and size > limit:
        raise ToolError(f"read: {file_path} is {size} bytes, exceeds {limit}-byte limit for image/PDF files.")
    data = stream.read() if limit is None else stream.read(limit + 1)
    if limit is not None and len(data) > limit:  # grew since the fstat
        raise ToolError(
            f"read: {file_path} is {len(data)} bytes, exceeds {limit}-byte limit for image/PDF files."
        )
    encoded = base64.standard_b64encode(data).decode("ascii")
    kind = "document" if media_type == "application/pdf" else "image"
    return {"type": kind, "source": {"type": "base64", "media_type": media_type, "data": encoded}}


def _range_too_large(file_path: str, start_line: int, end_line: int, limit: int) -> ToolError:
    start = max(0, start_line - 1)
    end = end_line if end_line > 0 else None
    if end is not None and end - start == 1:
        return ToolError(
            f"read: line {start + 1} of {file_path} alone exceeds {limit}-byte limit. "
            "The read tool cannot return part of a line, so view_range cannot narrow this further."
        )
    return ToolError(
        f"read: view_range [{start_line}, {end_line}] of {file_path} exceeds {limit}-byte limit. "
        "Narrow the view_range to read a smaller portion."
    )


def _streamed_range(stream: IO[bytes], file_path: str, start_line: int, end_line: int, limit: int) -> str:
    """Lines ``start_line..end_line`` (1-based, inclusive; ``end_line <= 0``: to the end) of a
    file too large to load, at most ``limit`` bytes of them, without reading past the range."""
    first = max(0, start_line - 1)  # 0-based index of the first line kept
    stop = end_line if end_line > 0 else None  # 0-based index past the last line kept
    if stop is not None and stop <= first:
        return ""
    kept = bytearray()
    line = 0
    pending = b""
    while stop is None or line < stop:
        chunk = stream.read(READ_CHUNK)
        if not chunk:
            break
        pending += chunk
        while stop is None or line < stop:
            newline = pending.find(b"\n")
            if newline < 0:
                if line >= first:
                    kept += pending
                    if len(kept) > limit:
                        raise _range_too_large(file_path, start_line, end_line, limit)
                pending = b""
                break
            if line >= first:
                kept += pending[:newline]
                last_kept = stop is not None and line + 1 >= stop
                if not last_kept:
                    kept += b"\n"
                if len(kept) > limit:
                    raise _range_too_large(file_path, start_line, end_line, limit)
            pending = pending[newline + 1 :]
            line += 1
    return kept.decode("utf-8")


def read(ctx: AgentToolContext, file_path: str, view_range: list[int] | None = None) -> Any:
    located = ctx.locate("read", file_path, saved_output=True)
    if view_range and len(view_range) != 2:
        raise ToolError("read: view_range must be [start_line, end_line]")
    with _open_regular(ctx, "read", file_path, located) as stream:
        try:
            size = os.fstat(stream.fileno()).st_size
            media_type = BINARY_MEDIA_TYPES.get(posixpath.splitext(file_path)[1].lower())
            if media_type is not None:
                if view_range:
                    raise ToolError("read: view_range is not supported for image/PDF files")
                return [_binary_block(ctx, stream, file_path, size, media_type)]
            limit = effective_cap(ctx.max_file_bytes, sdk.read_cap())
            if limit is not None and size > limit:
                if not view_range:
                    raise ToolError(
                        f"read: {file_path} is {size} bytes, exceeds {limit}-byte limit. "
                        "Use the view_range parameter to read specific line ranges, "
                        "e.g. view_range: [1, 500]."
                    )
                return _streamed_range(stream, file_path, view_range[0], view_range[1], limit)
            data = stream.read() if limit is None else stream.read(limit + 1)
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(
                f"read: {file_path}: not valid UTF-8 text "
                "(binary files are only supported for image/PDF extensions)"
            ) from None
        except OSError as exc:
            raise fs_error(ctx, "read", file_path, exc) from None
    if not view_range:
        return text
    start_line, end_line = view_range
    lines = text.split("\n")
    end = end_line if end_line > 0 else len(lines)
    return "\n".join(lines[max(0, start_line - 1) : end])


# -- write and edit ----------------------------------------------------------------------------


def _encoded(op: str, file_path: str, text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(f"{op}: {file_path}: content is not encodable as UTF-8") from None


def write(ctx: AgentToolContext, file_path: str, content: str) -> str:
    located = ctx.locate("write", file_path)
    ctx.refuse_read_only("write", located, file_path)
    data = _encoded("write", file_path, content)
    try:
        located.root.write_bytes(located.rel, data, parents=True)
    except OSError as exc:
        raise fs_error(ctx, "write", file_path, exc) from None
    return f"wrote {len(content)} bytes to {file_path}"


def edit(
    ctx: AgentToolContext, file_path: str, old_string: str, new_string: str, replace_all: bool | None = None
) -> str:
    located = ctx.locate("edit", file_path)
    ctx.refuse_read_only("edit", located, file_path)
    with _open_regular(ctx, "edit", file_path, located) as stream:
        try:
            size = os.fstat(stream.fileno()).st_size
            limit = effective_cap(ctx.max_file_bytes, sdk.DEFAULT_MAX_FILE_BYTES)
            if limit is not None and size > limit:
                raise ToolError(
                    f"edit: {file_path} is {size} bytes, exceeds {limit}-byte limit. "
                    "The edit tool loads the whole file and cannot modify a file this large."
                )
            text = (stream.read() if limit is None else stream.read(limit + 1)).decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"edit: {file_path}: not valid UTF-8 text (cannot edit binary files)") from None
        except OSError as exc:
            raise fs_error(ctx, "edit", file_path, exc) from None
    count = text.count(old_string)
    if count == 0:
        raise ToolError(f"edit: old_string not found in {file_path}")
    if not replace_all and count > 1:
        raise ToolError(f"edit: old_string appears {count} times in {file_path} (must be unique)")
    updated = text.replace(old_string, new_string) if replace_all else text.replace(old_string, new_string, 1)
    try:
        located.root.write_bytes(located.rel, _encoded("edit", file_path, updated))
    except OSError as exc:
        raise fs_error(ctx, "edit", file_path, exc) from None
    return f"edited {file_path} ({count if replace_all else 1} replacement(s))"


# -- glob and grep -----------------------------------------------------------------------------


class _NothingThere(Exception):
    """The search's start does not exist: the SDK's walk finds nothing there."""


def _search_start(
    ctx: AgentToolContext, op: str, path: str | None, *, saved_output: bool = False
) -> tuple[Located, str]:
    """Where a search starts, and that directory as the SDK shows it (canonical, absolute)."""
    located = ctx.locate(op, path or ".", saved_output=saved_output)
    try:
        canonical = located.root.resolve(located.rel, strict=True)
    except (FileNotFoundError, NotADirectoryError):
        raise _NothingThere from None
    except OSError as exc:
        raise fs_error(ctx, op, path or ".", exc) from None
    return located, located.shown(canonical)


def _mtime_or_zero(root: safefs.Root, rel: str) -> float:
    try:
        return root.stat(rel).st_mtime
    except OSError:
        return 0.0


def glob(ctx: AgentToolContext, pattern: str, path: str | None = None) -> str:
    if os.path.isabs(pattern):
        raise ToolError("glob: absolute pattern not permitted; pass a relative pattern (and optionally path)")
    if ".." in pattern.split("/"):
        raise ToolError("glob: '..' is not permitted in the pattern")
    try:
        located, shown = _search_start(ctx, "glob", path)
    except _NothingThere:
        return "no matches"
    try:
        found = workspace_glob(
            located.root, pattern, located.rel, ignore=False, skip_git=False, max_results=sdk.WALK_MAX_ENTRIES
        )
    except WorkspaceError as exc:
        raise ToolError(f"glob: {exc}") from None
    if not found.matches:
        return "no matches"
    matches = sorted(found.matches, key=lambda e: _mtime_or_zero(located.root, e.path), reverse=True)
    return "\n".join(os.path.join(shown, m.rel) for m in matches[: sdk.GLOB_RESULT_LIMIT])


def grep(ctx: AgentToolContext, pattern: str, path: str | None = None) -> str:
    try:
        located, shown = _search_start(ctx, "grep", path, saved_output=True)
    except _NothingThere:
        return "no matches"
    skipped = sdk.behaviour().grep_skipped_dirs
    try:
        found = workspace_grep(
            located.root,
            pattern,
            located.rel,
            ignore=False,
            hide=lambda entry: entry.kind == "dir" and entry.name in skipped,
            max_results=sdk.WALK_MAX_ENTRIES,
        )
    except WorkspaceError as exc:
        raise ToolError(f"grep: {exc}") from None
    if not found.lines:
        return "no matches"
    single_file = located.root.is_file(located.rel)
    hits: list[str] = []
    budget = sdk.GREP_OUTPUT_LIMIT
    for line in found.lines:
        # "<path as searched>:<n>:<text>", the path shown absolute as the SDK shows it.
        where, _, rest = line.partition(":")
        full = shown if single_file else os.path.join(shown, posixpath.relpath(where, located.rel))
        hit = f"{full}:{rest}"
        budget -= len(hit) + 1
        if budget < 0:
            hits.append(f"[output truncated at {sdk.GREP_OUTPUT_LIMIT} bytes]")
            break
        hits.append(hit)
    return "\n".join(hits)
