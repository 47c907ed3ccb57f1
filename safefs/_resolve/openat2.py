"""The Linux fast path: one ``openat2(RESOLVE_BENEATH)`` call resolves the whole path in the kernel.

Threat model: docs/threat-model.md.

The kernel hands back an fd, never a path, and creates nothing on the way: the rarer cases that
need either (``canonical``, missing parents, a trailing link whose directory an operation needs)
take the portable walk, which keeps the same rules and the one link budget.
"""

from __future__ import annotations

import errno
import os
import stat

from safefs import _fastpath, _sys
from safefs._paths import SPECIAL_NAMES, split_parent
from safefs._resolve import metadata
from safefs._resolve.base import MODES, BackendName, SymlinkMode
from safefs._resolve.reading import read_head_opened, read_heads_each, read_opened
from safefs._resolve.resolved import Resolved
from safefs._resolve.walk import WalkResolver
from safefs.errors import PathEscapeError, error

# The kernel returns EAGAIN when a rename or mount raced with a ".." step; libpathrs and
# filepath-securejoin retry about this many times before giving up.
MAX_EAGAIN_RETRIES = _fastpath.MAX_EAGAIN
# A read never blocks on a FIFO: the caller's fstat refuses anything but a regular file.
READ_FLAGS = os.O_RDONLY | _sys.O_NONBLOCK

_RESOLVE_FLAGS: dict[SymlinkMode, int] = {
    "beneath": _sys.RESOLVE_BENEATH | _sys.RESOLVE_NO_MAGICLINKS,
    "none": _sys.RESOLVE_BENEATH | _sys.RESOLVE_NO_SYMLINKS | _sys.RESOLVE_NO_MAGICLINKS,
    "in_root": _sys.RESOLVE_IN_ROOT | _sys.RESOLVE_NO_MAGICLINKS,
}

# A single name resolved following no link stays beneath the root by construction: the read's
# first try for one (safefs/fastpath.c, safefs_read_file).
_NAME_RESOLVE = _sys.RESOLVE_NO_SYMLINKS | _sys.RESOLVE_NO_MAGICLINKS


