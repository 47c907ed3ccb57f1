"""Zip extraction through a Root, with zipfile's own rule for names.

``zipfile`` rebases every name: it drops empty, ``.`` and ``..`` components (and a leading
``/``), so ``../../etc/x`` is extracted as ``etc/x``. That rule is kept. What zipfile does not do
is look at what is already in the destination: a directory symlink planted there is written
through. Here every member is created through the Root, which refuses a path that leads out.
zipfile sets no modes and makes no links (a symlink member is written as a file holding its
target); neither is done here.
"""

from __future__ import annotations

import zipfile

from .members import Attributes, MemberWriter


def member_path(filename: str) -> str:
    """zipfile's rebasing of a member's name: empty, ``.`` and ``..`` components dropped."""
    parts = [p for p in filename.split("/") if p not in ("", ".", "..")]
    return "/".join(parts) or "."


def extract_zip(archive: zipfile.ZipFile, writer: MemberWriter) -> None:
    """Extract every member of ``archive`` through ``writer``, in the archive's order."""
    for info in archive.infolist():
        if not info.filename:
            # ZipInfo.is_dir() itself fails on it (IndexError); a clear error instead.
            raise zipfile.BadZipFile("a member has an empty name")
        name = member_path(info.filename)
        try:
            if info.is_dir():
                writer.make_directory(name, None)
                continue
            with archive.open(info) as source:
                writer.write_file(name, source, Attributes())
        except OSError as exc:
            exc.filename = info.filename  # the member as the archive names it
            raise
