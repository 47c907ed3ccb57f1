"""Tar extraction through a Root, with tarfile's own extraction filters.

Each member goes first through the filter tarfile itself would apply (``tarfile.data_filter``,
``tar_filter`` or ``fully_trusted_filter``, taken from the installed ``tarfile`` at run time, or
a filter function of the caller's), so names, modes, owners and link targets are judged and
cleaned exactly as the running Python judges them, with the same errors. The filter's checks are
path strings, though, and its verdict can be wrong (CVE-2025-4517) or stale by the time a file is
made: what keeps every member inside is that it is then created through the Root.

The member loop is this module's own, not ``TarFile.__iter__``: a header whose size is negative
or that leads back to an earlier offset (CVE-2025-8194) ends the archive with an error instead of
looping; members are not kept (tarfile keeps every header it reads), only the last regular file
of each name, for a hard link whose target is not on disk.
"""

from __future__ import annotations

import grp
import gzip
import lzma
import os
import pwd
import tarfile
import zlib
from collections.abc import Callable
from typing import Any, cast

from safefs import PathEscapeError

from .limits import Budget, LimitExceeded
from .members import Attributes, BadMember, MemberWriter, Sparse

FilterFunction = Callable[[tarfile.TarInfo, str], "tarfile.TarInfo | None"]
ErrorHandler = Callable[[str, BaseException], None]

FILTERS: dict[str, FilterFunction] = {
    "data": tarfile.data_filter,
    "tar": tarfile.tar_filter,
    "fully_trusted": tarfile.fully_trusted_filter,
}

_SPECIAL = (tarfile.FIFOTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE)
_EXTENDED = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
_LONG = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
# A zero block or the end of the file where a header would be: the end of the archive.
_END_OF_ARCHIVE: tuple[type[BaseException], ...] = tuple(
    getattr(tarfile, name) for name in ("EOFHeaderError", "EmptyHeaderError")
)
MAX_HEADER = 16 << 20  # bytes of a pax or GNU long-name header, which tarfile reads whole


