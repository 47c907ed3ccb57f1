"""Tar extraction through a Root, with tarfile's own extraction filters.

Each member goes first through the filter tarfile itself would apply (``tarfile.data_filter``,
``tar_filter`` or ``fully_trusted_filter``, taken from the installed ``tarfile`` at run time, or
a filter function of the caller's), so names, modes, owners and link targets are judged and
cleaned exactly as the running Python judges them, with the same errors. The filter's checks are
path strings, though, and its verdict can be wrong (CVE-2025-4517) or stale by the time a file is
made: what keeps every member inside is that it is then created through the Root.
"""

from __future__ import annotations

import grp
import os
import pwd
import tarfile
from collections.abc import Callable
from typing import Any

from safefs import PathEscapeError

from .members import Attributes, MemberWriter

FilterFunction = Callable[[tarfile.TarInfo, str], "tarfile.TarInfo | None"]

FILTERS: dict[str, FilterFunction] = {
    "data": tarfile.data_filter,
    "tar": tarfile.tar_filter,
    "fully_trusted": tarfile.fully_trusted_filter,
}

_SPECIAL = (tarfile.FIFOTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE)


def filter_function(filter: str | FilterFunction) -> FilterFunction:
    """The filter for a name tarfile knows (ValueError for another name), or the caller's own
    function (``(TarInfo, destination) -> TarInfo | None``)."""
    if isinstance(filter, str):
        try:
            return FILTERS[filter]
        except KeyError:
            raise ValueError(f"filter {filter!r} not found (choose one of {sorted(FILTERS)})") from None
    if callable(filter):
        return filter
    raise TypeError(f"filter must be a filter name or a function, not {type(filter).__name__}")


def member_path(name: str) -> str:
    """The member's name as a path for the Root: ``/``-separated, without empty or ``.``
    components or a trailing slash (``..`` and a leading ``/`` are kept for the Root to judge)."""
    parts = [p for p in name.split("/") if p and p != "."]
    path = "/".join(parts) or "."
    return "/" + path if name.startswith("/") and parts else path


def extract_tar(
    tar: tarfile.TarFile, writer: MemberWriter, destination: Any, filter: str | FilterFunction
) -> None:
    """Extract every member of ``tar`` (read in order, so a stream works) through ``writer``.
    ``destination`` is what the filter is shown as the destination path."""
    apply = filter_function(filter)
    directories: list[tarfile.TarInfo] = []
    for member in tar:
        try:
            tarinfo = apply(member, destination)
        except (OSError, tarfile.FilterError) as exc:
            _fatal(tar, exc)
            continue  # unlike tarfile at errorlevel 0, a refused member is skipped, never unfiltered
        except tarfile.ExtractError as exc:
            _nonfatal(tar, exc)
            continue
        if tarinfo is None:
            continue
        try:
            _extract_one(tar, writer, tarinfo, destination, apply)
        except (OSError, tarfile.FilterError) as exc:
            _fatal(tar, exc)
        except tarfile.ExtractError as exc:
            _nonfatal(tar, exc)
        if tarinfo.isdir():
            directories.append(tarinfo)
    # Modes of directories last, deepest first, as tarfile does: a read-only directory must not
    # stop its own members from being made.
    directories.sort(key=lambda t: t.name, reverse=True)
    for tarinfo in directories:
        if tarinfo.mode is not None:
            try:
                writer.set_mode(member_path(tarinfo.name), tarinfo.mode)
            except OSError as exc:
                _nonfatal(tar, tarfile.ExtractError(f"could not change mode: {exc}"))


def _fatal(tar: tarfile.TarFile, exc: BaseException) -> None:
    if tar.errorlevel > 0:
        raise exc


def _nonfatal(tar: tarfile.TarFile, exc: BaseException) -> None:
    if tar.errorlevel > 1:
        raise exc


def _extract_one(
    tar: tarfile.TarFile,
    writer: MemberWriter,
    tarinfo: tarfile.TarInfo,
    destination: Any,
    apply: FilterFunction,
) -> None:
    name = member_path(tarinfo.name)
    try:
        writer.make_parents(name)
    except PathEscapeError as exc:
        raise tarfile.OutsideDestinationError(tarinfo, name) from exc
    if tarinfo.type in _SPECIAL:
        # tarfile's "tar" and "fully_trusted" filters let FIFOs and devices through; a Root makes
        # no special files, so they are refused with the error the "data" filter gives.
        raise tarfile.SpecialFileError(tarinfo)
    try:
        if tarinfo.isdir():
            writer.make_directory(name, tarinfo.mode)
        elif tarinfo.issym():
            writer.make_symlink(name, tarinfo.linkname)
        elif tarinfo.islnk():
            _hardlink(tar, writer, tarinfo, name, destination, apply)
        else:  # regular files, and types tarfile does not know, are made as regular files
            _file(tar, writer, tarinfo, name)
    except PathEscapeError as exc:
        if tarinfo.issym() or tarinfo.islnk():
            raise tarfile.LinkOutsideDestinationError(tarinfo, tarinfo.linkname) from exc
        raise tarfile.OutsideDestinationError(tarinfo, name) from exc
    except OSError as exc:
        exc.filename = tarinfo.name  # the member as the archive names it
        raise


def _file(tar: tarfile.TarFile, writer: MemberWriter, tarinfo: tarfile.TarInfo, name: str) -> None:
    source = tar.extractfile(tarinfo)
    if source is None:
        raise tarfile.ExtractError(f"{tarinfo.name!r} has no data to extract")
    with source:
        writer.write_file(name, source, _attributes(tarinfo))


def _hardlink(
    tar: tarfile.TarFile,
    writer: MemberWriter,
    tarinfo: tarfile.TarInfo,
    name: str,
    destination: Any,
    apply: FilterFunction,
) -> None:
    """A hard link to a member already extracted (a link's name is relative to the archive's
    top). When there is none, as tarfile does, the member it names is looked up in the archive
    and its content extracted here instead; that member goes through the filter too."""
    try:
        writer.make_hardlink(name, member_path(tarinfo.linkname))
        return
    except FileNotFoundError:
        pass
    target = tar.getmember(tarinfo.linkname)  # KeyError, as tarfile: "... not found"
    filtered = apply(target.replace(name=tarinfo.name, deep=False), destination)
    if filtered is None or not filtered.isreg():
        raise tarfile.ExtractError(f"unable to resolve link {tarinfo.name!r} inside archive")
    source = tar.extractfile(target)
    if source is None:
        raise tarfile.ExtractError(f"unable to resolve link {tarinfo.name!r} inside archive")
    with source:
        writer.write_file(name, source, _attributes(filtered))


def _attributes(tarinfo: tarfile.TarInfo) -> Attributes:
    """What tarfile would set on the file: its mode, its mtime, and (only for the superuser, as
    tarfile) its owner, by name first, then by number."""
    mtime = tarinfo.mtime
    uid = gid = -1
    if os.geteuid() == 0:
        uid = _owner(tarinfo.uname, tarinfo.uid, lambda n: pwd.getpwnam(n).pw_uid)
        gid = _owner(tarinfo.gname, tarinfo.gid, lambda n: grp.getgrnam(n).gr_gid)
    return Attributes(tarinfo.mode, float(mtime) if mtime is not None else None, uid, gid)


def _owner(name: str | None, number: int | None, lookup: Callable[[str], int]) -> int:
    if name:
        try:
            return lookup(name)
        except KeyError:
            pass
    return -1 if number is None else number
