"""Copy and move through held fds, within one Root and from one Root to another.

A file is read from an fd its Root opened (a regular file beneath it) and written to a new inode
in the destination directory's held fd, renamed over the target as ``write_bytes`` renames: a
reader of the target sees the old file or the whole copy, and a failed copy leaves no partial
file. The bytes move in the kernel: a reflink (FICLONE) where the file system shares extents,
else copy_file_range(2) (sendfile(2) where there is none), else reads and writes.

Links: with ``follow_symlinks`` a source link is followed through its Root (a link leading out of
it is a PathEscapeError); without, the link itself is copied by the destination Root's
``symlink``, which refuses a target that would lead out of that Root. A copy or move therefore
never follows a link out and never plants one.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from typing import TYPE_CHECKING, Any

from safefs import _atomic, _sys
from safefs._paths import PathArg
from safefs.errors import PathEscapeError, error, reporting

if TYPE_CHECKING:
    from safefs._path import Path
    from safefs._root import Root

# Links may reach one directory by many ways (each link to it, and links to those): a tree copy
# that follows links enters one directory this many times at most, so that links arranged as a
# lattice cannot make the work grow exponentially with the depth (ELOOP beyond).
MAX_ENTRIES_PER_DIRECTORY = 8
_CHUNK = 1 << 30  # per copy_file_range call: the kernel caps one call near 2 GiB anyway
_PRIVILEGE_BITS = stat_mod.S_ISUID | stat_mod.S_ISGID
_CANNOT_OFFLOAD = (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF, errno.ETXTBSY)


def ensure_distinct(source: Path, target: Path) -> None:
    """pathlib's check before a copy or move: not onto itself, not into itself (lexically)."""
    if source.root_object is not target.root_object:
        return
    if source == target:
        exc = error(errno.EINVAL, "Source and target are the same path")
    elif source in target.parents:
        exc = error(errno.EINVAL, "Source path is a parent of target path")
    else:
        return
    exc.filename, exc.filename2 = str(source), str(target)
    raise exc


def _fill(src_fd: int, dst_fd: int, size: int) -> None:
    """The whole of ``src_fd`` (from its start) into the empty ``dst_fd``."""
    if size and _sys.clone_file(src_fd, dst_fd):
        return
    offload = True
    while True:
        if offload:
            try:
                if _sys.copy_range(src_fd, dst_fd, _CHUNK) == 0:
                    return
                continue
            except OSError as exc:
                if exc.errno not in _CANNOT_OFFLOAD:
                    raise
                offload = False
        chunk = os.read(src_fd, 1 << 20)
        if not chunk:
            return
        view = memoryview(chunk)
        while view:
            view = view[os.write(dst_fd, view) :]


def _new_inode(dirfd: int, name: bytes, perm: int | None, create_mode: int, fill: Any) -> None:
    """A new file beside ``name`` in ``dirfd``, filled by ``fill(fd)``, renamed over ``name``:
    an unnamed O_TMPFILE inode where there is one, else a named temp file removed on failure."""
    mode = create_mode if perm is None else perm
    if _atomic._tmpfile_works:
        try:
            fd = _sys.openat(dirfd, b".", os.O_WRONLY | _sys.O_TMPFILE, mode)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
        else:
            try:
                if perm is not None:
                    os.fchmod(fd, perm)
                fill(fd)
                tmp = _atomic._with_unique_name(name, lambda tmp: _sys.link_unnamed(fd, dirfd, tmp))
            finally:
                os.close(fd)
            _atomic._rename_into_place(dirfd, tmp, name, False)
            return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    fds: list[int] = []
    tmp = _atomic._with_unique_name(name, lambda tmp: fds.append(_sys.openat(dirfd, tmp, flags, mode)))
    try:
        try:
            if perm is not None:
                os.fchmod(fds[0], perm)
            fill(fds[0])
        finally:
            os.close(fds[0])
    except BaseException:
        _atomic._unlink_quietly(dirfd, tmp)
        raise
    _atomic._rename_into_place(dirfd, tmp, name, False)


def copy_file(
    src_root: Root,
    src: PathArg,
    dst_root: Root,
    dst: PathArg,
    *,
    follow_symlinks: bool = True,
    preserve_metadata: bool = False,
) -> None:
    """One file (or, without ``follow_symlinks``, one symlink) to ``dst``, replacing a file
    there atomically. A directory source is IsADirectoryError; the same file on both sides is
    EINVAL, as pathlib refuses it."""
    if not follow_symlinks and _copied_as_link(src_root, src, dst_root, dst):
        return
    with src_root.open(src, "rb") as source:
        src_fd = source.fileno()
        st = os.fstat(src_fd)
        rel = dst_root._rel(dst)
        dst_root._enter()
        try:
            with reporting(dst), dst_root._lookup_file(rel) as found:
                if found.st is not None:
                    if (found.st.st_dev, found.st.st_ino) == (st.st_dev, st.st_ino):
                        raise error(errno.EINVAL, "Source and target are the same file")
                    if stat_mod.S_ISDIR(found.st.st_mode):
                        raise error(errno.EISDIR)
                    if not stat_mod.S_ISREG(found.st.st_mode):
                        raise error(errno.EINVAL, "target is not a regular file")
                perm: int | None = None
                if preserve_metadata:
                    perm = stat_mod.S_IMODE(st.st_mode) & ~_PRIVILEGE_BITS
                elif found.st is not None:
                    perm = stat_mod.S_IMODE(found.st.st_mode) & ~_PRIVILEGE_BITS

                def fill(fd: int) -> None:
                    _fill(src_fd, fd, st.st_size)
                    if preserve_metadata:
                        _sys.futimens(fd, (st.st_atime_ns, st.st_mtime_ns))

                _new_inode(found.fd, found.name, perm, 0o666, fill)
        finally:
            dst_root._leave()


