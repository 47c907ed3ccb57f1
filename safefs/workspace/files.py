"""Changing and inspecting single workspace entries: write, mkdir, move, delete, info, media.

Each function takes the root and the path(s) as the caller gave them and raises
:class:`WorkspaceError` with a message that names only those paths.
"""

from __future__ import annotations

import base64
import os
import stat as stat_mod
from dataclasses import dataclass

import safefs
from safefs.workspace.errors import PATH, WorkspaceError, os_failure, require_path

MAX_MEDIA_BYTES = 16 << 20  # larger files are refused by read_media, not read


def write_text(root: safefs.Root, path: str, content: str) -> int:
    """Atomically create or replace the file with UTF-8 ``content``, making parent directories.
    Returns the number of bytes written."""
    require_path(path)
    try:
        data = content.encode("utf-8", "strict")
    except UnicodeEncodeError:
        # A lone surrogate can arrive through JSON escapes; it has no UTF-8 form.
        raise WorkspaceError("content is not encodable as UTF-8") from None
    try:
        return root.write_bytes(path, data, parents=True)
    except OSError as exc:
        raise os_failure(exc, path) from None


def make_directory(root: safefs.Root, path: str) -> None:
    """Create the directory and any missing parents; an existing directory is fine."""
    require_path(path)
    try:
        root.mkdir(path, parents=True, exist_ok=True)
    except OSError as exc:
        raise os_failure(exc, path) from None


def move(root: safefs.Root, source: str, destination: str) -> None:
    """Rename ``source`` to ``destination`` atomically, never replacing an existing entry."""
    require_path(source)
    require_path(destination)
    try:
        root.rename(source, destination, replace=False)
    except FileExistsError:
        raise WorkspaceError(f"destination exists, not replaced: {destination!r}") from None
    except OSError as exc:
        raise os_failure(exc, source, destination) from None


def delete(root: safefs.Root, path: str) -> str:
    """Remove a file, a symlink (never its target) or an empty directory; returns its kind."""
    require_path(path)
    try:
        mode = root.lstat(path).st_mode
        if stat_mod.S_ISDIR(mode):
            root.rmdir(path)
            return "directory"
        root.remove(path)
        return "symlink" if stat_mod.S_ISLNK(mode) else "file"
    except OSError as exc:
        raise os_failure(exc, path) from None


@dataclass(frozen=True)
class FileInfo:
    size: int
    created: float  # birth time where the platform reports it, else the inode change time
    modified: float
    accessed: float
    is_directory: bool
    is_file: bool
    is_symlink: bool
    permissions: str  # the last three octal digits of the mode, as "644"


def file_info(root: safefs.Root, path: str) -> FileInfo:
    """Metadata of the entry (a symlink is followed while it stays inside the workspace)."""
    require_path(path)
    try:
        st = root.stat(path)
        is_link = root.is_symlink(path)
    except OSError as exc:
        raise os_failure(exc, path) from None
    created = getattr(st, "st_birthtime", st.st_ctime)
    return FileInfo(
        st.st_size,
        created,
        st.st_mtime,
        st.st_atime,
        stat_mod.S_ISDIR(st.st_mode),
        stat_mod.S_ISREG(st.st_mode),
        is_link,
        oct(st.st_mode)[-3:],
    )


MEDIA_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
}


@dataclass(frozen=True)
class Media:
    data_base64: str
    mime_type: str
    size: int


def read_media(root: safefs.Root, path: str, *, max_bytes: int = MAX_MEDIA_BYTES) -> Media:
    """The file as base64 with a MIME type guessed from its name; refused past ``max_bytes``."""
    require_path(path)
    ext = os.path.splitext(path)[1].lower()
    mime = MEDIA_TYPES.get(ext, "application/octet-stream")
    try:
        with root.open(path, "rb") as stream:
            data = stream.read(max_bytes + 1)
    except OSError as exc:
        raise os_failure(exc, path) from None
    if len(data) > max_bytes:
        raise WorkspaceError.naming(
            f"file too large for a media read: {PATH} is over {max_bytes} bytes", path
        )
    return Media(base64.b64encode(data).decode("ascii"), mime, len(data))
