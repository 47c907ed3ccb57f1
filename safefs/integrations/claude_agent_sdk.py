"""Claude Code's file tools on a :class:`safefs.Root`, for the Claude Agent SDK (extra
``claude-agent-sdk``)::

    from safefs.integrations.claude_agent_sdk import safefs_options

    options = safefs_options(root, permission_mode="acceptEdits")
    async for message in claude_agent_sdk.query(prompt=..., options=options): ...

The SDK drives the Claude Code binary, whose own ``Read``, ``Write``, ``Edit``, ``Glob``, ``Grep``
and ``Bash`` run outside Python, on the host's whole file system. :func:`file_tools` makes tools
of the same names, parameters and result texts for an in-process SDK MCP server
(``create_sdk_mcp_server``); every path is resolved beneath the root's directory fd, so a path
or a symlink leading out is refused, whenever the swap happens, and ``Bash`` runs in the kernel
sandbox (:mod:`safefs.sandbox`), starting in the root. :func:`safefs_options` returns the
``ClaudeAgentOptions`` that serve them (the model sees them as ``mcp__safefs__Read`` and so on),
turn off every built-in tool and name the built-in file and shell tools as disallowed.

A path is relative to the root or absolute under one of its :attr:`~safefs.Root.anchors` (the
root's own absolute path, as the model is told its working directory). File operations go
through :mod:`safefs.workspace`. Every difference from Claude Code's tools is listed in
docs/integrations.md.
"""

from __future__ import annotations

import asyncio
import errno
import math
import os
import posixpath
import re
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, McpSdkServerConfig, SdkMcpTool, create_sdk_mcp_server, tool

import safefs
from safefs.integrations._commands import SplitOutcome, run_split
from safefs.workspace import search
from safefs.workspace.arguments import argument_problem
from safefs.workspace.edits import Edit, edit_file
from safefs.workspace.errors import WorkspaceError, describe_os_error
from safefs.workspace.files import write_text
from safefs.workspace.limits import MAX_ENTRIES, MAX_RESULT_CHARS
from safefs.workspace.text import read_lines
from safefs.workspace.walk import join

__all__ = [
    "BUILT_IN_TOOLS",
    "SERVER_NAME",
    "TOOL_NAMES",
    "ToolError",
    "file_tools",
    "safefs_mcp_server",
    "safefs_options",
    "tool_names",
]

SERVER_NAME = "safefs"
TOOL_NAMES = ("Read", "Write", "Edit", "Glob", "Grep", "Bash")
# Claude Code's own tools that read, write or run: turned off by safefs_options.
BUILT_IN_TOOLS = (
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Glob",
    "Grep",
    "LS",
    "Bash",
    "BashOutput",
    "KillShell",
    "Monitor",
)

READ_LINES = 2000  # Claude Code's Read: lines read when no limit is given
GLOB_RESULTS = 100  # Claude Code's Glob: paths shown, then a truncation note
GREP_HEAD_LIMIT = 250  # Claude Code's Grep: entries shown when head_limit is not given
BASH_TIMEOUT_MS = 120_000
BASH_MAX_TIMEOUT_MS = 600_000
BASH_OUTPUT_CHARS = 30_000  # Claude Code's Bash: output kept, the middle cut past it
BASH_OUTPUT_CAP = 16 * 1024 * 1024  # bytes of output after which the command is stopped
BASH_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}

EMPTY_FILE = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
NOT_FOUND = "File does not exist."


class ToolError(Exception):
    """A call that failed: its text is the tool result the model gets, marked as an error. (The
    SDK reports an exception raised by a tool handler as an error result with its text.)"""


def _refused(message: str) -> ToolError:
    """A call Claude Code's tool refuses before it acts, in the binary's own wrapping."""
    return ToolError(f"<tool_use_error>{message}</tool_use_error>")


# -- the tools' parameters, as Claude Code's tools declare them --------------------------------


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


