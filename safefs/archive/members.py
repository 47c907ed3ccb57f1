"""Creating extracted members through a :class:`safefs.Root`: every name is resolved by the Root,
so no member, link or swapped directory can put anything outside it.

A regular file is streamed, so memory is one chunk whatever its size. A member that fails (a
truncated archive, a full disk, a refusal, a limit) never removes or damages what was there: a
new file is removed again, and an existing name, whether file, symlink or hard link, is only ever
replaced by a rename once the new entry is complete.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from typing import IO

from safefs import Root
from safefs.replacing import create_temp_beside, temp_path_beside

from .limits import UNLIMITED, Budget

CHUNK = 64 * 1024  # bytes copied per read: memory per member, whatever its size


class BadMember(ValueError):
    """A member that cannot be made as the archive describes it (a NUL in its name, a sparse
    map out of order, a time out of range); the member is skipped."""


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


class Sparse:
    """A sparse member's layout: its apparent ``size`` and the ``(offset, length)`` runs of data
    (the rest are holes), checked to be in order, apart and within the size."""

    __slots__ = ("runs", "size")

    def __init__(self, runs: Sequence[tuple[int, int]], size: int) -> None:
        end = 0
        kept = []
        for offset, length in runs:
            if length == 0 and 0 <= offset <= size:
                continue  # GNU's map pads with empty runs, and ends with one at the size
            if offset < end or length < 0 or offset + length > size:
                raise BadMember("bad sparse map")
            end = offset + length
            kept.append((offset, length))
        self.runs = kept
        self.size = size


def _split(name: str) -> tuple[str, str]:
    parent, _, base = name.rpartition("/")
    return parent or ".", base


class MemberWriter:
    """Creates members beneath ``root``. Names are root-relative and ``/``-separated (the
    callers normalise them; ``..`` and absolute names are left for the Root to judge). Use as a
    context manager. ``budget`` counts the bytes written; ``keep_old`` refuses to replace an
    existing file or link (FileExistsError), as ``tar --keep-old-files``."""

    def __init__(self, root: Root, budget: Budget | None = None, *, keep_old: bool = False) -> None:
        self.root = root
        self.budget = budget if budget is not None else Budget(UNLIMITED, None)
        self.keep_old = keep_old
        self._made: set[str] = {"."}
        self._directories: dict[str, tuple[int, int]] = {}  # name -> (st_dev, st_ino) made or kept

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
        """Create directory ``name`` (an existing directory is accepted, as tarfile does; a
        symlink of that name is replaced, as GNU tar does, never followed): ``mode`` None is the
        system's default mode, otherwise 0o700 until :meth:`set_mode`."""
        self.make_parents(name)
        try:
            self.root.mkdir(name, 0o777 if mode is None else 0o700)
        except FileExistsError:
            st = self.root.lstat(name)
            if stat.S_ISLNK(st.st_mode):
                self.forget_directories()
                self.root.remove(name)
                self.root.mkdir(name, 0o777 if mode is None else 0o700)
            elif not stat.S_ISDIR(st.st_mode):
                raise
        st = self.root.lstat(name)
        self._directories[name] = (st.st_dev, st.st_ino)
        self._made.add(name)

    def write_file(
        self, name: str, source: IO[bytes], attrs: Attributes, sparse: Sparse | None = None
    ) -> None:
        """Stream ``source`` into the regular file ``name`` and give it its attributes; a
        ``sparse`` layout is written as it is (holes sought over, the size set by truncate).

        A name that is free is created exclusively (``O_EXCL``: never through a link) and, if
        the member fails, removed. A name that is taken is replaced by a rename once the new
        content is complete, so a failure leaves the old file as it was."""
        self.make_parents(name)
        try:
            out = self.root.open(name, "xb")
        except FileExistsError:
            if self.keep_old:
                raise
            self._replace_file(name, source, attrs, sparse)
            return
        try:
            with out:
                self._fill(out, source, attrs, sparse)
        except BaseException:
            _discard(self.root, name)
            raise

    def _replace_file(self, name: str, source: IO[bytes], attrs: Attributes, sparse: Sparse | None) -> None:
        temp, out = create_temp_beside(self.root, name)
        try:
            with out:
                self._fill(out, source, attrs, sparse)
            self.root.rename(temp, name)
        except BaseException:
            _discard(self.root, temp)
            raise

    def _fill(self, out: IO[bytes], source: IO[bytes], attrs: Attributes, sparse: Sparse | None) -> None:
        if sparse is None:
            self._copy(out, source, None)
        else:
            for offset, length in sparse.runs:
                source.seek(offset)
                out.seek(offset)
                self._copy(out, source, length)
            out.truncate(sparse.size)
        out.flush()  # before the times are set: a later write would change them
        _apply(out.fileno(), attrs)

    def _copy(self, out: IO[bytes], source: IO[bytes], length: int | None) -> None:
        read, write, allow = source.read, out.write, self.budget.allow
        while length is None or length > 0:
            chunk = read(CHUNK if length is None else min(CHUNK, length))
            if not chunk:
                if length:
                    raise EOFError("unexpected end of data")
                return
            allow(len(chunk))
            write(chunk)
            if length is not None:
                length -= len(chunk)

    def make_symlink(self, name: str, target: str) -> None:
        """Symlink ``name`` -> ``target``, made under a temporary name and renamed over what
        was there (never over a directory). The Root refuses a target that would lead out of it
        (PathEscapeError)."""
        self.make_parents(name)
        self._create_then_rename(name, lambda temp: self.root.symlink(target, temp))

    def make_hardlink(self, name: str, source: str) -> None:
        """Hard link ``name`` to the member already extracted at ``source`` (root-relative);
        FileNotFoundError when there is none. A link to the file already at ``name`` (a member
        linking to itself) changes nothing; a failed link (to a directory, say) leaves what was
        at ``name``."""
        self.make_parents(name)
        try:
            st_name, st_source = self.root.lstat(name), self.root.lstat(source)
        except FileNotFoundError:
            pass
        else:
            if (st_name.st_dev, st_name.st_ino) == (st_source.st_dev, st_source.st_ino):
                return
        self._create_then_rename(name, lambda temp: self.root.link(source, temp))

    def _create_then_rename(self, name: str, create: Callable[[str], None]) -> None:
        self.forget_directories()  # a link may change what later names designate
        if self.keep_old and self.root.exists(name, follow_symlinks=False):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), name)
        while True:
            temp = temp_path_beside(name)
            try:
                create(temp)
                break
            except FileExistsError:
                if not self.root.exists(temp, follow_symlinks=False):
                    raise
        try:
            st = self.root.lstat(name)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISDIR(st.st_mode):
                _discard(self.root, temp)
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
        try:
            self.root.rename(temp, name)
        finally:
            # A rename between two links of one file does nothing: the temporary link stays.
            _discard(self.root, temp)

    def set_mode(self, name: str, mode: int) -> None:
        """chmod the directory made as ``name``: never through a symlink, and only while
        ``name`` is still the directory this writer made or kept there."""
        made = self._directories.get(name)
        st = self.root.lstat(name)
        if made is None or (st.st_dev, st.st_ino) != made or not stat.S_ISDIR(st.st_mode):
            return
        self.root.chmod(name, mode, follow_symlinks=False)


def _apply(fd: int, attrs: Attributes) -> None:
    if attrs.uid != -1 or attrs.gid != -1:
        os.fchown(fd, attrs.uid, attrs.gid)
    if attrs.mode is not None:
        os.fchmod(fd, attrs.mode)
    if attrs.mtime is not None:
        try:
            os.utime(fd, (attrs.mtime, attrs.mtime))
        except (OverflowError, ValueError):
            raise BadMember(f"modification time {attrs.mtime:.0f} out of range") from None


def _discard(root: Root, path: str) -> None:
    """Remove what a failed member left. Should that fail too (the directory was swapped for a
    link meanwhile), the partial file stays where it was made: inside, never outside."""
    try:
        root.remove(path)
    except OSError:
        pass
