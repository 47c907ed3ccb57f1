"""Drop-in for strands-agents-tools' ``file_read``::

    from safefs.integrations.strands import file_read

The installed version's ``TOOL_SPEC`` (name, description, input schema, every mode), its
environment defaults (``FILE_READ_*``) and its results; every lookup, listing, glob and read
beneath the working directory's :class:`safefs.Root`. A path or a symlink leading outside is
not found (``find`` and the other modes' ``No files found matching pattern(s): ...``) or gets
the original's per-file error (``Error processing file ...: path escapes workspace: '...'``).
``time_machine`` with ``git_history`` runs no ``git`` (which would read a repository around the
working directory): it answers with an error; without it, the file's metadata as the original.
"""

from __future__ import annotations

import difflib
import io
import json
import os
import time as time_module
import uuid
from typing import Any

from rich.markup import escape
from rich.panel import Panel
from strands_tools import file_read as _upstream
from strands_tools.utils import console_util

import safefs
from safefs.integrations.strands import _workspace
from safefs.integrations.strands._budget import walk
from safefs.integrations.strands._glob import glob

__all__ = ["TOOL_SPEC", "file_read"]

TOOL_SPEC: dict[str, Any] = _upstream.TOOL_SPEC
# The original's pure helpers (no file access): formats, panels, the comma-separated path list.
detect_format = _upstream.detect_format
create_rich_panel = _upstream.create_rich_panel
split_path_list = _upstream.split_path_list
NO_GIT = "git history is not read by the confined file_read"


def find_files(console: Any, pattern: str, recursive: bool = True) -> list[str]:
    """The original's ``find_files`` (the same signature) beneath the working directory's root."""
    try:
        root = _workspace.root()
    except OSError:
        return []
    return _find(root, pattern, recursive)


def _find(root: safefs.Root, pattern: str, recursive: bool = True) -> list[str]:
    """A file as given, a directory's files (names starting with a dot skipped), else a glob
    (``**`` added when recursive); nothing when anything fails (a path leading outside
    included), as the original."""
    try:
        pattern = _workspace.spelled(pattern)
        if root.exists(pattern):
            if root.is_file(pattern):
                return [pattern]
            if root.is_dir(pattern):
                return sorted(_walk_files(root, pattern, recursive))
        if recursive and "**" not in pattern:
            base_dir, file_pattern = os.path.dirname(pattern), os.path.basename(pattern)
            pattern = os.path.join(base_dir if base_dir else ".", "**", file_pattern)
        return sorted(glob(root, pattern, recursive=recursive))
    except Exception:
        return []


def _walk_files(root: safefs.Root, top: str, recursive: bool) -> list[str]:
    """``os.walk``'s files under ``top``: a symlink to a directory is not one, and one leading
    outside, which the root does not follow, is left out."""
    found = []
    for dirpath, dirs, files in walk(root, top):
        dirs[:] = [d for d in dirs if recursive and not d.startswith(".")]
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            if not name.startswith(".") and _file_beneath(root, path):
                found.append(path)
    return found


def _file_beneath(root: safefs.Root, path: str) -> bool:
    """Whether ``os.walk`` lists ``path`` with the files and it stays beneath the root: no
    directory (a link followed beneath the root), no link leading outside."""
    try:
        return not root.is_dir(path)
    except safefs.PathEscapeError:
        return False
    except OSError:
        return True  # a link loop: os.walk lists it with the files


def _text(root: safefs.Root, path: str) -> io.TextIOBase:
    """The file opened as ``open(path, "r")`` opens it, beneath the root."""
    return root.open(path, "r")  # type: ignore[return-value]


def _stats(console: Any, root: safefs.Root, file_path: str) -> dict[str, Any]:
    stats: dict[str, Any] = {"size_bytes": root.stat(file_path).st_size, "line_count": 0, "preview": ""}
    preview = []
    with _text(root, file_path) as f:
        for i, line in enumerate(f):
            stats["line_count"] += 1
            if i < 50:
                preview.append(line)
    stats["preview"] = "\n".join(preview)
    stats["size_human"] = f"{stats['size_bytes'] / 1024:.2f} KB"
    return stats


def _regular(root: safefs.Root, file_path: str) -> None:
    """The original's checks before reading lines, a chunk or a search."""
    if not root.exists(file_path):
        raise FileNotFoundError(f"File not found: {file_path}")
    if not root.is_file(file_path):
        raise ValueError(f"Path is not a file: {file_path}")


