"""The record of what a command changed, for an agent that is not root: an inotify watch on
every directory of the workspace, kept from command to command.

fanotify's filesystem mark (:mod:`safefs.sandbox.changes`) needs ``CAP_SYS_ADMIN`` in the user
namespace that owns the workspace's filesystem (the host's), which an ordinary user never has;
in a user namespace of its own the kernel refuses a filesystem mark (``EPERM``) and a mount
mark with directory events (``EINVAL``), and allows only marks on single inodes, which is what
inotify gives. So the workspace is walked once (the first command, as the repository search
is) and every directory gets a watch, added *before* it is listed: whatever is made in it after
is an event, whatever was made before is in the listing. From then on the kernel reports each
entry created, moved in, written or whose attributes changed as its directory (a watch
descriptor) and name, whoever changed it and however. A directory made or moved in is walked
when its event is read, watched and listed in the same order, and all of it counts as changed
(what happened in it before its watch was added is unknown, so all of it is judged).

Which path a watch descriptor stands for is kept as a tree (its parent's descriptor and its
name), moved when a rename of a directory is reported, and checked when used: the path is
resolved in the workspace (:class:`safefs.Root`) and must lead to the inode the watch was
added on. When it does not, or the kernel's queue overflowed
(``/proc/sys/fs/inotify/max_queued_events``), or a directory cannot be watched (the per-user
limit ``/proc/sys/fs/inotify/max_user_watches``, no read permission), the record is not
complete: :meth:`Span.directories` returns ``None``, the caller searches the whole workspace,
and the watches are made afresh for the next command.

One instance serves every command of a workspace, also those that run at once: each command
has its :class:`Span`, to which every event read while it runs is added, whichever command's
end or start read it.
"""

from __future__ import annotations

import errno
import os
import struct
import threading
from dataclasses import dataclass, field

import safefs
from safefs.sandbox import landlock

IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
# No IN_DONT_FOLLOW: the watch is added through /proc/self/fd/N, a link to the directory held.
MASK = IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR
_EVENT = struct.Struct("=iIII")  # wd, mask, cookie, len
READ_SIZE = 1 << 16
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Unwatchable(OSError):
    """A directory of the workspace could not be watched: the record would not be complete."""


@dataclass
class _Node:
    parent: int | None  # None: the workspace's top, or a directory moved out of it
    name: str
    ident: tuple[int, int]  # device and inode the watch was added on


@dataclass
class Span:
    """What changed while one command ran: watch descriptor -> names changed in it (an empty
    set: the directory itself)."""

    watch: Watch
    changed: dict[int, set[str]] = field(default_factory=dict)
    complete: bool = True
    open: bool = True

    def end(self) -> None:
        """Stop adding to it: read what the kernel holds now (the command is over)."""
        self.watch.finish(self)

    def directories(self) -> dict[str, set[str]] | None:
        """The workspace directories (canonical, relative; ``"."`` for its top) changed while
        the command ran, with the names changed in each; ``None`` when the record is not
        complete."""
        if self.open:
            self.end()
        return self.watch.paths(self)