READ_SCHEMA = _schema(
    {
        "file_path": {"type": "string", "description": "The absolute path to the file to read"},
        "offset": {
            "type": "integer",
            "minimum": 0,
            "description": "The line number to start reading from. Only provide if the file is too large "
            "to read at once",
        },
        "limit": {
            "type": "integer",
            "exclusiveMinimum": 0,
            "description": "The number of lines to read. Only provide if the file is too large to read "
            "at once.",
        },
    },
    ["file_path"],
)
WRITE_SCHEMA = _schema(
    {
        "file_path": {
            "type": "string",
            "description": "The absolute path to the file to write (must be absolute, not relative)",
        },
        "content": {"type": "string", "description": "The content to write to the file"},
    },
    ["file_path", "content"],
)
EDIT_SCHEMA = _schema(
    {
        "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
        "old_string": {"type": "string", "description": "The text to replace"},
        "new_string": {
            "type": "string",
            "description": "The text to replace it with (must be different from old_string)",
        },
        "replace_all": {
            "type": "boolean",
            "default": False,
            "description": "Replace all occurrences of old_string (default false)",
        },
    },
    ["file_path", "old_string", "new_string"],
)
GLOB_SCHEMA = _schema(
    {
        "pattern": {"type": "string", "description": "The glob pattern to match files against"},
        "path": {
            "type": "string",
            "description": "The directory to search in. If not specified, the working directory is used.",
        },
    },
    ["pattern"],
)
_CONTENT_ONLY = ' Requires output_mode: "content", ignored otherwise.'
GREP_SCHEMA = _schema(
    {
        "pattern": {
            "type": "string",
            "description": "The regular expression pattern to search for in file contents",
        },
        "path": {
            "type": "string",
            "description": "File or directory to search in. Defaults to the working directory.",
        },
        "glob": {"type": "string", "description": 'Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}")'},
        "output_mode": {
            "type": "string",
            "enum": list(search.OUTPUT_MODES),
            "description": 'Output mode: "content", "files_with_matches" or "count". '
            'Defaults to "files_with_matches".',
        },
        "-B": {"type": "number", "description": "Number of lines to show before each match." + _CONTENT_ONLY},
        "-A": {"type": "number", "description": "Number of lines to show after each match." + _CONTENT_ONLY},
        "-C": {"type": "number", "description": "Alias for context."},
        "context": {
            "type": "number",
            "description": "Number of lines to show before and after each match." + _CONTENT_ONLY,
        },
        "-n": {
            "type": "boolean",
            "description": "Show line numbers in output." + _CONTENT_ONLY + " Defaults to true.",
        },
        "-i": {"type": "boolean", "description": "Case insensitive search"},
        "type": {
            "type": "string",
            "description": "File type to search (rg --type): js, py, rust, go, java, etc.",
        },
        "head_limit": {
            "type": "number",
            "description": "Limit output to first N lines/entries. Defaults to 250 when unspecified. "
            "Pass 0 for unlimited.",
        },
        "offset": {"type": "number", "description": "Skip first N lines/entries before applying head_limit."},
    },
    ["pattern"],
)
BASH_SCHEMA = _schema(
    {
        "command": {"type": "string", "description": "The command to execute"},
        "timeout": {
            "type": "number",
            "description": "Optional timeout in milliseconds (max 600000)",
        },
        "description": {
            "type": "string",
            "description": "Clear, concise description of what this command does",
        },
    },
    ["command"],
)

