"""Zip extraction through a Root, with zipfile's own rule for names.

``zipfile`` rebases every name: it drops empty, ``.`` and ``..`` components (and a leading
``/``), so ``../../etc/x`` is extracted as ``etc/x``. That rule is kept. What zipfile does not do
is look at what is already in the destination: a directory symlink planted there is written
through. Here every member is created through the Root, which refuses a path that leads out.
zipfile sets no modes and makes no links (a symlink member is written as a file holding its
target); neither is done here.

Before anything is written the archive is checked as ``unzip`` checks it: entries whose data
overlap (the CVE-2019-13232 zip bomb, where every entry reuses one compressed stream) refuse the
whole archive; an encrypted entry or an unknown compression method refuses that entry.
"""

from __future__ import annotations

import itertools
import struct
import zipfile
from collections.abc import Callable

from .limits import Budget, LimitExceeded
from .members import Attributes, MemberWriter

ErrorHandler = Callable[[str, BaseException], None]

_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... name length, extra length
_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}


class OverlappingEntries(zipfile.BadZipFile):
    """Two entries' data overlap (a zip bomb): the whole archive is refused, as unzip does."""


def member_path(filename: str) -> str:
    """zipfile's rebasing of a member's name: empty, ``.`` and ``..`` components dropped."""
    parts = [p for p in filename.split("/") if p not in ("", ".", "..")]
    return "/".join(parts) or "."


def check_layout(archive: zipfile.ZipFile, budget: Budget) -> None:
    """Count the entries against ``budget`` and refuse an archive whose entries' local headers
    and data overlap each other or the central directory (OverlappingEntries)."""
    infos = archive.infolist()
    for _ in infos:
        budget.member()
    fp = archive.fp
    if fp is None:
        raise ValueError("the zip archive is closed")
    spans = []
    for info in infos:
        fp.seek(info.header_offset)
        header = fp.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size:
            raise zipfile.BadZipFile(f"truncated local header for {info.filename!r}")
        signature, name_length, extra_length = _LOCAL_HEADER.unpack(header)
        if signature != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header for {info.filename!r}")
        end = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length + info.compress_size
        spans.append((info.header_offset, end, info.filename))
    spans.sort()
    limit = getattr(archive, "start_dir", None)
    for (_, end, name), (start, _, following) in itertools.pairwise(spans):
        if end > start:
            raise OverlappingEntries(
                f"invalid zip file with overlapped components: {name!r} and {following!r}"
            )
    if spans and isinstance(limit, int) and spans[-1][1] > limit:
        raise OverlappingEntries(f"invalid zip file with overlapped components: {spans[-1][2]!r}")


def extract_zip(
    archive: zipfile.ZipFile,
    writer: MemberWriter,
    *,
    on_error: ErrorHandler | None = None,
    strip: int = 0,
    on_member: Callable[[str], None] | None = None,
) -> None:
    """Extract every member of ``archive`` through ``writer``, in the archive's order.
    ``on_error``, when given, is told of each member that fails, which is skipped; otherwise
    the first failure is raised."""
    check_layout(archive, writer.budget)
    for info in archive.infolist():
        try:
            if not info.filename:
                # ZipInfo.is_dir() itself fails on it (IndexError); a clear error instead.
                raise zipfile.BadZipFile("a member has an empty name")
            name = member_path(info.filename)
            if strip:
                parts = name.split("/")
                if len(parts) <= strip:
                    continue
                name = "/".join(parts[strip:])
            if on_member is not None:
                on_member(info.filename)
            _extract_one(archive, writer, info, name)
        except LimitExceeded:
            raise
        except (OSError, zipfile.BadZipFile, NotImplementedError, EOFError, ValueError) as exc:
            if on_error is None:
                raise
            on_error(info.filename, exc)


def _extract_one(archive: zipfile.ZipFile, writer: MemberWriter, info: zipfile.ZipInfo, name: str) -> None:
    try:
        if info.is_dir():
            writer.make_directory(name, None)
            return
        if info.flag_bits & 0x1:
            raise NotImplementedError("encrypted entry, not extracted")
        if info.compress_type not in _METHODS:
            raise NotImplementedError(f"unsupported compression method {info.compress_type}")
        try:
            with archive.open(info) as source:
                writer.write_file(name, source, Attributes())
        except zipfile.BadZipFile:
            raise
        except Exception as exc:  # zlib.error, lzma.LZMAError, bz2's OSError: damaged data
            if isinstance(exc, OSError | LimitExceeded):
                raise
            raise zipfile.BadZipFile(f"corrupt compressed data ({exc})") from exc
    except OSError as exc:
        exc.filename = info.filename  # the member as the archive names it
        raise
