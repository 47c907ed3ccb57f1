"""Drop-in for deepagents' filesystem backend (extra ``deepagents``): switch one import::

    from safefs.integrations.deepagents import FilesystemBackend

:class:`FilesystemBackend` subclasses ``deepagents.backends.filesystem.FilesystemBackend``: the
same constructor (``root_dir``, ``virtual_mode``, ``max_file_size_mb``), the same methods
(``ls``, ``read``, ``write``, ``edit``, ``delete``, ``grep``, ``glob``, ``upload_files``,
``download_files`` and their ``a``-prefixed async forms) and the installed version's result
types, read window and edit rules. The original resolves a path, checks it (in virtual mode)
and then opens the path string again; here every operation goes through a :class:`safefs.Root`
on ``root_dir``, in both modes:

- ``virtual_mode=True``: ``/`` is ``root_dir``; ``..`` and ``~`` are refused as the original
  refuses them, and a symlink leading out raises the original's ``ValueError``, whenever the
  swap happens, without the host path the original's text carries;
- ``virtual_mode=False``: a relative path is resolved beneath ``root_dir`` and an absolute path
  is accepted when it lies under ``root_dir`` (the root's own spellings of it); any other path
  raises that ``ValueError`` too, where the original would reach it.

``ls``, ``glob`` and ``grep`` walk through :mod:`safefs.workspace`: symlinks are never entered,
glob patterns are matched by RE2 in linear time, and grep's literal pattern by a substring
search. Every difference from the original is listed in docs/integrations.md.
"""

from __future__ import annotations