class Watch:
    """An inotify instance watching every directory of ``root``'s tree; owns its fd
    (:meth:`close`). :meth:`begin` gives a :class:`Span`, or ``None`` where the kernel will
    not watch the whole tree."""

    def __init__(self, root: safefs.Root) -> None:
        self.root = root
        self.fd = -1
        self._nodes: dict[int, _Node] = {}
        self._children: dict[tuple[int, str], int] = {}
        self._spans: list[Span] = []
        self._lock = threading.Lock()
        self._top = -1
        self._unavailable = False  # the whole tree could not be watched: searched after each command

    # -- the tree of watches

    def _build(self) -> bool:
        """Watch every directory from the top; False when one cannot be."""
        native = landlock.native
        if native is None:
            return False
        fd = int(native.lib.sbx_inotify_init(IN_NONBLOCK | IN_CLOEXEC))
        if fd < 0:
            return False
        self.fd = fd
        self._nodes.clear()
        self._children.clear()
        try:
            self._top = self._walk(".", None, "", None)
        except (OSError, ValueError, safefs.PathEscapeError):
            self._close_fd()
            return False
        return True

    def _add(self, held: int, path: str, parent: int | None, name: str) -> tuple[int, list[str], list[str]]:
        """Watch the directory open on ``held`` (``path``) and then list it: its watch
        descriptor, its subdirectories and its other entries."""
        wd = int(landlock.native.lib.sbx_inotify_add_watch(self.fd, f"/proc/self/fd/{held}".encode(), MASK))
        if wd == -errno.EACCES:
            raise PermissionError(errno.EACCES, f"cannot watch {path}: {os.strerror(errno.EACCES)}")
        if wd < 0:
            raise Unwatchable(-wd, f"cannot watch {path}: {os.strerror(-wd)}")
        st = os.fstat(held)
        old = self._nodes.get(wd)
        if old is not None and old.parent is not None:
            self._children.pop((old.parent, old.name), None)
        self._nodes[wd] = _Node(parent, name, (st.st_dev, st.st_ino))
        if parent is not None:
            self._children[(parent, name)] = wd
        dirs: list[str] = []
        files: list[str] = []
        with os.scandir(held) as entries:
            for entry in entries:
                (dirs if entry.is_dir(follow_symlinks=False) else files).append(entry.name)
        return wd, dirs, files

    def _open_child(self, parent_fd: int, name: str, path: str, *, repair: bool) -> int | None:
        """The subdirectory ``name`` of ``parent_fd`` (a name from its listing: one component,
        never followed if it is a link now), or None when it is gone or replaced since (its
        parent's watch, added before the listing, records that). ``repair``: a directory left
        unreadable by a command (its files are the agent's) is made readable first."""
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except PermissionError:
            if not repair:
                raise
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None
            raise
        mode = self.root.stat(path, follow_symlinks=False).st_mode
        self.root.chmod(path, mode & 0o7777 | 0o700)
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)

    def _walk(self, path: str, parent: int | None, name: str, span_sets: list[Span] | None) -> int:
        """Watch ``path`` and everything below it, each directory watched before it is listed,
        through held fds (one per level, each child opened from its parent's); with
        ``span_sets``, each directory counts as changed, all its entries, in those spans (and
        one a command left unreadable is made readable: the first walk refuses it instead)."""
        repair = span_sets is not None
        if repair:
            mode = self.root.stat(path, follow_symlinks=False).st_mode
            if mode & 0o500 != 0o500:
                self.root.chmod(path, mode & 0o7777 | 0o700)
        with self.root.opendir(path) as sub:
            top_fd = os.open(".", _DIR_FLAGS, dir_fd=sub.fileno())
        levels: list[tuple[int, int, str, list[str]]] = []  # fd, watch, path, subdirectories left
        try:
            top, dirs, files = self._add(top_fd, path, parent, name)
        except BaseException:
            os.close(top_fd)
            raise
        try:
            levels.append((top_fd, top, path, dirs))
            for span in span_sets or ():
                span.changed.setdefault(top, set()).update(dirs, files)
            while levels:
                fd, wd, here, left = levels[-1]
                if not left:
                    levels.pop()
                    os.close(fd)
                    continue
                child = left.pop()
                where = child if here == "." else f"{here}/{child}"
                child_fd = self._open_child(fd, child, where, repair=repair)
                if child_fd is None:
                    continue
                try:
                    child_wd, dirs, files = self._add(child_fd, where, wd, child)
                except BaseException:
                    os.close(child_fd)
                    raise
                levels.append((child_fd, child_wd, where, dirs))
                for span in span_sets or ():
                    span.changed.setdefault(child_wd, set()).update(dirs, files)
        finally:
            for fd, _wd, _here, _left in levels:
                os.close(fd)
        return top

    def _path(self, wd: int) -> str | None:
        parts: list[str] = []
        seen = 0
        while wd != self._top:
            node = self._nodes.get(wd)
            if node is None or node.parent is None or seen > len(self._nodes):
                return None  # gone, or moved out of the workspace
            parts.append(node.name)
            wd = node.parent
            seen += 1
        return "/".join(reversed(parts)) or "."

    # -- reading the kernel's record

    def _drain(self) -> None:
        """Read every event queued; a directory made or moved in is watched and walked."""
        moved: dict[int, int | None] = {}  # cookie -> the watch of the directory moved away
        new: list[tuple[int, str]] = []
        while True:
            try:
                data = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                break
            if not data:
                break
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, cookie, length = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size : offset + _EVENT.size + length].split(b"\0", 1)[0]
                offset += _EVENT.size + length
                self._event(wd, mask, cookie, os.fsdecode(raw), moved, new)
                if self.fd < 0:
                    return  # the record is incomplete: the watches are made afresh
        for wd in moved.values():
            if wd is not None and wd in self._nodes:
                self._nodes[wd].parent = None  # moved out of the watched tree
        for parent, name in new:
            if self.fd < 0:
                return
            self._walk_new(parent, name)

    def _event(
        self,
        wd: int,
        mask: int,
        cookie: int,
        name: str,
        moved: dict[int, int | None],
        new: list[tuple[int, str]],
    ) -> None:
        if mask & IN_Q_OVERFLOW:
            self._incomplete()
            return
        if mask & IN_IGNORED:
            node = self._nodes.pop(wd, None)
            if node is not None and self._children.get((node.parent or -1, node.name)) == wd:
                del self._children[(node.parent or -1, node.name)]
            return
        if wd not in self._nodes:
            return
        for span in self._spans:
            names = span.changed.setdefault(wd, set())
            if name:
                names.add(name)
        if not mask & IN_ISDIR or not name:
            return
        if mask & IN_MOVED_FROM:
            moved[cookie] = self._children.pop((wd, name), None)
        elif mask & IN_MOVED_TO:
            child = moved.pop(cookie, None)
            if child is not None and child in self._nodes:
                self._nodes[child].parent, self._nodes[child].name = wd, name
                self._children[(wd, name)] = child
            else:
                new.append((wd, name))  # from outside the tree (or its pair not read yet)
        elif mask & IN_CREATE:
            new.append((wd, name))

    def _walk_new(self, parent: int, name: str) -> None:
        where = self._path(parent)
        if where is None:
            return  # made in a directory that has left the workspace since
        path = name if where == "." else f"{where}/{name}"
        try:
            if self.root.is_symlink(path) or not self.root.is_dir(path):
                return  # gone or replaced since: its own event says so
            self._walk(path, parent, name, self._spans)
        except (FileNotFoundError, NotADirectoryError):
            return
        except (OSError, ValueError, safefs.PathEscapeError):
            self._incomplete()  # an unwatchable directory: no complete record from here on

    def _incomplete(self) -> None:
        for span in self._spans:
            span.complete = False
        self._close_fd()

    def _close_fd(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = -1
        self._nodes.clear()
        self._children.clear()

    # -- the spans

    def begin(self) -> Span | None:
        """A span recording from now on; None where the whole tree cannot be watched."""
        with self._lock:
            if self._unavailable:
                return None
            if self.fd < 0 and not self._build():
                self._unavailable = True  # not tried again: each try would cost a whole walk
                return None
            self._drain()
            # the queue overflowed, or a new directory was unwatchable: made afresh
            if self.fd < 0 and not self._build():
                self._unavailable = True
                return None
            span = Span(self)
            self._spans.append(span)
            return span

    def finish(self, span: Span) -> None:
        with self._lock:
            if self.fd >= 0:
                self._drain()
            else:
                span.complete = False
            span.open = False
            if span in self._spans:
                self._spans.remove(span)

    def paths(self, span: Span) -> dict[str, set[str]] | None:
        """The span's directories by path, each checked to be the directory its watch was added
        on; None when the record is not complete or a path does not hold."""
        with self._lock:
            if not span.complete or self.fd < 0:
                return None
            found: dict[str, set[str]] = {}
            for wd, names in span.changed.items():
                node = self._nodes.get(wd)
                if node is None:
                    continue  # removed since: a directory that is gone holds nothing
                path = self._path(wd)
                if path is None:
                    continue  # moved out of the workspace
                try:
                    st = self.root.stat(path, follow_symlinks=False)
                except (OSError, ValueError, safefs.PathEscapeError):
                    st = None
                if st is None or (st.st_dev, st.st_ino) != node.ident:
                    self._incomplete()  # the tree of watches went wrong: made afresh next time
                    return None
                found.setdefault(path, set()).update(names)
            return found

    def close(self) -> None:
        with self._lock:
            self._close_fd()
