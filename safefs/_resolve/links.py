"""The link guarantee: every symlink safefs creates or moves leads beneath the root.

Threat model: docs/threat-model.md.

A symlink that :meth:`Root.symlink` creates, that :meth:`Root.rename` or :meth:`Root.link` puts in
a new place, and every symlink inside a directory that :meth:`Root.rename` moves, is judged at the
moment of the operation by the resolution :meth:`Root.resolve` uses with ``strict=False``, with
the rules a program following links would meet (``symlinks="beneath"``): component by component
from the link's own directory, links on the way followed within one budget, ``..`` physical, a
missing tail taken as a write with ``parents=True`` would create it. The judge sees the tree as
the operation will leave it: the moved entry already at its new name, its old name empty.

**Where it will be made.** The judge starts from the directory fd the operation acts on, never
from a path looked up again by name: the directories above it are found by climbing ``..`` from
that fd, and ``..`` in a target pops that stack. Right before the system call, and again right
after it, the climb is repeated: if the chain of directories (device and inode, level by level)
is not the one judged, or the moved entry is not the one judged, the operation is taken back
(the new link removed, the moved entry moved back) and refused with ``EAGAIN``.

**What it costs.** One :class:`Judge` serves one operation. Each link met on the way is followed
once per operation: its outcome is kept, keyed by the chain of directories it sits in and its
name, and a second meeting costs only the steps from where the judge stands to where the link
led (re-opened by name, each checked against the device and inode recorded). Every step counts
against :data:`WORK_BUDGET`; when it is spent the operation is refused.

It fails closed: an escape is a :class:`~safefs.errors.PathEscapeError`, and any other error met
while judging (a directory that cannot be listed or searched, a loop, a file used as a
directory, EMFILE, a spent budget) refuses the operation with that errno. One exception: a name
the kernel refuses as too long (ENAMETOOLONG) in an existing directory can never be looked up
there, so a link that needs it can never be followed past it: it is judged as dangling. The tree
of a moved directory is listed with one held fd per level (fds bounded by its depth, not its
width).

Out of scope: a later change elsewhere (another rename, a directory made or removed, by safefs or
anyone) that alters what some other link means, and a link made by another program inside a
moved directory while the operation runs.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from types import TracebackType
from typing import Final

from safefs import _fastpath, _sys
from safefs._resolve.walk import MAX_SYMLINKS, PATH_MAX
from safefs.errors import PathEscapeError, error

# The judge looks through directories as path lookup does: O_PATH needs only search permission.
_LOOKUP_FLAGS: Final = _sys.open_flags(_sys.dir_flags(True))
_LIST_FLAGS: Final = _sys.open_flags(_sys.O_DIRECTORY)  # O_RDONLY: listing needs read permission

# Steps (a component looked up, a ``..``, a level climbed or re-entered) one operation may take
# to judge its links. A symlink alone can cost the kernel 40 links of 2,048 components; this
# allows that a dozen times over, and a moved tree of many links sharing their chains.
WORK_BUDGET: Final = 1 << 20

_REFUSED: Final = "symlink refused: where it leads cannot be judged"
_MOVED: Final = "the directory moved while the link was judged"

Ident = tuple[int, int]
_Levels = tuple[tuple[Ident, int, bytes | None], ...]
# A memo entry: links used, then (for a link met as a directory) the levels it leads to and how
# many names past them are missing, or the error it met.
_Outcome = tuple[int, _Levels | None, int, OSError | None]
_AS_DIR, _FINAL, _FINAL_SLASH = 0, 1, 2


class _Dangling(Exception):
    """A name the kernel refused as too long where it was looked up: no lookup passes it."""


class _Level:
    """A directory on the judge's stack: its fd (``owned``: opened by the walk, closed when
    popped; else held by the judge or the tree listing), device and inode, the id of the chain of
    directories from the root to it, and the name it was entered by (None for the directories
    found by climbing)."""

    __slots__ = ("chain", "fd", "ident", "name", "owned")

    def __init__(self, fd: int, ident: Ident, chain: int, name: bytes | None, owned: bool) -> None:
        self.fd = fd
        self.ident = ident
        self.chain = chain
        self.name = name
        self.owned = owned


def _ident(st: os.stat_result) -> Ident:
    return (st.st_dev, st.st_ino)


def _may_hold_links(st: os.stat_result) -> bool:
    """A symlink, or a directory (which may hold some): what a move must have judged."""
    return stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode)


def _refused(exc: OSError) -> OSError:
    """The refusal for an error met while judging (an escape as it is)."""
    if isinstance(exc, PathEscapeError):
        return exc
    code = exc.errno if exc.errno is not None else errno.EINVAL
    return error(code, f"{_REFUSED} ({exc.strerror or exc})")


class Judge:
    """The link judge of one operation that makes or moves an entry named ``name`` in the
    directory ``dir_fd`` holds (borrowed: the caller keeps it open)."""

    def __init__(self, root_fd: int, dir_fd: int, name: bytes) -> None:
        self.root_fd = root_fd
        self.dir_fd = dir_fd
        self.name = name
        self.work = 0
        self.links = 0
        self.missing = 0
        self.memo: dict[tuple[int, bytes, int], _Outcome] = {}
        self.chains: dict[tuple[int, Ident], int] = {}
        self.moved: dict[tuple[Ident, bytes], tuple[int, bytes]] = {}
        self.gone: set[tuple[Ident, bytes]] = set()
        self.entry: Ident | None = None  # the entry a move judged (device, inode)
        self.source: tuple[int, bytes] | None = None
        self.stack: list[_Level] = []
        self.root = _Level(root_fd, (-1, -1), 0, b"", False)
        self.base: list[_Level] = []
        self.base_fds: list[int] = []
        self.started = False  # whether something was judged (then the checks run too)

    def _start(self) -> None:
        """Find the chain of directories from the root down to the one acted on."""
        if self.started:
            return
        self.started = True
        try:
            self.root.ident = _ident(_sys.fstat(self.root_fd))
            self.base, self.base_fds = self._chain_of(self.dir_fd)
        except OSError as exc:
            raise _refused(exc) from None

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        self._unwind(0)
        fds, self.base_fds, self.base = self.base_fds, [], []
        _sys.close_all(fds)

    def __enter__(self) -> Judge:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- what is judged ----------------------------------------------------------------------

    def symlink(self, target: bytes) -> None:
        """A new symlink ``name`` -> ``target`` in the directory: PathEscapeError if it leads
        outside the root, another OSError if where it leads cannot be judged."""
        if target.startswith(b"/"):
            raise PathEscapeError()  # followed from the host's "/", whatever the root's mode
        if len(target) >= PATH_MAX:
            raise _refused(error(errno.ENAMETOOLONG))
        self._start()
        self._judged(target, self.base)

    def move(self, source_fd: int, source_name: bytes, *, keeps_source: bool) -> None:
        """The entry ``source_name`` of ``source_fd`` is about to be renamed (``keeps_source``
        False) or hard linked to ``name``: if it is a symlink, it is judged there; if it is a
        directory being renamed, so is every symlink inside it. A source that is neither, or is
        missing, has nothing to judge (the operation reports the rest), but the entry is still
        checked around the system call: another process may put a symlink under that name in
        the meantime (a missing source must still be missing, and nothing may be made)."""
        self.source = (source_fd, source_name)
        try:
            st = _sys.fstatat(source_fd, source_name)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise _refused(exc) from None
        self.entry = _ident(st)
        is_link = stat.S_ISLNK(st.st_mode)
        if not is_link and (keeps_source or not stat.S_ISDIR(st.st_mode)):
            return
        self._start()
        try:
            self.moved[self._base_level().ident, self.name] = (source_fd, source_name)
            if not keeps_source:
                self.gone.add((_ident(_sys.fstat(source_fd)), source_name))
            if is_link:
                target = _sys.readlinkat(source_fd, source_name)
            else:
                top = _sys.openat(source_fd, source_name, _LIST_FLAGS)
        except OSError as exc:
            raise _refused(exc) from None
        if is_link:
            self.symlink(target)
        else:
            self._tree(top)

    def carry_out(self, make: Callable[[], None], undo: Callable[[], None]) -> None:
        """``make()`` the judged change, the chain of directories (and the moved entry) checked
        right before and right after it; if either check fails, ``undo()`` after, and EAGAIN.
        The chain is checked when a link was judged; the moved entry whenever there is one,
        judged or not: an entry that was no symlink when it was looked at may be one when it is
        moved."""
        if not self.started and self.source is None:
            make()
            return
        self._verify(made=False)
        make()
        try:
            self._verify(made=True)
        except OSError:
            try:
                undo()
            except OSError:
                pass
            raise

    # -- the checks around the system call ---------------------------------------------------

    def _verify(self, *, made: bool) -> None:
        if self.started:
            try:
                now, fds = self._chain_of(self.dir_fd)
            except OSError:
                raise error(errno.EAGAIN, _MOVED) from None
            _sys.close_all(fds)
            same = [lv.ident for lv in now] == [lv.ident for lv in self.base]
            if not same:
                raise error(errno.EAGAIN, _MOVED)
        if self.source is None:
            return
        fd, name = (self.dir_fd, self.name) if made else self.source
        try:
            st: os.stat_result | None = _sys.fstatat(fd, name)
        except OSError:
            st = None
        if (None if st is None else _ident(st)) == self.entry:
            return  # the entry looked at (or, for a missing source, still nothing)
        if made and not self.started and (st is None or not _may_hold_links(st)):
            # Nothing was judged, and what stands there now leads nowhere: another writer's
            # file that replaced the one moved (the last writer wins, as without safefs).
            return
        raise error(errno.EAGAIN, "the entry changed while it was judged")

    def _chain_of(self, fd: int) -> tuple[list[_Level], list[int]]:
        """The directories from the root (left out) down to the one ``fd`` holds, found by
        climbing ``..`` through fds, and the fds opened for them (the caller's to close)."""
        ident = _ident(_sys.fstat(fd))
        if ident == self.root.ident:
            return [], []
        found = [(fd, ident, False)]
        cur = fd
        try:
            while True:
                self._spend(1)
                up = _sys.openat(cur, b"..", _LOOKUP_FLAGS)
                try:
                    above = _ident(_sys.fstat(up))
                except BaseException:
                    _sys.close(up)
                    raise
                if above == self.root.ident or above == ident:
                    _sys.close(up)
                    if above == ident:  # reached "/" without meeting the root
                        raise PathEscapeError()
                    break
                found.append((up, above, True))
                cur, ident = up, above
        except BaseException:
            _sys.close_all([f for f, _, owned in found if owned])
            raise
        levels = []
        chain = 0
        for f, i, _owned in reversed(found):
            chain = self._chain(chain, i)
            levels.append(_Level(f, i, chain, None, False))
        return levels, [f for f, _, owned in found if owned]

    # -- the walk ----------------------------------------------------------------------------

    def _chain(self, parent: int, ident: Ident) -> int:
        key = (parent, ident)
        found = self.chains.get(key)
        if found is None:
            found = self.chains[key] = len(self.chains) + 1
        return found

    def _spend(self, steps: int) -> None:
        self.work += steps
        if self.work > WORK_BUDGET:
            raise error(errno.ELOOP, "judging the links takes more work than allowed")

    def _base_level(self) -> _Level:
        return self.base[-1] if self.base else self.root

    def _here(self) -> _Level:
        return self.stack[-1] if self.stack else self.root

    def _unwind(self, depth: int) -> None:
        stack = self.stack
        while len(stack) > depth:
            lv = stack.pop()
            if lv.owned:
                _sys.close(lv.fd)

    def _judged(self, target: bytes, levels: list[_Level]) -> None:
        """Judge ``target`` followed from the directory on top of ``levels`` (the root below
        them): an escape or a refusal is raised."""
        self._unwind(0)
        self.stack.extend(levels)
        self.links = 0
        self.missing = 0
        try:
            self._path(target)
        except _Dangling:
            return
        except OSError as exc:
            raise _refused(exc) from None
        finally:
            self._unwind(0)

    def _place(self, here: _Level, name: bytes) -> tuple[int, bytes]:
        """Where the entry ``name`` of ``here`` will be once the operation is done."""
        if self.moved or self.gone:
            key = (here.ident, name)
            there = self.moved.get(key)
            if there is not None:
                return there
            if key in self.gone:
                raise error(errno.ENOENT)
        return here.fd, name

    def _path(self, path: bytes) -> None:
        """Walk ``path``: every component as a directory but the last, which may be anything."""
        todo = path.split(b"/")
        trailing = False
        while len(todo) > 1 and not todo[-1]:
            todo.pop()
            trailing = True
        last = todo.pop() or b"."
        for comp in todo:
            self._dir(comp)
        self._last(last, trailing)

    def _up(self) -> None:
        if self.missing:
            self.missing -= 1
        elif self.stack:
            self._unwind(len(self.stack) - 1)
        else:
            raise PathEscapeError()

    def _dir(self, comp: bytes) -> None:
        """One component that must be a directory (or missing)."""
        self._spend(1)
        if comp == b"" or comp == b".":
            return
        if comp == b"..":
            self._up()
            return
        if self.missing:
            self.missing += 1
            return
        here = self._here()
        try:
            at, entry = self._place(here, comp)
            fd = _sys.open_component(at, entry, _LOOKUP_FLAGS)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                self.missing = 1
                return
            if exc.errno == errno.ENAMETOOLONG:
                raise _Dangling() from None
            if exc.errno != errno.ELOOP and exc.errno != errno.ENOTDIR:
                raise
            self._through(here, comp, at, entry, exc)
            return
        self._push(here, fd, comp, None)

    def _push(self, here: _Level, fd: int, name: bytes, expect: Ident | None) -> None:
        try:
            ident = _ident(_sys.fstat(fd))
        except BaseException:
            _sys.close(fd)
            raise
        if expect is not None and ident != expect:
            _sys.close(fd)
            raise error(errno.EAGAIN, _MOVED)
        self.stack.append(_Level(fd, ident, self._chain(here.chain, ident), name, True))

    def _follow(self, at: int, entry: bytes, cause: OSError) -> bytes:
        """The target of the symlink ``entry`` of ``at``, charged to the budget of 40."""
        try:
            target = _sys.readlinkat(at, entry)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOENT):
                raise cause from None  # not (or no longer) a symlink
            raise
        self.links += 1
        if self.links > MAX_SYMLINKS or _fastpath.is_magic_link(at, target):
            raise error(errno.ELOOP)
        if target.startswith(b"/"):
            raise PathEscapeError()
        return target

    def _recall(self, key: tuple[int, bytes, int]) -> _Outcome | None:
        """A link already followed from the same place in this operation, as it came out."""
        hit = self.memo.get(key)
        if hit is None:
            return None
        used, levels, _missing, exc = hit
        if self.links + used > MAX_SYMLINKS:
            raise error(errno.ELOOP)
        if exc is not None:
            raise (
                PathEscapeError() if isinstance(exc, PathEscapeError) else error(exc.errno or 0, exc.strerror)
            )
        if levels is not None and not self._reachable(levels):
            return None
        self.links += used
        return hit

    def _keep(self, key: tuple[int, bytes, int], start: int, exc: OSError | None, end: bool) -> None:
        if exc is not None and exc.errno in (errno.ELOOP, errno.EAGAIN):
            return  # depends on the budget used before, or on a change: never reused
        levels = tuple((lv.ident, lv.chain, lv.name) for lv in self.stack) if end else None
        self.memo[key] = (self.links - start, levels, self.missing, exc)

    def _through(self, here: _Level, comp: bytes, at: int, entry: bytes, cause: OSError) -> None:
        """``comp`` of ``here`` is a symlink met as a directory: follow it (once per operation)."""
        key = (here.chain, comp, _AS_DIR)
        hit = self._recall(key)
        if hit is not None:
            self._goto(hit[1] or ())
            self.missing = hit[2]
            return
        start = self.links
        try:
            for part in self._follow(at, entry, cause).split(b"/"):
                self._dir(part)
        except OSError as exc:
            self._keep(key, start, exc, False)
            raise
        self._keep(key, start, None, True)

    def _last(self, name: bytes, trailing: bool) -> None:
        """The final component: anything, or missing; a symlink is followed."""
        self._spend(1)
        if name == b"..":
            self._up()
            return
        if name == b"." or self.missing:
            return
        here = self._here()
        try:
            at, entry = self._place(here, name)
            st = _sys.fstatat(at, entry)
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                raise _Dangling() from None
            raise
        if stat.S_ISLNK(st.st_mode):
            key = (here.chain, name, _FINAL_SLASH if trailing else _FINAL)
            if self._recall(key) is not None:
                return
            start = self.links
            try:
                target = self._follow(at, entry, error(errno.ELOOP))
                self._path(target + b"/" if trailing else target)
            except OSError as exc:
                self._keep(key, start, exc, False)
                raise
            self._keep(key, start, None, False)
        elif trailing and not stat.S_ISDIR(st.st_mode):
            raise error(errno.ENOTDIR)  # "file/": a file used as a directory

    def _common(self, levels: _Levels) -> int:
        stack = self.stack
        k = min(len(stack), len(levels))
        while k and stack[k - 1].chain != levels[k - 1][1]:
            k -= 1
        return k

    def _reachable(self, levels: _Levels) -> bool:
        """Whether every level past the part shared with the stack has a name to enter it by."""
        return all(name is not None for _, _, name in levels[self._common(levels) :])

    def _goto(self, levels: _Levels) -> None:
        """Stand where a remembered link led: back to the part shared with the stack, then down
        by name, each directory checked against the device and inode it had."""
        k = self._common(levels)
        self._spend(len(self.stack) - k + len(levels) - k)
        self._unwind(k)
        for ident, _chain, name in levels[k:]:
            assert name is not None  # _reachable said so
            here = self._here()
            at, entry = self._place(here, name)
            self._push(here, _sys.open_component(at, entry, _LOOKUP_FLAGS), name, ident)

    def _tree(self, top: int) -> None:
        """Judge every symlink in the directory tree ``top`` holds (closed here), as if it stood
        at ``name`` in the directory. Depth first, one held fd per level: each level's names are
        listed at once and its subdirectories entered one at a time."""
        start = self._base_level()
        levels: list[tuple[_Level, list[tuple[bytes, bool, bool]]]] = []
        try:
            try:
                ident = _ident(_sys.fstat(top))
                entries = _sys.list_dir(top)
            except BaseException:
                _sys.close(top)
                raise
            top_level = _Level(top, ident, self._chain(start.chain, ident), self.name, False)
            levels.append((top_level, entries))
            while levels:
                level, todo = levels[-1]
                if not todo:
                    levels.pop()
                    _sys.close(level.fd)
                    continue
                name, is_dir, is_link = todo.pop()
                self._spend(1)
                if is_link:
                    held = self.base + [lv for lv, _ in levels]
                    self._judged(_sys.readlinkat(level.fd, name), held)
                elif is_dir:
                    child = _sys.openat(level.fd, name, _LIST_FLAGS)
                    try:
                        ident = _ident(_sys.fstat(child))
                        entries = _sys.list_dir(child)
                    except BaseException:
                        _sys.close(child)
                        raise
                    levels.append(
                        (_Level(child, ident, self._chain(level.chain, ident), name, False), entries)
                    )
        except OSError as exc:
            raise _refused(exc) from None
        finally:
            for level, _todo in levels:
                _sys.close(level.fd)
