"""``grep {pattern, path?, glob?, type?, output_mode?, -A?, -B?, -C?, -i?, literal?, head_limit?,
offset?, include_ignored?}``: search workspace file contents with a linear-time regex (RE2).

Output modes: ``files_with_matches`` (the default: one path per matching file), ``content``
(``path:line:text``, context lines ``path-line-text``, ``--`` between groups) and ``count``
(``path:N``). Paths handed to :attr:`Tool.hide` are never searched, in any mode.
``head_limit``/``offset`` page through the entries. Binary files, ``.git`` and what
git's ignore rules exclude are skipped (a path named explicitly is searched even when ignored);
symlinks are never followed. A last line gives the totals, and says when the search stopped
early (deadline, cancel, entry limit) so a partial answer is never taken for a whole one.
"""

from __future__ import annotations

import threading
from typing import Any

import safefs
from agent.tools.base import Tool, ToolOutput, error_output, object_schema
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import MAX_ENTRIES, join_capped
from safefs.workspace.search import FILE_TYPES, MAX_CONTEXT, OUTPUT_MODES, GrepResult, grep


def summary(result: GrepResult, offset: int) -> str:
    if result.mode == "files_with_matches":
        parts = [f"{result.files_matched} of {result.files_searched} files searched match"]
    else:
        lines = "line" if result.lines_matched == 1 else "lines"
        parts = [
            f"{result.lines_matched} matching {lines} in {result.files_matched} of "
            f"{result.files_searched} files searched"
        ]
    shown = len(result.entries)
    if offset or shown < result.entries_total:
        parts.append(
            f"entries {offset + 1}-{offset + shown} of {result.entries_total} shown"
            if shown
            else f"no entries at offset {offset} of {result.entries_total}"
        )
        if offset + shown < result.entries_total:
            parts.append(f"offset={offset + shown} continues")
    if result.binary_skipped:
        parts.append(f"{result.binary_skipped} binary files skipped")
    if result.large_skipped:
        parts.append(f"{result.large_skipped} files over 32 MiB skipped")
    if result.unreadable:
        parts.append(f"{result.unreadable} files unreadable")
    text = "[" + "; ".join(parts) + "]"
    if result.stopped_early:
        text += "\n" + result.note()
    return text


def _count(minimum: int, maximum: int, description: str) -> dict[str, Any]:
    return {"type": "integer", "minimum": minimum, "maximum": maximum, "description": description}


class GrepTool(Tool):
    name = "grep"
    description = (
        "Search file contents in the workspace with a regular expression (RE2 syntax: no "
        "back-references or look-around; matching takes linear time). output_mode "
        "'files_with_matches' (default) lists matching files, 'content' prints path:line:text "
        "(with -A/-B/-C context lines), 'count' prints path:N. Skips binary files, .git and "
        "files git ignores (include_ignored searches them; a path you name is always searched). "
        f"glob and type limit the files searched. At most {MAX_ENTRIES} entries; head_limit and "
        "offset page through the rest."
    )
    input_schema = object_schema(
        {
            "pattern": {"type": "string", "description": "Regular expression (RE2) to search for."},
            "path": {"type": "string", "description": "File or directory to search (default '.')."},
            "glob": {"type": "string", "description": "Only search files matching this glob ('*.py')."},
            "type": {
                "type": "string",
                "enum": sorted(FILE_TYPES),
                "description": "Only search files of this type (py, js, rust, ...).",
            },
            "output_mode": {
                "type": "string",
                "enum": list(OUTPUT_MODES),
                "description": "files_with_matches (default), content or count.",
            },
            "-A": _count(0, MAX_CONTEXT, "Lines of context after each match (content mode)."),
            "-B": _count(0, MAX_CONTEXT, "Lines of context before each match (content mode)."),
            "-C": _count(0, MAX_CONTEXT, "Lines of context around each match (content mode)."),
            "-i": {"type": "boolean", "description": "Case-insensitive (default false)."},
            "ignore_case": {"type": "boolean", "description": "Same as -i."},
            "literal": {"type": "boolean", "description": "Match the pattern as plain text."},
            "head_limit": _count(1, MAX_ENTRIES, f"Show at most this many entries (default {MAX_ENTRIES})."),
            "offset": _count(0, 1 << 31, "Skip this many entries first (default 0)."),
            "include_ignored": {
                "type": "boolean",
                "description": "Also search files git ignores (default false).",
            },
        },
        required=["pattern"],
    )
    path_fields = {"path": "."}

    def __init__(self, root: safefs.Root) -> None:
        self.root = root

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        path: str = args.get("path", ".")
        context = args.get("-C", 0)
        offset: int = args.get("offset", 0)
        mode: str = args.get("output_mode", "files_with_matches")
        try:
            result = grep(
                self.root,
                args["pattern"],
                path,
                mode=mode,
                file_glob=args.get("glob"),
                file_type=args.get("type"),
                ignore_case=bool(args.get("-i", False) or args.get("ignore_case", False)),
                literal=bool(args.get("literal", False)),
                before=args.get("-B", context),
                after=args.get("-A", context),
                head_limit=args.get("head_limit"),
                offset=offset,
                ignore=not args.get("include_ignored", False),
                hide=self.hide,
                cancel=cancel,
            )
        except WorkspaceError as exc:
            return error_output(exc)
        if not result.entries:
            return ToolOutput(f"no matches\n{summary(result, offset)}")
        text = join_capped(
            result.entries,
            what="entries",
            how_to_continue="use head_limit and offset, or narrow the pattern, path or glob",
        )
        return ToolOutput(f"{text}\n{summary(result, offset)}")