READ_DESCRIPTION = (
    "Reads a file in the workspace. file_path is absolute (under the working directory) or "
    "relative to it. By default it reads up to 2000 lines from the start of the file; offset and "
    "limit read a part. Results are returned in cat -n format, with line numbers starting at 1. "
    "This tool reads files, not directories. Paths outside the working directory are refused."
)
WRITE_DESCRIPTION = (
    "Writes a file in the workspace, replacing it if it exists and making missing parent "
    "directories. Prefer Edit for changing an existing file. Paths outside the working directory "
    "are refused."
)
EDIT_DESCRIPTION = (
    "Performs exact string replacements in files. old_string must occur exactly once unless "
    "replace_all is true; preserve the exact indentation as shown after the line number prefix "
    "of Read. An empty old_string creates a new file (or fills an empty one) with new_string. "
    "Paths outside the working directory are refused."
)
GLOB_DESCRIPTION = (
    'Fast file pattern matching: supports glob patterns like "**/*.js" or "src/**/*.ts". '
    "Returns matching file paths sorted by modification time."
)
GREP_DESCRIPTION = (
    "A search tool in the manner of ripgrep: regular expressions (RE2 syntax, linear time), "
    "filtered by glob or type. Output modes: content shows matching lines, files_with_matches "
    "shows only file paths (default), count shows match counts."
)
BASH_DESCRIPTION = (
    "Executes a given bash command in a kernel sandbox that starts in the working directory and "
    "sees no file outside it, and returns its output. Shell state does not persist between calls."
)


# -- shared --------------------------------------------------------------------------------------


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _checked(schema: dict[str, Any], args: Any) -> dict[str, Any]:
    """``args`` checked against the tool's schema here too (an SDK release that does not check
    them would hand the handler anything)."""
    problem = argument_problem(schema, args)
    if problem is not None:
        raise ToolError(f"Input validation error: {problem.message}")
    return dict(args)


def _count(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, float) and not value.is_integer():
        raise ToolError(f"Input validation error: {name} must be a whole number, got {value}")
    number = int(value)
    if number < 0:
        raise ToolError(f"Input validation error: {name} must not be negative, got {number}")
    return number


_MISSING = os.strerror(errno.ENOENT) + ":"  # the start of the workspace's message for each
_DIRECTORY = os.strerror(errno.EISDIR) + ":"


def _failure(exc: Exception, path: str) -> ToolError:
    """The model's view of a failure: the workspace's message, or an OSError's reason with the
    path as the model gave it (never the root's host path)."""
    message = str(exc)
    if isinstance(exc, FileNotFoundError) or message.startswith(_MISSING):
        return ToolError(NOT_FOUND)
    if isinstance(exc, IsADirectoryError) or message.startswith(_DIRECTORY):
        return ToolError(f"EISDIR: illegal operation on a directory, read {path!r}")
    if isinstance(exc, WorkspaceError):
        return ToolError(message)
    if isinstance(exc, OSError):
        return ToolError(describe_os_error(exc, path))
    raise exc


Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def _handler(schema: dict[str, Any], work: Callable[[dict[str, Any]], str]) -> Handler:
    """An async handler running ``work`` (blocking file I/O) in a worker thread."""

    async def handle(args: dict[str, Any]) -> dict[str, Any]:
        checked = _checked(schema, args)
        return _text(await asyncio.to_thread(work, checked))

    return handle


# -- Read, Write, Edit ---------------------------------------------------------------------------


