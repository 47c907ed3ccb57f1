"""Creating extracted members through a :class:`safefs.Root`: every name is resolved by the Root,
so no member, link or swapped directory can put anything outside it.

A regular file is streamed, so memory is one chunk whatever its size. A member that fails (a
truncated archive, a full disk, a refusal) leaves no half-written file: a new file is removed
again, and an existing one is only ever replaced by a rename once the new content is complete.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import IO

from safefs import Root
from safefs.replacing import create_temp_beside

CHUNK = 64 * 1024  # bytes copied per read: memory per member, whatever its size


class Attributes:
    """What is applied to a finished file before it takes its name (None: leave as created)."""

    __slots__ = ("gid", "mode", "mtime", "uid")

    def __init__(
        self, mode: int | None = None, mtime: float | None = None, uid: int = -1, gid: int = -1
    ) -> None:
        self.mode = mode
        self.mtime = mtime
        self.uid = uid
        self.gid = gid


def _split(name: str) -> tuple[str, str]:
    parent, _, base = name.rpartition("/")
    return parent or ".", base


class MemberWriter:
    """Creates members beneath ``root``. Names are root-relative and ``/``-separated (the
    callers normalise them; ``..`` and absolute names are left for the Root to judge). Use as a
    context manager."""

    def __init__(self, root: Root) -> None:
        self.root = root
        self._made: set[str] = {"."}

    def __enter__(self) -> MemberWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.forget_directories()

    def forget_directories(self) -> None:
        """Forget which directories were made: a link or a removal may have changed what a name
        designates, so the next member's parents are asked of the Root again."""
        self._made = {"."}

    def make_parents(self, name: str) -> None:
        """Create the directories above ``name`` that are missing (default mode)."""
        parent = _split(name)[0]
        if parent not in self._made:
            self.root.mkdir(parent, parents=True, exist_ok=True)
            self._made.add(parent)

    def make_directory(self, name: str, mode: int | None) -> None:
        """Create directory ``name`` (an existing directory is accepted, as tarfile does):
        ``mode`` None is the system's default mode, otherwise 0o700 until :meth:`set_mode`."""
        self.make_parents(name)
        self.root.mkdir(name, 0o777 if mode is None else 0o700, exist_ok=True)
        self._made.add(name)

    def write_file(self, name: str, source: IO[bytes], attrs: Attributes) -> None:
        """Stream ``source`` into the regular file ``name`` and give it its attributes.

        A name that is free is created exclusively (``O_EXCL``: never through a link) and, if
        the member fails, removed. A name that is taken is replaced by a rename once the new
        content is complete, so a failure leaves the old file as it was."""
        self.make_parents(name)
        try:
            out = self.root.open(name, "xb")
        except FileExistsError:
            self._replace_file(name, source, attrs)
            return
        try:
            with out:
                _fill(out, source, attrs)
        except BaseException:
            _discard(self.root, name)
            raise

    def _replace_file(self, name: str, source: IO[bytes], attrs: Attributes) -> None:
        temp, out = create_temp_beside(self.root, name)
        try:
            with out:
                _fill(out, source, attrs)
            self.root.rename(temp, name)
        except BaseException:
            _discard(self.root, temp)
            raise

    def make_symlink(self, name: str, target: str) -> None:
        """Create symlink ``name`` -> ``target``, replacing a file or link of that name. The
        Root refuses a target that would lead out of it (PathEscapeError)."""
        self.make_parents(name)
        self._replace_with(name, lambda: self.root.symlink(target, name))

    def make_hardlink(self, name: str, source: str) -> None:
        """Hard link ``name`` to the member already extracted at ``source`` (root-relative);
        FileNotFoundError when there is none."""
        self.make_parents(name)
        self._replace_with(name, lambda: self.root.link(source, name))

    def _replace_with(self, name: str, create: Callable[[], None]) -> None:
        self.forget_directories()  # a link may change what later names designate
        try:
            create()
        except FileExistsError:
            st = self.root.lstat(name)
            if stat.S_ISDIR(st.st_mode):
                raise
            self.root.remove(name)
            create()

    def set_mode(self, name: str, mode: int) -> None:
        """chmod ``name`` (the directory itself: it is never opened)."""
        self.root.chmod(name, mode)


def _fill(out: IO[bytes], source: IO[bytes], attrs: Attributes) -> None:
    read, write = source.read, out.write
    while chunk := read(CHUNK):
        write(chunk)
    out.flush()  # before the times are set: a later write would change them
    _apply(out.fileno(), attrs)


def _apply(fd: int, attrs: Attributes) -> None:
    if attrs.uid != -1 or attrs.gid != -1:
        os.fchown(fd, attrs.uid, attrs.gid)
    if attrs.mode is not None:
        os.fchmod(fd, attrs.mode)
    if attrs.mtime is not None:
        os.utime(fd, (attrs.mtime, attrs.mtime))


def _discard(root: Root, path: str) -> None:
    """Remove what a failed member left. Should that fail too (the directory was swapped for a
    link meanwhile), the partial file stays where it was made: inside, never outside."""
    try:
        root.remove(path)
    except OSError:
        pass
