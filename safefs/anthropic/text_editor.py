"""A handler for Anthropic's text editor tool, ``text_editor_20250728`` (``str_replace_based_edit_tool``).

The tool is schema-less: Claude knows its commands (``view`` with ``view_range``, ``create``,
``str_replace``, ``insert``; ``undo_edit`` is not part of this version) and the handler answers
them. Results use the texts of Anthropic's tool documentation where it gives them (``N: line``
numbering in ``view``, "Successfully replaced text at exactly one location.", "Error: No match
found for replacement. ...", "Error: Found N matches ...", "Error: File not found"), and the
reference implementation's otherwise. ``max_characters`` cuts a ``view`` of a file to that many
characters. Every path is resolved beneath ``root``; an error names the path as Claude gave it.

:class:`TextEditorTool` is the handler as an SDK tool, for ``client.beta.messages.tool_runner``.
"""

from __future__ import annotations

import os
import posixpath
import stat
from typing import Any

from anthropic.lib.tools import BetaBuiltinFunctionTool, BetaFunctionToolResultType, ToolError

import safefs

TOOL_TYPE = "text_editor_20250728"
TOOL_NAME = "str_replace_based_edit_tool"
COMMANDS = ("view", "create", "str_replace", "insert")
MAX_VIEW_BYTES = 10 * 1024 * 1024  # a view never loads more than this
LISTING_DEPTH = 2
LISTING_MAX_ENTRIES = 1000


def _text(args: dict[str, Any], name: str, *, required: bool = True) -> str:
    value = args.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ToolError(f"Error: Parameter `{name}` is required and must be a string")
    return value


def _already_exists(path: str) -> ToolError:
    return ToolError(f"Error: File already exists at: {path}. Cannot overwrite files using command `create`.")


def _insert_text(args: dict[str, Any]) -> str:
    insert_text = args.get("insert_text", args.get("new_str"))
    if not isinstance(insert_text, str):
        raise ToolError("Error: Parameter `insert_text` is required and must be a string")
    return insert_text


class TextEditor:
    """The commands of ``text_editor_20250728`` on ``root``."""

    def __init__(self, root: safefs.Root, *, max_characters: int | None = None) -> None:
        self.root = root
        self.max_characters = max_characters

    def execute(self, args: dict[str, Any]) -> str:
        command = args.get("command")
        if command not in COMMANDS:
            raise ToolError(
                f"Error: Unrecognized command {command!r}. The allowed commands are: {', '.join(COMMANDS)}"
            )
        path = _text(args, "path")
        if not path or "\0" in path:
            raise ToolError("Error: Parameter `path` must be a non-empty path")
        try:
            if command == "view":
                return self.view(path, args.get("view_range"))
            if command == "create":
                return self.create(path, _text(args, "file_text"))
            if command == "str_replace":
                return self.str_replace(path, _text(args, "old_str"), _text(args, "new_str", required=False))
            return self.insert(path, args.get("insert_line"), _insert_text(args))
        except safefs.PathEscapeError:
            raise ToolError(f"Error: The path {path} is outside the workspace") from None
        except FileNotFoundError:
            raise ToolError("Error: File not found") from None
        except PermissionError:
            raise ToolError("Error: Permission denied. Cannot write to file.") from None
        except IsADirectoryError:
            raise ToolError(f"Error: The path {path} is a directory") from None
        except safefs.NotRegularFileError:
            raise ToolError(f"Error: The path {path} is not a regular file") from None
        except UnicodeDecodeError:
            raise ToolError(f"Error: The file {path} is not valid UTF-8 text") from None
        except OSError as exc:
            raise ToolError(f"Error: {exc.strerror or type(exc).__name__}") from None

    # -- reading -------------------------------------------------------------------------------

    def _read(self, path: str) -> str:
        with self.root.open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_VIEW_BYTES:
                raise ToolError(f"Error: The file {path} is larger than {MAX_VIEW_BYTES} bytes")
            data: bytes = f.read(MAX_VIEW_BYTES + 1)
            return data.decode("utf-8")

    def view(self, path: str, view_range: Any) -> str:
        if stat.S_ISDIR(self.root.stat(path).st_mode):
            if view_range is not None:
                raise ToolError(
                    "Error: The `view_range` parameter is not allowed when `path` points to a directory."
                )
            return self._listing(path)
        content = self._read(path)
        lines = content.split("\n")
        if content.endswith("\n"):
            lines.pop()  # as ``cat -n``: a final newline ends the last line, it starts no new one
        first = 1
        if view_range is not None:
            if (
                not isinstance(view_range, list)
                or len(view_range) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
            ):
                raise ToolError("Error: Invalid `view_range`. It should be a list of two integers.")
            start, end = view_range
            if start < 1 or start > len(lines):
                raise ToolError(
                    f"Error: Invalid `view_range`: {view_range}. Its first element `{start}` should be "
                    f"within the range of lines of the file: [1, {len(lines)}]"
                )
            if end != -1 and (end < start or end > len(lines)):
                raise ToolError(
                    f"Error: Invalid `view_range`: {view_range}. Its second element `{end}` should be -1 "
                    f"or within [{start}, {len(lines)}]"
                )
            lines = lines[start - 1 :] if end == -1 else lines[start - 1 : end]
            first = start
        text = "\n".join(f"{n}: {line}" for n, line in enumerate(lines, first))
        if self.max_characters is not None and len(text) > self.max_characters:
            text = text[: self.max_characters] + "\n<response clipped>"
        return text

    def _listing(self, path: str) -> str:
        entries: list[str] = []

        def visit(directory: str, depth: int) -> None:
            for name in sorted(self.root.listdir(directory)):
                if name.startswith(".") or len(entries) >= LISTING_MAX_ENTRIES:
                    continue
                child = f"{directory.rstrip('/')}/{name}"
                is_dir = self.root.is_dir(child) and not self.root.is_symlink(child)
                entries.append(child + ("/" if is_dir else ""))
                if is_dir and depth < LISTING_DEPTH:
                    visit(child, depth + 1)

        visit(path, 1)
        header = f"Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:"
        return "\n".join([header, f"{path.rstrip('/') or '/'}/", *entries])

    # -- changing ------------------------------------------------------------------------------

    def create(self, path: str, file_text: str) -> str:
        parent = posixpath.dirname(path)
        if parent and parent != "/":
            self.root.mkdir(parent, parents=True, exist_ok=True)
        try:
            with self.root.open(path, "xb") as f:  # no-clobber: an existing file is never replaced
                f.write(file_text.encode("utf-8"))
        except FileExistsError:
            raise _already_exists(path) from None
        return f"File created successfully at: {path}"

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        if not old_str:
            raise ToolError("Error: Parameter `old_str` must not be empty")
        self.root.write_bytes(path, replaced(self._read(path), old_str, new_str).encode("utf-8"))
        return "Successfully replaced text at exactly one location."

    def insert(self, path: str, insert_line: Any, insert_text: str) -> str:
        self.root.write_bytes(path, inserted(self._read(path), insert_line, insert_text).encode("utf-8"))
        return f"Successfully inserted text after line {insert_line}."