def _read(root: safefs.Root, args: dict[str, Any]) -> str:
    path: str = args["file_path"]
    first = max(1, _count(args, "offset", 1))
    limit = _count(args, "limit", READ_LINES) or READ_LINES
    try:
        lines = read_lines(root, path, first, limit, errors="replace")
    except (OSError, WorkspaceError) as exc:
        raise _failure(exc, path) from None
    if lines.total == 0:
        return EMPTY_FILE
    if lines.cut_at_budget:
        raise ToolError(
            f"File content exceeds the maximum of {MAX_RESULT_CHARS} characters a read returns. "
            "Please use offset and limit parameters to read specific portions of the file, or use "
            "the Grep tool to search for specific content."
        )
    text = lines.text
    # Claude Code numbers the lines of the text split at "\n": a file ending in a newline shows
    # an empty last line when the range reaches the end.
    at_end = lines.total_known and lines.last >= lines.total
    if text.endswith("\n") and not at_end:
        text = text[:-1]
    if not text and first > 1:
        # Past our last line: Claude Code counts one line more after a final newline (the
        # empty one), and shows it alone, as its number, when the offset names it.
        try:
            ends = read_lines(root, path, lines.total, 1, errors="replace").text.endswith("\n")
        except (OSError, WorkspaceError) as exc:
            raise _failure(exc, path) from None
        if ends and lines.total_known and first == lines.total + 1:
            return str(first)
        total = f"{lines.total + ends}" if lines.total_known else lines.total_text
        return (
            f"<system-reminder>Warning: the file exists but is shorter than the provided offset ({first}). "
            f"The file has {total} lines.</system-reminder>"
        )
    shown = text.split("\n")[:limit]  # the empty last line counts against the limit too
    numbered = "\n".join(f"{first + i}\t{line}" for i, line in enumerate(shown))
    return numbered.rstrip()  # as the binary trims its own tools' results


def _write(root: safefs.Root, args: dict[str, Any]) -> str:
    path: str = args["file_path"]
    try:
        existed = root.exists(path)
        write_text(root, path, args["content"])
    except (OSError, WorkspaceError) as exc:
        raise _failure(exc, path) from None
    if existed:
        return f"The file {path} has been updated successfully."
    return f"File created successfully at: {path}"


_OCCURS = re.compile(r"text occurs (\d+) times")


def _edit(root: safefs.Root, args: dict[str, Any]) -> str:
    path: str = args["file_path"]
    old: str = args["old_string"]
    new: str = args["new_string"]
    replace_all = bool(args.get("replace_all", False))
    if old == new:
        raise _refused("No changes to make: old_string and new_string are exactly the same.")
    if not old:
        return _fill(root, path, new)
    try:
        old = _with_its_line_end(root, path, old, new, replace_all)
        edit_file(root, path, [Edit(old, new, replace_all)])
    except WorkspaceError as exc:
        message = str(exc)
        if "text not found" in message:
            raise _refused(f"String to replace not found in file.\nString: {old}") from None
        many = _OCCURS.search(message)
        if many is not None:
            raise _refused(
                f"Found {many.group(1)} matches of the string to replace, but replace_all is false. "
                "To replace all occurrences, set replace_all to true. To replace only one occurrence, "
                f"please provide more context to uniquely identify the instance.\nString: {old}"
            ) from None
        raise _failure(exc, path) from None
    except OSError as exc:
        raise _failure(exc, path) from None
    if replace_all:
        return f"The file {path} has been updated. All occurrences were successfully replaced."
    return f"The file {path} has been updated successfully."


def _with_its_line_end(root: safefs.Root, path: str, old: str, new: str, replace_all: bool) -> str:
    """Claude Code's deletion of a line: an empty ``new_string`` whose ``old_string`` is followed
    by a newline somewhere in the file removes that newline too (``old_string + "\\n"`` is what
    is replaced, each occurrence of it with ``replace_all``); without ``replace_all`` the
    ``old_string`` itself must still occur once."""
    if new or old.endswith("\n"):
        return old
    try:
        content = root.read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return old  # the edit reports what is wrong in its own words
    if old + "\n" not in content:
        return old
    count = content.count(old)
    if not replace_all and count > 1:
        raise _refused(
            f"Found {count} matches of the string to replace, but replace_all is false. "
            "To replace all occurrences, set replace_all to true. To replace only one occurrence, "
            f"please provide more context to uniquely identify the instance.\nString: {old}"
        )
    return old + "\n"


def _fill(root: safefs.Root, path: str, new: str) -> str:
    """An empty ``old_string``: Claude Code creates the file, or fills an empty one."""
    try:
        if root.exists(path) and root.stat(path).st_size > 0:
            raise _refused("Cannot create new file - file already exists.")
        write_text(root, path, new)
    except (OSError, WorkspaceError) as exc:
        raise _failure(exc, path) from None
    return f"The file {path} has been updated successfully."


