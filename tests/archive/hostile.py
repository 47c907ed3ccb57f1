"""Hostile archives built byte by byte for the extraction tests: shapes tarfile's writer will not
make (negative sizes, damaged pax records, overlapping zip entries, flags patched in place)."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path


def tar_bytes(
    members: Sequence[tuple[tarfile.TarInfo, bytes | None]], format: int = tarfile.PAX_FORMAT
) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=format) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def info(
    name: str,
    *,
    type: bytes = tarfile.REGTYPE,
    size: int = 0,
    linkname: str = "",
    mode: int = 0o644,
    pax: dict[str, str] | None = None,
) -> tarfile.TarInfo:
    made = tarfile.TarInfo(name)
    made.type, made.size, made.linkname, made.mode = type, size, linkname, mode
    if pax:
        made.pax_headers = dict(pax)
    return made


def regular(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    return info(name, size=len(data)), data


def _checksum(block: bytearray) -> None:
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)


def negative_size_tar() -> bytes:
    """Two members, the second with a base-256 size of -1024 (the CVE-2025-8194 shape): its
    data offset points back at the first header."""
    raw = bytearray(
        tar_bytes([regular("first", b"x" * 10), regular("second", b"y" * 10)], tarfile.GNU_FORMAT)
    )
    block = bytearray(raw[1024:1536])
    block[124:136] = b"\xff" * 10 + struct.pack(">h", -1024)
    _checksum(block)
    raw[1024:1536] = block
    return bytes(raw)


def stored_zip(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def patch_zip(raw: bytes, *, flag: int | None = None, method: int | None = None) -> bytes:
    """Every local and central header's flag bits or method set to the given value."""
    out = bytearray(raw)
    for signature, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = out.find(signature)
        while at != -1:
            if flag is not None:
                out[at + flag_at : at + flag_at + 2] = struct.pack("<H", flag)
            if method is not None:
                out[at + method_at : at + method_at + 2] = struct.pack("<H", method)
            at = out.find(signature, at + 4)
    return bytes(out)


def overlapping_zip(copies: int, size: int) -> bytes:
    """A zip of ``copies`` central entries all naming the one local entry ``a`` (deflated zeros):
    ``copies`` times ``size`` bytes from one stream, the CVE-2019-13232 shape."""
    raw = stored_zip([("a", bytes(size))], zipfile.ZIP_DEFLATED)
    central_at = raw.find(b"PK\x01\x02")
    end_at = raw.find(b"PK\x05\x06")
    central = raw[central_at:end_at]
    end = bytearray(raw[end_at:])
    struct.pack_into("<HH", end, 8, copies, copies)
    struct.pack_into("<I", end, 12, len(central) * copies)
    return raw[:central_at] + central * copies + bytes(end)


def run_cli(
    *args: str, stdin: bytes | None = None, timeout: float = 60, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """safefs-extract in a process of its own (a hang is a timeout, not a hung test run)."""
    return subprocess.run(
        [sys.executable, "-c", "from safefs.archive.cli import entry_point; entry_point()", *args],
        input=stdin.decode("latin-1") if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        encoding="latin-1",
    )
