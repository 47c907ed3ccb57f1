"""The MCP tools' functions: each maps the client's paths into a directory
(:meth:`Directories.locate`) and runs one :mod:`safefs.workspace` operation, then words the
result as the official server does (:mod:`safefs.mcp.node_format`). Every result is bounded;
a cut says how to get the rest. The table that lists them is :mod:`safefs.mcp.tools`."""

from __future__ import annotations

import urllib.parse
from typing import Any

from safefs.mcp.birth_time import birth_time
from safefs.mcp.cancelling import cancel_event
from safefs.mcp.directories import Directories, Directory
from safefs.mcp.node_format import edit_diff, format_size, js_date, listing_tag, locale_order
from safefs.mcp.tool import Media, Reply
from safefs.workspace import edits, files, listing, search, text
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import MAX_RESULT_CHARS, NOTE_CHARS, join_capped
from safefs.workspace.patterns import glob_match
from safefs.workspace.walk import Entry, join


def shown_path(d: Directory, rel: str) -> str:
    """The absolute path of ``rel`` in ``d``, for showing (never for opening): ``.`` components
    and doubled slashes that the client's spelling carried are left out."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    return join(d.display, "/".join(parts)) if parts else d.display


# -- arguments -------------------------------------------------------------------------------


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
            f"\n[cut at {MAX_RESULT_CHARS} characters: line {r.last} of {r.total_text} is longer "
            "than that, and the rest of it is not shown"
            + (
                f"; call read_text_file with offset={r.last + 1} to read on]"
                if r.last < r.total or not r.total_known
                else "]"
            )
        )
    return (
        f"\n[cut at {MAX_RESULT_CHARS} characters: lines {r.first}-{r.last} of {r.total_text} "
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
    numbered = bool(args.get("lineNumbers", False))
    if offset is not None or limit is not None or numbered:
        r = text.read_lines(
            d.root,
            rel,
            1 if offset is None else offset,
            text.DEFAULT_LINE_LIMIT if limit is None else limit,
            budget=budget,
            errors="replace",
            numbered=numbered,
        )
        return f"{text.describe_range(r, 'call read_text_file with')}\n{r.text}"
    if head == 0 or tail == 0:
        return ""
    if tail is not None:
        # Read backwards from the end: a tail never reads, or counts, the rest of the file.
        found = text.tail_lines(d.root, rel, tail, budget=budget, errors="replace")
        shown = found.text.removesuffix("\n")  # the official server joins the lines with "\n"
        if found.cut:
            shown = (
                f"[cut at {MAX_RESULT_CHARS} characters: only the last lines that fit are shown]\n" + shown
            )
        return shown
    r = text.read_lines(d.root, rel, 1, head or (1 << 62), budget=budget, errors="replace")
    shown = r.text
    if head is not None or tail is not None:
        shown = shown.removesuffix("\n")  # the official server joins the lines with "\n"
    if r.cut_at_budget:
        shown += _cut_note(r)
    return shown


def read_text_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    return read_text(d, rel, args)


def read_multiple_files(dirs: Directories, args: dict[str, Any]) -> Reply:
    parts: list[str] = []
    budget = MAX_RESULT_CHARS - NOTE_CHARS  # the last line, naming the files not read, fits
    paths: list[str] = args["paths"]
    for index, path in enumerate(paths):
        if budget <= 200:
            left = len(paths) - index
            first = path if len(path) <= 80 else path[:80] + "..."
            parts.append(
                f"[{left} more file{'s' if left > 1 else ''} not read: the result reached "
                f"{MAX_RESULT_CHARS} characters; read them on their own, from {first!r} on]"
            )
            break
        shown = path if len(path) <= 200 else path[:200] + "..."
        try:
            d, rel = dirs.locate(path)
            part = f"{shown}:\n{read_text(d, rel, {}, budget - len(shown) - 10)}\n"
        except WorkspaceError as exc:
            part = f"{shown}: Error - {exc.spelled(dirs.spellings([path]).get)}"
        if len(part) > budget:
            part = part[: max(0, budget - 40)] + "\n[cut: the result reached its cap]"
        parts.append(part)
        budget -= len(part) + 5
    return "\n---\n".join(parts)


def read_media_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    media = files.read_media(d.root, rel)
    kind = media.mime_type.split("/")[0]
    uri = "file://" + urllib.parse.quote(shown_path(d, rel).encode("utf-8", "surrogateescape"), safe="/")
    return Media(kind if kind in ("image", "audio") else "resource", media.data_base64, media.mime_type, uri)


# -- writing ---------------------------------------------------------------------------------


def write_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    files.write_text(d.root, rel, args["content"])
    return f"Successfully wrote to {args['path']}"


def edit_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    todo = [edits.Edit(e["oldText"], e["newText"]) for e in args["edits"]]
    result = edits.edit_file(d.root, rel, todo, dry_run=bool(args.get("dryRun", False)))
    return edit_diff(shown_path(d, rel), result.hunks)


def create_directory(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    files.make_directory(d.root, rel)
    return f"Successfully created directory {args['path']}"


def move_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    source, destination = args["source"], args["destination"]
    sd, srel = dirs.locate(source)
    dd, drel = dirs.locate(destination)
    if sd.root is not dd.root:
        raise WorkspaceError(
            f"source and destination must lie in the same allowed directory: {source!r} -> {destination!r}"
        )
    files.move(sd.root, srel, drel)
    return f"Successfully moved {source} to {destination}"


def delete_file(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    kind = files.delete(d.root, rel)
    return f"Successfully deleted {kind} {args['path']}"


# -- listing and searching -------------------------------------------------------------------


# A listing keeps no more entries than a result could show (a line is at least 8 characters);
# the rest are counted, and a sorted listing sorts all of them first.
LISTED = MAX_RESULT_CHARS // 8


def list_directory(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    listed = listing.list_directory(d.root, rel, max_entries=LISTED)
    shown = join_capped(
        (listing_tag(i) for i in listed.items),
        limit=MAX_RESULT_CHARS - (NOTE_CHARS if listed.stopped_early else 0),
        more=listed.more,
        what="entries",
        how_to_continue="use search_files with a pattern to narrow the listing",
    )
    return f"{shown}\n{listed.note}" if listed.stopped_early else shown


def _by_size(item: listing.Listed) -> int:
    return -(item.size or 0)  # largest first; directories (no size) after the files, by name


def _by_name(item: listing.Listed) -> tuple[str, str, str]:
    return locale_order(item.entry.name)


def list_directory_with_sizes(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    order = _by_size if args.get("sortBy", "name") == "size" else _by_name
    listed = listing.list_directory(d.root, rel, order=order, max_entries=LISTED)
    lines = []
    for i in listed.items:
        is_dir = i.entry.kind == "dir"
        size = "" if is_dir else format_size(i.size or 0).rjust(10)
        lines.append(f"{'[DIR]' if is_dir else '[FILE]'} {i.entry.name.ljust(30)} {size}")
    # The order, the totals and the size cover every entry the listing saw, also those not
    # shown; a walk that stopped says so.
    summary = (
        f"\nTotal: {listed.files_seen} files, {listed.dirs_seen} directories\n"
        f"Combined size: {format_size(listed.file_bytes or 0)}"
        + (f"\n{listed.note}" if listed.stopped_early else "")
    )
    return (
        join_capped(
            lines,
            limit=MAX_RESULT_CHARS - len(summary),
            more=listed.more,
            what="entries",
            how_to_continue="use search_files to narrow the listing",
        )
        + "\n"
        + summary
    )


def directory_tree(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    max_depth = _count(args, "maxDepth")
    if max_depth == 0:
        raise WorkspaceError("maxDepth must be 1 or more")
    return listing.tree_json(
        d.root,
        rel,
        exclude=args.get("excludePatterns", []),
        max_depth=max_depth,
        ignore=not args.get("includeIgnored", False),
        cancel=cancel_event(),
    )


def _absolute(d: Directory, entry: Entry) -> str:
    return shown_path(d, entry.path)


def search_files(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    patterns = args.get("excludePatterns", [])
    result = search.glob(
        d.root,
        args["pattern"],
        rel,
        ignore=not args.get("includeIgnored", False),
        hide=(lambda e: any(glob_match(p, e.rel) for p in patterns)) if patterns else None,
        cancel=cancel_event(),
    )
    stopped = f"\n{result.note}" if result.stopped_early else ""
    if not result.matches:
        return "No matches found" + stopped
    return (
        join_capped(
            (_absolute(d, e) for e in result.matches),
            what="matches",
            more=result.more,
            how_to_continue="narrow the pattern or the path",
        )
        + stopped
    )


def search_file_contents(dirs: Directories, args: dict[str, Any]) -> Reply:
    d, rel = dirs.locate(args["path"])
    context = _count(args, "context") or 0
    offset = _count(args, "offset") or 0
    result = search.grep(
        d.root,
        args["pattern"],
        rel,
        mode=args.get("outputMode", "content"),
        file_glob=args.get("filePattern"),
        file_type=args.get("type"),
        ignore_case=bool(args.get("ignoreCase", False)),
        literal=bool(args.get("literal", False)),
        before=_count(args, "before") or context,
        after=_count(args, "after") or context,
        head_limit=_count(args, "headLimit"),
        offset=offset,
        ignore=not args.get("includeIgnored", False),
        cancel=cancel_event(),
    )
    prefix = d.display.rstrip("/") + "/"
    lines = [line if line == "--" else prefix + line for line in result.entries]
    more = result.entries_total - offset - len(result.entries)
    summary = (
        f"[{result.lines_matched} matching lines in {result.files_matched} of "
        f"{result.files_searched} files; {result.binary_skipped} binary and "
        f"{result.large_skipped} large files skipped"
        + (f"; {more} more entries: offset={offset + len(result.entries)} continues" if more > 0 else "")
        + "]"
        + (f"\n{result.note()}" if result.stopped_early else "")
    )
    if not lines:
        return f"No matches found\n{summary}"
    return (
        join_capped(
            lines,
            what="entries",
            how_to_continue="use headLimit and offset, or narrow the pattern, path or filePattern",
        )
        + "\n"
        + summary
    )


def get_file_info(dirs: Directories, args: dict[str, Any]) -> Reply:
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


def list_allowed_directories(dirs: Directories, args: dict[str, Any]) -> Reply:
    listed = "Allowed directories:\n" + "\n".join(dirs.displays())
    return f"{listed}\n\nNote: {dirs.note}" if dirs.note else listed
