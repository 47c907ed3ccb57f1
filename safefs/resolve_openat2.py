"""The Linux fast path: one ``openat2(RESOLVE_BENEATH)`` call resolves the whole path in the kernel."""

from __future__ import annotations

import errno

from safefs import _sys
from safefs.errors import PathEscapeError

# The kernel returns EAGAIN when a rename or mount raced with a ".." step; libpathrs and
# filepath-securejoin retry about this many times before giving up.
MAX_EAGAIN_RETRIES = 128

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
        raise OSError(errno.EAGAIN,
                      f"path resolution raced with concurrent renames {MAX_EAGAIN_RETRIES} times")


def probe(root_fd: int) -> int:
    """0 if openat2 works here, else the errno that says why not (ENOSYS, or EPERM under seccomp)."""
    try:
        fd = _sys.openat2(root_fd, b".", _sys.O_PATH | _sys.O_DIRECTORY, 0,
                          _sys.RESOLVE_BENEATH, follow=False)
    except OSError as exc:
        return exc.errno or errno.ENOSYS
    _sys.close(fd)
    return 0