def _chunk(root: safefs.Root, file_path: str, chunk_size: int, chunk_offset: int) -> str:
    _regular(root, file_path)
    file_size = root.stat(file_path).st_size
    if chunk_offset < 0 or chunk_offset > file_size:
        raise ValueError(f"Invalid chunk_offset: {chunk_offset}. File size is {file_size} bytes.")
    if chunk_size < 0:
        raise ValueError(f"Invalid chunk_size: {chunk_size}")
    with _text(root, file_path) as f:
        f.seek(chunk_offset)
        return f.read(chunk_size)


def read_file_lines(
    console: Any, file_path: str, start_line: int = 0, end_line: int | None = None
) -> list[str]:
    """The original's ``read_file_lines`` (the same signature, checks and console panel) beneath
    the working directory's root."""
    file_path = _workspace.spelled(file_path)
    root = _workspace.root()
    _regular(root, file_path)
    try:
        with _text(root, file_path) as f:
            all_lines = f.readlines()
        start_line = max(start_line, 0)
        if end_line is not None:
            end_line = min(end_line, len(all_lines))
            if end_line < start_line:
                raise ValueError(f"end_line ({end_line}) cannot be less than start_line ({start_line})")
        lines = all_lines[start_line:end_line]
        line_range = f"{start_line + 1}-{end_line if end_line else len(all_lines)}"
        title = f"[bold green]Lines {line_range} from {os.path.basename(file_path)}"
        console.print(Panel(escape("".join(lines)), title=title, border_style="blue", expand=False))
        return lines
    except Exception as e:
        console.print(
            Panel(escape(f"Error reading file: {e!s}"), title="[bold red]Error", border_style="red")
        )
        raise


def read_file_chunk(console: Any, file_path: str, chunk_size: int, chunk_offset: int = 0) -> str:
    """The original's ``read_file_chunk`` (the same signature and console panels) beneath the root."""
    file_path = _workspace.spelled(file_path)
    root = _workspace.root()
    try:
        content = _chunk(root, file_path, chunk_size, chunk_offset)
    except Exception as e:
        console.print(
            Panel(escape(f"Error reading file chunk: {e!s}"), title="[bold red]Error", border_style="red")
        )
        raise
    file_name = os.path.basename(file_path)
    info = (
        f"File: {file_name}\n"
        f"Total size: {root.stat(file_path).st_size} bytes\n"
        f"Chunk offset: {chunk_offset} bytes\n"
        f"Chunk size: {chunk_size} bytes\n"
        f"Content length: {len(content)} bytes"
    )
    console.print(Panel(info, title="[bold yellow]Chunk Information", border_style="yellow", expand=False))
    console.print(
        Panel(
            escape(content), title=f"[bold green]Content from {file_name}", border_style="blue", expand=False
        )
    )
    return content


def _search(root: safefs.Root, file_path: str, pattern: str, context_lines: int) -> list[dict[str, Any]]:
    _regular(root, file_path)
    if not pattern:
        raise ValueError("Search pattern cannot be empty")
    with _text(root, file_path) as f:
        lines = f.readlines()
    results = []
    for i, line in enumerate(lines):
        if pattern.lower() not in line.lower():
            continue
        start, end = max(0, i - context_lines), min(len(lines), i + context_lines + 1)
        context = []
        for ctx in range(start, end):
            text = lines[ctx].rstrip()
            prefix = "  "
            if ctx == i:
                prefix = "→ "
                at = text.lower().find(pattern.lower())
                if at != -1:
                    text = (
                        text[:at]
                        + f"[bold yellow]{text[at : at + len(pattern)]}[/bold yellow]"
                        + text[at + len(pattern) :]
                    )
            context.append(f"{prefix}{ctx + 1}: {text}")
        results.append({"line_number": i + 1, "context": "\n".join(context)})
    return results


