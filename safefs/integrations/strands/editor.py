"""Drop-in for strands-agents-tools' ``editor``::

    from safefs.integrations.strands import editor

The same ``@tool`` (the installed version's signature and docstring, so the same spec), the same
commands, consent prompt (skipped with ``BYPASS_TOOL_CONSENT=true``), content cache, ``.bak``
backups (``EDITOR_DISABLE_BACKUP``) and results; every read, write, backup and listing beneath
the working directory's :class:`safefs.Root`. A path or a symlink leading outside gets the
original's error result (``Error: path escapes workspace: '...'``). The content cache is kept
per working directory.
"""

from __future__ import annotations

import inspect
import logging
import os
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information
from rich import box
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from rich.tree import Tree
from strands import tool
from strands_tools import editor as _upstream
from strands_tools.utils import console_util
from strands_tools.utils.detect_language import detect_language
from strands_tools.utils.user_input import get_user_input

import safefs
from safefs.integrations.strands import _workspace

__all__ = ["editor"]

logger = logging.getLogger(__name__)

COMMANDS = ["view", "create", "str_replace", "pattern_replace", "insert", "find_line", "undo_edit"]
MODIFYING = {"create", "str_replace", "pattern_replace", "insert"}
# The original's pure helpers (no file access), so formatting is the installed version's.
validate_pattern = _upstream.validate_pattern
format_code = _upstream.format_code
format_output = _upstream.format_output
# A pattern the model gives is matched by RE2, in time linear in the text: the original's `re`
# backtracks, and a pattern such as `(a+)+$` (or a fuzzy search of many words) on a long line
# would hold the process for ever.
MAX_PATTERN_CHARS = 10_000


def _linear(pattern: str, *, ignore_case: bool = False) -> Any:
    """``pattern`` compiled by RE2; ValueError in the original's words where it cannot be (too
    long, or a construct RE2 refuses: back-references, look-around)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"Invalid regex pattern: longer than {MAX_PATTERN_CHARS} characters")
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    options.max_mem = 1 << 20
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "refused"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(f"Invalid regex pattern: {pattern} ({reason})") from None


def find_context_line(content: str, search_text: str, fuzzy: bool = False) -> int:
    """The original's ``find_context_line``: the first line holding ``search_text``, or, fuzzy,
    its words in order with anything between (case-insensitive), matched by RE2; -1 if none."""
    lines = content.split("\n")
    if not fuzzy:
        return next((i for i, line in enumerate(lines) if search_text in line), -1)
    regex = _linear(".*".join(map(_escape, search_text.strip().split())), ignore_case=True)
    return next((i for i, line in enumerate(lines) if regex.search(line)), -1)


def _escape(word: str) -> str:
    """``word`` matched literally: ASCII punctuation escaped (RE2 refuses an escaped letter)."""
    return "".join("\\" + c if c in _PUNCTUATION else c for c in word)


_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

# The content cache, as the original's CONTENT_HISTORY but per working directory: a path cached
# in one directory never answers for another.
CONTENT_HISTORY: dict[tuple[str, str], str] = {}


def _cached(root: safefs.Root, path: str) -> str:
    """The original's ``get_last_content``, else the file read (and cached)."""
    key = (_workspace.directory(), path)
    content = CONTENT_HISTORY.get(key)
    if content is None:
        with root.open(path, "r") as f:
            content = f.read()
        CONTENT_HISTORY[key] = content
    return content


def _remember(path: str, content: str) -> None:
    CONTENT_HISTORY[(_workspace.directory(), path)] = content


def _write(root: safefs.Root, path: str, content: str) -> None:
    with root.open(path, "w") as f:
        f.write(content)


def _backup(root: safefs.Root, path: str) -> str:
    if os.environ.get("EDITOR_DISABLE_BACKUP", "").lower() == "true":
        return "Disabled"
    backup_path = f"{path}.bak"
    root.copy(path, backup_path, preserve_metadata=True)  # shutil.copy2's
    return backup_path


