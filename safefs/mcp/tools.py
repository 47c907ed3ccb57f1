"""The MCP tool table: names, parameters, annotations and result texts of the official MCP
filesystem server, each an adapter (:mod:`safefs.mcp.handlers`) over one
:mod:`safefs.workspace` operation.

Where this server does better than the official one, it is said in the tool's description:
ranged reads (``offset``/``limit``), a depth limit and a size cap on ``directory_tree``, a
content search, a ``move_file`` that never replaces, an ``edit_file`` that refuses ambiguous
text, ``delete_file`` only with ``--allow-delete``, and no writing tool at all with
``--read-only``. Every result is bounded; a cut says how to get the rest.

:func:`target_paths` gives the paths a call names, for a policy to judge before it runs.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from safefs.mcp import handlers
from safefs.mcp.directories import Directories
from safefs.mcp.tool import MEDIA_OUTPUT, READ_ONLY, McpTool, Reply, writes
from safefs.workspace import files, gitwrites, search
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import MAX_ENTRIES, MAX_RESULT_CHARS

PATH = {"type": "string"}
PATTERNS = {"type": "array", "items": {"type": "string"}, "default": []}
INCLUDE_IGNORED = {
    "type": "boolean",
    "default": False,
    "description": "Also show what git's ignore rules exclude, and .git (the official server's behaviour)",
}


def target_paths(tool: McpTool, args: dict[str, Any]) -> list[str]:
    """The paths (as the client gave them) that a call of ``tool`` with ``args`` touches."""
    return tool.target_paths(args)


# -- the table -------------------------------------------------------------------------------

_WITHIN = " Only works within allowed directories."
_READ_PROPS: dict[str, dict[str, Any]] = {
    "path": PATH,
    "tail": {"type": "number", "description": "If provided, returns only the last N lines"},
    "head": {"type": "number", "description": "If provided, returns only the first N lines"},
    "offset": {
        "type": "integer",
        "description": "First line to return (1-based); with limit, reads any part of a large file",
    },
    "limit": {"type": "integer", "description": "How many lines to return from offset"},
    "lineNumbers": {
        "type": "boolean",
        "default": False,
        "description": "Number each line as cat -n does (the official server shows none)",
    },
}
_READ_TEXT = (
    "Read a file as UTF-8 text (invalid bytes shown as U+FFFD). head/tail return the "
    "first/last N lines; offset/limit return any line range under a header naming the "
    f"lines shown and the line count. Results over {MAX_RESULT_CHARS} characters are cut "
    "at a line, with a note giving the offset to continue from." + _WITHIN
)


def all_tools() -> list[McpTool]:
    return [
        McpTool(
            name="read_file",
            title="Read File (Deprecated)",
            description="Same as read_text_file; deprecated.",
            properties=_READ_PROPS,
            required=("path",),
            annotations=READ_ONLY,
            run=handlers.read_text_file,
            path_args=("path",),
        ),
        McpTool(
            name="read_text_file",
            title="Read Text File",
            description=_READ_TEXT,
            properties=_READ_PROPS,
            required=("path",),
            annotations=READ_ONLY,
            run=handlers.read_text_file,
            path_args=("path",),
        ),
        McpTool.on_path(
            name="read_media_file",
            title="Read Media File",
            description="Read an image or audio file (or any file, as an embedded resource) as base64 "
            f"with its MIME type; files over {files.MAX_MEDIA_BYTES} bytes are refused." + _WITHIN,
            annotations=READ_ONLY,
            run=handlers.read_media_file,
            output_schema=MEDIA_OUTPUT,
        ),
        McpTool(
            name="read_multiple_files",
            title="Read Multiple Files",
            description="Read several text files at once; each is shown after its path, and a file that "
            "fails does not stop the others." + _WITHIN,
            properties={"paths": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
            required=("paths",),
            annotations=READ_ONLY,
            run=handlers.read_multiple_files,
            path_args=("paths",),
        ),
        McpTool(
            name="write_file",
            title="Write File",
            description="Create a file or replace it with new UTF-8 content, atomically (a reader never "
            "sees half a file); missing parent directories are created." + _WITHIN,
            properties={"path": PATH, "content": {"type": "string"}},
            required=("path", "content"),
            annotations=writes(destructive=True, idempotent=True),
            run=handlers.write_file,
            path_args=("path",),
        ),
        McpTool(
            name="edit_file",
            title="Edit File",
            description="Replace exact text in a file. Each oldText must occur exactly once: text that "
            "is missing or occurs more than once is refused, never guessed. Returns a "
            "git-style diff; dryRun shows it without writing. The write is atomic." + _WITHIN,
            properties={
                "path": PATH,
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {"type": "string", "description": "Exact text"},
                            "newText": {"type": "string", "description": "Replacement"},
                        },
                        "required": ["oldText", "newText"],
                    },
                },
                "dryRun": {
                    "type": "boolean",
                    "default": False,
                    "description": "Preview the diff without writing",
                },
            },
            required=("path", "edits"),
            annotations=writes(destructive=True, idempotent=False),
            run=handlers.edit_file,
            path_args=("path",),
        ),
        McpTool.on_path(
            name="create_directory",
            title="Create Directory",
            description="Create a directory and any missing parents; an existing one is fine." + _WITHIN,
            annotations=writes(destructive=False, idempotent=True),
            run=handlers.create_directory,
        ),
        McpTool.on_path(
            name="list_directory",
            title="List Directory",
            description="List a directory: [DIR], [FILE] or [LINK] and the name, one per line; a symlink "
            f"shows where it leads and is never followed out. At most {MAX_ENTRIES} entries." + _WITHIN,
            annotations=READ_ONLY,
            run=handlers.list_directory,
        ),
        McpTool(
            name="list_directory_with_sizes",
            title="List Directory with Sizes",
            description="List a directory with file sizes and a summary, sorted by name or size." + _WITHIN,
            properties={
                "path": PATH,
                "sortBy": {
                    "type": "string",
                    "enum": ["name", "size"],
                    "default": "name",
                    "description": "Sort entries by name or size",
                },
            },
            required=("path",),
            annotations=READ_ONLY,
            run=handlers.list_directory_with_sizes,
            path_args=("path",),
        ),
        McpTool(
            name="directory_tree",
            title="Directory Tree",
            description="A recursive JSON tree of entries with 'name', 'type' (file/directory) and, for "
            "directories, 'children'. maxDepth limits the depth; the result is capped at "
            f"{MAX_RESULT_CHARS} characters. A directory whose contents were not shown "
            'carries "truncated": true: call directory_tree on it to see them.' + _WITHIN,
            properties={
                "path": PATH,
                "excludePatterns": PATTERNS,
                "maxDepth": {"type": "integer", "description": "How many levels to show"},
                "includeIgnored": INCLUDE_IGNORED,
            },
            required=("path",),
            annotations=READ_ONLY,
            run=handlers.directory_tree,
            path_args=("path",),
        ),
        McpTool(
            name="move_file",
            title="Move File",
            description="Move or rename a file or directory, atomically. The destination must not exist: "
            "an existing entry is never replaced." + _WITHIN,
            properties={"source": PATH, "destination": PATH},
            required=("source", "destination"),
            annotations=writes(destructive=True, idempotent=False),
            run=handlers.move_file,
            path_args=("source", "destination"),
        ),
        McpTool(
            name="search_files",
            title="Search Files",
            description="Find files and directories whose path relative to 'path' matches a glob "
            "pattern ('*.ext' in that directory, '**/*.ext' at any depth). Returns full "
            f"paths, at most {MAX_ENTRIES}. Symlinks are never followed." + _WITHIN,
            properties={
                "path": PATH,
                "pattern": {"type": "string"},
                "excludePatterns": PATTERNS,
                "includeIgnored": INCLUDE_IGNORED,
            },
            required=("path", "pattern"),
            annotations=READ_ONLY,
            run=handlers.search_files,
            path_args=("path",),
        ),
        McpTool(
            name="search_file_contents",
            title="Search File Contents",
            description="Search the contents of text files under 'path' for a regular expression; "
            "prints path:line:text per match. Skips binary files, .git and what .gitignore "
            f"excludes; never follows symlinks. At most {MAX_ENTRIES} matching lines." + _WITHIN,
            properties={
                "path": PATH,
                "pattern": {"type": "string", "description": "Regular expression"},
                "filePattern": {"type": "string", "description": "Only files matching this glob"},
                "type": {
                    "type": "string",
                    "enum": sorted(search.FILE_TYPES),
                    "description": "Only files of this type (py, js, rust, ...)",
                },
                "ignoreCase": {"type": "boolean", "default": False},
                "literal": {"type": "boolean", "default": False, "description": "Plain text, not a regex"},
                "outputMode": {
                    "type": "string",
                    "enum": list(search.OUTPUT_MODES),
                    "default": "content",
                    "description": "content (path:line:text), files_with_matches or count (path:N)",
                },
                "before": {"type": "integer", "minimum": 0, "description": "Context lines before a match"},
                "after": {"type": "integer", "minimum": 0, "description": "Context lines after a match"},
                "context": {"type": "integer", "minimum": 0, "description": "Context lines around a match"},
                "headLimit": {"type": "integer", "minimum": 1, "description": "At most this many entries"},
                "offset": {"type": "integer", "minimum": 0, "description": "Skip this many entries first"},
                "includeIgnored": INCLUDE_IGNORED,
            },
            required=("path", "pattern"),
            annotations=READ_ONLY,
            run=handlers.search_file_contents,
            path_args=("path",),
        ),
        McpTool.on_path(
            name="get_file_info",
            title="Get File Info",
            description="Metadata of a file or directory: size, times, type and permissions." + _WITHIN,
            annotations=READ_ONLY,
            run=handlers.get_file_info,
        ),
        McpTool(
            name="list_allowed_directories",
            title="List Allowed Directories",
            description="The directories this server may access (and everything beneath them).",
            properties={},
            required=(),
            annotations=READ_ONLY,
            run=handlers.list_allowed_directories,
            path_args=(),
        ),
    ]


DELETE_TOOL = McpTool.on_path(
    name="delete_file",
    title="Delete File",
    description="Delete a file, a symlink (never its target) or an empty directory." + _WITHIN,
    annotations=writes(destructive=True, idempotent=False),
    run=handlers.delete_file,
)


def tools_for(*, read_only: bool, allow_delete: bool, git_rule: bool = True) -> list[McpTool]:
    """The tools a server started with these flags lists (and is willing to run). With
    ``git_rule`` each writing tool refuses a path git outside would run code from
    (:func:`guarded_by_git_rule`)."""
    tools = all_tools()
    if allow_delete:
        tools.append(DELETE_TOOL)
    if read_only:
        tools = [t for t in tools if t.read_only]
    if git_rule:
        tools = [t if t.read_only else guarded_by_git_rule(t) for t in tools]
    return tools


def guarded_by_git_rule(tool: McpTool) -> McpTool:
    """``tool``, refusing a call that would write into a repository, make one, or write what a
    repository's config names (:func:`safefs.workspace.gitwrites.write_problem`)."""
    run = tool.run

    def guarded(dirs: Directories, args: dict[str, Any]) -> Reply:
        for path in tool.target_paths(args):
            d, rel = dirs.locate(path)
            problem = gitwrites.write_problem(d.root, rel)
            if problem is not None:
                raise WorkspaceError(
                    f"{tool.name} to {path!r} refused: {problem} (--allow-git-writes lifts this)"
                )
        return run(dirs, args)

    return dataclasses.replace(tool, run=guarded)