def _diff(root: safefs.Root, file_path: str, comparison_path: str, diff_type: str = "unified") -> str:
    try:
        file_path, comparison_path = _workspace.spelled(file_path), _workspace.spelled(comparison_path)
        if root.is_dir(file_path) and root.is_dir(comparison_path):
            files1, files2 = _tree_files(root, file_path), _tree_files(root, comparison_path)
            results = []
            for file in sorted(files1 | files2):
                if file in files1 and file in files2:
                    diff = _diff(
                        root, os.path.join(file_path, file), os.path.join(comparison_path, file), diff_type
                    )
                    if diff.strip():
                        results.append(f"\n=== {file} ===\n{diff}")
                elif file in files1:
                    results.append(f"\n=== {file} ===\nOnly in {file_path}")
                else:
                    results.append(f"\n=== {file} ===\nOnly in {comparison_path}")
            return "\n".join(results)
        if root.is_file(file_path) and root.is_file(comparison_path):
            with root.open(file_path, "r", encoding="utf-8") as f:
                lines1 = f.readlines()
            with root.open(comparison_path, "r", encoding="utf-8") as f:
                lines2 = f.readlines()
            return "\n".join(
                difflib.unified_diff(
                    lines1,
                    lines2,
                    fromfile=os.path.basename(file_path),
                    tofile=os.path.basename(comparison_path),
                    lineterm="",
                )
            )
        raise ValueError("Both paths must be either files or directories")
    except Exception as e:
        raise Exception(f"Error creating diff: {e!s}") from e


def _tree_files(root: safefs.Root, top: str) -> set[str]:
    """``Path(top).rglob("*")``'s files, relative to ``top``: every name at any depth (symlinks
    to directories not entered) that is a file, links followed beneath the root."""
    found = set()
    for dirpath, _dirs, files in walk(root, top):
        for name in files:
            path = os.path.join(dirpath, name)
            if root.is_file(path):
                found.add(os.path.relpath(path, top))
    return found


def _time_machine(root: safefs.Root, file_path: str, use_git: bool) -> str:
    try:
        if use_git:
            raise ValueError(NO_GIT)
        st = root.stat(file_path)
        return "\n".join(
            [
                f"=== File Information for {os.path.basename(file_path)} ===\n",
                f"Created: {time_module.ctime(st.st_ctime)}",
                f"Modified: {time_module.ctime(st.st_mtime)}",
                f"Accessed: {time_module.ctime(st.st_atime)}",
                f"Size: {st.st_size:,} bytes",
                f"Owner: {st.st_uid}",
                f"Permissions: {oct(st.st_mode)[-3:]}",
            ]
        )
    except Exception as e:
        raise Exception(f"Error in time machine view: {e!s}") from e


def _document(
    root: safefs.Root, file_path: str, format: str | None, neutral_name: str | None
) -> dict[str, Any]:
    try:
        if not format:
            format = detect_format(file_path)
        if not neutral_name:
            base_name = os.path.basename(file_path)
            neutral_name = f"{os.path.splitext(base_name)[0]}-{str(uuid.uuid4())[:8]}"
        return {"name": neutral_name, "format": format, "source": {"bytes": root.read_bytes(file_path)}}
    except Exception as e:
        raise Exception(f"Error creating document block for {file_path}: {e!s}") from e


def _error(console: Any, tool_use_id: str, text: str) -> dict[str, Any]:
    console.print(Panel(escape(text), title="[bold red]Error", border_style="red"))
    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}