class Openat2Resolver:
    """The openat2 backend; it always holds directories through O_PATH."""

    name: BackendName = "openat2"

    def __init__(self, mode: SymlinkMode = "beneath") -> None:
        if mode not in MODES:
            raise ValueError(f"symlinks must be one of {MODES}, not {mode!r}")
        self.mode: SymlinkMode = mode
        self.resolve = _RESOLVE_FLAGS[mode]
        self.dir_flags = _sys.dir_flags(True)
        # What the kernel is given for the two opens every operation makes, worked out once.
        self._read_how = _sys.open_how(READ_FLAGS, follow=True)
        self._dir_how = _sys.open_how(self.dir_flags, follow=True)
        self._walk = WalkResolver(mode, use_o_path=True)
        # read_bytes: one C call (the same openat2, then fstat, read and close) where the
        # extension is built. There a single name is resolved following no link (_NAME_RESOLVE:
        # one lookup in the root's directory, which costs less than the scoped one); a link
        # there (ELOOP) goes to the scoped openat2 after all.
        self._native = _fastpath.openat2_params(self.resolve, _NAME_RESOLVE) if _fastpath.AVAILABLE else None
        self.read_bytes, self.read_head, self.read_heads = _fastpath.readers(
            self._native,
            self._read_how[0],
            self._read_python,
            self._read_head_python,
            self._read_heads_python,
        )

    def _openat2(self, root_fd: int, rel: bytes, how: tuple[int, int]) -> int:
        """The one openat2 call: ``how`` as ``_sys.open_how`` made it. EAGAIN (a rename raced
        with a ``..`` step) is retried here and nowhere else; EXDEV is an escape."""
        flags, mode = how
        retries = MAX_EAGAIN_RETRIES
        while True:
            fd: int = _sys.openat2(root_fd, rel, flags, mode, self.resolve)
            if fd >= 0:
                return fd
            if fd != -errno.EAGAIN or not retries:
                break
            retries -= 1
        if fd == -errno.EXDEV:
            raise PathEscapeError()
        if fd == -errno.EAGAIN:
            raise error(errno.EAGAIN, _fastpath.EAGAIN_MESSAGE)
        raise error(-fd)

    def open(self, root_fd: int, rel: bytes, flags: int, mode: int = 0o666, *, follow: bool) -> int:
        """See :meth:`Resolver.open`: the kernel resolves, as ``symlinks=`` asks."""
        return self._openat2(root_fd, rel, _sys.open_how(flags, mode, follow=follow))

    def open_read(self, root_fd: int, rel: bytes) -> int:
        """See :meth:`Resolver.open_read`: one system call, its flags worked out once."""
        return self._openat2(root_fd, rel, self._read_how)

    def _read_python(self, root_fd: int, rel: bytes) -> bytes:
        """read_bytes without the extension (see :meth:`Resolver.read_bytes`)."""
        return read_opened(self._openat2(root_fd, rel, self._read_how))

    def _read_heads_python(self, root_fd: int, rels: list[bytes], size: int) -> list[bytes | OSError]:
        """read_heads without the extension: one read_head after another."""
        return read_heads_each(self.read_head, root_fd, rels, size)

    def _read_head_python(self, root_fd: int, rel: bytes, size: int) -> bytes:
        """read_head without the extension (see :meth:`Resolver.read_head`)."""
        return read_head_opened(self._openat2(root_fd, rel, self._read_how), size)

    def canonical(self, root_fd: int, rel: bytes, *, strict: bool) -> bytes:
        """See :meth:`Resolver.canonical`: the kernel hands back no path, so the walk works it
        out."""
        return self._walk.canonical(root_fd, rel, strict=strict)

    def lookup(
        self, root_fd: int, rel: bytes, *, follow: bool, parents: bool = False, lstat: bool = False
    ) -> Resolved:
        """See :meth:`Resolver.lookup`: one openat2 for the directory, one fstatat for the
        name. Missing parents to create, or a trailing link to follow, go to the walk."""
        parent, name, trailing = split_parent(rel)
        try:
            if name in SPECIAL_NAMES:
                # "a/.." names no entry of its own, but where it leads is still judged: a path
                # climbing out of the root is reported as an escape, not as EEXIST or EINVAL.
                os.close(self._openat2(root_fd, rel, self._dir_how))
            fd = root_fd if parent == b"." else self._openat2(root_fd, parent, self._dir_how)
        except FileNotFoundError:
            if not parents:
                raise
            return self._walk.lookup(root_fd, rel, follow=follow, parents=True, lstat=lstat)
        found = Resolved(fd, fd != root_fd, name, None, trailing, parent, False)
        if not (follow or lstat) or name in SPECIAL_NAMES:
            return found
        try:
            found.st = _sys.fstatat(fd, name)
        except FileNotFoundError:
            return found
        except BaseException:
            found.release()
            raise
        if follow and not trailing and stat.S_ISLNK(found.st.st_mode):
            found.release()
            return self._walk.lookup(root_fd, rel, follow=True, parents=parents, lstat=lstat)
        return found

    def stat(self, root_fd: int, rel: bytes, *, follow: bool) -> os.stat_result:
        """See :meth:`Resolver.stat`: through an O_PATH fd."""
        return metadata.stat_by_handle(self, root_fd, rel, follow)

    def chmod(self, root_fd: int, rel: bytes, mode: int, *, follow: bool) -> None:
        """See :meth:`Resolver.chmod`: through an O_PATH fd."""
        metadata.chmod_by_handle(self, root_fd, rel, mode, follow)


def probe(root_fd: int) -> int:
    """0 if openat2 works here, else the errno that says why not (ENOSYS, or EPERM under seccomp)."""
    flags, mode = _sys.open_how(_sys.dir_flags(True))
    fd: int = _sys.openat2(root_fd, b".", flags, mode, _sys.RESOLVE_BENEATH)
    if fd < 0:
        return -fd
    _sys.close(fd)
    return 0
