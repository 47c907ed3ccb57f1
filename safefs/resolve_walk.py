"""The portable resolver: one ``openat(O_NOFOLLOW)`` per component, symlinks expanded by us.

Nothing here knows which OS it runs on; it needs only ``openat``, ``readlinkat`` and ``fstat``.

Invariants:
- Every component is opened relative to a directory fd we hold, with O_NOFOLLOW: the kernel never
  follows a link on our behalf, so no path string is ever re-resolved after a check.
- ``..`` pops the stack of directory fds already walked; it never re-opens a path, so a rename
  elsewhere cannot turn it into a step outside. Popping past the root is an escape (or, in
  ``in_root`` mode, stays at the root).
- A symlink's target is pushed back onto the components still to walk, so it is judged by the same
  rules as the caller's own path; at most MAX_SYMLINKS are followed, as the kernel allows.
"""

from __future__ import annotations

import errno
import os
import stat

from safefs import _sys
from safefs.errors import PathEscapeError

MAX_SYMLINKS = 40
# The kernel refuses a path of PATH_MAX bytes or more before looking at it; the walk, which
# takes one name at a time, would not notice on its own.
PATH_MAX = 4096
MODES = ("beneath", "none", "in_root")


class WalkResolver:
    name = "walk"

    def __init__(self, mode: str = "beneath", *, use_o_path: bool = _sys.HAVE_O_PATH) -> None:
        if mode not in MODES:
            raise ValueError(f"symlinks must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self.use_o_path = use_o_path and _sys.HAVE_O_PATH
        self.dir_flags = (_sys.O_PATH if self.use_o_path else os.O_RDONLY) | _sys.O_DIRECTORY
        self._component_flags = _sys.component_flags(self.dir_flags)

    def open(self, root_fd: int, rel: bytes, flags: int, mode: int = 0o666, *,
             follow: bool) -> int:
        if len(rel) >= PATH_MAX:
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
        parts = rel.split(b"/")
        # O_CREAT of "name/" (or through a final link whose target ends in "/") is EISDIR once
        # the parent is resolved, as in the kernel: the name itself is never looked at.
        create_dir = False
        if len(parts) > 1 and parts[-1] == b"":
            # A trailing slash: the last name must be a directory, reached by following links.
            if flags & os.O_CREAT:
                while len(parts) > 1 and parts[-1] == b"":
                    parts.pop()
                create_dir = True
            else:
                parts[-1] = b"."
        todo = parts[::-1]  # components still to walk, next one last
        stack: list[int] = []  # directory fds we opened, innermost last; the root is below them
        links = 0
        try:
            while todo:
                comp = todo.pop()
                last = not todo
                if comp == b"" or comp == b".":
                    if last:
                        return _sys.openat(stack[-1] if stack else root_fd, b".", flags, mode)
                    continue
                if comp == b"..":
                    if stack:
                        os.close(stack.pop())
                    elif self.mode != "in_root":
                        raise PathEscapeError()
                    if last:
                        return _sys.openat(stack[-1] if stack else root_fd, b".", flags, mode)
                    continue
                if last and create_dir:
                    raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))
                cur = stack[-1] if stack else root_fd
                try:
                    if last:
                        fd = _sys.openat(cur, comp, flags, mode)
                    else:
                        fd = _sys.open_component(cur, comp, self._component_flags)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or (last and not follow):
                        raise
                    target = _link_target(cur, comp, exc)
                else:
                    if not (last and flags & _sys.O_PATH and follow):
                        if last:
                            return fd
                        stack.append(fd)
                        continue
                    # O_PATH|O_NOFOLLOW opens a symlink itself: see whether we got one.
                    if not stat.S_ISLNK(os.fstat(fd).st_mode):
                        return fd
                    os.close(fd)
                    target = _link_target(cur, comp, OSError(errno.ELOOP, "symlink"))
                links += 1
                if self.mode == "none" or links > MAX_SYMLINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
                if target.startswith(b"/"):
                    if self.mode != "in_root":
                        raise PathEscapeError()
                    _sys.close_all(stack)
                    stack.clear()
                if last and flags & os.O_CREAT and target.endswith(b"/") and target.rstrip(b"/"):
                    create_dir = True
                    target = target.rstrip(b"/")
                todo.extend(reversed(target.split(b"/")))
            # Only reachable for an empty path, which callers never pass.
            raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
        finally:
            _sys.close_all(stack)


def _link_target(dirfd: int, name: bytes, cause: OSError) -> bytes:
    """The symlink's target, or the original error if ``name`` is not (or no longer) a symlink."""
    try:
        return _sys.readlinkat(dirfd, name)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT):
            raise cause from None
        raise
