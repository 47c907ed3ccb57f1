"""The link guarantee: every symlink safefs creates or moves leads beneath the root.

Threat model: docs/threat-model.md.

A symlink that :meth:`Root.symlink` creates, that :meth:`Root.rename` or :meth:`Root.link` puts in
a new place, and every symlink inside a directory that :meth:`Root.rename` moves, is judged at the
moment of the operation by the resolution :meth:`Root.resolve` uses with ``strict=False``, with
the rules a program following links would meet (``symlinks="beneath"``): component by component
from the link's own directory, links on the way followed within one budget, ``..`` physical, a
missing tail taken as a write with ``parents=True`` would create it. The judge sees the tree as
the operation will leave it (:class:`~safefs._resolve.walk.Overlay`): the moved entry already at
its new name, its old name empty.

It fails closed: an escape is a :class:`~safefs.errors.PathEscapeError`, and any other error met
while judging (a directory that cannot be listed or searched, a loop, a file used as a directory,
ENAMETOOLONG, EMFILE) refuses the operation with that errno. The tree of a moved directory is
listed with one held fd per level (fds bounded by its depth, not its width).

Out of scope: a later change elsewhere (another rename, a directory made or removed, by safefs or
anyone) that alters what some other link means, and a link made by another program while the
operation runs.
"""

from __future__ import annotations

import errno
import stat
from collections.abc import Callable
from typing import Final

from safefs import _sys
from safefs._paths import join
from safefs._resolve.walk import _CANONICAL, PATH_MAX, Overlay, _Walk
from safefs.errors import PathEscapeError, error

# The judge looks through directories as path lookup does: O_PATH needs only search permission.
_LOOKUP_FLAGS: Final = _sys.open_flags(_sys.dir_flags(True))
_LIST_FLAGS: Final = _sys.open_flags(_sys.O_DIRECTORY)  # O_RDONLY: listing needs read permission


_REFUSED: Final = "symlink refused: where it leads cannot be judged"


def _refused(exc: OSError) -> OSError:
    """The refusal for an error met while judging (an escape, or a refusal already, as it is)."""
    if isinstance(exc, PathEscapeError) or (exc.strerror or "").startswith(_REFUSED):
        return exc
    code = exc.errno if exc.errno is not None else errno.EINVAL
    return error(code, f"{_REFUSED} ({exc.strerror or exc})")


def judge(root_fd: int, directory: bytes, target: bytes, overlay: Overlay | None = None) -> None:
    """A symlink with ``target`` in the directory whose canonical root-relative path is
    ``directory`` (the tree seen through ``overlay``): PathEscapeError if it leads outside the
    root, another OSError if where it leads cannot be judged; nothing if it leads beneath."""
    if target.startswith(b"/"):
        raise PathEscapeError()  # followed from the host's "/", whatever the root's mode
    if len(target) >= PATH_MAX:
        raise _refused(error(errno.ENAMETOOLONG))
    walk = _Walk(root_fd, "beneath", _LOOKUP_FLAGS, overlay)
    try:
        walk.run(join(directory, target), _CANONICAL[False], missing_ok=True, limit=False)
    except OSError as exc:
        raise _refused(exc) from None


def judge_move(
    root_fd: int,
    source_fd: int,
    source_name: bytes,
    source_dir: Callable[[], bytes],
    dest_dir: Callable[[], bytes],
    dest_name: bytes,
    *,
    keeps_source: bool,
) -> None:
    """The entry ``source_name`` of ``source_fd`` is about to be renamed (``keeps_source``
    False) or hard linked to ``dest_name`` in ``dest_dir()``: if it is a symlink, it is judged
    there; if it is a directory being renamed, so is every symlink inside it. ``source_dir()``
    is the source's directory, canonical. A source that is neither, or is missing, has nothing
    to judge (the operation reports the rest)."""
    try:
        st = _sys.fstatat(source_fd, source_name)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _refused(exc) from None
    is_link = stat.S_ISLNK(st.st_mode)
    if not is_link and (keeps_source or not stat.S_ISDIR(st.st_mode)):
        return
    new_dir = dest_dir()
    gone = set() if keeps_source else {(source_dir(), source_name)}
    overlay = Overlay({(new_dir, dest_name): (source_fd, source_name)}, gone)
    try:
        if is_link:
            judge(root_fd, new_dir, _sys.readlinkat(source_fd, source_name), overlay)
            return
        top = _sys.openat(source_fd, source_name, _LIST_FLAGS)
    except OSError as exc:
        raise _refused(exc) from None
    _judge_tree(root_fd, top, join(new_dir, dest_name), overlay)


def _judge_tree(root_fd: int, top: int, new_top: bytes, overlay: Overlay) -> None:
    """Judge every symlink in the directory tree ``top`` holds (closed here), as if it stood at
    ``new_top``. Depth first, one held fd per level: each level's names are listed at once and
    its subdirectories entered one at a time, so a wide directory costs no more fds."""
    levels: list[tuple[int, bytes, list[tuple[bytes, bool, bool]]]] = []
    try:
        try:
            levels.append((top, new_top, _sys.list_dir(top)))
        except BaseException:
            _sys.close(top)
            raise
        while levels:
            fd, where, todo = levels[-1]
            if not todo:
                levels.pop()
                _sys.close(fd)
                continue
            name, is_dir, is_link = todo.pop()
            if is_link:
                judge(root_fd, where, _sys.readlinkat(fd, name), overlay)
            elif is_dir:
                child = _sys.openat(fd, name, _LIST_FLAGS)
                try:
                    entries = _sys.list_dir(child)
                except BaseException:
                    _sys.close(child)
                    raise
                levels.append((child, join(where, name), entries))
    except OSError as exc:
        raise _refused(exc) from None
    finally:
        for fd, _where, _todo in levels:
            _sys.close(fd)
