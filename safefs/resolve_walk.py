"""The portable resolver: one ``openat(O_NOFOLLOW)`` per component, symlinks expanded by us.

Nothing here knows which OS it runs on; it needs only ``openat``, ``readlinkat``, ``fstatat`` and
``fstat`` (and ``mkdirat`` to create missing parents).

Invariants:
- Every component is opened relative to a directory fd we hold, with O_NOFOLLOW: the kernel never
  follows a link on our behalf, so no path string is ever re-resolved after a check.
- ``..`` pops the stack of directory fds already walked; it never re-opens a path, so a rename
  elsewhere cannot turn it into a step outside. Popping past the root is an escape (or, in
  ``in_root`` mode, stays at the root).
- A symlink's target is pushed back onto the components still to walk, so it is judged by the same
  rules as the caller's own path. One budget of MAX_SYMLINKS links covers the whole operation,
  trailing links included, as the kernel counts them.
- Missing parents are created while descending, one ``mkdirat`` per missing level through the fd
  of the level above; only components of the caller's own path are created, never ones named by
  a link's target (as ``os.makedirs``, which never creates through a dangling link).
"""

from __future__ import annotations

import errno
import os
import stat

from safefs import _sys
from safefs._paths import SPECIAL_NAMES, join, split_parent
from safefs.errors import PathEscapeError, error
from safefs.resolved import DirectoryPath, Resolved

MAX_SYMLINKS = 40
# The kernel refuses a path of PATH_MAX bytes or more before looking at it; the walk, which
# takes one name at a time, would not notice on its own.
PATH_MAX = 4096
MODES = ("beneath", "none", "in_root")


class _Walk:
    """One resolution in progress: the directories walked so far (held fds and their names,
    innermost last; the root is below them) and the link budget used so far."""

    __slots__ = ("flags", "links", "mode", "names", "root_fd", "stack")

    def __init__(self, root_fd: int, mode: str, flags: int) -> None:
        self.root_fd = root_fd
        self.mode = mode
        self.flags = flags
        self.stack: list[int] = []
        self.names: list[bytes] = []
        self.links = 0

    @property
    def cur(self) -> int:
        return self.stack[-1] if self.stack else self.root_fd

    def up(self) -> None:
        """``..``: back to the directory walked before, never a lookup of a name."""
        if self.stack:
            os.close(self.stack.pop())
            self.names.pop()
        elif self.mode != "in_root":
            raise PathEscapeError()

    def link(self, dirfd: int, name: bytes, cause: OSError) -> bytes:
        """Follow the symlink ``name`` of ``dirfd``: its target, charged to the budget. An
        absolute target restarts from the root (``in_root``) or is an escape."""
        target = _link_target(dirfd, name, cause)
        self.links += 1
        if self.mode == "none" or self.links > MAX_SYMLINKS:
            raise error(errno.ELOOP)
        if target.startswith(b"/"):
            if self.mode != "in_root":
                raise PathEscapeError()
            _sys.close_all(self.stack)
            self.stack.clear()
            self.names.clear()
        return target

    def descend(self, path: bytes, create: bool) -> None:
        """Walk every component of ``path`` as a directory (``create``: make missing ones)."""
        todo = [(part, create) for part in reversed(path.split(b"/"))]
        while todo:
            comp, creatable = todo.pop()
            if comp == b"" or comp == b".":
                continue
            if comp == b"..":
                self.up()
                continue
            cur = self.cur
            try:
                fd = _sys.open_component(cur, comp, self.flags)
            except OSError as exc:
                if exc.errno == errno.ENOENT and creatable:
                    try:
                        _sys.mkdirat(cur, comp, 0o777)
                    except FileExistsError:
                        pass  # made meanwhile: opened below like any other entry
                    todo.append((comp, False))
                    continue
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                target = self.link(cur, comp, exc)
                todo.extend((part, False) for part in reversed(target.split(b"/")))
                continue
            self.stack.append(fd)
            self.names.append(comp)

    def rel(self) -> bytes:
        return b"/".join(self.names) or b"."

    def result(self, name: bytes, st: os.stat_result | None, trailing: bool) -> Resolved:
        """Hand the innermost directory over to the caller; close the others."""
        dir_rel = self.rel()
        if not self.stack:
            return Resolved(self.root_fd, False, name, st, trailing, dir_rel, True)
        fd = self.stack.pop()
        try:
            _sys.close_all(self.stack)
        finally:
            self.stack.clear()
        return Resolved(fd, True, name, st, trailing, dir_rel, True)

    def close(self) -> None:
        stack, self.stack = self.stack, []
        _sys.close_all(stack)


