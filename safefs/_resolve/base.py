"""The resolver seam: what every backend offers a ``Root``, and the names that choose one.

Threat model: docs/threat-model.md.

A resolver turns a root-relative path into something an operation can act on without ever
re-resolving a string: an fd it opened, or a held directory fd and the final name in it
(:class:`~safefs._resolve.resolved.Resolved`). Two backends implement it:
:mod:`safefs._resolve.openat2` (Linux: the kernel resolves, one call) and
:mod:`safefs._resolve.walk` (portable: one ``openat(O_NOFOLLOW)`` per component).
"""

from __future__ import annotations

import os
from typing import Literal, Protocol, get_args

from safefs._resolve.resolved import Resolved

ResolverName = Literal["auto", "openat2", "walk"]
"""``Root(resolver=...)``: a backend by name, or ``"auto"`` (openat2 where the kernel allows it)."""

BackendName = Literal["openat2", "walk"]
"""The backend a ``Root`` uses (``Root.resolver``)."""

SymlinkMode = Literal["beneath", "none", "in_root"]
"""``Root(symlinks=...)``: follow links that stay beneath the root, refuse every link, or resolve
as if the root were ``/`` (``..`` stops at it, absolute links start from it)."""

RESOLVERS: tuple[ResolverName, ...] = get_args(ResolverName)
MODES: tuple[SymlinkMode, ...] = get_args(SymlinkMode)


class Resolver(Protocol):
    """One backend. Every method takes the root's directory fd; ``rel`` is root-relative, as
    :mod:`safefs._paths` made it (not empty, no NUL; it may end in ``/`` and hold ``.``, ``..``
    and links, which are judged physically). A path that leaves the root raises
    :class:`~safefs.errors.PathEscapeError`; other failures raise the kernel's ``OSError``."""

    @property
    def name(self) -> BackendName:
        """The backend's name, as ``Root.resolver`` reports it."""
        ...

    @property
    def mode(self) -> SymlinkMode:
        """The ``symlinks=`` mode every resolution of this resolver follows."""
        ...

    @property
    def dir_flags(self) -> int:
        """The open flags of a directory that is only looked through (see ``_sys.dir_flags``)."""
        ...

    def open(self, root_fd: int, rel: bytes, flags: int, mode: int = 0o666, *, follow: bool) -> int:
        """open(2) of ``rel`` with ``flags`` (the syscall layer adds its policy); the caller
        owns the fd. ``follow``: a trailing symlink is followed, within the one link budget.
        ``name/`` must be a directory (with O_CREAT: EISDIR once the parent is resolved)."""
        ...

    def open_read(self, root_fd: int, rel: bytes) -> int:
        """``open(rel, O_RDONLY | O_NONBLOCK)``, links followed: the read path, kept short."""
        ...

    def read_bytes(self, root_fd: int, rel: bytes) -> bytes:
        """The whole content of the regular file ``rel`` names (links followed): EISDIR for a
        directory, NotRegularFileError for anything else but a regular file. One native call
        where the extension is built (see :mod:`safefs._resolve.reading`)."""
        ...

    def read_head(self, root_fd: int, rel: bytes, size: int) -> bytes:
        """At most the first ``size`` bytes of the regular file ``rel`` (all of it when it is
        shorter), refused as ``read_bytes`` refuses; memory bounded by ``size``. One native call
        for a file shorter than ``size`` and the scratch buffer."""
        ...

    def read_heads(self, root_fd: int, rels: list[bytes], size: int) -> list[bytes | OSError]:
        """``read_head`` of each of ``rels``, in order: its bytes, or the OSError it raises
        (without a filename). Where the extension is built, a batch of files is one native
        call that releases the GIL for all of them."""
        ...

    def lookup(
        self, root_fd: int, rel: bytes, *, follow: bool, parents: bool = False, lstat: bool = False
    ) -> Resolved:
        """The directory holding the final name of ``rel``, that name, and its lstat (taken
        when ``follow`` or ``lstat``; None: it does not exist). With ``follow``, trailing
        symlinks are chased within the same budget, so the entry handed back is not a link.
        ``parents`` creates missing directories of the caller's own path. A final ``.`` or
        ``..`` is judged (an escape is reported) but not stepped into.

        Raises :class:`~safefs._resolve.resolved.DirectoryPath` when a followed link's target
        names a directory as a whole (``d/``, ``d/..``): there is no final name to act on."""
        ...

    def canonical(self, root_fd: int, rel: bytes, *, strict: bool) -> bytes:
        """The canonical root-relative path ``rel`` designates: every link followed as an
        operation follows it (one budget), ``..`` physical. A missing tail is appended as a
        write with ``parents`` would create it (a ``..`` in it takes back the name before it);
        with ``strict`` a missing component is FileNotFoundError instead."""
        ...

    def stat(self, root_fd: int, rel: bytes, *, follow: bool) -> os.stat_result:
        """``os.stat`` (``follow=False``: lstat) of what ``rel`` names, never opening it for
        reading or writing (a FIFO does not block, an unreadable file is described)."""
        ...

    def chmod(self, root_fd: int, rel: bytes, mode: int, *, follow: bool) -> None:
        """Change the mode bits of what ``rel`` names without opening it for reading or
        writing. A link itself cannot be chmodded: EOPNOTSUPP, as Linux answers."""
        ...
