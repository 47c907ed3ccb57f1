"""Replacing a file through a :class:`safefs.Root` with content written first elsewhere: the
mode bits the new file keeps, and the temporary file the content waits in.

The one scheme every replacing writer of the project uses, the core's atomic writes included:
the temp file is created beside the target (same directory, so the rename is atomic), exclusively
(``O_EXCL``: never an existing entry, never through a link), under an unguessable name ending in
``TEMP_SUFFIX``; the new file gets the replaced file's permission bits less ``PRIVILEGE_BITS``.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import IO, TYPE_CHECKING

from safefs._atomic import TEMP_SUFFIX as _TEMP_SUFFIX
from safefs._atomic import temp_name
from safefs.errors import error

if TYPE_CHECKING:
    from safefs._root import Root

__all__ = ["PRIVILEGE_BITS", "TEMP_SUFFIX", "create_temp_beside", "kept_permissions", "temp_path_beside"]

# Never carried onto the new inode of a replacement: it is owned by the writer, and a write in
# place would have had the kernel clear them too.
PRIVILEGE_BITS = stat.S_ISUID | stat.S_ISGID
TEMP_SUFFIX = os.fsdecode(_TEMP_SUFFIX)
_ATTEMPTS = 100


def kept_permissions(st_mode: int) -> int:
    """The permission bits a file replacing one of mode ``st_mode`` is given."""
    return stat.S_IMODE(st_mode) & ~PRIVILEGE_BITS


def temp_path_beside(path: str) -> str:
    """A fresh temporary name in the directory of ``path`` (root-relative), for an entry that is
    made there exclusively (a file opened ``"xb"``, a symlink, a hard link) and renamed over
    ``path``; on ``FileExistsError`` the maker asks again."""
    parent, _, base = path.rpartition("/")
    name = os.fsdecode(temp_name(os.fsencode(base)))
    return f"{parent}/{name}" if parent and parent != "." else name


def create_temp_beside(root: Root, path: str) -> tuple[str, IO[bytes]]:
    """A new, empty temporary file in the directory of ``path`` (root-relative), open for
    writing: its root-relative path and the file. A name that exists already (planted, or a
    leftover) is never reused nor followed: the next name is tried."""
    for _ in range(_ATTEMPTS):
        temp = temp_path_beside(path)
        try:
            return temp, root.open(temp, "xb")
        except FileExistsError:
            continue
    raise error(errno.EEXIST, "could not create a unique temporary file")