import base64
import errno
import io
import os
import posixpath
import re
import stat as stat_module
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from deepagents.backends import filesystem as _original_module
from deepagents.backends import utils as _utils
from deepagents.backends.filesystem import FilesystemBackend as _Original
from deepagents.backends.protocol import (
    DeleteResult,
    EditResult,
    FileData,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from deepagents.backends.utils import (
    check_empty_content,
    compile_grep_include_glob,
    perform_string_replacement,
    slice_read_response,
)

import safefs
from safefs.integrations._lazy_root import LazyRoot, leaves_missing
from safefs.workspace import WorkspaceError
from safefs.workspace.patterns import compile_glob, matches
from safefs.workspace.walk import Walk

__all__ = ["FilesystemBackend"]

TRAVERSAL = "Path traversal not allowed"


# The original's classification of a path for reading (text, or a binary type read whole).
# The original's budgets and caps, read from its module at each call (as the original reads them).
def _setting(name: str, default: Any) -> Any:
    return getattr(_original_module, name, default)


# What the original's glob matcher raises for a pattern it refuses (none before deepagents 0.7.9).
_GLOB_REFUSALS: tuple[type[Exception], ...] = (
    WorkspaceError,
    *(getattr(_utils, name) for name in ("InvalidGlobPatternError",) if hasattr(_utils, name)),
)
# Whether the installed GlobResult says why it was cut short (deepagents 0.7.9 and later).
_GLOB_HAS_REASON = "truncation_reason" in getattr(GlobResult, "__dataclass_fields__", {})

_read_file_type: Callable[[str], str] = getattr(
    _utils, "_get_backend_read_file_type", getattr(_utils, "_get_file_type", lambda path: "text")
)


def _outside(path: str) -> ValueError:
    """The original's refusal of a path leading outside ``root_dir``, without the host path."""
    return ValueError(f"Path:{path} outside root directory")


@contextmanager
def _refusing(path: str) -> Iterator[None]:
    """A path or a symlink found leading out while an operation runs: the original's refusal."""
    try:
        yield
    except safefs.PathEscapeError:
        raise _outside(path) from None


def _timestamp(st: os.stat_result) -> str:
    return datetime.fromtimestamp(st.st_mtime).isoformat()  # as the original


def _text(data: bytes) -> str:
    """Decoded as the original's text-mode open: strict UTF-8, universal newlines."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()


def _loop(path: str) -> OSError:
    return OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


class _MissingRoot(FileNotFoundError):
    """``root_dir`` does not exist (yet): the original finds nothing there, and its first write
    makes it. Carries no host path."""

    def __init__(self) -> None:
        super().__init__(errno.ENOENT, os.strerror(errno.ENOENT))


class FilesystemBackend(_Original):
    """deepagents' ``FilesystemBackend``, confined to ``root_dir`` by safefs.

    The root is opened on the first operation and kept until :meth:`close`.
    """

    def __init__(
        self,
        root_dir: str | Path | None = None,
        virtual_mode: bool = True,
        max_file_size_mb: int = 10,
    ) -> None:
        super().__init__(root_dir=root_dir, virtual_mode=virtual_mode, max_file_size_mb=max_file_size_mb)
        # Opened on root_dir as spelled (pinned to today's directory, as the original pins it),
        # so both its spelling and the realpath the original keeps in cwd are the root's anchors.
        self._safefs_cwd = str(self.cwd)
        spelled = os.path.join(os.getcwd(), os.fspath(root_dir)) if root_dir else self._safefs_cwd
        self._safefs_root = LazyRoot(spelled)

    def close(self) -> None:
        """Release the root's directory fd (the next operation opens it again)."""
        self._safefs_root.close()

    # -- paths ---------------------------------------------------------------------------------

    def _root(self) -> safefs.Root:
        """The root; ``_MissingRoot`` while ``root_dir`` does not exist."""
        if self._safefs_cwd != str(self.cwd):
            # cwd reassigned: the original reads it on every call, so the root follows it.
            self._safefs_root.close()
            self._safefs_cwd = str(self.cwd)
            self._safefs_root = LazyRoot(self._safefs_cwd)
        try:
            return self._safefs_root.get()
        except FileNotFoundError:
            raise _MissingRoot() from None

    def _present(self) -> safefs.Root | None:
        """The root, or None while ``root_dir`` does not exist."""
        try:
            return self._root()
        except _MissingRoot:
            return None

    def _made(self) -> safefs.Root:
        """The root, ``root_dir`` made first if missing, as the original's first write makes it."""
        root = self._present()
        if root is None:
            os.makedirs(self.cwd, exist_ok=True)
            root = self._root()
        return root

    def _target(self, key: str) -> str:
        """``key`` as the root takes it (relative, or absolute under the root's own spellings);
        the original's ValueError for a path it refuses or one that leads outside."""
        if self.virtual_mode:
            vpath = key if key.startswith("/") else "/" + key
            if ".." in vpath or vpath.startswith("~"):
                raise ValueError(TRAVERSAL)
            return vpath.lstrip("/") or "."
        if "\0" in key:
            raise ValueError("embedded null byte")
        if self._present() is None:
            if leaves_missing(key, str(self.cwd)) and leaves_missing(key, self._safefs_root.path):
                raise _outside(key)
        elif posixpath.isabs(key):
            try:
                self._root().relative(key)
            except safefs.PathEscapeError:
                raise _outside(key) from None
        return key or "."

    def _root_relative(self, target: str) -> str:
        """``target`` relative to ``root_dir``: an absolute one under it (spelled as ``cwd`` or as
        given) made relative by its spelling, for a ``root_dir`` that does not exist yet."""
        if not posixpath.isabs(target):
            return target
        for top in (str(self.cwd), self._safefs_root.path):
            rel = posixpath.relpath(posixpath.normpath(target), posixpath.normpath(top))
            if not rel.startswith(".."):
                return rel
        raise _outside(target)

    def _shown(self, canonical: str) -> str:
        """A root-relative canonical path as the original names it: virtual (``/x``), or the
        host path under ``root_dir``."""
        rel = "" if canonical == "." else canonical
        if self.virtual_mode:
            return "/" + rel
        return str(self.cwd / rel) if rel else str(self.cwd)

    def _no_loop(self, root: safefs.Root, key: str, target: str) -> None:
        """The original resolves a path before it acts and fails on a symlink loop (``ELOOP``,
        naming the path as given here): anywhere on it, or, for an absolute path of non-virtual
        mode (not resolved there), in its last component."""
        try:
            if not self.virtual_mode and posixpath.isabs(key):
                if root.is_symlink(target):
                    root.stat(target)
            else:
                root.resolve(target)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _loop(key) from None

    def _written(self, root: safefs.Root, key: str, target: str) -> str:
        """Where a write lands: the original resolves the path first (but an absolute one of
        non-virtual mode), so a link's target is written, its missing directories made."""
        if self.virtual_mode or not posixpath.isabs(key):
            return str(root.resolve(target))
        return target

    def _final_link(self, key: str, target: str) -> bool:
        """The original opens an absolute path of non-virtual mode as given, with O_NOFOLLOW:
        a last component that is a symlink fails there with ELOOP."""
        return not self.virtual_mode and posixpath.isabs(key) and self._root().is_symlink(target)

    def _real_path(self, key: str) -> str:
        target = self._target(key)
        if self._present() is None:
            canonical = posixpath.normpath(self._root_relative(target))  # nothing there to follow
        else:
            with _refusing(key):
                canonical = self._root().resolve(target)
        if self.virtual_mode:
            return "/" if canonical == "." else "/" + canonical
        real = self._shown(canonical)
        return "/" + PurePosixPath(real).relative_to("/").as_posix()

    # -- ls ------------------------------------------------------------------------------------

    def ls(self, path: str) -> LsResult:
        target = self._target(path)
        root = self._present()
        if root is None:
            return LsResult(error=f"Path '{path}': path_not_found", entries=None)
        try:
            with _refusing(path):
                self._no_loop(root, path, target)
                if not root.exists(target):
                    return LsResult(error=f"Path '{path}': path_not_found", entries=None)
                if not root.is_dir(target):
                    return LsResult(error=f"Path '{path}': not_a_directory", entries=None)
                base = root.resolve(target, strict=True)
                directory = root.opendir(target)
        except OSError as exc:
            return LsResult(error=f"Cannot list '{path}': {exc}", entries=None)
        prefix = self._listed_prefix(path, base)
        results: list[FileInfo] = []
        errors: list[str] = []
        try:
            with directory:
                for entry in directory.scandir("."):
                    info = self._ls_entry(directory, entry, base, prefix, errors)
                    if info is not None:
                        results.append(info)
        except OSError as exc:
            errors.append(f"Listing of '{path}' aborted: {exc.strerror}")
        results.sort(key=lambda x: x.get("path", ""))
        return LsResult(error="\n".join(sorted(errors)) if errors else None, entries=results)

    def _listed_prefix(self, path: str, base: str) -> str:
        """What a child's name is appended to in non-virtual mode: the directory as the
        original spells it (an absolute path as given, a relative one resolved)."""
        if self.virtual_mode:
            return ""
        if posixpath.isabs(path):
            return str(Path(path))
        return self._shown(base)

    def _ls_entry(
        self, directory: safefs.Root, entry: safefs.DirEntry, base: str, prefix: str, errors: list[str]
    ) -> FileInfo | None:
        name = entry.name
        rel = name if base == "." else f"{base}/{name}"
        try:
            if entry.is_symlink():
                # Followed as the original follows it, but only within the root (the whole
                # root: a relative link may lead out of the listed directory and back in).
                try:
                    st = self._root().stat(rel)
                    rel = self._root().resolve(rel, strict=True)
                except (safefs.PathEscapeError, FileNotFoundError, NotADirectoryError):
                    return None  # leads outside (skipped, as virtual mode does) or is broken
            else:
                st = directory.stat(name, follow_symlinks=False)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a link loop: the original's resolve() fails on it
                shown = self._shown(rel) if self.virtual_mode else f"{prefix.rstrip('/')}/{name}"
                errors.append(f"child error: cannot resolve '{shown}': {_loop(shown)}")
                return None
            errors.append(
                f"child error: cannot stat '{self._shown(rel) if self.virtual_mode else name}': {exc}"
            )
            return None
        is_dir = stat_module.S_ISDIR(st.st_mode)
        if not is_dir and not stat_module.S_ISREG(st.st_mode):
            return None
        shown = self._shown(rel) if self.virtual_mode else f"{prefix.rstrip('/')}/{name}"
        if is_dir:
            return {"path": shown + "/", "is_dir": True, "size": 0, "modified_at": _timestamp(st)}
        return {"path": shown, "is_dir": False, "size": int(st.st_size), "modified_at": _timestamp(st)}

    # -- read, write, edit, delete ---------------------------------------------------------------

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        target = self._target(file_path)
        root = self._present()
        if root is None:
            return ReadResult(error=f"File '{file_path}' not found")
        try:
            with _refusing(file_path):
                self._no_loop(root, file_path, target)
                if not root.is_file(target):
                    return ReadResult(error=f"File '{file_path}' not found")
                if self._final_link(file_path, target):
                    raise _loop(file_path)
                file_type = _read_file_type(file_path)
                if file_type != "text":
                    with root.open(target, "rb") as f:
                        cap = _setting("MAX_VIDEO_INPUT_BYTES", 1 << 30)
                        if file_type == "video" and os.fstat(f.fileno()).st_size > cap:
                            return ReadResult(error=f"Video file exceeds maximum input size of {cap} bytes")
                        raw = f.read()
                    encoded = base64.standard_b64encode(raw).decode("ascii")
                    return ReadResult(file_data=FileData(content=encoded, encoding="base64"))
                content = _text(root.read_bytes(target))
        except (OSError, UnicodeDecodeError) as exc:
            return ReadResult(error=f"Error reading file '{file_path}': {exc}")
        empty = check_empty_content(content)
        if empty:
            return ReadResult(file_data=FileData(content=empty, encoding="utf-8"))
        return slice_read_response(FileData(content=content, encoding="utf-8"), offset, limit)

    def write(self, file_path: str, content: str) -> WriteResult:
        target = self._target(file_path)
        try:
            root = self._made()
            with _refusing(file_path):
                self._no_loop(root, file_path, target)
                if self._final_link(file_path, target):
                    raise _loop(file_path)
                _put(root, self._written(root, file_path, target), content.encode("utf-8"))
        except (OSError, UnicodeEncodeError) as exc:
            return WriteResult(error=f"Error writing file '{file_path}': {exc}")
        return WriteResult(path=file_path)

    def edit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> EditResult:
        target = self._target(file_path)
        root = self._present()
        if root is None:
            return EditResult(error=f"Error: File '{file_path}' not found")
        try:
            with _refusing(file_path):
                self._no_loop(root, file_path, target)
                if not root.is_file(target):
                    return EditResult(error=f"Error: File '{file_path}' not found")
                if self._final_link(file_path, target):
                    raise _loop(file_path)
                content = _text(root.read_bytes(target))
                old_string = old_string.replace("\r\n", "\n").replace("\r", "\n")
                new_string = new_string.replace("\r\n", "\n").replace("\r", "\n")
                result = perform_string_replacement(content, old_string, new_string, replace_all)
                if isinstance(result, str):
                    return EditResult(error=result)
                new_content, occurrences = result
                _put(root, target, new_content.encode("utf-8"))
        except (OSError, UnicodeDecodeError, UnicodeEncodeError) as exc:
            return EditResult(error=f"Error editing file '{file_path}': {exc}")
        return EditResult(path=file_path, occurrences=int(occurrences))

    def delete(self, file_path: str) -> DeleteResult:
        target = self._target(file_path)
        root = self._present()
        if root is None:
            return DeleteResult(error=f"Error: '{file_path}' not found")
        try:
            with _refusing(file_path):
                self._no_loop(root, file_path, target)
                if (self.virtual_mode or not posixpath.isabs(file_path)) and root.is_symlink(target):
                    # The original resolves the path first: the file a link names is deleted.
                    target = root.resolve(target)
                if not root.exists(target, follow_symlinks=False):
                    return DeleteResult(error=f"Error: '{file_path}' not found")
                root.remove_all(target)
        except OSError as exc:
            return DeleteResult(error=f"Error deleting '{file_path}': {exc}")
        return DeleteResult(path=file_path)

    # -- glob ----------------------------------------------------------------------------------

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        if (
            len(_GLOB_REFUSALS) == 1
            and self.virtual_mode
            and ".." in PurePosixPath(pattern.lstrip("/")).parts
        ):
            # Before the matcher refused it (deepagents 0.7.9), virtual mode raised this.
            raise ValueError("Path traversal not allowed in glob pattern")
        try:
            compile_grep_include_glob(pattern)  # the original's refusals, word for word
            wanted = _include_glob(pattern)
        except _GLOB_REFUSALS as exc:
            return GlobResult(error=str(exc), matches=None)
        start = "." if path is None or path == "/" else self._target(path)
        root = self._present()
        if root is None:
            return GlobResult(matches=[])
        try:
            with _refusing(path or "/"):
                if path is not None and path != "/":
                    self._no_loop(root, path, start)
                if not root.is_dir(start):
                    return GlobResult(matches=[])
                base = root.resolve(start, strict=True)
        except OSError as exc:
            return GlobResult(
                error=f"Error globbing path '{path if path is not None else '<default>'}': {exc}", matches=[]
            )
        walk = Walk(
            root,
            base,
            ignore=False,
            skip_git=False,
            deadline=time.monotonic() + _setting("_DEFAULT_GLOB_TIMEOUT", 5),
        )
        prefix = "" if base == "." else base + "/"
        shown_base = "" if path is None or path == "/" or self.virtual_mode else str(Path(path))
        results: list[FileInfo] = []
        for entry in walk:
            if not wanted(entry.rel) or entry.kind not in ("file", "link"):
                continue
            try:
                st = root.stat(prefix + entry.rel)
            except OSError:
                continue  # a link leading outside, broken or looping: no file of the root
            if not stat_module.S_ISREG(st.st_mode):
                continue
            if self.virtual_mode:
                rel = prefix + entry.rel
                if entry.kind == "link":
                    try:
                        rel = root.resolve(rel, strict=True)  # named by the file it leads to, as there
                    except OSError:
                        continue
                shown = self._shown(rel)
            elif shown_base and posixpath.isabs(path or ""):
                shown = f"{shown_base.rstrip('/')}/{entry.rel}"
            else:
                shown = self._shown(prefix + entry.rel)
            results.append(
                {"path": shown, "is_dir": False, "size": int(st.st_size), "modified_at": _timestamp(st)}
            )
        results.sort(key=lambda x: x.get("path", ""))
        truncated = walk.stop is not None
        if truncated and _GLOB_HAS_REASON:
            return GlobResult(matches=results, truncated=True, truncation_reason="budget")
        return GlobResult(matches=results, truncated=truncated)

    # -- grep ----------------------------------------------------------------------------------

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
        context_lines: int = 0,
    ) -> GrepResult:
        if context_lines < 0:
            raise ValueError("context_lines must be non-negative")
        wanted: Callable[[str], bool] | None = None
        if glob is not None:
            try:
                compile_grep_include_glob(glob)
                wanted = _include_glob(glob)
            except _GLOB_REFUSALS as exc:
                return GrepResult(error=str(exc), matches=[])
        try:
            target = self._target(path or ".")
            root = self._present()
            if root is None:
                return GrepResult(matches=[])
            with _refusing(path or "."):
                self._no_loop(root, path or ".", target)
                if not root.exists(target):
                    return GrepResult(matches=[])
                base = root.resolve(target, strict=True)
                single = root.is_file(base)
        except ValueError:
            return GrepResult(matches=[])  # the original's answer to a path it refuses
        except OSError as exc:
            return GrepResult(error=f"Error searching path '{path or '.'}': {exc}", matches=[])
        search = _Search(self, root, pattern, max_count, context_lines)
        if single:
            # One file: searched alone (as the original's rg search has it), its name filtered
            # by the include glob.
            if wanted is None or wanted(posixpath.basename(target.rstrip("/"))):
                search.file(base, self._grep_shown(path, base, "", base))
        else:
            prefix = "" if base == "." else base + "/"
            walk = Walk(root, base, ignore=False, skip_git=False, deadline=search.deadline)
            for entry in walk:
                if entry.kind not in ("file", "link") or (wanted is not None and not wanted(entry.rel)):
                    continue
                rel = prefix + entry.rel
                if entry.kind == "link":
                    # A link to a file is searched, as the original's walk does; only within the root.
                    try:
                        rel = root.resolve(rel, strict=True) if self.virtual_mode else rel
                    except OSError:
                        continue
                if not search.file(rel, self._grep_shown(path, base, entry.rel, rel)):
                    break
            search.truncated = search.truncated or walk.stop is not None
        return GrepResult(matches=search.matches, truncated=search.truncated)

    def _grep_shown(self, path: str | None, base: str, rel: str, canonical: str) -> str:
        """A match's path: virtual (of the file a link leads to), or the host path as walked."""
        if self.virtual_mode or not (path and posixpath.isabs(path)):
            return self._shown(canonical)
        return str(Path(path) / rel) if rel else str(Path(path))

    # -- upload, download -------------------------------------------------------------------------

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        responses: list[FileUploadResponse] = []
        for path, content in files:
            try:
                target = self._target(path)
                with _refusing(path):
                    if self._final_link(path, target):
                        raise _loop(path)
                    root = self._made()
                    _put(root, self._written(root, path, target), content)
                responses.append(FileUploadResponse(path=path, error=None))
            except (OSError, ValueError) as exc:
                responses.append(FileUploadResponse(path=path, error=_standard_error(exc)))
        return responses

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        responses: list[FileDownloadResponse] = []
        for path in paths:
            try:
                target = self._target(path)
                if self._present() is None:
                    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
                with _refusing(path):
                    if self._root().is_dir(target):
                        responses.append(FileDownloadResponse(path=path, content=None, error="is_directory"))
                        continue
                    if self._final_link(path, target):
                        raise _loop(path)
                    content = self._root().read_bytes(target)
                responses.append(FileDownloadResponse(path=path, content=content, error=None))
            except (OSError, ValueError) as exc:
                responses.append(FileDownloadResponse(path=path, content=None, error=_standard_error(exc)))
        return responses