def _tree(root: safefs.Root, path: str, max_depth: int) -> Tree:
    """The original's ``format_directory_tree``, listed through the root (shown on the console only)."""
    tree = Tree(f"📁 {os.path.basename(path)}")

    def add(current: str, node: Tree, depth: int = 0) -> None:
        if depth > max_depth:
            return
        try:
            for item in sorted(root.listdir(current)):
                if item.startswith("."):
                    continue
                full = os.path.join(current, item)
                if root.is_dir(full):
                    add(full, node.add(f"📁 {item}"), depth + 1)
                else:
                    node.add(f"📄 {item}")
        except Exception as e:
            node.add(f"⚠️ Error: {e!s}")

    add(path, tree)
    return tree


def _preview(
    console: Any,
    command: str,
    path: str,
    file_text: str | None,
    old: str | None,
    new: str | None,
    insert_line: Any,
) -> None:
    """The change shown before the consent prompt (raising the original's missing-argument errors)."""
    language = detect_language(path)
    if command == "create":
        if not file_text:
            raise ValueError("file_text is required for create command")
        console.print(
            Panel(
                Syntax(file_text, language, theme="monokai", line_numbers=True),
                title=f"[bold green]New File Content ({os.path.basename(path)})",
                border_style="green",
                box=box.DOUBLE,
            )
        )
    elif command in {"str_replace", "pattern_replace"}:
        if not old or new is None:
            name = "old_str" if command == "str_replace" else "pattern"
            raise ValueError(f"Both {name} and new_str are required for {command} command")
        grid = Table.grid(expand=True)
        grid.add_column("Original")
        grid.add_column("New")
        grid.add_row(Syntax(str(old), language, word_wrap=True), Syntax(str(new), language, word_wrap=True))
        console.print(Panel(grid, title=f"[bold blue]🔄 Text Replacement Preview ({os.path.basename(path)})"))
    else:  # insert
        if not new or insert_line is None:
            raise ValueError("Both new_str and insert_line are required for insert command")
        table = Table(title="Insertion Preview", show_header=True)
        table.add_column("Target Line", style="yellow")
        table.add_column("Content to Insert", style="green")
        table.add_row(str(insert_line), Syntax(new, language, theme="monokai", line_numbers=True))
        console.print(table)


def _consent(console: Any, command: str) -> dict[str, Any] | None:
    """None when the user agrees; else the original's cancellation result."""
    answer = get_user_input(
        f"<yellow><bold>Do you want to proceed with the {command} operation?</bold> [y/*]</yellow>"
    )
    if answer.lower().strip() == "y":
        return None
    reason = answer if answer.strip() != "n" else get_user_input("Please provide a reason for cancellation:")
    message = f"Operation cancelled by the user. Reason: {reason}"
    console.print(
        Panel(
            Text(message, style="bold blue"),
            title="[bold blue]Operation Cancelled",
            box=box.HEAVY,
            expand=False,
        )
    )
    return {"status": "error", "content": [{"text": message}]}


def _editor(
    command: str,
    path: str,
    file_text: str | None = None,
    insert_line: str | int | None = None,
    new_str: str | None = None,
    old_str: str | None = None,
    pattern: str | None = None,
    search_text: str | None = None,
    fuzzy: bool = False,
    view_range: list[int] | None = None,
) -> dict[str, Any]:
    deprecation = getattr(_upstream, "_DEPRECATION_MESSAGE", None)
    if deprecation:
        logger.warning("DEPRECATION WARNING: %s", deprecation)
    console = _workspace.console(console_util)
    try:
        path = _workspace.spelled(path)
        if not command:
            raise ValueError("Command is required")
        if command not in COMMANDS:
            raise ValueError(f"Unknown command: {command}. Valid commands: {', '.join(COMMANDS)}")
        max_depth = int(os.getenv("EDITOR_DIR_TREE_MAX_DEPTH", "2"))
        if command in MODIFYING and not _workspace.bypass_consent():
            old = old_str if command == "str_replace" else pattern
            _preview(console, command, path, file_text, old, new_str, insert_line)
            cancelled = _consent(console, command)
            if cancelled is not None:
                return cancelled
        root = _workspace.root()
        with _workspace.refusing(path):
            text = _COMMANDS[command](
                root,
                console,
                path,
                file_text=file_text,
                insert_line=insert_line,
                new_str=new_str,
                old_str=old_str,
                pattern=pattern,
                search_text=search_text,
                fuzzy=fuzzy,
                view_range=view_range,
                max_depth=max_depth,
            )
        if isinstance(text, dict):
            return text
        return {"status": "success", "content": [{"text": text}]}
    except Exception as e:
        console.print(format_output("❌ Error", str(e), "red"))
        return {"status": "error", "content": [{"text": f"Error: {e!s}"}]}