def file_read(tool: Any, **kwargs: Any) -> dict[str, Any]:
    """strands-agents-tools' ``file_read`` beneath the working directory's root."""
    console = _workspace.console(console_util)
    tool_use_id = tool.get("toolUseId", "default-id")
    tool_input = tool.get("input", {})
    recursive_default = os.getenv("FILE_READ_RECURSIVE_DEFAULT", "true").lower() == "true"
    context_lines_default = int(os.getenv("FILE_READ_CONTEXT_LINES_DEFAULT", "2"))
    start_line_default = int(os.getenv("FILE_READ_START_LINE_DEFAULT", "0"))
    chunk_offset_default = int(os.getenv("FILE_READ_CHUNK_OFFSET_DEFAULT", "0"))
    diff_type_default = os.getenv("FILE_READ_DIFF_TYPE_DEFAULT", "unified")
    use_git_default = os.getenv("FILE_READ_USE_GIT_DEFAULT", "true").lower() == "true"
    try:
        if not tool_input.get("path"):
            raise ValueError("path parameter is required")
        if not tool_input.get("mode"):
            raise ValueError("mode parameter is required")
        mode = tool_input["mode"]
        paths = split_path_list(tool_input["path"])
        recursive = tool_input.get("recursive", recursive_default)
        root = _workspace.root()
        matching_files = sorted({f for p in paths for f in _find(root, p, recursive)})
        if not matching_files:
            return _error(console, tool_use_id, f"No files found matching pattern(s): {', '.join(paths)}")
        if mode == "document":
            return _documents(console, root, tool_use_id, tool_input, matching_files)
        if mode == "find":
            console.print(Panel(escape("\n".join(matching_files)), title="[bold green]File Paths"))
            text = f"Found {len(matching_files)} files:\n" + "\n".join(matching_files)
            return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": text}]}
        content: list[dict[str, Any]] = []
        for file_path in matching_files:
            try:
                content.extend(
                    _one(
                        console,
                        root,
                        mode,
                        file_path,
                        tool_input,
                        start_line_default=start_line_default,
                        chunk_offset_default=chunk_offset_default,
                        context_lines_default=context_lines_default,
                        diff_type_default=diff_type_default,
                        use_git_default=use_git_default,
                    )
                )
            except Exception as e:
                text = f"Error processing file {file_path}: {e!s}"
                console.print(Panel(escape(text), title="[bold red]Error", border_style="red"))
                content.append({"text": text})
        return {"toolUseId": tool_use_id, "status": "success", "content": content}
    except Exception as e:
        return _error(console, tool_use_id, f"Error: {e!s}")


def _documents(
    console: Any, root: safefs.Root, tool_use_id: str, tool_input: dict[str, Any], files: list[str]
) -> dict[str, Any]:
    blocks = []
    for file_path in files:
        try:
            blocks.append(
                _document(root, file_path, tool_input.get("format"), tool_input.get("neutral_name"))
            )
        except Exception as e:
            text = f"Error creating document block for {file_path}: {e!s}"
            console.print(Panel(escape(text), title="[bold yellow]Warning", border_style="yellow"))
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"document": doc} for doc in blocks]}


def _one(
    console: Any, root: safefs.Root, mode: str, file_path: str, tool_input: dict[str, Any], **defaults: Any
) -> list[dict[str, Any]]:
    """The content items the original adds for one file in ``mode``."""
    if mode == "view":
        try:
            with _text(root, file_path) as f:
                text = f.read()
            console.print(create_rich_panel(text, f"📄 {os.path.basename(file_path)}", file_path))
            return [{"text": f"Content of {file_path}:\n{text}"}]
        except Exception as e:
            message = f"Error reading file {file_path}: {e!s}"
            console.print(Panel(escape(message), title="[bold red]Error", border_style="red"))
            return [{"text": message}]
    if mode == "preview":
        stats = _stats(console, root, file_path)
        with _text(root, file_path) as f:
            text = "".join(f.readlines()[:50])
        return [
            {
                "text": (
                    f"File: {file_path}\nSize: {stats['size_human']}\n"
                    f"Total Lines: {stats['line_count']}\n\nPreview:\n{text}"
                )
            }
        ]
    if mode == "stats":
        return [{"text": json.dumps(_stats(console, root, file_path), indent=2)}]
    if mode == "lines":
        start = tool_input.get("start_line", defaults["start_line_default"])
        return [{"text": "".join(read_file_lines(console, file_path, start, tool_input.get("end_line")))}]
    if mode == "chunk":
        offset = tool_input.get("chunk_offset", defaults["chunk_offset_default"])
        return [{"text": read_file_chunk(console, file_path, tool_input.get("chunk_size", 1024), offset)}]
    if mode == "search":
        context_lines = tool_input.get("context_lines", defaults["context_lines_default"])
        found = _search(root, file_path, tool_input.get("search_pattern", ""), context_lines)
        return [{"text": r["context"]} for r in found]
    if mode == "diff":
        comparison_path = tool_input.get("comparison_path")
        if not comparison_path:
            raise ValueError("comparison_path is required for diff mode")
        output = _diff(
            root, file_path, comparison_path, tool_input.get("diff_type", defaults["diff_type_default"])
        )
        return [{"text": f"Diff between {file_path} and {comparison_path}:\n{output}"}]
    if mode == "time_machine":
        use_git = tool_input.get("git_history", defaults["use_git_default"])
        output = _time_machine(root, file_path, use_git)
        return [{"text": f"Time Machine view for {file_path}:\n{output}"}]
    return []
