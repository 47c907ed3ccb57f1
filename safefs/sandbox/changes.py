"""The kernel's record of what a command changed: the directories in which it made, renamed,
wrote or changed an entry, without searching the tree.

A fanotify group with a filesystem mark on the workspace's filesystem is made before the
command starts and read after it ends. Every entry created, moved in, written or whose
attributes changed is reported by the kernel as its directory (a file handle) and its name,
whoever made the change and however (a rename into the workspace, a hard link, ``mkdir``, a
write through an fd opened before). The handles are opened again (``open_by_handle_at``) and
those in the workspace are the directories to judge: the cost is the number of changes, not
the size of the tree.

The record is complete or it is not used: when the kernel's queue overflowed (a command that
changed more than ``/proc/sys/fs/fanotify/max_queued_events`` entries in distinct places),
:meth:`ChangeRecord.directories` returns ``None`` and the caller searches the whole workspace
instead. A filesystem mark and opening handles need ``CAP_SYS_ADMIN`` and
``CAP_DAC_READ_SEARCH``: :func:`start` returns ``None`` for an agent that is not root, and
:class:`Recorders` gives the inotify watches of :mod:`safefs.sandbox.watch` instead.
"""

from __future__ import annotations

import errno
import os
import struct
import threading
from typing import Protocol

import safefs
from safefs.sandbox import landlock, watch

FAN_CLOEXEC = 0x1
FAN_NONBLOCK = 0x2
FAN_CLASS_NOTIF = 0x0
FAN_REPORT_FID = 0x200
FAN_REPORT_DIR_FID = 0x400
FAN_REPORT_NAME = 0x800
FAN_MARK_ADD = 0x1
FAN_MARK_REMOVE = 0x2
FAN_MARK_FILESYSTEM = 0x100
FAN_MODIFY = 0x2
FAN_ATTRIB = 0x4
FAN_MOVED_TO = 0x80
FAN_CREATE = 0x100
FAN_ONDIR = 0x40000000
FAN_Q_OVERFLOW = 0x4000
FAN_EVENT_INFO_TYPE_FID = 1
FAN_EVENT_INFO_TYPE_DFID_NAME = 2
FAN_EVENT_INFO_TYPE_DFID = 3
AT_FDCWD = -100

EVENTS = FAN_CREATE | FAN_MOVED_TO | FAN_MODIFY | FAN_ATTRIB | FAN_ONDIR
_METADATA = struct.Struct("=IBBHQii")  # event_len, vers, reserved, metadata_len, mask, fd, pid
_INFO = struct.Struct("=BBH")  # info_type, pad, len
_FSID = 8
_HANDLE = struct.Struct("=Ii")  # handle_bytes, handle_type
READ_SIZE = 1 << 16


class ChangeRecord:
    """A fanotify group that watches the workspace's filesystem between :meth:`begin` and
    :meth:`end`; owns its fd (:meth:`close`). A group is reused from command to command: its
    destruction waits for the kernel's grace period (about 10 ms), its mark's does not."""

    def __init__(self, root: safefs.Root, fd: int) -> None:
        self.root = root
        self.fd = fd
        # open_by_handle_at needs a descriptor of the filesystem that is not O_PATH
        self.mount_fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=root.fileno())
        self.overflowed = False
        self._handles: dict[bytes, set[str]] = {}

    def _mark(self, flags: int) -> int:
        native = landlock.native
        path = native.ffi.new("char[]", b".")
        return int(
            native.lib.sbx_fanotify_mark(
                self.fd, flags | FAN_MARK_FILESYSTEM, EVENTS, self.root.fileno(), path
            )
        )

    def begin(self) -> bool:
        """Forget what was read before and watch from now on; False when the kernel refuses."""
        self._drain()
        self._handles.clear()
        self.overflowed = False
        return self._mark(FAN_MARK_ADD) >= 0

    def end(self) -> None:
        """Stop watching (the events recorded stay to be read)."""
        if self._mark(FAN_MARK_REMOVE) < 0:
            self.overflowed = True  # still watching: what it records next is not this command's

    def close(self) -> None:
        for fd in (self.fd, self.mount_fd):
            if fd >= 0:
                os.close(fd)
        self.fd = self.mount_fd = -1

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                return
            if not data:
                return
            self._parse(data)

    def _parse(self, data: bytes) -> None:
        offset = 0
        while offset + _METADATA.size <= len(data):
            event_len, _vers, _res, meta_len, mask, fd, _pid = _METADATA.unpack_from(data, offset)
            if event_len < _METADATA.size:
                self.overflowed = True  # not an event this code understands: judge everything
                return
            if fd >= 0:
                os.close(fd)  # not asked for in fid mode; never leaked if a kernel sends one
            if mask & FAN_Q_OVERFLOW:
                self.overflowed = True
            info = offset + meta_len
            end = offset + event_len
            while info + _INFO.size <= end:
                kind, _pad, length = _INFO.unpack_from(data, info)
                if length < _INFO.size:
                    break
                if kind in (FAN_EVENT_INFO_TYPE_DFID_NAME, FAN_EVENT_INFO_TYPE_DFID):
                    start = info + _INFO.size + _FSID
                    size, _type = _HANDLE.unpack_from(data, start)
                    handle = bytes(data[start : start + _HANDLE.size + size])
                    names = self._handles.setdefault(handle, set())
                    if kind == FAN_EVENT_INFO_TYPE_DFID_NAME:
                        raw = data[start + _HANDLE.size + size : info + length].split(b"\0", 1)[0]
                        names.add(os.fsdecode(raw))
                info += length
            offset = end

    def directories(self) -> dict[str, set[str]] | None:
        """The workspace directories (canonical, relative; ``"."`` for its top) in which an entry
        changed since :func:`start`, each with the names changed; ``None`` when the record is
        not complete."""
        self._drain()
        if self.overflowed:
            return None
        lib, ffi = landlock.native.lib, landlock.native.ffi
        found: dict[str, set[str]] = {}
        for handle, names in self._handles.items():
            buf = ffi.new("char[]", handle)
            fd = int(lib.sbx_open_by_handle(self.mount_fd, buf, os.O_PATH | os.O_CLOEXEC))
            if fd < 0:
                if -fd in (errno.ESTALE, errno.ENOENT):
                    continue  # removed since: a directory that is gone holds nothing
                return None  # cannot be judged: the caller searches instead
            try:
                path = _in_workspace(self.root, fd)
            finally:
                os.close(fd)
            if path is not None:
                found.setdefault(path, set()).update(names)
        return found