def _view(
    root: safefs.Root, console: Any, path: str, *, view_range: list[int] | None, max_depth: int, **_: Any
) -> str:
    if root.is_file(path):
        content = _cached(root, path)
        if view_range:
            lines = content.split("\n")
            start = max(0, view_range[0] - 1)
            end = min(len(lines), view_range[1])
            content = "\n".join(lines[start:end])
        language = detect_language(path)
        console.print(
            format_output(f"📄 File: {os.path.basename(path)}", format_code(content, language), "green")
        )
        return f"File content displayed in console.\nContent: {content}"
    if root.is_dir(path):
        console.print(format_output(f"📁 Directory: {path}", _tree(root, path, max_depth), "blue"))
        return f"Directory structure displayed in console.\nDirectory tree: {path}"
    raise ValueError(f"Path {path} does not exist")


def _create(root: safefs.Root, console: Any, path: str, *, file_text: str | None, **_: Any) -> str:
    if not file_text:
        raise ValueError("file_text is required for create command")
    parent = os.path.dirname(path)
    if not parent:
        # os.makedirs("", exist_ok=True), as the original calls it for a bare file name.
        raise FileNotFoundError(2, os.strerror(2), "")
    root.mkdir(parent, parents=True, exist_ok=True)
    _write(root, path, file_text)
    _remember(path, file_text)
    return f"File {path} created successfully"


def _str_replace(
    root: safefs.Root, console: Any, path: str, *, old_str: str | None, new_str: str | None, **_: Any
) -> str | dict[str, Any]:
    if not old_str or new_str is None:
        raise ValueError("Both old_str and new_str are required for str_replace command")
    content = _cached(root, path)
    count = content.count(old_str)
    if count == 0:
        return {
            "status": "error",
            "content": [{"text": f"Note: old_str not found in {path}. Current content:\n{content}"}],
        }
    new_content = content.replace(old_str, new_str)
    _backup(root, path)
    _write(root, path, new_content)
    _remember(path, new_content)
    return (
        f"Text replacement complete and details displayed in console.\nFile: {path}\n"
        f"Replaced {count} occurrence{'s' if count > 1 else ''}\n"
        f"Old string: {old_str}\nNew string: {new_str}\n"
    )


def _pattern_replace(
    root: safefs.Root, console: Any, path: str, *, pattern: str | None, new_str: str | None, **_: Any
) -> str | dict[str, Any]:
    if not pattern or new_str is None:
        raise ValueError("Both pattern and new_str are required for pattern_replace command")
    if not validate_pattern(pattern):
        raise ValueError(f"Invalid regex pattern: {pattern}")
    regex = _linear(pattern)
    content = _cached(root, path)
    matches = list(regex.finditer(content))
    if not matches:
        return {
            "status": "success",
            "content": [
                {"text": f"Note: pattern '{pattern}' not found in {path}. Current content:{content}"}
            ],
        }
    new_content = regex.sub(new_str, content)
    backup_path = _backup(root, path)
    _write(root, path, new_content)
    _remember(path, new_content)
    info = Table(show_header=False, border_style="blue")
    info.add_column("", style="cyan")
    info.add_column("", style="white")
    for label, value in (
        ("Pattern:", pattern),
        ("Replacement:", new_str),
        ("Total Matches:", str(len(matches))),
    ):
        info.add_row(label, value)
    info.add_row("File:", path)
    info.add_row("Backup:", backup_path)
    summary = "ℹ️ Pattern Replace Summary"  # noqa: RUF001 - the original's title
    console.print(Panel(info, title=summary, border_style="blue"))
    return (
        f"Pattern replacement complete and details displayed in console.\nFile: {path}\n"
        f"Pattern: {pattern}\nNew string: {new_str}\nMatches: {len(matches)}"
    )


