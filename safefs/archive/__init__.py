"""Archive extraction that cannot leave its destination: tar and zip, every member created
through a :class:`safefs.Root`.

:func:`extractall` keeps tarfile's extraction filters (``"data"``, the default, ``"tar"`` and
``"fully_trusted"``, or a filter function) and zipfile's rebasing of names, so an archive is
unpacked as the standard library would unpack it; what differs is that no member, link, planted
symlink or concurrent swap can put anything outside the destination, that a failing member never
removes what was there, and that an extraction is bounded (:class:`Limits`). Members are
streamed, 64 KiB at a time; each file is written under a temporary name and renamed into place
once complete. Differences from the standard library: docs/archive.md.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from safefs import Root

from .limits import Budget, LimitExceeded, Limits
from .members import CHUNK, MemberWriter
from .opening import NotAnArchive, drain, open_archive
from .tar import FILTERS, DamagedArchive, ErrorHandler, FilterFunction, extract_tar, filter_function, list_tar
from .zip import OverlappingEntries, check_layout, extract_zip

__all__ = [
    "CHUNK",
    "FILTERS",
    "DamagedArchive",
    "ErrorHandler",
    "FilterFunction",
    "LimitExceeded",
    "Limits",
    "NotAnArchive",
    "OverlappingEntries",
    "extractall",
    "list_members",
]

DEFAULT_LIMITS = Limits()

Archive = tarfile.TarFile | zipfile.ZipFile | str | os.PathLike[str]
Destination = Root | str | os.PathLike[str]


def extractall(
    archive: Archive,
    destination: Destination,
    *,
    filter: str | FilterFunction = "data",
    limits: Limits = DEFAULT_LIMITS,
    on_error: ErrorHandler | None = None,
    strip_components: int = 0,
    keep_old_files: bool = False,
    on_member: Callable[[str], None] | None = None,
) -> None:
    """Extract every member of ``archive`` beneath ``destination``.

    ``archive`` is an open ``tarfile.TarFile`` or ``zipfile.ZipFile`` (left open), or the path of
    either (opened and closed here; tar is recognised first, a tar may be compressed and its
    stream is then read to its end so that its check is verified). ``destination`` is a
    :class:`safefs.Root` (left open) or a directory path, created when missing. ``filter`` is a
    tarfile filter name or function; a zip takes the names only, which change nothing there.
    ``limits`` bounds the bytes written, the members and the bytes per archive byte
    (:class:`LimitExceeded`); ``strip_components`` drops leading name components as
    ``tar --strip-components``; ``keep_old_files`` refuses to replace an existing file or link
    (FileExistsError) as ``tar --keep-old-files``; ``on_member`` is called with each member's
    name before it is made.

    Without ``on_error``, raises what tarfile raises for a member its filter refuses
    (``tarfile.FilterError``), the same errors for a member the Root refuses as leading out
    (``OutsideDestinationError``, ``LinkOutsideDestinationError``), and ``OSError`` naming the
    member otherwise; members before the failing one are complete, the failing one leaves
    nothing behind and removes nothing. With ``on_error(name, exception)``, such a member is
    reported and skipped. A damaged archive (a bad header, a corrupt stream) and a limit
    passed always raise.
    """
    chosen = filter_function(filter)
    with _opened(archive) as (opened, size):  # before the destination is made: a bad path makes nothing
        budget = Budget(limits, size)
        if isinstance(opened, zipfile.ZipFile) and not isinstance(filter, str):
            raise TypeError("a zip archive takes a filter name, not a filter function")
        if isinstance(destination, Root):
            _extract_open(
                opened,
                destination,
                destination.path,
                chosen,
                budget,
                keep_old_files,
                on_error,
                strip_components,
                on_member,
            )
            return
        _make_destination(destination)
        with Root(destination) as root:
            _extract_open(
                opened,
                root,
                destination,
                chosen,
                budget,
                keep_old_files,
                on_error,
                strip_components,
                on_member,
            )


def list_members(archive: Archive, *, limits: Limits = DEFAULT_LIMITS) -> Iterator[str]:
    """The names of ``archive``'s members, in order, read with the checks of an extraction."""
    with _opened(archive) as (opened, size):
        budget = Budget(limits, size)
        if isinstance(opened, zipfile.ZipFile):
            check_layout(opened, budget)
            for info in opened.infolist():
                yield info.filename
        else:
            yield from list_tar(opened, budget)
            drain(opened, budget)


def _make_destination(destination: str | os.PathLike[str]) -> None:
    try:
        os.makedirs(destination, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(20, "Not a directory", os.fspath(destination)) from None


@contextmanager
def _opened(archive: Archive) -> Iterator[tuple[tarfile.TarFile | zipfile.ZipFile, int | None]]:
    """The archive open and its size as stored (None when unknown): as given, or opened from its
    path (and closed again)."""
    if isinstance(archive, tarfile.TarFile | zipfile.ZipFile):
        yield archive, None
        return
    opened, size = open_archive(archive)
    with opened:
        yield opened, size


def _extract_open(
    archive: tarfile.TarFile | zipfile.ZipFile,
    root: Root,
    shown: Any,
    chosen: FilterFunction,
    budget: Budget,
    keep_old: bool,
    on_error: ErrorHandler | None,
    strip: int,
    on_member: Callable[[str], None] | None,
) -> None:
    with MemberWriter(root, budget, keep_old=keep_old) as writer:
        if isinstance(archive, zipfile.ZipFile):
            extract_zip(archive, writer, on_error=on_error, strip=strip, on_member=on_member)
        else:
            extract_tar(archive, writer, shown, chosen, on_error=on_error, strip=strip, on_member=on_member)
            drain(archive, budget)