def _in_workspace(root: safefs.Root, fd: int) -> str | None:
    """The workspace path of the directory open on ``fd``, or None when it lies elsewhere (the
    filesystem mark sees every change on the filesystem). Its kernel path is checked by the
    inode it leads to now."""
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
        relative = root.relative(where)
        here = root.stat(relative, follow_symlinks=False)
    except (safefs.PathEscapeError, OSError, ValueError):
        return None
    st = os.fstat(fd)
    if (here.st_dev, here.st_ino) != (st.st_dev, st.st_ino):
        return None
    resolved: str = root.resolve(relative)
    return resolved


def start(root: safefs.Root) -> ChangeRecord | None:
    """A record of the changes on the workspace's filesystem from now on (:meth:`ChangeRecord.begin`
    done), or None where the kernel will not keep one for this process (not root, no fanotify)."""
    record = group(root)
    if record is not None and not record.begin():
        record.close()
        return None
    return record


def group(root: safefs.Root) -> ChangeRecord | None:
    """A fanotify group reporting directories and names, not watching yet; None where the
    kernel will not make one for this process."""
    native = landlock.native
    if native is None:
        return None
    flags = FAN_CLOEXEC | FAN_NONBLOCK | FAN_CLASS_NOTIF | FAN_REPORT_DIR_FID | FAN_REPORT_NAME
    fd = int(native.lib.sbx_fanotify_init(flags, os.O_RDONLY | os.O_CLOEXEC))
    if fd < 0:
        return None
    try:
        return ChangeRecord(root, fd)
    except OSError:
        os.close(fd)
        return None


class Record(Protocol):
    """What a command's record gives: :meth:`end` when the command is over, then the
    directories changed (``None``: not complete, search the workspace)."""

    def end(self) -> None: ...

    def directories(self) -> dict[str, set[str]] | None: ...


class Recorders:
    """The records of one workspace, one lent to each command (commands may run at once), kept
    until :meth:`close`: fanotify groups where the kernel gives them (root), else the watches
    of :mod:`safefs.sandbox.watch` (an ordinary user), else none (the workspace is searched
    after each command)."""

    def __init__(self, root: safefs.Root) -> None:
        self.root = root
        self._free: list[ChangeRecord] = []
        self._lock = threading.Lock()
        self._unavailable = False
        self._watch: watch.Watch | None = None

    def take(self) -> Record | None:
        """A record from now on, or None where there can be none."""
        with self._lock:
            if self._unavailable:
                return self._watched()
            record = self._free.pop() if self._free else None
        if record is None:
            record = group(self.root)
        if record is None or not record.begin():
            if record is not None:
                record.close()
            with self._lock:
                self._unavailable = True
                return self._watched()
        return record

    def _watched(self) -> Record | None:
        if self._watch is None:
            self._watch = watch.Watch(self.root)
        return self._watch.begin()

    def give_back(self, record: Record) -> None:
        if isinstance(record, ChangeRecord):
            with self._lock:
                self._free.append(record)

    def close(self) -> None:
        with self._lock:
            free, self._free = self._free, []
            watched, self._watch = self._watch, None
        for record in free:
            record.close()
        if watched is not None:
            watched.close()
