"""The Linux fast path: one ``openat2(RESOLVE_BENEATH)`` call resolves the whole path in the kernel."""

from __future__ import annotations

import errno
import os
import stat

from safefs import _sys
from safefs._paths import SPECIAL_NAMES, split_parent
from safefs.errors import PathEscapeError, error
from safefs.resolve_walk import WalkResolver
from safefs.resolved import Resolved

# The kernel returns EAGAIN when a rename or mount raced with a ".." step; libpathrs and
# filepath-securejoin retry about this many times before giving up.
MAX_EAGAIN_RETRIES = 128
# A read never blocks on a FIFO: the caller's fstat refuses anything but a regular file.
READ_FLAGS = os.O_RDONLY | _sys.O_NONBLOCK

_RESOLVE_FLAGS = {
    "beneath": _sys.RESOLVE_BENEATH | _sys.RESOLVE_NO_MAGICLINKS,
    "none": _sys.RESOLVE_BENEATH | _sys.RESOLVE_NO_SYMLINKS | _sys.RESOLVE_NO_MAGICLINKS,
    "in_root": _sys.RESOLVE_IN_ROOT | _sys.RESOLVE_NO_MAGICLINKS,
}


class Openat2Resolver:
    name = "openat2"
    use_o_path = True

    def __init__(self, mode: str = "beneath") -> None:
        if mode not in _RESOLVE_FLAGS:
            raise ValueError(f"symlinks must be one of {tuple(_RESOLVE_FLAGS)}, not {mode!r}")
        self.mode = mode
        self.resolve = _RESOLVE_FLAGS[mode]
        self.dir_flags = _sys.O_PATH | _sys.O_DIRECTORY
        self._read_flags = _sys.openat2_flags(READ_FLAGS, follow=True)
        # The kernel cannot hand back the directory holding a followed link's target, nor
        # create what is missing: those rarer cases take the walk, with its one link budget.
        self._walk = WalkResolver(mode, use_o_path=True)

    def open(self, root_fd: int, rel: bytes, flags: int, mode: int = 0o666, *,
             follow: bool) -> int:
        for _ in range(MAX_EAGAIN_RETRIES):
            try:
                return _sys.openat2(root_fd, rel, flags, mode, self.resolve, follow=follow)
            except OSError as exc:
                if exc.errno == errno.EXDEV:
                    raise PathEscapeError() from None
                if exc.errno != errno.EAGAIN:
                    raise
        raise error(errno.EAGAIN,
                    f"path resolution raced with concurrent renames {MAX_EAGAIN_RETRIES} times")

    def open_read(self, root_fd: int, rel: bytes) -> int:
        """open(rel, O_RDONLY|O_NONBLOCK), following links: the read path, one system call with
        flags worked out once."""
        fd = _sys.openat2_prepared(root_fd, rel, self._read_flags, self.resolve)
        if fd >= 0:
            return fd
        if fd == -errno.EXDEV:
            raise PathEscapeError()
        if fd != -errno.EAGAIN:
            raise error(-fd)
        return self.open(root_fd, rel, READ_FLAGS, follow=True)  # EAGAIN: retried there

    def canonical(self, root_fd: int, rel: bytes, *, strict: bool) -> bytes:
        """As WalkResolver.canonical: the kernel hands back no path, so the walk works it out."""
        return self._walk.canonical(root_fd, rel, strict=strict)

    def lookup(self, root_fd: int, rel: bytes, *, follow: bool, parents: bool = False,
               lstat: bool = False) -> Resolved:
        """As WalkResolver.lookup: one openat2 for the directory, one fstatat for the name."""
        parent, name, trailing = split_parent(rel)
        try:
            if name in SPECIAL_NAMES:
                # "a/.." names no entry of its own, but where it leads is still judged: a path
                # climbing out of the root is reported as an escape, not as EEXIST or EINVAL.
                os.close(self.open(root_fd, rel, self.dir_flags, follow=True))
            fd = root_fd if parent == b"." else self.open(root_fd, parent, self.dir_flags,
                                                          follow=True)
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


def probe(root_fd: int) -> int:
    """0 if openat2 works here, else the errno that says why not (ENOSYS, or EPERM under seccomp)."""
    try:
        fd = _sys.openat2(root_fd, b".", _sys.O_PATH | _sys.O_DIRECTORY, 0,
                          _sys.RESOLVE_BENEATH, follow=False)
    except OSError as exc:
        return exc.errno or errno.ENOSYS
    _sys.close(fd)
    return 0