# -- Glob, Grep ------------------------------------------------------------------------------------


def _start(root: safefs.Root, args: dict[str, Any]) -> str:
    """The directory a search starts in, relative to the root ("." when not given)."""
    given = args.get("path")
    if given is None:
        return "."
    try:
        return root.relative(given) if given.startswith("/") else given
    except OSError as exc:
        raise _failure(exc, given) from None


def _glob(root: safefs.Root, args: dict[str, Any]) -> str:
    start = _start(root, args)
    try:
        found = search.glob(root, args["pattern"], start, ignore=False, skip_git=True)
    except (OSError, WorkspaceError) as exc:
        raise _failure(exc, args.get("path", ".")) from None
    files: list[tuple[float, str]] = []
    for entry in found.matches:
        if entry.kind != "file":
            continue
        shown = join(start, entry.rel)
        try:
            files.append((root.lstat(shown).st_mtime, shown))
        except OSError:
            continue  # gone since the walk
    if not files:
        return "No files found"
    files.sort()
    shown_paths = [p for _, p in files[:GLOB_RESULTS]]
    text = "\n".join(shown_paths)
    if len(files) > GLOB_RESULTS or found.more:
        text += "\n(Results are truncated. Consider using a more specific path or pattern.)"
    return text


def _grep(root: safefs.Root, args: dict[str, Any]) -> str:
    start = _start(root, args)
    mode = args.get("output_mode", "files_with_matches")
    context = _count(args, "context", _count(args, "-C", 0))
    head_limit = _count(args, "head_limit", GREP_HEAD_LIMIT)
    offset = _count(args, "offset", 0)
    content = mode == "content"
    files_only = mode == "files_with_matches"  # sorted here, newest first, before paging
    try:
        found = search.grep(
            root,
            args["pattern"],
            start,
            mode=mode,
            file_glob=args.get("glob"),
            file_type=args.get("type"),
            ignore_case=bool(args.get("-i", False)),
            before=_count(args, "-B", context) if content else 0,
            after=_count(args, "-A", context) if content else 0,
            head_limit=None if files_only or not head_limit else min(head_limit, MAX_ENTRIES),
            offset=0 if files_only else offset,
        )
    except (OSError, WorkspaceError) as exc:
        raise _failure(exc, args.get("path", ".")) from None
    entries = found.entries
    if files_only:
        entries = _newest_first(root, entries)[offset : offset + head_limit if head_limit else None]
    paged = bool(head_limit) and found.entries_total > len(entries) + offset
    if content and args.get("-n", True) is False:
        entries = [_unnumbered(line) for line in entries]
    if content and _is_file(root, start):
        entries = _unnamed(entries, start)  # one file searched: its lines without its name, as rg
    if mode == "files_with_matches":
        if not entries:
            return "No files found"
        text = f"Found {len(entries)} file{'s' if len(entries) != 1 else ''}\n" + "\n".join(entries)
    elif mode == "count":
        if not entries:
            return "No matches found\n\nFound 0 total occurrences across 0 files."
        total = sum(int(line.rsplit(":", 1)[1]) for line in entries)
        files = len(entries)
        text = "\n".join(entries) + (
            f"\n\nFound {total} total occurrence{'s' if total != 1 else ''} across "
            f"{files} file{'s' if files != 1 else ''}."
        )
    else:
        if not entries:
            return "No matches found"
        text = "\n".join(entries)
    if paged:
        text += f"\n\n[Showing results with pagination = limit: {head_limit}]"
    return text


def _is_file(root: safefs.Root, path: str) -> bool:
    try:
        return root.is_file(path)
    except OSError:
        return False


