"""Archive extraction that cannot leave its destination: tar and zip, every member created
through a :class:`safefs.Root`.

:func:`extractall` keeps tarfile's extraction filters (``"data"``, the default, ``"tar"`` and
``"fully_trusted"``, or a filter function) and zipfile's rebasing of names, so an archive is
unpacked as the standard library would unpack it; what differs is that no member, link, planted
symlink or concurrent swap can put anything outside the destination. Members are streamed, 64 KiB
at a time; each file is written under a temporary name and renamed into place once complete.
Differences from the standard library: docs/archive.md.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from safefs import Root

from .members import CHUNK, MemberWriter
from .tar import FILTERS, FilterFunction, extract_tar, filter_function
from .zip import extract_zip

__all__ = ["CHUNK", "FILTERS", "FilterFunction", "extractall"]

Archive = tarfile.TarFile | zipfile.ZipFile | str | os.PathLike[str]
Destination = Root | str | os.PathLike[str]


def extractall(archive: Archive, destination: Destination, *, filter: str | FilterFunction = "data") -> None:
    """Extract every member of ``archive`` beneath ``destination``.

    ``archive`` is an open ``tarfile.TarFile`` or ``zipfile.ZipFile`` (left open), or the path of
    either (opened and closed here; a tar may be compressed). ``destination`` is a
    :class:`safefs.Root` (left open) or a directory path, created when missing. ``filter`` is a
    tarfile filter name or function; a zip takes the names only, which change nothing there.

    Raises what tarfile raises for a member its filter refuses (``tarfile.FilterError``), the
    same errors for a member the Root refuses as leading out (``OutsideDestinationError``,
    ``LinkOutsideDestinationError``), and ``OSError`` naming the member otherwise. Members
    before the failing one are complete; the failing one leaves nothing behind.
    """
    chosen = filter_function(filter)
    with _opened(archive) as opened:  # before the destination is made: a bad path makes nothing
        if isinstance(destination, Root):
            _extract_open(opened, destination, destination.path, chosen, filter)
            return
        os.makedirs(destination, exist_ok=True)
        with Root(destination) as root:
            _extract_open(opened, root, destination, chosen, filter)


@contextmanager
def _opened(archive: Archive) -> Iterator[tarfile.TarFile | zipfile.ZipFile]:
    """The archive open: as given, or opened from its path (and closed again)."""
    if isinstance(archive, tarfile.TarFile | zipfile.ZipFile):
        yield archive
    elif zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zipped:
            yield zipped
    else:
        with tarfile.open(archive) as tar:
            yield tar


def _extract_open(
    archive: tarfile.TarFile | zipfile.ZipFile,
    root: Root,
    shown: Any,
    chosen: FilterFunction,
    filter: str | FilterFunction,
) -> None:
    with MemberWriter(root) as writer:
        if isinstance(archive, zipfile.ZipFile):
            if not isinstance(filter, str):
                raise TypeError("a zip archive takes a filter name, not a filter function")
            extract_zip(archive, writer)
        else:
            extract_tar(archive, writer, shown, chosen)