def _put(root: safefs.Root, target: str, data: bytes) -> None:
    """Write the file as an atomic replacement (a new file is born ``0o644`` less the umask, as
    the original's; a replaced one keeps its mode): a reader never sees half of it, a failed
    write leaves the old content, and a hard link to an inode outside the root is replaced, never
    written through. Missing parents are made only when the write finds one missing."""
    parent = posixpath.dirname(target.rstrip("/"))
    try:
        root.write_bytes(target, data, mode=0o644)
    except FileNotFoundError:
        if not parent:
            raise
        root.mkdir(parent, parents=True, exist_ok=True)
        root.write_bytes(target, data, mode=0o644)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP) or not parent:
            raise
        if root.exists(parent, follow_symlinks=False) and not root.is_dir(parent):
            # The original makes the parent first (mkdir exist_ok): a file or a looping link
            # there exists.
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), parent) from None
        raise


def _standard_error(exc: Exception) -> str:
    """The original's ``FileOperationError`` for an exception (its own mapping, by type)."""
    if isinstance(exc, FileNotFoundError):
        return "file_not_found"
    if isinstance(exc, OSError) and exc.errno == errno.ELOOP:
        return "invalid_path"
    if isinstance(exc, PermissionError):
        return "permission_denied"
    if isinstance(exc, IsADirectoryError):
        return "is_directory"
    return "invalid_path"