def copy_symlink(src_root: Root, src: PathArg, dst_root: Root, dst: PathArg) -> None:
    """The link itself, made again by the destination Root (which judges its target)."""
    dst_root.symlink(src_root.readlink(os.fsdecode(os.fspath(src))), dst)


def _copied_as_link(src_root: Root, src: PathArg, dst_root: Root, dst: PathArg) -> bool:
    """Copy ``src`` as a link if it is one (its target read in one call, so a link swapped for
    something else meanwhile is never half-judged); False when it is not a link."""
    try:
        target = src_root.readlink(os.fsdecode(os.fspath(src)))
    except OSError as exc:
        if exc.errno == errno.EINVAL and not isinstance(exc, PathEscapeError):
            return False  # not a link
        raise
    dst_root.symlink(target, dst)
    return True


def _join(top: str, name: str) -> str:
    return name if top == "." else f"{top.rstrip('/')}/{name}"


def copy_tree(
    src_root: Root,
    src: str,
    dst_root: Root,
    dst: str,
    *,
    follow_symlinks: bool = True,
    preserve_metadata: bool = False,
    dirs_exist_ok: bool = False,
) -> None:
    """A directory tree, each entry through its Root. A link to a directory is copied as the
    directory with ``follow_symlinks`` (never one already on the way down: ELOOP), as a link
    without it."""
    st = src_root.stat(src)
    if not stat_mod.S_ISDIR(st.st_mode):
        raise error(errno.ENOTDIR)
    todo: list[tuple[str, str, tuple[tuple[int, int], ...], os.stat_result]] = [
        (src, dst, ((st.st_dev, st.st_ino),), st)
    ]
    finished: list[tuple[str, os.stat_result]] = []
    made: set[tuple[int, int]] = set()  # the directories this copy made: never copied into themselves
    entered: dict[tuple[int, int], int] = {}
    while todo:
        source, target, above, dir_st = todo.pop()
        key = (dir_st.st_dev, dir_st.st_ino)
        entered[key] = entered.get(key, 0) + 1
        if key in made or entered[key] > MAX_ENTRIES_PER_DIRECTORY:
            raise with_names(error(errno.ELOOP, "links lead the copy into a loop"), source)
        entries = list(src_root.scandir(source))
        dst_root.mkdir(target, exist_ok=dirs_exist_ok)
        new = dst_root.stat(target)
        made.add((new.st_dev, new.st_ino))
        finished.append((target, dir_st))
        for entry in entries:
            name = os.fsdecode(entry.name)
            child, child_target = _join(source, name), _join(target, name)
            if (
                not follow_symlinks
                and entry.is_symlink()
                and _copied_as_link(src_root, child, dst_root, child_target)
            ):
                continue
            if entry.is_dir(follow_symlinks=follow_symlinks):
                child_st = src_root.stat(child)
                key = (child_st.st_dev, child_st.st_ino)
                if key in above:
                    raise with_names(error(errno.ELOOP, "a link loop in the tree being copied"), child)
                todo.append((child, child_target, (*above, key), child_st))
            else:
                copy_file(
                    src_root,
                    child,
                    dst_root,
                    child_target,
                    follow_symlinks=follow_symlinks,
                    preserve_metadata=preserve_metadata,
                )
    if preserve_metadata:
        for target, dir_st in reversed(finished):
            dst_root.chmod(target, stat_mod.S_IMODE(dir_st.st_mode) & ~_PRIVILEGE_BITS)
            dst_root.utime(target, ns=(dir_st.st_atime_ns, dir_st.st_mtime_ns))


def with_names(exc: OSError, path: str) -> OSError:
    exc.filename = path
    return exc


def copy_any(
    src_root: Root,
    src: str,
    dst_root: Root,
    dst: str,
    *,
    follow_symlinks: bool = True,
    preserve_metadata: bool = False,
) -> None:
    """pathlib's ``copy``: a file, a tree, or (without ``follow_symlinks``) a link."""
    if not follow_symlinks and _copied_as_link(src_root, src, dst_root, dst):
        return
    if src_root.is_dir(src):
        copy_tree(
            src_root, src, dst_root, dst, follow_symlinks=follow_symlinks, preserve_metadata=preserve_metadata
        )
    else:
        copy_file(
            src_root, src, dst_root, dst, follow_symlinks=follow_symlinks, preserve_metadata=preserve_metadata
        )


def move(src_root: Root, src: str, dst_root: Root, dst: str) -> None:
    """3.14's ``Path.move``: a rename (judged by the Root) when both are in one Root and on one
    device; else a copy (links as links, metadata kept) and the removal of the source."""
    if src_root is dst_root:
        try:
            src_root.rename(src, dst, replace=True)
            return
        except PathEscapeError:
            raise
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
    copy_any(src_root, src, dst_root, dst, follow_symlinks=False, preserve_metadata=True)
    src_root.remove_all(src)


def destination(root: Root, dst: Any) -> tuple[Root, Any]:
    """``dst`` of a Root method: a path of this Root, or a safefs.Path of any Root."""
    from safefs._path import Path

    if isinstance(dst, Path):
        return dst.root_object, str(dst)
    return root, dst
