"""Failures of workspace operations, in words a model may see.

Messages are built from the error kind and the caller's own path string, never from
``str(exc)``: so no name the library or the kernel carried, such as the host path of the
workspace, can reach the model.
"""

from __future__ import annotations

from safefs import ESCAPE_MESSAGE, NotRegularFileError, PathEscapeError


class WorkspaceError(Exception):
    """A refused or failed operation; ``str()`` is safe to show a model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def describe_os_error(exc: OSError, *paths: str) -> str:
    """``"<reason>: '<path>'"`` for an OSError met while working on ``paths`` (as given)."""
    shown = " -> ".join(repr(p) for p in paths)
    if isinstance(exc, PathEscapeError):
        return f"{ESCAPE_MESSAGE}: {shown}"
    if isinstance(exc, NotRegularFileError):
        return f"not a regular file: {shown}"
    reason = exc.strerror or type(exc).__name__
    return f"{reason}: {shown}"


def os_failure(exc: OSError, *paths: str) -> WorkspaceError:
    return WorkspaceError(describe_os_error(exc, *paths))


def check_path(path: str) -> str | None:
    """A problem with a path string before any lookup, or None."""
    if not path:
        return "path must not be empty"
    if "\0" in path:
        return "path must not contain a NUL character"
    try:
        # An undecodable byte of a name is spelled as os spells it (U+DC80-U+DCFF) and
        # round-trips; any other lone surrogate (from a JSON escape) names no file.
        path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return "path is not encodable as UTF-8 (it holds a lone surrogate)"
    return None


def require_path(path: str) -> None:
    problem = check_path(path)
    if problem is not None:
        raise WorkspaceError(f"invalid path: {problem}")