class CheckedTarInfo(tarfile.TarInfo):
    """The TarInfo class archives are opened with here: a header with a negative size, or a pax
    or long-name header larger than MAX_HEADER (read into memory whole), is a ReadError; so is
    a damaged header after the first one, where tarfile would silently end the archive."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> CheckedTarInfo:
        info = super().frombuf(buf, encoding, errors)
        if info.size < 0:
            raise tarfile.ReadError(f"invalid header: negative size for {info.name!r}")
        if info.type in _EXTENDED + _LONG and info.size > MAX_HEADER:
            raise tarfile.ReadError(f"invalid header: extended header of {info.size} bytes")
        return info

    @classmethod
    def fromtarfile(cls, tarfile_: tarfile.TarFile) -> CheckedTarInfo:
        try:
            return super().fromtarfile(tarfile_)
        except tarfile.HeaderError as exc:
            if isinstance(exc, _END_OF_ARCHIVE) or tarfile_.offset == 0:
                raise  # tarfile's own "not a tar archive" at the start
            raise tarfile.ReadError(f"damaged header at byte {tarfile_.offset}: {exc}") from None


class DamagedArchive(tarfile.ReadError):
    """The archive's data ended or was damaged while ``member`` was read: the run ends there
    (the member's file is not made; what was at its name stays)."""

    def __init__(self, member: str, reason: str) -> None:
        super().__init__(f"{member}: {reason}")
        self.member = member
        self.reason = reason


def _damage(exc: BaseException) -> str:
    if isinstance(exc, EOFError) or str(exc) == "unexpected end of data":
        return "unexpected end of data"
    return f"corrupt compressed data ({exc})" if str(exc) else type(exc).__name__


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


def strip_components(name: str, count: int) -> str | None:
    """``name`` without its first ``count`` components (None when nothing is left), as
    ``tar --strip-components``."""
    if count <= 0:
        return name
    parts = [p for p in name.split("/") if p and p != "."]
    if len(parts) <= count:
        return None
    return "/".join(parts[count:])


def members(tar: tarfile.TarFile, budget: Budget) -> Any:
    """The members of ``tar`` in order, each counted against ``budget``; tarfile's list of
    members is emptied as it goes (memory stays flat), and a header that does not lead forward
    ends the archive with a ReadError."""
    last = -1
    while True:
        try:
            member = tar.next()
        except tarfile.TarError:
            raise
        except (ValueError, OverflowError, IndexError, KeyError, UnicodeError) as exc:
            # tarfile parsing a damaged pax or sparse header (int("x"), a map cut short)
            raise tarfile.ReadError(f"damaged header after byte {max(last, 0)}: {exc}") from None
        tar.members.clear()  # type: ignore[attr-defined]  # (not in typeshed)
        if member is None:
            return
        budget.member()
        if member.size < 0 or member.offset <= last:
            raise tarfile.ReadError(f"invalid header at byte {member.offset}: size {member.size}")
        last = member.offset
        yield member


class _Extraction:
    def __init__(
        self,
        tar: tarfile.TarFile,
        writer: MemberWriter,
        destination: Any,
        apply: FilterFunction,
        on_error: ErrorHandler | None,
        strip: int,
        on_member: Callable[[str], None] | None,
    ) -> None:
        self.tar, self.writer, self.destination, self.apply = tar, writer, destination, apply
        self.on_error, self.strip, self.on_member = on_error, strip, on_member
        self.files: dict[str, tarfile.TarInfo] = {}  # last regular member of each name
        self.directories: dict[str, int | None] = {}

    def run(self) -> None:
        for member in members(self.tar, self.writer.budget):
            if self.strip:
                member = _stripped(member, self.strip)
                if member is None:
                    continue
            try:
                tarinfo = self._filtered(member)
                if tarinfo is None:
                    continue
                if self.on_member is not None:
                    self.on_member(tarinfo.name)
                self._extract_one(tarinfo)
            except LimitExceeded:
                raise
            except (EOFError, tarfile.ReadError, zlib.error, lzma.LZMAError, gzip.BadGzipFile) as exc:
                raise DamagedArchive(member.name, _damage(exc)) from exc
            except (OSError, tarfile.FilterError, BadMember) as exc:
                self._fatal(member.name, exc)
                continue
            except tarfile.ExtractError as exc:
                self._nonfatal(member.name, exc)
                continue
            if tarinfo.isdir():
                self.directories[member_path(tarinfo.name)] = tarinfo.mode
        # Modes of directories last, deepest first, as tarfile does: a read-only directory must
        # not stop its own members from being made.
        for name in sorted(self.directories, reverse=True):
            mode = self.directories[name]
            if mode is not None:
                try:
                    self.writer.set_mode(name, mode)
                except OSError as exc:
                    self._nonfatal(name, tarfile.ExtractError(f"could not change mode: {exc.strerror}"))

    def _filtered(self, member: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if "\0" in member.name or "\0" in member.linkname:
            raise BadMember("the name holds a NUL byte")
        return self.apply(member, self.destination)

    def _fatal(self, name: str, exc: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(name, exc)
        elif self.tar.errorlevel > 0:
            raise exc

    def _nonfatal(self, name: str, exc: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(name, exc)
        elif self.tar.errorlevel > 1:
            raise exc

    def _extract_one(self, tarinfo: tarfile.TarInfo) -> None:
        name = member_path(tarinfo.name)
        writer = self.writer
        try:
            writer.make_parents(name)
        except PathEscapeError as exc:
            raise tarfile.OutsideDestinationError(tarinfo, name) from exc
        if tarinfo.type in _SPECIAL:
            # tarfile's "tar" and "fully_trusted" filters let FIFOs and devices through; a Root
            # makes no special files, so they are refused with the error the "data" filter gives.
            raise tarfile.SpecialFileError(tarinfo)
        try:
            if tarinfo.isdir():
                writer.make_directory(name, tarinfo.mode)
            elif tarinfo.issym():
                writer.make_symlink(name, tarinfo.linkname)
            elif tarinfo.islnk():
                self._hardlink(tarinfo, name)
            else:  # regular files, and types tarfile does not know, are made as regular files
                self._file(tarinfo, tarinfo, name)
                self.files[name] = tarinfo
        except PathEscapeError as exc:
            if tarinfo.issym() or tarinfo.islnk():
                raise tarfile.LinkOutsideDestinationError(tarinfo, tarinfo.linkname) from exc
            raise tarfile.OutsideDestinationError(tarinfo, name) from exc
        except OSError as exc:
            exc.filename = tarinfo.name  # the member as the archive names it
            raise

    def _file(self, tarinfo: tarfile.TarInfo, data: tarfile.TarInfo, name: str) -> None:
        """Write ``data``'s content as ``name`` with ``tarinfo``'s attributes."""
        attrs = _attributes(tarinfo)
        runs = cast("list[tuple[int, int]] | None", data.sparse)  # typeshed says bytes
        sparse = Sparse(runs, data.size) if runs is not None else None
        source = self.tar.extractfile(data)
        if source is None:
            raise tarfile.ExtractError(f"{tarinfo.name!r} has no data to extract")
        with source:
            self.writer.write_file(name, source, attrs, sparse)

    def _hardlink(self, tarinfo: tarfile.TarInfo, name: str) -> None:
        """A hard link to a member already extracted (a link's name is relative to the
        archive's top). When that is not on disk, as tarfile does, the regular member it names
        (the last before this one) is extracted here instead, through the filter again."""
        source = member_path(tarinfo.linkname)
        try:
            self.writer.make_hardlink(name, source)
            return
        except FileNotFoundError:
            pass
        target = self.files.get(source)
        if target is None:
            raise tarfile.ExtractError(f"unable to resolve link {tarinfo.name!r}: no such member before it")
        filtered = self.apply(target.replace(name=tarinfo.name, deep=False), self.destination)
        if filtered is None or not filtered.isreg():
            raise tarfile.ExtractError(f"unable to resolve link {tarinfo.name!r} inside archive")
        self._file(filtered, target, name)


def _stripped(member: tarfile.TarInfo, count: int) -> tarfile.TarInfo | None:
    name = strip_components(member.name, count)
    if name is None:
        return None
    changes: dict[str, Any] = {"name": name}
    if member.islnk():
        link = strip_components(member.linkname, count)
        if link is None:
            return None
        changes["linkname"] = link
    return member.replace(**changes, deep=False)


def extract_tar(
    tar: tarfile.TarFile,
    writer: MemberWriter,
    destination: Any,
    filter: str | FilterFunction,
    *,
    on_error: ErrorHandler | None = None,
    strip: int = 0,
    on_member: Callable[[str], None] | None = None,
) -> None:
    """Extract every member of ``tar`` (read in order, so a stream works) through ``writer``.
    ``destination`` is what the filter is shown as the destination path. ``on_error``, when
    given, is told of each member that fails, which is skipped; otherwise tarfile's
    ``errorlevel`` decides what is raised."""
    _Extraction(tar, writer, destination, filter_function(filter), on_error, strip, on_member).run()


def list_tar(tar: tarfile.TarFile, budget: Budget) -> Any:
    """The members' names, in order, with the same checks as an extraction."""
    for member in members(tar, budget):
        yield member.name


def _attributes(tarinfo: tarfile.TarInfo) -> Attributes:
    """What tarfile would set on the file: its mode, its mtime, and (only for the superuser, as
    tarfile) its owner, by name first, then by number."""
    mtime = tarinfo.mtime
    try:
        when = float(mtime) if mtime is not None else None
    except OverflowError:
        raise BadMember(f"modification time {mtime} out of range") from None
    uid = gid = -1
    if os.geteuid() == 0:
        uid = _owner(tarinfo.uname, tarinfo.uid, lambda n: pwd.getpwnam(n).pw_uid)
        gid = _owner(tarinfo.gname, tarinfo.gid, lambda n: grp.getgrnam(n).gr_gid)
    return Attributes(tarinfo.mode, when, uid, gid)


def _owner(name: str | None, number: int | None, lookup: Callable[[str], int]) -> int:
    if name:
        try:
            return lookup(name)
        except KeyError:
            pass
    return -1 if number is None else number