def _unnamed(lines: list[str], path: str) -> list[str]:
    """``path:N:text`` as ``N:text`` (``path-N-text`` as ``N-text``); ``--`` stays."""
    name = posixpath.normpath(path)
    out = []
    for line in lines:
        for mark in (":", "-"):
            if line.startswith(name + mark):
                line = line[len(name) + 1 :]
                break
        out.append(line)
    return out


def _newest_first(root: safefs.Root, paths: list[str]) -> list[str]:
    """``paths`` by modification time, newest first (as Claude Code's Grep lists files); one
    gone since the search goes last."""

    def age(path: str) -> tuple[float, str]:
        try:
            return (-root.lstat(path).st_mtime, path)
        except OSError:
            return (math.inf, path)

    return sorted(paths, key=age)


_NUMBERED = re.compile(r"^(.*?)([:-])\d+\2")


def _unnumbered(line: str) -> str:
    """``path:N:text`` as ``path:text`` (``path-N-text`` as ``path-text``); ``--`` stays."""
    return _NUMBERED.sub(r"\1\2", line, count=1)


# -- Bash ---------------------------------------------------------------------------------------


def _bash_text(outcome: SplitOutcome, timeout_ms: int) -> str:
    if outcome.refusal is not None:
        raise ToolError(f"The command was not run: {outcome.refusal}")
    parts = [
        part.decode("utf-8", "replace").rstrip("\n")
        for part in (outcome.stdout, outcome.stderr)
        if part.strip()
    ]
    output = "\n".join(parts)
    if len(output) > BASH_OUTPUT_CHARS:
        half = BASH_OUTPUT_CHARS // 2
        cut = output.count("\n", half, len(output) - half)
        output = f"{output[:half]}\n\n... [{cut} lines truncated] ...\n\n{output[-half:]}"
    if outcome.timed_out:
        raise ToolError(f"Command timed out after {timeout_ms}ms\n{output}".rstrip("\n"))
    if outcome.over_cap:
        raise ToolError(f"Command stopped: its output passed {BASH_OUTPUT_CAP} bytes\n{output}".rstrip("\n"))
    if outcome.exit_code not in (0, None):
        raise ToolError(f"Exit code {outcome.exit_code}\n{output}".rstrip("\n"))
    if outcome.exit_code is None:
        raise ToolError(f"Command was stopped\n{output}".rstrip("\n"))
    return output


def _bash_handler(root: safefs.Root, env: Mapping[str, str]) -> Handler:
    async def handle(args: dict[str, Any]) -> dict[str, Any]:
        checked = _checked(BASH_SCHEMA, args)
        timeout_ms = checked.get("timeout")
        if timeout_ms is None or isinstance(timeout_ms, bool) or math.isnan(timeout_ms):
            timeout_ms = BASH_TIMEOUT_MS
        timeout_ms = int(min(max(timeout_ms, 0), BASH_MAX_TIMEOUT_MS))
        cancel = threading.Event()
        work = asyncio.ensure_future(
            asyncio.to_thread(
                run_split,
                root,
                ["/bin/sh", "-c", checked["command"]],
                env,
                timeout=timeout_ms / 1000,
                output_cap=BASH_OUTPUT_CAP,
                cancel=cancel,
            )
        )
        try:
            outcome = await asyncio.shield(work)
        except asyncio.CancelledError:
            cancel.set()  # the sandbox kills everything the command started
            await asyncio.wait([work])
            raise
        return _text(_bash_text(outcome, timeout_ms))

    return handle


# -- the server and the options ------------------------------------------------------------------


