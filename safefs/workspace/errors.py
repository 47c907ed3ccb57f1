"""Failures of workspace operations, in words a model may see.

Messages are built from the error kind and the caller's own path string, never from
``str(exc)``: so no name the library or the kernel carried, such as the host path of the
workspace, can reach the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from safefs import ESCAPE_MESSAGE, NotRegularFileError, PathEscapeError

PATH = "\0"  # where a template names a path: no path holds NUL (one that does is refused)


class WorkspaceError(Exception):
    """A refused or failed operation; ``str()`` is safe to show a model.

    An error about paths keeps them as data: :attr:`paths` (as the operation was given them)
    and the :attr:`template` they go into, so a caller that was given the path in another
    spelling can show the message in that one (:meth:`spelled`) instead of patching the text."""

    def __init__(self, message: str, *, paths: Sequence[str] = (), template: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.paths = tuple(paths)
        self.template = template

    @classmethod
    def naming(cls, template: str, *paths: str) -> WorkspaceError:
        """An error whose ``template`` names ``paths``, one at each :data:`PATH` in turn
        (``WorkspaceError.naming(f"not valid UTF-8: {PATH}", path)``), each shown quoted."""
        if template.count(PATH) != len(paths):
            raise ValueError("the template must name each path once")
        return cls(_fill(template, [repr(p) for p in paths]), paths=paths, template=template)

    def spelled(self, spelling: Callable[[str], str | None]) -> str:
        """The message with each path that ``spelling`` gives another spelling shown as that,
        quoted as typed (a client passes it back as it is); the others as in ``str()``."""
        if not self.template:
            return self.message
        shown = []
        for path in self.paths:
            other = spelling(path)
            shown.append(repr(path) if other is None else quoted(other))
        return _fill(self.template, shown)

    def __str__(self) -> str:
        return self.message


def quoted(path: str) -> str:
    """``path`` in quotes as typed: repr would double the backslash of an escaped byte
    (``caf\\xe9.txt``), which a client could not pass back."""
    return f"'{path}'" if path.isprintable() and "'" not in path else repr(path)


def _fill(template: str, shown: Sequence[str]) -> str:
    pieces = template.split(PATH)
    return pieces[0] + "".join(s + piece for s, piece in zip(shown, pieces[1:], strict=True))


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
    """:func:`describe_os_error`'s message, with ``paths`` kept as data."""
    if isinstance(exc, PathEscapeError):
        reason = ESCAPE_MESSAGE
    elif isinstance(exc, NotRegularFileError):
        reason = "not a regular file"
    else:
        reason = exc.strerror or type(exc).__name__
    return WorkspaceError.naming(f"{reason.replace(PATH, '')}: " + " -> ".join(PATH for _ in paths), *paths)


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
