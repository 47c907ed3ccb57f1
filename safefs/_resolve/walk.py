"""The portable resolver: one ``openat(O_NOFOLLOW)`` per component, symlinks expanded by us.

Threat model: docs/threat-model.md.

Nothing here knows which OS it runs on; it needs only ``openat``, ``readlinkat``, ``fstatat`` and
``fstat`` (and ``mkdirat`` to create missing parents).

There is one loop, :meth:`_Walk.run` (Go's ``doInRoot`` is the model): it walks every component
but the last, then hands the final name and the directory fd it holds to a per-operation
callback. The callback acts on the name, or answers :class:`Continue` (a trailing symlink's
target, say), and the loop walks on from where it is, with the same stack and the same budget.

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
- A path of PATH_MAX bytes or more is refused before any lookup, as the kernel refuses it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from typing import Final, TypeVar

from safefs import _fastpath, _sys
from safefs._paths import SPECIAL_NAMES, join, split_parent
from safefs._resolve import metadata
from safefs._resolve.anchors import beneath_anchors
from safefs._resolve.base import MODES, BackendName, SymlinkMode
from safefs._resolve.reading import read_head_opened, read_heads_each, read_opened
from safefs._resolve.resolved import DirectoryPath, Resolved
from safefs.errors import PathEscapeError, error

MAX_SYMLINKS: Final = _fastpath.MAX_SYMLINKS
# read_bytes: a FIFO must not hang the open; fstat then refuses anything not regular.
_READ_FLAGS: Final = os.O_RDONLY | _sys.O_NONBLOCK
# The kernel refuses a path of PATH_MAX bytes or more before looking at it; the walk, which
# takes one name at a time, would not notice on its own.
PATH_MAX: Final = _fastpath.PATH_MAX

_T = TypeVar("_T")
# The per-operation final step: (the walk, the directory fd it holds, the final name, whether the
# path ended in "/") -> the operation's result, or Continue to walk on.
FinalStep = Callable[["_Walk", int, bytes, bool], "_T | Continue"]


class Continue:
    """A final-component callback's answer: its name stands for ``path`` (a trailing link's
    target, already charged to the budget by :meth:`_Walk.link`; or ``name/.``, to enter it).
    The loop walks ``path`` from the directory it holds and calls back with its final name."""

    __slots__ = ("path",)

    def __init__(self, path: bytes) -> None:
        self.path = path


class _Walk:
    """One resolution in progress: the directories walked so far (held fds and their names,
    innermost last; the root is below them), the link budget used so far, and (for
    ``canonical``) how many of the last names do not exist."""

    __slots__ = ("anchors", "flags", "links", "missing", "mode", "names", "root_fd", "stack")

    def __init__(self, root_fd: int, mode: SymlinkMode, flags: int, anchors: tuple[bytes, ...] = ()) -> None:
        self.root_fd = root_fd
        self.anchors = anchors  # absolute targets under these restart from the root (anchors.py)
        self.mode = mode
        self.flags = flags  # for open_component: directories looked through, never followed
        self.stack: list[int] = []
        self.names: list[bytes] = []
        self.links = 0
        self.missing = 0  # names past the last held directory (they have no fd)

    @property
    def cur(self) -> int:
        return self.stack[-1] if self.stack else self.root_fd

    def rel(self) -> bytes:
        """The root-relative path walked so far: canonical, made of the real names entered."""
        return b"/".join(self.names) or b"."

    def up(self) -> None:
        """``..``: back to the directory walked before, never a lookup of a name."""
        if self.missing:
            self.missing -= 1
            self.names.pop()
        elif self.stack:
            os.close(self.stack.pop())
            self.names.pop()
        elif self.mode != "in_root":
            raise PathEscapeError()

    def link(self, dirfd: int, name: bytes, cause: OSError) -> bytes:
        """Follow the symlink ``name`` of ``dirfd``: its target, charged to the budget. An
        absolute target restarts from the root (``in_root``, or under one of ``anchors``) or is
        an escape."""
        target = _link_target(dirfd, name, cause)
        self.links += 1
        if self.mode == "none" or self.links > MAX_SYMLINKS:
            raise error(errno.ELOOP)
        if _fastpath.is_magic_link(dirfd, target):
            raise error(errno.ELOOP)  # never followed, as openat2's RESOLVE_NO_MAGICLINKS
        if target.startswith(b"/"):
            if self.mode != "in_root":
                inside = beneath_anchors(target, self.anchors)
                if inside is None:
                    raise PathEscapeError()
                target = b"/" + inside
            _sys.close_all(self.stack)
            self.stack.clear()
            self.names.clear()
        return target

    def run(
        self,
        path: bytes,
        final: FinalStep[_T],
        *,
        create: bool = False,
        missing_ok: bool = False,
    ) -> _T:
        """Walk every component of ``path`` but the last as a directory, then return what
        ``final(walk, dirfd, name, trailing_slash)`` makes of the last; the fds still held are
        closed on the way out. ``create``: make the missing directories of the caller's own path.
        ``missing_ok``: past a missing directory, names are only recorded (``..`` takes one
        back), for ``canonical``."""
        if len(path) >= PATH_MAX:
            raise error(errno.ENAMETOOLONG)
        stack, names, flags = self.stack, self.names, self.flags
        # The bottom ``own`` entries of todo are the caller's own components: a link's target is
        # pushed above them, and ``own`` shrinks to what is left below it when that happens.
        own = -1 if create else 0
        try:
            while True:
                # Split "a/b/c/" into the components to walk (next one last), "c" and the slash.
                todo = path.split(b"/")
                trailing = False
                while len(todo) > 1 and not todo[-1]:
                    todo.pop()
                    trailing = True
                name = todo.pop() or b"."  # "" only for a path of slashes: the directory itself
                todo.reverse()
                if own < 0:
                    own = len(todo)
                while todo:
                    comp = todo.pop()
                    if comp == b"" or comp == b".":
                        continue
                    if comp == b"..":
                        self.up()
                        continue
                    if missing_ok and self.missing:
                        names.append(comp)
                        self.missing += 1
                        continue
                    cur = stack[-1] if stack else self.root_fd
                    try:
                        fd = _sys.open_component(cur, comp, flags)
                    except OSError as exc:
                        if exc.errno == errno.ENOENT:
                            if len(todo) < own:
                                try:
                                    _sys.mkdirat(cur, comp, 0o777)
                                except FileExistsError:
                                    pass  # made meanwhile: opened below like any other entry
                                own = len(todo)  # opened again as any entry: never made twice
                                todo.append(comp)
                                continue
                            if missing_ok:
                                names.append(comp)
                                self.missing = 1
                                continue
                            raise
                        if exc.errno != errno.ELOOP and exc.errno != errno.ENOTDIR:
                            raise
                        target = self.link(cur, comp, exc)
                        own = min(own, len(todo))
                        todo.extend(reversed(target.split(b"/")))
                        continue
                    stack.append(fd)
                    names.append(comp)
                answer = final(self, stack[-1] if stack else self.root_fd, name, trailing)
                if not isinstance(answer, Continue):
                    return answer
                own = 0
                path = answer.path
        finally:
            if self.stack:  # (result() took the innermost already; usually nothing is left)
                self.close()

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


def _canonical_final(strict: bool) -> FinalStep[bytes]:
    """The final step of ``canonical``: the name's own canonical path, links followed."""

    def final(walk: _Walk, cur: int, name: bytes, trailing: bool) -> bytes | Continue:
        if name == b"..":
            walk.up()
            return walk.rel()
        if name == b".":
            return walk.rel()
        if walk.missing:
            return join(walk.rel(), name)
        try:
            st = _sys.fstatat(cur, name)
        except FileNotFoundError:
            if strict:
                raise
            return join(walk.rel(), name)
        if stat.S_ISLNK(st.st_mode):
            target = walk.link(cur, name, error(errno.ELOOP))
            # "link/": whatever the target is, it must be a directory (or missing).
            return Continue(target + b"/" if trailing else target)
        if trailing and not stat.S_ISDIR(st.st_mode):  # "file/": a file used as a directory
            raise error(errno.ENOTDIR)
        return join(walk.rel(), name)

    return final


