"""What a tool call would really touch: its paths, relative to the workspace root, as given and
canonically.

Which arguments of a call are paths, each tool declares itself (``Tool.path_fields``, read by
``Tool.target_paths``); :func:`paths_of` asks the tools, or, where a caller has none at hand, the
built-in file tools' own declarations. Where a path leads is for safefs to say, never a string:
``Root.relative`` spells it relative to the root by the rule every operation applies (an
absolute path is accepted under any of ``Root.anchors``, the root as opened or its realpath), and
``Root.resolve`` follows links as the operation will, with its link budget and symlinks mode,
appending a tail that does not exist yet as a write creating parents would. So a rule cannot be
walked around by spelling: ``innocent.txt`` may be a link to ``secrets/db.txt``, and a write to
``docs/alias -> ../secrets/new/x`` (a dangling link into a missing directory) is judged as
``secrets/new/x``, whichever absolute spelling of the workspace the path starts with.

This is a judgement made before the call runs, not a confinement boundary: safefs is the
boundary, and the tree may change between the check and the call.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import safefs
from agent.messages import ToolCall
from agent.tools.base import Tool, declared_paths
from agent.tools.edit import EditTool
from agent.tools.glob import GlobTool
from agent.tools.grep import GrepTool
from agent.tools.list import ListTool
from agent.tools.read import ReadTool
from agent.tools.write import WriteTool

# Tools whose path names a directory whose entries the tool reports.
DIRECTORY_TOOLS = frozenset({"list", "glob", "grep"})
# Tools that change the file their path names.
WRITING_TOOLS = frozenset({"write", "edit"})
# Anthropic's text editor tool (``--tools anthropic``) reads or writes by its ``command``.
TEXT_EDITOR_TOOL = "str_replace_based_edit_tool"
TEXT_EDITOR_READS = frozenset({"view"})


def writes(call: ToolCall) -> bool:
    """Whether ``call`` may change the file its path names. A text editor call writes unless it
    is plainly a ``view``: a command that is missing or unknown is judged as a write."""
    if call.name == TEXT_EDITOR_TOOL:
        command = call.input.get("command") if isinstance(call.input, dict) else None
        return command not in TEXT_EDITOR_READS
    return call.name in WRITING_TOOLS


# Asked for their declarations when the caller has no tool objects: a policy built on its own.
_FILE_TOOLS: dict[str, type[Tool]] = {
    tool.name: tool for tool in (ReadTool, WriteTool, EditTool, ListTool, GlobTool, GrepTool)
}

PathsOf = Callable[[ToolCall], list[str]]


def paths_of(tools: Iterable[Tool] | None = None) -> PathsOf:
    """A call's paths as given, as its tool declares them (``Tool.target_paths``). Without
    ``tools``, the built-in file tools' declarations. A call of any other tool names no path."""
    if tools is None:
        return lambda call: (
            declared_paths(_FILE_TOOLS[call.name].path_fields, call.input) if call.name in _FILE_TOOLS else []
        )
    by_name = {tool.name: tool for tool in tools}

    def paths(call: ToolCall) -> list[str]:
        tool = by_name.get(call.name)
        return [] if tool is None else tool.target_paths(call.input)

    return paths


@dataclass(frozen=True)
class Target:
    """One path of a call: ``relative`` is the path as given, spelled relative to the root;
    ``canonical`` is what the operation will reach. A rule judges both."""

    relative: str
    canonical: str

    def candidates(self) -> tuple[str, ...]:
        if self.relative == self.canonical:
            return (self.canonical,)
        return (self.relative, self.canonical)


# Errors with which the operation itself refuses the path, whatever a rule would say.
_REFUSED = (errno.ELOOP, errno.ENOTDIR, errno.ENAMETOOLONG)


def relative(root: safefs.Root, path: str) -> str | None:
    """``path`` spelled relative to the root as every operation reads it (``Root.relative``):
    None when it is absolute and lies under none of the root's spellings, or is malformed."""
    if not path or "\0" in path:
        return None
    try:
        rel: str = root.relative(path)
    except (safefs.PathEscapeError, ValueError):
        return None
    return rel


def target(root: safefs.Root | None, path: str) -> Target | None:
    """Where ``path`` lies in the workspace of ``root``, or None when the operation will refuse
    it (it escapes the root, loops, or is malformed). Without a root there is only the path as
    given. When the canonical path cannot be worked out for another reason (a directory that
    cannot be searched, say), it is the path relative to the root, so a rule still judges what
    was asked rather than nothing."""
    if root is None:
        return Target(path, path) if path and "\0" not in path else None
    rel = relative(root, path)
    if rel is None:
        return None
    try:
        return Target(rel, root.resolve(path))
    except (safefs.PathEscapeError, ValueError):
        return None
    except OSError as exc:
        if exc.errno in _REFUSED:
            return None
        return Target(rel, rel)


def canonical_path(root: safefs.Root, path: str) -> str | None:
    """The canonical root-relative path ``path`` designates (see :func:`target`), or None when
    the operation will refuse it."""
    found = target(root, path)
    return None if found is None else found.canonical
