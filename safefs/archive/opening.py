"""Telling tar from zip, and opening either, from an archive's first bytes.

Tar is asked first, as tar and bsdtar ask: a tar (compressed or not) whose last member is a zip,
a wheel say, ends with a zip's directory and satisfies ``zipfile.is_zipfile``, but its first
block is a tar header. A compressed stream is recognised by its magic number and opened with that
compression alone (no cascade of attempts, each with its own error); the stream is read to its
end after the last member (:func:`drain`), so its check (gzip CRC, xz check, bzip2 CRC) is
verified.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import tarfile
import zipfile
from typing import Any, cast

from .limits import Budget
from .members import CHUNK
from .tar import CheckedTarInfo

_COMPRESSIONS = (
    (b"\x1f\x8b", "gz", "gzip"),
    (b"BZh", "bz2", "bzip2"),
    (b"\xfd7zXZ\x00", "xz", "xz"),
)


class NotAnArchive(tarfile.ReadError):
    """Neither a tar (compressed or not) nor a zip."""


def _is_tar_header(block: bytes) -> bool:
    if len(block) < tarfile.BLOCKSIZE:
        return False
    try:
        CheckedTarInfo.frombuf(block[: tarfile.BLOCKSIZE], "utf-8", "surrogateescape")
    except (tarfile.HeaderError, tarfile.ReadError):
        return False
    return True


def open_archive(path: str | os.PathLike[str]) -> tuple[tarfile.TarFile | zipfile.ZipFile, int]:
    """The archive at ``path`` opened, and its size in bytes. Raises FileNotFoundError,
    IsADirectoryError, NotAnArchive, or what tarfile or zipfile raise for a damaged one."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(tarfile.BLOCKSIZE)
    for magic, mode, _ in _COMPRESSIONS:
        if head.startswith(magic):
            return tarfile.open(path, cast(Any, f"r:{mode}"), tarinfo=CheckedTarInfo), size
    if _is_tar_header(head):
        return tarfile.open(path, "r:", tarinfo=CheckedTarInfo), size
    if zipfile.is_zipfile(path):
        return zipfile.ZipFile(path), size
    if not head:
        raise NotAnArchive("empty file")
    raise NotAnArchive("not a tar or zip archive")


def compression(tar: tarfile.TarFile) -> str | None:
    """The name of the compression ``tar`` is read through (None: none that is checked)."""
    fileobj: Any = tar.fileobj
    for kind, name in ((gzip.GzipFile, "gzip"), (bz2.BZ2File, "bzip2"), (lzma.LZMAFile, "xz")):
        if isinstance(fileobj, kind):
            return name
    return None


def drain(tar: tarfile.TarFile, budget: Budget) -> None:
    """Read a compressed tar's stream to its end, so that the compression's own check is
    verified (a damaged stream raises); what is read counts as unpacked."""
    if compression(tar) is None:
        return
    fileobj: Any = tar.fileobj
    read = fileobj.read
    while chunk := read(CHUNK):
        budget.allow(len(chunk))
