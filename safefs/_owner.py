"""``chown`` and ``lchown`` beneath a Root (Go's ``Root.Chown`` and ``Root.Lchown``).

The node is never opened for a file: its directory is held and the name changed by
fchownat(AT_SYMLINK_NOFOLLOW), so a name swapped for a link after the lookup is changed itself,
never followed. A path naming a directory as a whole (``.``, ``d/``, ``d/..``) is opened as a
directory beneath the root and changed through that fd.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from safefs import _sys
from safefs._paths import SPECIAL_NAMES, PathArg
from safefs._resolve import DirectoryPath
from safefs.errors import reporting

if TYPE_CHECKING:
    from safefs._root import Root


def chown(root: Root, path: PathArg, uid: int, gid: int, *, follow: bool) -> None:
    """Set the owner and group (-1 leaves one as it is) of what ``path`` names; ``follow``:
    a final link is followed (beneath the root), else the link itself is changed."""
    rel = root._rel(path)
    root._enter()
    try:
        with reporting(path):
            try:
                found = root._lookup(rel, follow=follow)
            except DirectoryPath:
                _chown_dir(root, rel, uid, gid)
                return
            with found:
                if found.name in SPECIAL_NAMES or found.trailing:
                    _chown_dir(root, rel, uid, gid)
                    return
                _sys.fchownat_nofollow(found.fd, found.name, uid, gid)
    finally:
        root._leave()


def _chown_dir(root: Root, rel: bytes, uid: int, gid: int) -> None:
    fd = root._open(rel, os.O_RDONLY | _sys.O_DIRECTORY)
    try:
        os.fchown(fd, uid, gid)
    finally:
        os.close(fd)
