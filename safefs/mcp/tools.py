"""The MCP tool table: names, parameters, annotations and result texts of the official MCP
filesystem server, each an adapter over one :mod:`safefs.workspace` operation.

Where this server does better than the official one, it is said in the tool's description:
ranged reads (``offset``/``limit``), a depth limit and a size cap on ``directory_tree``, a
content search, a ``move_file`` that never replaces, an ``edit_file`` that refuses ambiguous
text, ``delete_file`` only with ``--allow-delete``, and no writing tool at all with
``--read-only``. Every result is bounded; a cut says how to get the rest.

:func:`target_paths` gives the paths a call names, for a policy to judge before it runs.
"""

from __future__ import annotations

import re
import time
import unicodedata
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from safefs.mcp.birth_time import birth_time
from safefs.mcp.cancelling import cancel_event
from safefs.mcp.directories import Directories, Directory
from safefs.workspace import edits, files, listing, search, text
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import MAX_ENTRIES, MAX_RESULT_CHARS, NOTE_CHARS, join_capped
from safefs.workspace.patterns import glob_match
from safefs.workspace.walk import Entry, join

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}


def _writes(*, destructive: bool, idempotent: bool) -> dict[str, bool]:
    return {
        "readOnlyHint": False,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


@dataclass(frozen=True)
class Media:
    kind: str  # "image", "audio" or "resource"
    data: str
    mime_type: str
    uri: str


Reply = str | Media


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one object per tool
class McpTool:
    name: str
    title: str
    description: str
    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...]
    annotations: dict[str, bool]
    run: Callable[[Directories, dict[str, Any]], Reply]
    path_args: tuple[str, ...] = ()  # argument names holding one path, or a list of paths
    output_schema: dict[str, Any] | None = field(default=None)

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.get("readOnlyHint"))

    def input_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": self.properties, "required": list(self.required)}


TEXT_OUTPUT = {
    "type": "object",
    "properties": {"content": {"type": "string"}},
    "required": ["content"],
    "additionalProperties": False,
}
_MEDIA_BLOCK = {
    "anyOf": [
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["image", "audio"]},
                "data": {"type": "string"},
                "mimeType": {"type": "string"},
            },
            "required": ["type", "data", "mimeType"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "const": "resource"},
                "resource": {
                    "type": "object",
                    "properties": {
                        "uri": {"type": "string"},
                        "mimeType": {"type": "string"},
                        "blob": {"type": "string"},
                    },
                    "required": ["uri", "blob"],
                    "additionalProperties": False,
                },
            },
            "required": ["type", "resource"],
            "additionalProperties": False,
        },
    ]
}
MEDIA_OUTPUT = {  # the official server's: an image or audio block, or an embedded resource
    "type": "object",
    "properties": {"content": {"type": "array", "items": _MEDIA_BLOCK}},
    "required": ["content"],
    "additionalProperties": False,
}


