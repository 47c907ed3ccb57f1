"""safefs: race-free confinement of file operations to a workspace directory.

Threat model: docs/threat-model.md.

The workspace is held as a directory file descriptor and every path is resolved beneath it: by
one ``openat2(RESOLVE_BENEATH)`` call on Linux, or by a component-by-component
``openat(O_NOFOLLOW)`` walk elsewhere. No path string is re-resolved after a check.

Public: :class:`Root`, :class:`Path` (a pathlib path beneath a Root, :class:`PathInfo` its
``info``), :class:`DirEntry` and the errors (also as :mod:`safefs.errors`); the
types of ``Root(resolver=, symlinks=)`` and ``Root.resolver`` (:data:`ResolverName`,
:data:`SymlinkMode`, :data:`BackendName`); :func:`capabilities` (what this platform gives
safefs); :mod:`safefs.testing` (the attack harness: a renaming attacker process and counted
races). Every module whose name starts with ``_`` is private, the :mod:`safefs._resolve` layer
included.
"""

from safefs._capabilities import Capabilities, capabilities
from safefs._path import Path, PathInfo
from safefs._resolve import BackendName, ResolverName, SymlinkMode
from safefs._root import Root
from safefs._tree import DirEntry
from safefs.errors import (
    ESCAPE_MESSAGE,
    NotRegularFileError,
    PathEscapeError,
    ResolverUnavailableError,
)

__all__ = [
    "ESCAPE_MESSAGE",
    "BackendName",
    "Capabilities",
    "DirEntry",
    "NotRegularFileError",
    "Path",
    "PathEscapeError",
    "PathInfo",
    "ResolverName",
    "ResolverUnavailableError",
    "Root",
    "SymlinkMode",
    "capabilities",
]
__version__ = "0.3.0"