# What ``str_replace`` and ``insert`` make of a file's text: pure functions, so that a preview of
# the change (the ``ask`` prompt's diff) is worked out by the same code as the change itself.


def replaced(content: str, old_str: str, new_str: str) -> str:
    """``content`` with its one occurrence of ``old_str`` replaced; ToolError when there is none
    or more than one."""
    count = content.count(old_str)
    if count == 0:
        raise ToolError("Error: No match found for replacement. Please check your text and try again.")
    if count > 1:
        raise ToolError(
            f"Error: Found {count} matches for replacement text. "
            "Please provide more context to make a unique match."
        )
    return content.replace(old_str, new_str)


def inserted(content: str, insert_line: Any, insert_text: str) -> str:
    """``content`` with ``insert_text`` inserted after line ``insert_line`` (0: at the top);
    ToolError when that line is out of range."""
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    if (
        not isinstance(insert_line, int)
        or isinstance(insert_line, bool)
        or not 0 <= insert_line <= len(lines)
    ):
        raise ToolError(
            f"Error: Invalid `insert_line` parameter: {insert_line}. It should be within the range "
            f"of lines of the file: [0, {len(lines)}]"
        )
    lines[insert_line:insert_line] = insert_text.removesuffix("\n").split("\n")
    return "\n".join(lines) + ("\n" if content.endswith("\n") or not content else "")


def changed_text(current: str | None, args: dict[str, Any]) -> str:
    """What a ``create``, ``str_replace`` or ``insert`` call with ``args`` leaves in a file whose
    text is ``current`` (None: there is no such file); ToolError, with the tool's own message,
    when the call will fail."""
    command = args.get("command")
    if command == "create":
        file_text = _text(args, "file_text")
        if current is not None:
            raise _already_exists(str(args.get("path")))
        return file_text
    if command not in ("str_replace", "insert"):
        raise ToolError(f"Error: {command!r} does not change a file")
    if current is None:
        raise ToolError("Error: File not found")
    if command == "insert":
        return inserted(current, args.get("insert_line"), _insert_text(args))
    old_str = _text(args, "old_str")
    if not old_str:
        raise ToolError("Error: Parameter `old_str` must not be empty")
    return replaced(current, old_str, _text(args, "new_str", required=False))


class TextEditorTool(BetaBuiltinFunctionTool):
    """:class:`TextEditor` as a tool of the SDK's tool runner::

    tools=[TextEditorTool(safefs.Root("project"), max_characters=20000)]
    """

    def __init__(self, root: safefs.Root, *, max_characters: int | None = None) -> None:
        super().__init__()
        self.editor = TextEditor(root, max_characters=max_characters)

    def to_dict(self) -> Any:
        spec: dict[str, Any] = {"type": TOOL_TYPE, "name": TOOL_NAME}
        if self.editor.max_characters is not None:
            spec["max_characters"] = self.editor.max_characters
        return spec

    def call(self, input: object) -> BetaFunctionToolResultType:
        if not isinstance(input, dict):
            raise ToolError("Error: the tool input must be an object")
        return self.editor.execute(input)
