"""The root the strands drop-ins work beneath, and the pieces of the originals' file handling
they share (path spelling, consent, text as ``open(path, "r")`` reads it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from os.path import expanduser
from typing import Any

import safefs
from safefs.integrations._lazy_root import LazyRoots

# The directory the tools are confined to; unset, the current directory at each call.
ROOT_VARIABLE = "SAFEFS_STRANDS_ROOT"
# The originals' own switch: "true" writes without asking (strands_tools' file_write, editor).
CONSENT_VARIABLE = "BYPASS_TOOL_CONSENT"

_roots = LazyRoots()


def directory() -> str:
    """The working directory: ``$SAFEFS_STRANDS_ROOT``, else the current directory."""
    return os.environ.get(ROOT_VARIABLE) or os.getcwd()


def root() -> safefs.Root:
    """The root on :func:`directory` (one per directory name, opened on first use and kept: a
    directory replaced under the same name afterwards is not followed). Opening it fails
    without naming its host path."""
    try:
        return _roots.on(directory())
    except OSError as exc:
        raise (type(exc)(exc.errno, exc.strerror) if exc.errno is not None else exc) from None


def close() -> None:
    """Release every root's directory fd (the next call opens it again)."""
    _roots.close()


def spelled(path: str) -> str:
    """The path as the originals take it: ``~`` expanded, nothing resolved (the root judges
    where it leads; a path under the home directory is inside only if the root holds it)."""
    return expanduser(path)


class _Discarded:
    """A console whose output nobody sees: the originals render every panel into a
    ``StringIO`` they then drop (``STRANDS_TOOL_CONSOLE_MODE`` unset), seconds for a MiB."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        pass


def console(console_util: Any) -> Any:
    """strands-agents-tools' console (``console_util.create()``) where it is shown
    (``STRANDS_TOOL_CONSOLE_MODE=enabled``); elsewhere one that renders nothing."""
    if os.getenv("STRANDS_TOOL_CONSOLE_MODE") != "enabled":
        return _Discarded()
    return console_util.create()


def bypass_consent() -> bool:
    """Whether the originals' consent prompt is skipped (``BYPASS_TOOL_CONSENT=true``)."""
    return os.environ.get(CONSENT_VARIABLE, "").lower() == "true"


@contextmanager
def refusing(path: str) -> Iterator[None]:
    """A :class:`safefs.PathEscapeError` of any step (a parent made, a backup copied) names
    ``path``, the path as the model gave it."""
    try:
        yield
    except safefs.PathEscapeError:
        raise safefs.PathEscapeError(path) from None