def file_tools(
    root: safefs.Root, *, bash: bool = True, bash_env: Mapping[str, str] | None = None
) -> list[SdkMcpTool[Any]]:
    """Claude Code's ``Read``, ``Write``, ``Edit``, ``Glob`` and ``Grep`` on ``root``, and (with
    ``bash``) ``Bash`` in the root's kernel sandbox with the environment ``bash_env`` (default
    :data:`BASH_ENV`: a command sees none of this process's environment)."""
    made = [
        tool("Read", READ_DESCRIPTION, READ_SCHEMA)(_handler(READ_SCHEMA, lambda a: _read(root, a))),
        tool("Write", WRITE_DESCRIPTION, WRITE_SCHEMA)(_handler(WRITE_SCHEMA, lambda a: _write(root, a))),
        tool("Edit", EDIT_DESCRIPTION, EDIT_SCHEMA)(_handler(EDIT_SCHEMA, lambda a: _edit(root, a))),
        tool("Glob", GLOB_DESCRIPTION, GLOB_SCHEMA)(_handler(GLOB_SCHEMA, lambda a: _glob(root, a))),
        tool("Grep", GREP_DESCRIPTION, GREP_SCHEMA)(_handler(GREP_SCHEMA, lambda a: _grep(root, a))),
    ]
    if bash:
        made.append(
            tool("Bash", BASH_DESCRIPTION, BASH_SCHEMA)(
                _bash_handler(root, dict(BASH_ENV if bash_env is None else bash_env))
            )
        )
    return made


def safefs_mcp_server(
    root: safefs.Root,
    *,
    name: str = SERVER_NAME,
    bash: bool = True,
    bash_env: Mapping[str, str] | None = None,
) -> McpSdkServerConfig:
    """The in-process SDK MCP server serving :func:`file_tools` on ``root``."""
    return create_sdk_mcp_server(name, tools=file_tools(root, bash=bash, bash_env=bash_env))


def tool_names(name: str = SERVER_NAME, *, bash: bool = True) -> list[str]:
    """The names Claude Code gives the server's tools: ``mcp__<server>__<tool>``."""
    return [f"mcp__{name}__{t}" for t in TOOL_NAMES if bash or t != "Bash"]


def safefs_options(
    root: safefs.Root,
    *,
    name: str = SERVER_NAME,
    bash: bool = True,
    bash_env: Mapping[str, str] | None = None,
    **options: Any,
) -> ClaudeAgentOptions:
    """``ClaudeAgentOptions(**options)`` serving :func:`file_tools` on ``root`` as the MCP server
    ``name``, with ``cwd`` the root's path, no built-in tool (``tools=[]``), the built-in file and
    shell tools (:data:`BUILT_IN_TOOLS`) disallowed, the server's tools allowed and no settings
    read from files (``setting_sources=[]``: a workspace's ``.claude/settings.json`` may hold
    hooks, commands the binary runs outside any sandbox) unless given. Options given
    are kept: ``mcp_servers``, ``allowed_tools`` and ``disallowed_tools`` are added to, and
    ``tools`` may name built-in tools to keep, but none of :data:`BUILT_IN_TOOLS`."""
    kept = options.pop("tools", [])
    if not isinstance(kept, list) or any(t in BUILT_IN_TOOLS for t in kept):
        raise ValueError(f"tools must be a list of built-in tools other than {', '.join(BUILT_IN_TOOLS)}")
    servers = options.pop("mcp_servers", {})
    if not isinstance(servers, dict) or name in servers:
        raise ValueError(f"mcp_servers must be a dict without the server name {name!r}")
    allowed = [*options.pop("allowed_tools", []), *tool_names(name, bash=bash)]
    disallowed = [*options.pop("disallowed_tools", []), *BUILT_IN_TOOLS]
    options.setdefault("cwd", root.path)
    # The workspace's own .claude/settings*.json could add hooks, which the binary runs as
    # commands outside the sandbox: no file system settings unless the caller names them.
    options.setdefault("setting_sources", [])
    return ClaudeAgentOptions(
        tools=kept,
        mcp_servers={**servers, name: safefs_mcp_server(root, name=name, bash=bash, bash_env=bash_env)},
        allowed_tools=allowed,
        disallowed_tools=disallowed,
        **options,
    )