class WalkResolver:
    name = "walk"

    def __init__(self, mode: str = "beneath", *, use_o_path: bool = _sys.HAVE_O_PATH) -> None:
        if mode not in MODES:
            raise ValueError(f"symlinks must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self.use_o_path = use_o_path and _sys.HAVE_O_PATH
        self.dir_flags = _sys.dir_flags(self.use_o_path)
        self._component_flags = _sys.component_flags(self.dir_flags)

    def lookup(self, root_fd: int, rel: bytes, *, follow: bool, parents: bool = False,
               lstat: bool = False) -> Resolved:
        """The directory holding the final name of ``rel``, the name, and its lstat (taken when
        ``follow`` or ``lstat``). With ``follow``, trailing symlinks are chased within the same
        budget, so the entry returned is not a link. ``parents`` creates missing directories.
        A final ``.`` or ``..`` is judged (an escape is reported) but not stepped into.

        Raises DirectoryPath when a followed link's target names a directory as a whole."""
        if len(rel) >= PATH_MAX:
            raise error(errno.ENAMETOOLONG)
        parent, name, trailing = split_parent(rel)
        walk = _Walk(root_fd, self.mode, self._component_flags)
        try:
            walk.descend(parent, parents)
            while True:
                if name in SPECIAL_NAMES:
                    if name == b".." and not walk.stack and self.mode != "in_root":
                        raise PathEscapeError()
                    return walk.result(name, None, trailing)
                st: os.stat_result | None = None
                if follow or lstat:
                    try:
                        st = _sys.fstatat(walk.cur, name)
                    except FileNotFoundError:
                        st = None
                if not (follow and not trailing and st is not None and stat.S_ISLNK(st.st_mode)):
                    return walk.result(name, st, trailing)
                target = walk.link(walk.cur, name, error(errno.ELOOP))
                target_dir, name, to_dir = split_parent(target.lstrip(b"/") or b".")
                if to_dir or name in SPECIAL_NAMES:
                    raise DirectoryPath(join(walk.rel(), target.lstrip(b"/") or b"."))
                walk.descend(target_dir, False)
        finally:
            walk.close()

    def canonical(self, root_fd: int, rel: bytes, *, strict: bool) -> bytes:
        """The canonical root-relative path ``rel`` designates, every link followed as an
        operation follows it (one budget), from the walk's own stack of real directories.

        Where a component does not exist, the rest is what a write with ``parents`` would create:
        its names are appended, and a ``..`` among them takes back a name appended before it (or,
        past them, pops the stack of real directories). With ``strict`` a missing component is
        FileNotFoundError instead."""
        if len(rel) >= PATH_MAX:
            raise error(errno.ENAMETOOLONG)
        walk = _Walk(root_fd, self.mode, self._component_flags)
        todo = rel.split(b"/")[::-1]  # next component last
        missing: list[bytes] = []  # names past the first one that does not exist
        try:
            while todo:
                comp = todo.pop()
                if comp == b"" or comp == b".":
                    continue
                if comp == b"..":
                    if missing:
                        missing.pop()
                    else:
                        walk.up()
                    continue
                if missing:
                    missing.append(comp)
                    continue
                cur = walk.cur
                try:
                    st = _sys.fstatat(cur, comp)
                except FileNotFoundError:
                    if strict:
                        raise
                    missing.append(comp)
                    continue
                if stat.S_ISLNK(st.st_mode):
                    target = walk.link(cur, comp, error(errno.ELOOP))
                    todo.extend(reversed(target.split(b"/")))
                    continue
                if not stat.S_ISDIR(st.st_mode):
                    if todo:  # "file/", "file/x", "file/..": a file used as a directory
                        raise error(errno.ENOTDIR)
                    return join(walk.rel(), comp)
                walk.stack.append(_sys.open_component(cur, comp, self._component_flags))
                walk.names.append(comp)
            return join(walk.rel(), b"/".join(missing)) if missing else walk.rel()
        finally:
            walk.close()

    def open_read(self, root_fd: int, rel: bytes) -> int:
        """open(rel, O_RDONLY|O_NONBLOCK), following links."""
        return self.open(root_fd, rel, os.O_RDONLY | _sys.O_NONBLOCK, follow=True)

    def open(self, root_fd: int, rel: bytes, flags: int, mode: int = 0o666, *,
             follow: bool) -> int:
        if len(rel) >= PATH_MAX:
            raise error(errno.ENAMETOOLONG)
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
        walk = _Walk(root_fd, self.mode, self._component_flags)
        stack = walk.stack
        try:
            while todo:
                comp = todo.pop()
                last = not todo
                if comp == b"" or comp == b".":
                    if last:
                        return _sys.openat(walk.cur, b".", flags, mode)
                    continue
                if comp == b"..":
                    walk.up()
                    if last:
                        return _sys.openat(walk.cur, b".", flags, mode)
                    continue
                if last and create_dir:
                    raise error(errno.EISDIR)
                cur = stack[-1] if stack else root_fd
                try:
                    if last:
                        fd = _sys.openat(cur, comp, flags, mode)
                    else:
                        fd = _sys.open_component(cur, comp, self._component_flags)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or (last and not follow):
                        raise
                    cause = exc
                else:
                    if not (last and flags & _sys.O_PATH and follow):
                        if last:
                            return fd
                        stack.append(fd)
                        walk.names.append(comp)
                        continue
                    # O_PATH|O_NOFOLLOW opens a symlink itself: see whether we got one.
                    if not stat.S_ISLNK(os.fstat(fd).st_mode):
                        return fd
                    os.close(fd)
                    cause = error(errno.ELOOP)
                target = walk.link(cur, comp, cause)
                if last and flags & os.O_CREAT and target.endswith(b"/") and target.rstrip(b"/"):
                    create_dir = True
                    target = target.rstrip(b"/")
                todo.extend(reversed(target.split(b"/")))
            # Only reachable for an empty path, which callers never pass.
            raise error(errno.ENOENT)
        finally:
            walk.close()


def _link_target(dirfd: int, name: bytes, cause: OSError) -> bytes:
    """The symlink's target, or the original error if ``name`` is not (or no longer) a symlink."""
    try:
        return _sys.readlinkat(dirfd, name)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT):
            raise cause from None
        raise