def _insert(
    root: safefs.Root,
    console: Any,
    path: str,
    *,
    new_str: str | None,
    insert_line: str | int | None,
    fuzzy: bool,
    **_: Any,
) -> str | dict[str, Any]:
    if not new_str or insert_line is None:
        raise ValueError("Both new_str and insert_line are required for insert command")
    content = _cached(root, path)
    lines = content.split("\n")
    line: int
    if isinstance(insert_line, str):
        line_num = find_context_line(content, insert_line, fuzzy)
        if line_num == -1:
            text = (
                f"Note: Could not find insertion point '{insert_line}' in {path}. Current content:\n{content}"
            )
            return {"status": "success", "content": [{"text": text}]}
        line = line_num
    else:
        line = insert_line
    if line < 0 or line > len(lines):
        raise ValueError(f"insert_line {line} is out of range")
    insert_line = line
    _backup(root, path)
    lines.insert(line, new_str)
    new_content = "\n".join(lines)
    _write(root, path, new_content)
    _remember(path, new_content)
    console.print(
        format_output(
            "➕ Text Insertion Complete",  # noqa: RUF001 - the original's title
            f"File: {path}\nInserted at line {insert_line}\n",
            "green",
        )
    )
    return (
        f"Text insertion complete and details displayed in console.\nFile: {path}\n"
        f"Inserted at line {insert_line}"
    )


def _find_line(
    root: safefs.Root, console: Any, path: str, *, search_text: str | None, fuzzy: bool, **_: Any
) -> str | dict[str, Any]:
    if not search_text:
        raise ValueError("search_text is required for find_line command")
    content = _cached(root, path)
    line_num = find_context_line(content, search_text, fuzzy)
    if line_num == -1:
        text = (
            f"Note: Could not find '{search_text}' in {path} while using editor tool, "
            f"to correct next step, here's the current content of file:\n{content}\n"
        )
        return {"status": "success", "content": [{"text": text}]}
    console.print(format_output("🔍 Line Found", f"File: {path}\nFound at line {line_num + 1}\n", "green"))
    return f"Line found in file.\nFile: {path}\nLine number: {line_num + 1}"


def _undo_edit(root: safefs.Root, console: Any, path: str, **_: Any) -> str:
    backup_path = f"{path}.bak"
    if not root.exists(backup_path):
        raise ValueError(f"No backup file found for {path}")
    root.copy(backup_path, path, preserve_metadata=True)
    root.remove(backup_path)
    with root.open(path, "r") as f:
        _remember(path, f.read())
    console.print(format_output("↩️ Undo Complete", f"Successfully reverted changes to {path}", "yellow"))
    return f"Successfully reverted changes to {path}"


_COMMANDS: dict[str, Any] = {
    "view": _view,
    "create": _create,
    "str_replace": _str_replace,
    "pattern_replace": _pattern_replace,
    "insert": _insert,
    "find_line": _find_line,
    "undo_edit": _undo_edit,
}

# The installed original's docstring and signature: strands builds the tool's description and
# input schema from them, so the model sees exactly what it sees there.
_original_function = _upstream.editor.__wrapped__  # functools.update_wrapper's link to the function
_editor.__name__ = _editor.__qualname__ = "editor"
_editor.__doc__ = _original_function.__doc__
_editor.__annotations__ = dict(_original_function.__annotations__)
_editor.__signature__ = inspect.signature(_original_function)  # type: ignore[attr-defined]
if hasattr(_original_function, "__deprecated__"):  # the marker type checkers read, as the original's
    _editor.__deprecated__ = _original_function.__deprecated__  # type: ignore[attr-defined]
editor: Any = tool(_editor)