def _include_glob(pattern: str) -> Callable[[str], bool]:
    """The original's include-glob rule (a pattern without ``/`` matches the name at any depth;
    with one, the path from the search root; a leading ``/`` anchors; wildcards skip names
    starting with a dot), matched by RE2 in linear time."""
    anchored = "/" in pattern
    body = re.sub("/+", "/", pattern).lstrip("/")  # repeated slashes are one, as the original's
    if not body or body.startswith("./"):
        return lambda rel: False  # "/" alone, or a "." component: no path of a walk has one
    regex = compile_glob(body, dot=False)
    if anchored:
        return lambda rel: matches(regex, rel)
    return lambda rel: matches(regex, rel.rpartition("/")[2])


class _Search:
    """grep's literal search over files of the root, with the original's caps and results."""

    def __init__(
        self, backend: FilesystemBackend, root: safefs.Root, pattern: str, max_count: int | None, context: int
    ) -> None:
        self.backend = backend
        self.root = root
        self.pattern = pattern
        self.max_count = max_count
        self.context = context
        self.deadline = time.monotonic() + _setting("DEFAULT_GREP_TIMEOUT", 15)
        self.matches: list[GrepMatch] = []
        self.truncated = False

    def file(self, rel: str, shown: str) -> bool:
        """Search one file; False when the search must stop (cap or deadline)."""
        if time.monotonic() > self.deadline:
            self.truncated = True
            return False
        try:
            with self.root.open(rel, "rb") as f:
                cap = self.backend.max_file_size_bytes
                if os.fstat(f.fileno()).st_size > cap:
                    return True
                data = f.read(cap + 1)  # the cap holds for a file that grows after fstat too
                if len(data) > cap:
                    return True
            if self.pattern.encode("utf-8", "surrogatepass") not in data:
                return True  # no line can hold it: no decoding needed
            text = _text(data)  # universal newlines, as the original's text-mode read
        except (OSError, UnicodeDecodeError):
            return True  # vanished, replaced, refused, or no UTF-8 text: skipped as the original skips it
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        found = [i for i, line in enumerate(lines) if self.pattern in line]
        for i in found:
            if self.max_count is not None and len(self.matches) >= self.max_count:
                self.truncated = True
                return False
            match: GrepMatch = {"path": shown, "line": i + 1, "text": lines[i]}
            if self.context:
                self._add_context(match, lines, i, set(found))
            self.matches.append(match)
        return True

    def _add_context(self, match: GrepMatch, lines: list[str], i: int, matched: set[int]) -> None:
        def around(indices: range) -> list[Any]:
            return [
                {"line": j + 1, "text": lines[j].removesuffix("\r")}
                for j in indices
                if j not in matched and self.pattern not in lines[j]
            ]

        match["context_before"] = around(range(max(0, i - self.context), i))
        match["context_after"] = around(range(i + 1, min(len(lines), i + 1 + self.context)))