def shown_path(d: Directory, rel: str) -> str:
    """The absolute path of ``rel`` in ``d``, for showing (never for opening): ``.`` components
    and doubled slashes that the client's spelling carried are left out."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    return join(d.display, "/".join(parts)) if parts else d.display


def target_paths(tool: McpTool, args: dict[str, Any]) -> list[str]:
    """The paths (as the client gave them) that a call of ``tool`` with ``args`` touches."""
    out: list[str] = []
    for name in tool.path_args:
        value = args.get(name)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str))
    return out


def as_given(message: str, dirs: Directories, paths: list[str]) -> str:
    """``message`` with each path it names as the client gave it: the workspace layer names the
    path relative to its directory, which for an absolute client path is not what was sent."""
    for path in paths:
        try:
            rel = dirs.locate(path)[1]
        except WorkspaceError:
            continue
        if rel != path and rel not in paths:
            message = message.replace(repr(rel), _quoted(path))
    return message


def _quoted(path: str) -> str:
    """``path`` in quotes as the client typed it: repr would double the backslash of an
    escaped byte (``caf\\xe9.txt``), which the client could not pass back."""
    return f"'{path}'" if path.isprintable() and "'" not in path else repr(path)


# -- arguments -------------------------------------------------------------------------------

PATH = {"type": "string"}
PATTERNS = {"type": "array", "items": {"type": "string"}, "default": []}


def _count(args: dict[str, Any], name: str) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, float):
        if not value.is_integer():
            raise WorkspaceError(f"{name} must be a whole number of lines, got {value}")
        value = int(value)
    if value < 0:
        raise WorkspaceError(f"{name} must not be negative, got {value}")
    return int(value)


# -- reading ---------------------------------------------------------------------------------


def _cut_note(r: text.LineRange) -> str:
    if r.line_cut:
        return (
            f"\n[cut at {MAX_RESULT_CHARS} characters: line {r.last} of {r.total} is longer "
            "than that, and the rest of it is not shown"
            + (f"; call read_text_file with offset={r.last + 1} to read on]" if r.last < r.total else "]")
        )
    return (
        f"\n[cut at {MAX_RESULT_CHARS} characters: lines {r.first}-{r.last} of {r.total} "
        f"shown; call read_text_file with offset={r.last + 1} to read on]"
    )


def read_text(d: Directory, rel: str, args: dict[str, Any], budget: int = MAX_RESULT_CHARS) -> str:
    budget -= NOTE_CHARS  # room for the header or the note on a cut
    head, tail = _count(args, "head"), _count(args, "tail")
    offset, limit = _count(args, "offset"), _count(args, "limit")
    if head is not None and tail is not None:
        raise WorkspaceError("Cannot specify both head and tail parameters simultaneously")
    if (head is not None or tail is not None) and (offset is not None or limit is not None):
        raise WorkspaceError("head/tail and offset/limit cannot be combined")
    if offset is not None or limit is not None:
        r = text.read_lines(
            d.root,
            rel,
            1 if offset is None else offset,
            text.DEFAULT_LINE_LIMIT if limit is None else limit,
            budget=budget,
            errors="replace",
        )
        return f"{text.describe_range(r, 'call read_text_file with')}\n{r.text}"
    if head == 0 or tail == 0:
        return ""
    first, count = 1, head
    if tail is not None:
        first = max(1, text.count_lines(d.root, rel) - tail + 1)
        count = tail
    r = text.read_lines(d.root, rel, first, count or (1 << 62), budget=budget, errors="replace")
    shown = r.text
    if head is not None or tail is not None:
        shown = shown.removesuffix("\n")  # the official server joins the lines with "\n"
    if r.cut_at_budget:
        shown += _cut_note(r)
    return shown


def _read_text_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    return read_text(d, rel, args)


def _read_multiple(dirs: Directories, args: dict[str, Any]) -> Reply:
    parts: list[str] = []
    budget = MAX_RESULT_CHARS
    for path in args["paths"]:
        if budget <= 200:
            parts.append(
                f"{path}: not read: the result reached {MAX_RESULT_CHARS} characters; "
                "read this file on its own"
            )
            continue
        try:
            d, rel = dirs.locate(path)
            part = f"{path}:\n{read_text(d, rel, {}, budget - len(path) - 10)}\n"
        except WorkspaceError as exc:
            part = f"{path}: Error - {as_given(str(exc), dirs, [path])}"
        parts.append(part)
        budget -= len(part) + 5
    return "\n---\n".join(parts)


def _read_media(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    media = files.read_media(d.root, rel)
    kind = media.mime_type.split("/")[0]
    uri = "file://" + urllib.parse.quote(shown_path(d, rel).encode("utf-8", "surrogateescape"), safe="/")
    return Media(kind if kind in ("image", "audio") else "resource", media.data_base64, media.mime_type, uri)


# -- writing ---------------------------------------------------------------------------------


def _write_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    files.write_text(d.root, rel, args["content"])
    return f"Successfully wrote to {args['path']}"


def _edit_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    path = args["path"]
    d, rel = dirs.locate(path)
    todo = [edits.Edit(e["oldText"], e["newText"]) for e in args["edits"]]
    result = edits.edit_file(d.root, rel, todo, dry_run=bool(args.get("dryRun", False)))
    diff = f"Index: {shown_path(d, rel)}\n{'=' * 67}\n{_diff_named(result.diff, rel, shown_path(d, rel))}"
    fence = "```"
    while fence in diff:
        fence += "`"
    return f"{fence}diff\n{diff}{fence}\n\n"


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", re.MULTILINE)


def _hunk_counts(match: re.Match[str]) -> str:
    """``@@ -1 +1 @@`` as ``@@ -1,1 +1,1 @@``: difflib leaves out a count of one, jsdiff does not."""
    return f"@@ -{match[1]}{match[2] or ',1'} +{match[3]}{match[4] or ',1'} @@"


def _diff_named(diff: str, rel: str, absolute: str) -> str:
    """The workspace diff with its ``---``/``+++`` lines naming the absolute path, as the
    official server's do, present even when nothing changed, and every hunk count written."""
    diff = _HUNK.sub(_hunk_counts, diff)
    old_header, new_header = f"--- {rel}\toriginal\n", f"+++ {rel}\tmodified\n"
    header = f"--- {absolute}\toriginal\n+++ {absolute}\tmodified\n"
    if diff.startswith(old_header + new_header):
        return header + diff[len(old_header + new_header) :]
    return diff if diff else header


