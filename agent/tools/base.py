"""What every tool shares: its Anthropic tool-use schema, input validation, and error texts.

Input is validated against the schema the model was shown, by the validator ``safefs-mcp`` uses
too (:mod:`safefs.workspace.arguments`).

A bad input or a refused path is an error *result* the model sees and can act on; only a bug in a
tool raises. Error texts name the path as the model gave it and never the host's workspace path.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from safefs.workspace.arguments import argument_problem
from safefs.workspace.errors import check_path, describe_os_error
from safefs.workspace.walk import Entry, Hide


@dataclass(frozen=True)
class ToolOutput:
    content: str
    is_error: bool = False


def path_error(exc: OSError, path: str) -> ToolOutput:
    """An OSError from safefs as the model sees it: stable text and the model's own path.

    Built from the error kind and ``path`` alone, never from ``str(exc)``, so no name the
    library might have carried (such as the host workspace path) can reach the model.
    """
    return ToolOutput(describe_os_error(exc, path), is_error=True)


def declared_paths(path_fields: Mapping[str, str | None], args: Any) -> list[str]:
    """The values of ``args`` that ``path_fields`` (a tool's declaration, see :class:`Tool`)
    names as paths, each field's default standing in for it when it is left out."""
    if not isinstance(args, dict):
        return []
    paths = []
    for field, default in path_fields.items():
        value = args.get(field, default)
        if isinstance(value, str):
            paths.append(value)
    return paths


class Tool(ABC):
    """One tool the model may call. Subclasses declare ``name``, ``description``, ``input_schema``
    and implement :meth:`run`, which receives input already validated against the schema (a field
    declared integer holds an ``int``).

    ``path_fields`` names the input fields that hold workspace paths, each with the value used
    when the field is left out (None: no default). :meth:`target_paths` turns a call's input into
    the paths it touches, for a policy to judge before the call runs.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    input_schema: ClassVar[dict[str, Any]]
    path_fields: ClassVar[dict[str, str | None]] = {}
    # The one hook for paths a policy keeps from the model: the walking tools (list, glob,
    # grep) neither show nor count an entry for which it answers True, exactly as for an
    # ignored one. A policy sets it with :meth:`hide_entries`.
    hide: Hide | None = None

    def hide_entries(self, hide: Hide | None) -> None:
        self.hide = hide

    def target_paths(self, args: Any) -> list[str]:
        """The workspace paths (as the model gave them) that a call with ``args`` reads or
        changes. A tool that walks a tree names the directory it starts from."""
        return declared_paths(self.path_fields, args)

    def spec(self) -> dict[str, Any]:
        """The tool's definition in the Anthropic Messages API ``tools`` format."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def execute(self, args: Any, cancel: threading.Event | None = None) -> ToolOutput:
        try:
            problem = argument_problem(self.input_schema, args)
        except (RecursionError, ValueError, TypeError):
            return ToolOutput(f"invalid input for {self.name}: not JSON-shaped", is_error=True)
        if problem is not None:
            return ToolOutput(f"invalid input for {self.name}: {problem}", is_error=True)
        return self.run(args, cancel)

    @abstractmethod
    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        """Do the work. Expected failures are error results; raising means a bug."""


def string_schema(**fields: str) -> dict[str, Any]:
    """An object schema whose fields (name -> description) are all required strings."""
    return object_schema(
        {name: {"type": "string", "description": text} for name, text in fields.items()},
        required=list(fields),
    )


def object_schema(properties: dict[str, dict[str, Any]], *, required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def error_output(exc: Exception) -> ToolOutput:
    """A :class:`safefs.workspace.WorkspaceError` (whose text is safe to show) as a result."""
    return ToolOutput(str(exc), is_error=True)


__all__ = [
    "Entry",
    "Hide",
    "Tool",
    "ToolOutput",
    "check_path",
    "error_output",
    "object_schema",
    "path_error",
    "string_schema",
]
