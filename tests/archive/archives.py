"""Archives built in memory for the extraction tests, the way CPython's own tests build theirs
(test_tarfile's archive maker: members by name, type, link target, mode and size)."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import warnings
import zipfile
from pathlib import Path
from typing import Any

from safefs.archive import extractall


def filemode_to_int(mode: str) -> int:
    """``'?rwsr-xr-x'`` as a number (the first character, the type, is ignored)."""
    bits = 0
    for i, c in enumerate(reversed(mode[1:])):
        group, pos = divmod(i, 3)
        if c == "-":
            continue
        if c in "st" and pos == 0:
            bits |= (stat.S_ISVTX, stat.S_ISGID, stat.S_ISUID)[group] | (1 << i)
        elif c in "ST" and pos == 0:
            bits |= (stat.S_ISVTX, stat.S_ISGID, stat.S_ISUID)[group]
        else:
            bits |= 1 << i
    return bits


class TarMaker:
    """``with TarMaker() as arc: arc.add(...)``, then ``arc.open()`` for a fresh TarFile."""

    def __init__(self) -> None:
        self._buffer = io.BytesIO()
        self.contents = b""

    def __enter__(self) -> TarMaker:
        self._tar = tarfile.TarFile(mode="w", fileobj=self._buffer)
        return self

    def __exit__(self, *exc: object) -> None:
        self._tar.close()
        self.contents = self._buffer.getvalue()

    def add(
        self,
        name: str | Path,
        *,
        type: bytes | None = None,
        symlink_to: str | Path | None = None,
        hardlink_to: str | Path | None = None,
        mode: str | None = None,
        size: int | None = None,
        content: str | bytes | None = None,
    ) -> None:
        info = tarfile.TarInfo(str(name))
        data = content.encode() if isinstance(content, str) else content
        if data is not None:
            info.size = len(data)
        elif size is not None:
            info.size = size
        if mode:
            info.mode = filemode_to_int(mode)
        if symlink_to is not None:
            type, info.linkname = tarfile.SYMTYPE, str(symlink_to)
        if hardlink_to is not None:
            type, info.linkname = tarfile.LNKTYPE, str(hardlink_to)
        if str(name).endswith("/") and type is None:
            type = tarfile.DIRTYPE
        if type is not None:
            info.type = type
        body = io.BytesIO(data if data is not None else bytes(info.size)) if info.isreg() else None
        self._tar.addfile(info, body)

    def open(self, **kwargs: Any) -> tarfile.TarFile:
        return tarfile.open(fileobj=io.BytesIO(self.contents), **kwargs)


def cve_2025_4517(dest: Path) -> TarMaker:
    """The archive of CVE-2025-4517 for ``dest``: links whose expansion passes PATH_MAX, so a
    realpath check stops expanding and passes ``escape``, which leads to dest's parent."""
    steps = "abcdefghijklmnop"
    max_path = os.pathconf(dest.parent.parent, "PC_PATH_MAX")
    component = "d" * ((max_path - len(str(dest)) - 1) // (len(steps) + 1))
    with TarMaker() as arc:
        path = ""
        for step in steps:
            arc.add(os.path.join(path, component), type=tarfile.DIRTYPE, mode="drwxrwxrwx")
            arc.add(os.path.join(path, step), symlink_to=component)
            path = os.path.join(path, component)
        linkpath = os.path.join(*steps, "l" * 254)
        arc.add(linkpath, symlink_to=os.path.join(*[".."] * len(steps)))
        arc.add("escape", symlink_to=os.path.join(linkpath, ".."))
        arc.add("flaglink", hardlink_to=os.path.join("escape", "flag"))
        arc.add("flaglink", content="overwrite")
        arc.add("escape/newfile", content="new")
    return arc


def zip_bytes(members: list[tuple[str, bytes]]) -> bytes:
    """A stored zip of ``(name, data)``; a name ending in ``/`` is a directory. Names are kept as
    given (ZipInfo would otherwise strip a leading ``/``)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        warnings.simplefilter("ignore", UserWarning)  # duplicate names are part of some tests
        for name, data in members:
            info = zipfile.ZipInfo()
            info.filename = name
            info.external_attr = (0o40755 if name.endswith("/") else 0o600) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def open_zip(contents: bytes) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(contents))


def ours(archive: tarfile.TarFile | zipfile.ZipFile, destination: Path, filter: Any) -> None:
    """safefs's extraction, with tarfile's signature (the one CPython's tests call)."""
    with archive:
        extractall(archive, destination, filter=filter)


def snapshot(top: Path) -> dict[str, tuple[int, bytes | str | None]]:
    """Every entry under ``top`` (links not followed): its type and content or target."""
    found: dict[str, tuple[int, bytes | str | None]] = {}
    for path in sorted(top.rglob("*")):
        st = path.lstat()
        kind = stat.S_IFMT(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            found[str(path.relative_to(top))] = (kind, str(path.readlink()))
        elif stat.S_ISREG(st.st_mode):
            found[str(path.relative_to(top))] = (kind, path.read_bytes())
        else:
            found[str(path.relative_to(top))] = (kind, None)
    return found