_CANONICAL = {True: _canonical_final(True), False: _canonical_final(False)}


class WalkResolver:
    """The walk backend (see the module docstring); ``use_o_path`` False looks through
    directories with O_SEARCH or O_RDONLY instead, as on platforms without O_PATH.

    ``native``: ``open`` and ``read_bytes`` run the same walk in C (safefs/fastpath.c, a port of
    :meth:`open` here) where the extension is built; this module stays the reference, and the one
    that ``lookup``, ``canonical`` and the link judge (:mod:`.links`) use."""

    name: BackendName = "walk"

    def __init__(
        self, mode: SymlinkMode = "beneath", *, use_o_path: bool = _sys.HAVE_O_PATH, native: bool = True
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"symlinks must be one of {MODES}, not {mode!r}")
        self.mode: SymlinkMode = mode
        self.anchors: tuple[bytes, ...] = ()  # set by safefs._resolve.anchored only
        self.use_o_path = use_o_path and _sys.HAVE_O_PATH
        self.dir_flags = _sys.dir_flags(self.use_o_path)
        self._component_flags = _sys.open_flags(self.dir_flags)
        self._read_flags = _sys.open_flags(_READ_FLAGS)
        self._native = (
            _fastpath.walk_params(mode, self._component_flags) if native and _fastpath.AVAILABLE else None
        )
        # read_bytes: walk, open, fstat, read and close in one C call where the extension is built.
        self.read_bytes, self.read_head, self.read_heads = _fastpath.readers(
            self._native, self._read_flags, self._read_python, self._read_head_python, self._read_heads_python
        )

    @property
    def native(self) -> bool:
        """Whether ``open`` and ``read_bytes`` walk in C."""
        return self._native is not None

    def lookup(
        self, root_fd: int, rel: bytes, *, follow: bool, parents: bool = False, lstat: bool = False
    ) -> Resolved:
        """See :meth:`Resolver.lookup`."""

        def final(walk: _Walk, cur: int, name: bytes, trailing: bool) -> Resolved | Continue:
            if name in SPECIAL_NAMES:
                if name == b".." and not walk.stack and walk.mode != "in_root":
                    raise PathEscapeError()
                return walk.result(name, None, trailing)
            st: os.stat_result | None = None
            if follow or lstat:
                try:
                    st = _sys.fstatat(cur, name)
                except FileNotFoundError:
                    st = None
            if not (follow and not trailing and st is not None and stat.S_ISLNK(st.st_mode)):
                return walk.result(name, st, trailing)
            target = walk.link(cur, name, error(errno.ELOOP))
            whole = target.lstrip(b"/") or b"."
            _, target_name, to_dir = split_parent(whole)
            if to_dir or target_name in SPECIAL_NAMES:
                raise DirectoryPath(join(walk.rel(), whole))
            return Continue(target)

        return _Walk(root_fd, self.mode, self._component_flags, anchors=self.anchors).run(
            rel, final, create=parents
        )

    def canonical(self, root_fd: int, rel: bytes, *, strict: bool) -> bytes:
        """See :meth:`Resolver.canonical`: worked out from the walk's own stack of real
        directories, each final name checked with one fstatat."""
        walk = _Walk(root_fd, self.mode, self._component_flags, anchors=self.anchors)
        return walk.run(rel, _CANONICAL[strict], missing_ok=not strict)

    def open_read(self, root_fd: int, rel: bytes) -> int:
        """See :meth:`Resolver.open_read`."""
        return self.open(root_fd, rel, _READ_FLAGS, follow=True)

    def _read_python(self, root_fd: int, rel: bytes) -> bytes:
        """read_bytes without the extension (see :meth:`Resolver.read_bytes`)."""
        return read_opened(self.open_read(root_fd, rel))

    def _read_heads_python(self, root_fd: int, rels: list[bytes], size: int) -> list[bytes | OSError]:
        """read_heads without the extension: one read_head after another."""
        return read_heads_each(self.read_head, root_fd, rels, size)

    def _read_head_python(self, root_fd: int, rel: bytes, size: int) -> bytes:
        """read_head without the extension (see :meth:`Resolver.read_head`)."""
        return read_head_opened(self.open_read(root_fd, rel), size)

    def open(self, root_fd: int, rel: bytes, flags: int, mode: int = 0o666, *, follow: bool) -> int:
        """See :meth:`Resolver.open`: the final name is opened with open_flags(flags), which
        never follows it; ``follow`` chases a trailing link here, within the budget."""
        if self._native is not None:
            return _fastpath.open_path(self._native, root_fd, rel, _sys.open_flags(flags), mode, follow)
        return self.open_python(root_fd, rel, flags, mode, follow=follow)

    def open_python(self, root_fd: int, rel: bytes, flags: int, mode: int = 0o666, *, follow: bool) -> int:
        """:meth:`open` by the walk loop of this module (the reference the C walk is tested
        against)."""
        follow_o_path = follow and bool(flags & _sys.O_PATH)

        def final(walk: _Walk, cur: int, name: bytes, trailing: bool) -> int | Continue:
            if name == b"..":
                walk.up()
                return _sys.openat(walk.cur, b".", flags, mode)
            if name == b".":
                return _sys.openat(cur, b".", flags, mode)
            if trailing:
                # O_CREAT of "name/" is EISDIR once the parent is resolved, as in the kernel:
                # the name itself is never looked at. Otherwise it must be a directory, reached
                # by following links: entered as one, then opened as ".".
                if flags & os.O_CREAT:
                    raise error(errno.EISDIR)
                return Continue(name + b"/.")
            try:
                fd = _sys.openat(cur, name, flags, mode)
            except OSError as exc:
                if not follow or (exc.errno != errno.ELOOP and exc.errno != errno.ENOTDIR):
                    raise
                cause = exc
            else:
                # O_PATH|O_NOFOLLOW opens a symlink itself: see whether we got one.
                try:
                    is_link = follow_o_path and stat.S_ISLNK(os.fstat(fd).st_mode)
                except BaseException:
                    os.close(fd)
                    raise
                if not is_link:
                    return fd
                os.close(fd)
                cause = error(errno.ELOOP)
            return Continue(walk.link(cur, name, cause))

        return _Walk(root_fd, self.mode, self._component_flags, anchors=self.anchors).run(rel, final)

    def stat(self, root_fd: int, rel: bytes, *, follow: bool) -> os.stat_result:
        """See :meth:`Resolver.stat`. Without O_PATH, opening could block or need read
        access: the name is described through its directory instead."""
        if self.use_o_path:
            return metadata.stat_by_handle(self, root_fd, rel, follow)
        return metadata.stat_via_parent(self, root_fd, rel, follow)

    def chmod(self, root_fd: int, rel: bytes, mode: int, *, follow: bool) -> None:
        """See :meth:`Resolver.chmod`: through an O_PATH fd, or else ``fchmodat`` on the
        directory holding the name."""
        if self.use_o_path:
            metadata.chmod_by_handle(self, root_fd, rel, mode, follow)
        else:
            metadata.chmod_via_parent(self, root_fd, rel, mode, follow)


def _link_target(dirfd: int, name: bytes, cause: OSError) -> bytes:
    """The symlink's target, or the original error if ``name`` is not (or no longer) a symlink."""
    try:
        return _sys.readlinkat(dirfd, name)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT):
            raise cause from None
        raise
