"""The file object ``SafeFileSystem.open`` gives for writing: an atomic replace on close.

The content goes to a temporary file created exclusively beside the target, through the Root;
``close()`` (with autocommit) or ``commit()`` (inside an fsspec transaction) renames it over the
target, so a reader sees the old file or the new one, never a part. Leaving a ``with`` block on
an exception, or ``discard()``, removes the temporary file and leaves the target untouched.
"""

from __future__ import annotations

import io
import os
import stat
from typing import Any

from safefs import Root
from safefs.replacing import create_temp_beside, kept_permissions


class AtomicWriteFile(io.RawIOBase):
    """Write-only file whose content replaces ``rel`` in ``root`` when committed.

    ``exclusive`` (mode ``xb``): the commit is a no-clobber rename, FileExistsError when the
    target appeared meanwhile. A replaced file's permission bits are kept (setuid and setgid
    dropped, as ``Root.write_bytes`` does)."""

    def __init__(self, root: Root, rel: str, *, exclusive: bool, autocommit: bool, path: str) -> None:
        super().__init__()
        self._root = root
        self._rel = rel
        self._exclusive = exclusive
        self.autocommit = autocommit
        self.path = path
        self.mode = "xb" if exclusive else "wb"
        keep = _kept_mode(root, rel)
        self._temp, self._file = create_temp_beside(root, rel)
        if keep is not None:
            os.fchmod(self._file.fileno(), keep)
        self._done = False

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return self._file.write(data)

    def flush(self) -> None:
        if not self._file.closed:
            self._file.flush()

    def fileno(self) -> int:
        return self._file.fileno()

    def tell(self) -> int:
        return self._file.tell()

    def close(self) -> None:
        if self.closed:
            return
        try:
            self._file.close()
            if self.autocommit and not self._done:
                self.commit()
        finally:
            super().close()

    def commit(self) -> None:
        """Rename the written content over the target (called by close with autocommit)."""
        self._file.close()
        try:
            self._root.rename(self._temp, self._rel, replace=not self._exclusive)
        except BaseException:
            self.discard()
            raise
        self._done = True

    def discard(self) -> None:
        """Drop the written content: the target stays as it was."""
        self._file.close()
        self._done = True
        try:
            self._root.remove(self._temp)
        except FileNotFoundError:
            pass

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None and not self._done:
            self.discard()
        self.close()


def _kept_mode(root: Root, rel: str) -> int | None:
    try:
        st = root.stat(rel)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None  # the rename will say what is wrong (a directory, say)
    return kept_permissions(st.st_mode)