def _create_directory(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    files.make_directory(d.root, rel)
    return f"Successfully created directory {args['path']}"


def _move_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    source, destination = args["source"], args["destination"]
    sd, srel = dirs.locate(source)
    dd, drel = dirs.locate(destination)
    if sd.root is not dd.root:
        raise WorkspaceError(
            f"source and destination must lie in the same allowed directory: {source!r} -> {destination!r}"
        )
    files.move(sd.root, srel, drel)
    return f"Successfully moved {source} to {destination}"


def _delete_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    kind = files.delete(d.root, rel)
    return f"Successfully deleted {kind} {args['path']}"


# -- listing and searching -------------------------------------------------------------------


def _tag(item: listing.Listed) -> str:
    entry = item.entry
    if entry.kind == "dir":
        return f"[DIR] {entry.name}"
    if entry.kind == "link":
        return f"[LINK] {entry.name} -> {item.link}"
    return f"[FILE] {entry.name}"


def _list_directory(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    items = listing.list_directory(d.root, rel)
    return join_capped(
        (_tag(i) for i in items),
        what="entries",
        how_to_continue="use search_files with a pattern to narrow the listing",
    )


def format_size(size: int) -> str:
    """Sizes as the official server prints them: ``0 B``, ``512 B``, ``1.50 KB``."""
    units = ["B", "KB", "MB", "GB", "TB"]
    if size <= 0:
        return "0 B"
    i = 0
    while i + 1 < len(units) and size >= 1024 ** (i + 1):
        i += 1
    return f"{size} B" if i == 0 else f"{size / 1024**i:.2f} {units[i]}"


def locale_order(name: str) -> tuple[str, str, str]:
    """A sort key close to JavaScript's ``localeCompare``, which the official server sorts by:
    letters compared without case and accents first (``a``, ``Ä``, ``B``), then the accents,
    then lower case before upper."""
    decomposed = unicodedata.normalize("NFD", name)
    base = "".join(c for c in decomposed if not unicodedata.combining(c))
    return base.casefold(), decomposed.casefold(), decomposed.swapcase()


def _list_with_sizes(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    items = listing.list_directory(d.root, rel)
    if args.get("sortBy", "name") == "size":
        items.sort(key=lambda i: -(i.size or 0))
    else:
        items.sort(key=lambda i: locale_order(i.entry.name))
    lines = []
    for i in items:
        is_dir = i.entry.kind == "dir"
        size = "" if is_dir else format_size(i.size or 0).rjust(10)
        lines.append(f"{'[DIR]' if is_dir else '[FILE]'} {i.entry.name.ljust(30)} {size}")
    files_ = [i for i in items if i.entry.kind != "dir"]
    summary = (
        f"\nTotal: {len(files_)} files, {len(items) - len(files_)} directories\n"
        f"Combined size: {format_size(sum(i.size or 0 for i in files_))}"
    )
    return (
        join_capped(
            lines,
            limit=MAX_RESULT_CHARS - len(summary),
            what="entries",
            how_to_continue="use search_files to narrow the listing",
        )
        + "\n"
        + summary
    )


def _directory_tree(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    max_depth = _count(args, "maxDepth")
    if max_depth == 0:
        raise WorkspaceError("maxDepth must be 1 or more")
    return listing.tree_json(
        d.root, rel, exclude=args.get("excludePatterns", []), max_depth=max_depth, cancel=cancel_event()
    )


def _absolute(d: Directory, entry: Entry) -> str:
    return shown_path(d, entry.path)


def _search_files(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    patterns = args.get("excludePatterns", [])
    result = search.glob(
        d.root,
        args["pattern"],
        rel,
        skip_git=False,
        exclude=lambda e: any(glob_match(p, e.rel) for p in patterns),
        cancel=cancel_event(),
    )
    if not result.matches:
        return "No matches found"
    return join_capped(
        (_absolute(d, e) for e in result.matches),
        what="matches",
        more=result.more,
        how_to_continue="narrow the pattern or the path",
    )


def _search_contents(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    result = search.grep(
        d.root,
        args["pattern"],
        rel,
        file_glob=args.get("filePattern"),
        ignore_case=bool(args.get("ignoreCase", False)),
        cancel=cancel_event(),
    )
    prefix = d.display.rstrip("/") + "/"
    lines = [prefix + line for line in result.lines]
    summary = (
        f"[{len(result.lines) + result.more} matching lines in {result.files_matched} of "
        f"{result.files_searched} files; {result.binary_skipped} binary and "
        f"{result.large_skipped} large files skipped"
        + ("; stopped early, narrow the path" if result.stopped_early else "")
        + "]"
    )
    if not lines:
        return f"No matches found\n{summary}"
    return (
        join_capped(
            lines,
            what="matching lines",
            more=result.more,
            how_to_continue="narrow the pattern, path or filePattern",
        )
        + "\n"
        + summary
    )


def js_date(seconds: float) -> str:
    """A time as JavaScript's ``Date.toString()`` prints it, which the official server shows."""
    t = time.localtime(seconds)
    offset = time.strftime("%z", t)
    return time.strftime(f"%a %b %d %Y %H:%M:%S GMT{offset} ({time.strftime('%Z', t)})", t)


def _file_info(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    info = files.file_info(d.root, rel)
    born = birth_time(d.root, rel)
    rows = {
        "size": info.size,
        "created": "unknown" if born is None else js_date(born),
        "modified": js_date(info.modified),
        "accessed": js_date(info.accessed),
        "isDirectory": str(info.is_directory).lower(),
        "isFile": str(info.is_file).lower(),
        "permissions": info.permissions,
    }
    return "\n".join(f"{key}: {value}" for key, value in rows.items())


def _allowed(dirs: Directories, args: dict[str, Any]) -> Reply:
    listed = "Allowed directories:\n" + "\n".join(dirs.displays())
    return f"{listed}\n\nNote: {dirs.note}" if dirs.note else listed


# -- the table -------------------------------------------------------------------------------

_WITHIN = " Only works within allowed directories."
_READ_PROPS = {
    "path": PATH,
    "tail": {"type": "number", "description": "If provided, returns only the last N lines"},
    "head": {"type": "number", "description": "If provided, returns only the first N lines"},
    "offset": {
        "type": "integer",
        "description": "First line to return (1-based); with limit, reads any part of a large file",
    },
    "limit": {"type": "integer", "description": "How many lines to return from offset"},
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
            "read_file",
            "Read File (Deprecated)",
            "Same as read_text_file; deprecated.",
            _READ_PROPS,
            ("path",),
            READ_ONLY,
            _read_text_file,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "read_text_file",
            "Read Text File",
            _READ_TEXT,
            _READ_PROPS,
            ("path",),
            READ_ONLY,
            _read_text_file,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "read_media_file",
            "Read Media File",
            "Read an image or audio file (or any file, as an embedded resource) as base64 "
            f"with its MIME type; files over {files.MAX_MEDIA_BYTES} bytes are refused." + _WITHIN,
            {"path": PATH},
            ("path",),
            READ_ONLY,
            _read_media,
            ("path",),
            MEDIA_OUTPUT,
        ),
        McpTool(
            "read_multiple_files",
            "Read Multiple Files",
            "Read several text files at once; each is shown after its path, and a file that "
            "fails does not stop the others." + _WITHIN,
            {"paths": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
            ("paths",),
            READ_ONLY,
            _read_multiple,
            ("paths",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "write_file",
            "Write File",
            "Create a file or replace it with new UTF-8 content, atomically (a reader never "
            "sees half a file); missing parent directories are created." + _WITHIN,
            {"path": PATH, "content": {"type": "string"}},
            ("path", "content"),
            _writes(destructive=True, idempotent=True),
            _write_file,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "edit_file",
            "Edit File",
            "Replace exact text in a file. Each oldText must occur exactly once: text that "
            "is missing or occurs more than once is refused, never guessed. Returns a "
            "git-style diff; dryRun shows it without writing. The write is atomic." + _WITHIN,
            {
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
            ("path", "edits"),
            _writes(destructive=True, idempotent=False),
            _edit_file,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "create_directory",
            "Create Directory",
            "Create a directory and any missing parents; an existing one is fine." + _WITHIN,
            {"path": PATH},
            ("path",),
            _writes(destructive=False, idempotent=True),
            _create_directory,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "list_directory",
            "List Directory",
            "List a directory: [DIR], [FILE] or [LINK] and the name, one per line; a symlink "
            f"shows where it leads and is never followed out. At most {MAX_ENTRIES} entries." + _WITHIN,
            {"path": PATH},
            ("path",),
            READ_ONLY,
            _list_directory,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "list_directory_with_sizes",
            "List Directory with Sizes",
            "List a directory with file sizes and a summary, sorted by name or size." + _WITHIN,
            {
                "path": PATH,
                "sortBy": {
                    "type": "string",
                    "enum": ["name", "size"],
                    "default": "name",
                    "description": "Sort entries by name or size",
                },
            },
            ("path",),
            READ_ONLY,
            _list_with_sizes,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "directory_tree",
            "Directory Tree",
            "A recursive JSON tree of entries with 'name', 'type' (file/directory) and, for "
            "directories, 'children'. maxDepth limits the depth; the result is capped at "
            f"{MAX_RESULT_CHARS} characters. A directory whose contents were not shown "
            'carries "truncated": true: call directory_tree on it to see them.' + _WITHIN,
            {
                "path": PATH,
                "excludePatterns": PATTERNS,
                "maxDepth": {"type": "integer", "description": "How many levels to show"},
            },
            ("path",),
            READ_ONLY,
            _directory_tree,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "move_file",
            "Move File",
            "Move or rename a file or directory, atomically. The destination must not exist: "
            "an existing entry is never replaced." + _WITHIN,
            {"source": PATH, "destination": PATH},
            ("source", "destination"),
            _writes(destructive=True, idempotent=False),
            _move_file,
            ("source", "destination"),
            TEXT_OUTPUT,
        ),
        McpTool(
            "search_files",
            "Search Files",
            "Find files and directories whose path relative to 'path' matches a glob "
            "pattern ('*.ext' in that directory, '**/*.ext' at any depth). Returns full "
            f"paths, at most {MAX_ENTRIES}. Symlinks are never followed." + _WITHIN,
            {"path": PATH, "pattern": {"type": "string"}, "excludePatterns": PATTERNS},
            ("path", "pattern"),
            READ_ONLY,
            _search_files,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "search_file_contents",
            "Search File Contents",
            "Search the contents of text files under 'path' for a regular expression; "
            "prints path:line:text per match. Skips binary files, .git and what .gitignore "
            f"excludes; never follows symlinks. At most {MAX_ENTRIES} matching lines." + _WITHIN,
            {
                "path": PATH,
                "pattern": {"type": "string", "description": "Regular expression"},
                "filePattern": {"type": "string", "description": "Only files matching this glob"},
                "ignoreCase": {"type": "boolean", "default": False},
            },
            ("path", "pattern"),
            READ_ONLY,
            _search_contents,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "get_file_info",
            "Get File Info",
            "Metadata of a file or directory: size, times, type and permissions." + _WITHIN,
            {"path": PATH},
            ("path",),
            READ_ONLY,
            _file_info,
            ("path",),
            TEXT_OUTPUT,
        ),
        McpTool(
            "list_allowed_directories",
            "List Allowed Directories",
            "The directories this server may access (and everything beneath them).",
            {},
            (),
            READ_ONLY,
            _allowed,
            (),
            TEXT_OUTPUT,
        ),
    ]


DELETE_TOOL = McpTool(
    "delete_file",
    "Delete File",
    "Delete a file, a symlink (never its target) or an empty directory." + _WITHIN,
    {"path": PATH},
    ("path",),
    _writes(destructive=True, idempotent=False),
    _delete_file,
    ("path",),
    TEXT_OUTPUT,
)


def tools_for(*, read_only: bool, allow_delete: bool) -> list[McpTool]:
    """The tools a server started with these flags lists (and is willing to run)."""
    tools = all_tools()
    if allow_delete:
        tools.append(DELETE_TOOL)
    if read_only:
        tools = [t for t in tools if t.read_only]
    return tools
