"""Drop-ins for crewAI's file tools (extra ``crewai``): switch one import::

    from safefs.integrations.crewai import DirectoryReadTool, FileReadTool, FileWriterTool

Each tool subclasses ``crewai_tools``' own, so its name, description, argument schema,
constructor (``file_path``, ``base_dir``, ``encoding``, ``directory``) and result texts are the
installed version's. The originals resolve a path with ``realpath``, check that it lies under
``base_dir`` (the current directory by default) and then open the path string again; here every
operation goes through a :class:`safefs.Root` on that directory, so a path or a symlink leading
outside gets the original's own "outside the allowed directory" refusal, whenever the swap
happens. ``DirectoryReadTool`` walks through :mod:`safefs.workspace`. Every difference from the
original is listed in docs/integrations.md.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable
from itertools import islice
from typing import Any

from crewai_tools import DirectoryReadTool as _OriginalDirectoryReadTool
from crewai_tools import FileReadTool as _OriginalFileReadTool
from crewai_tools import FileWriterTool as _OriginalFileWriterTool
from crewai_tools.security.safe_path import (
    format_error_for_display,
    format_path_for_display,
    format_sandbox_error,
)
from crewai_tools.tools.file_writer_tool.file_writer_tool import strtobool
from pydantic import BaseModel, PrivateAttr

import safefs
from safefs.integrations._lazy_root import LazyRoots, leaves_missing
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.walk import Walk, leads_to_directory

__all__ = ["DirectoryReadTool", "FileReadTool", "FileWriterTool"]

READ_REMEDY = "Pass base_dir to FileReadTool to allow reading another directory tree."
WRITE_REMEDY = "Pass base_dir to FileWriterTool to allow writing to another directory tree."
FILENAME_ESCAPES = "Error: Invalid file path — the filename must not escape the target directory."


def _outside(path: str, base_dir: str | None) -> ValueError:
    """The original's refusal of a path resolving outside ``base_dir``."""
    return ValueError(f"Path '{format_path_for_display(path, base_dir)}' is outside the allowed directory.")


def _beneath(root: safefs.Root, path: str) -> str:
    """``path`` as the root is to take it: an absolute path under none of the root's anchors but
    spelled through a directory that is the root's own (a symlink to it, the root given through
    one), as the original's ``realpath`` takes it, becomes the rest after that directory, resolved
    beneath the root. Any other path is returned unchanged, for the root to judge."""
    if not path.startswith("/"):
        return path
    try:
        root.relative(path)
        return path
    except (safefs.PathEscapeError, ValueError):
        pass
    held = root.stat(".")
    parts = path.split("/")
    for end in range(len(parts), 1, -1):  # the longest spelling of the root first
        try:
            with safefs.Root("/".join(parts[:end])) as prefix:
                found = prefix.stat(".")
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (held.st_dev, held.st_ino):
            return "/".join(parts[end:]) or "."
    return path


def _canonical(root: safefs.Root, path: str) -> str:
    """``path`` as the root resolves it (not strict); where a name on the way is no directory,
    as spelled (the write then answers in its own words). A path leading out is refused."""
    try:
        return root.resolve(path)
    except safefs.PathEscapeError:
        raise
    except OSError:
        return posixpath.normpath(root.relative(path))


def _file_under(root: safefs.Root, top: str, filename: str) -> str | None:
    """The file ``filename`` names in the directory ``top`` (canonical), as the original resolves
    it, spelled from ``top``: None where it is ``top`` itself or does not lie under it (``..``,
    an absolute name elsewhere, a symlink leading out of it)."""
    joined = _beneath(root, filename) if posixpath.isabs(filename) else posixpath.join(top, filename)
    try:
        file = _canonical(root, joined)
    except (safefs.PathEscapeError, ValueError):
        return None
    prefix = "" if top == "." else top + "/"
    if file == top or not file.startswith(prefix):
        return None
    return file[len(prefix) :]


def _filename_escapes(filename: str) -> bool:
    """The original's refusal of a ``filename`` leaving its directory, judged lexically (``..``,
    an absolute name, the directory itself); a symlink in it is judged by the directory's root."""
    name = posixpath.normpath(filename) if filename else "."
    return posixpath.isabs(name) or name == "." or name == ".." or name.startswith("../")


class _HoldsRoots(BaseModel):
    """The roots one tool works through, one per directory name, opened on first use and kept
    (a directory replaced under the same name afterwards is not followed)."""

    _roots: LazyRoots = PrivateAttr(default_factory=LazyRoots)

    def _root_on(self, base_dir: str | None) -> safefs.Root:
        """The root on ``base_dir``, or on the current directory at the time of the call (as
        the originals judge against ``os.getcwd()`` per call)."""
        return self._roots.on(base_dir if base_dir is not None else os.getcwd())

    def close(self) -> None:
        """Release the roots' directory fds (the next call opens them again)."""
        self._roots.close()


class FileReadTool(_HoldsRoots, _OriginalFileReadTool):
    def _run(
        self,
        file_path: str | None = None,
        start_line: int | None = 1,
        line_count: int | None = None,
    ) -> str:
        start_line = start_line or 1
        line_count = line_count or None
        declared = self._declared_realpath
        if file_path is None and declared is None:
            return str(super()._run())  # the original's "no file path" error; it opens nothing
        if file_path is not None and "\0" in file_path:
            return f"Error: Invalid file path: {format_error_for_display(ValueError('embedded null byte'))}"
        if file_path is None or (declared is not None and file_path == self._declared_label):
            # The file the developer declared, trusted outside base_dir as the original trusts it.
            assert declared is not None
            root, target = self._root_on(os.path.dirname(declared)), os.path.basename(declared)
            display = self._shown(declared)
        elif declared is not None and self._resolve_declared(file_path) == declared:
            root, target = self._root_on(os.path.dirname(declared)), os.path.basename(declared)
            display = self._shown(declared)
        else:
            # The original names the path it resolved, shown again: a link loop's shown path
            # gains a name each time.
            display = self._shown(file_path, again=True)
            try:
                root = self._root_on(self.base_dir)
            except FileNotFoundError:
                # A missing base_dir: the original finds no file there, and still refuses a path
                # leading out of it.
                assert self.base_dir is not None  # the current directory exists
                if leaves_missing(file_path, self.base_dir):
                    return self._refused(os.path.join(self.base_dir, file_path), self.base_dir)
                return f"Error: File not found at path: {display()}"
            except OSError as exc:
                return f"Error: Failed to read file {file_path}. {format_error_for_display(exc)}"
            target = _beneath(root, file_path)
        return self._read(root, target, display, start_line, line_count)

    def _resolve_declared(self, file_path: str) -> str | None:
        """The original's resolution of ``file_path``, only to tell whether it names the declared
        file (any other path is judged by the root alone)."""
        try:
            return str(self._resolve_path(file_path))
        except ValueError:
            return None

    def _shown(self, path: str, *, again: bool = False) -> Callable[[], str]:
        """How the original shows ``path`` in an error text, worked out only when one is given."""

        def shown() -> str:
            once = format_path_for_display(path, self.base_dir)
            return format_path_for_display(once, self.base_dir) if again else once

        return shown

    @staticmethod
    def _refused(path: str, base_dir: str) -> str:
        return "Error: Invalid file path: " + format_sandbox_error(_outside(path, base_dir), READ_REMEDY)

    def _read(
        self,
        root: safefs.Root,
        target: str,
        display: Callable[[], str],
        start_line: int,
        line_count: int | None,
    ) -> str:
        try:
            with root.open(target, "r", encoding=self.encoding) as file:
                if start_line == 1 and line_count is None:
                    return str(file.read())
                start_idx = max(start_line - 1, 0)
                stop_idx = None if line_count is None else start_idx + line_count
                selected = list(islice(file, start_idx, stop_idx))
                if not selected and start_idx > 0:
                    return f"Error: Start line {start_line} exceeds the number of lines in the file."
                return "".join(selected)
        except safefs.PathEscapeError:
            return self._refused(os.path.join(root.anchors[-1], target), root.anchors[-1])
        except FileNotFoundError:
            return f"Error: File not found at path: {display()}"
        except PermissionError:
            return f"Error: Permission denied when trying to read file: {display()}"
        except UnicodeDecodeError:
            return (
                f"Error: Failed to decode file {display()} as {self.encoding}. "
                f"Pass a different 'encoding' to FileReadTool if the file uses "
                f"another text encoding."
            )
        except Exception as exc:
            return f"Error: Failed to read file {display()}. {format_error_for_display(exc)}"


class FileWriterTool(_HoldsRoots, _OriginalFileWriterTool):
    def _run(
        self,
        filename: str,
        content: str,
        directory: str | None = "./",
        overwrite: str | bool = False,
    ) -> str:
        directory = directory or "./"
        try:
            overwrite_file = strtobool(overwrite)
        except ValueError as exc:
            return f"An error occurred while writing to the file: {exc!s}"
        if "\0" in filename or "\0" in directory:
            return f"Error: Invalid file path: {format_error_for_display(ValueError('embedded null byte'))}"
        try:
            root = self._root_on(self.base_dir)
        except FileNotFoundError:
            # A missing base_dir is made by the first write, as the original's makedirs makes it,
            # once the directory and the filename are judged (by their spelling: nothing in it
            # can be a link).
            assert self.base_dir is not None  # the current directory exists
            if leaves_missing(directory, self.base_dir):
                return self._refused(os.path.join(self.base_dir, directory), self.base_dir)
            into = posixpath.normpath(posixpath.join(self.base_dir, directory))
            if (
                leaves_missing(filename, into) or posixpath.normpath(filename) == into
                if posixpath.isabs(filename)
                else _filename_escapes(filename)
            ):
                return FILENAME_ESCAPES
            try:
                os.makedirs(self.base_dir, exist_ok=True)
                root = self._root_on(self.base_dir)
            except OSError as exc:
                return (
                    f"Error: Could not create the directory for {posixpath.normpath(filename)}. "
                    f"{format_error_for_display(exc)}"
                )
        except OSError as exc:
            return f"An error occurred while writing to the file: {format_error_for_display(exc)}"
        return self._write(root, filename, content, _beneath(root, directory), overwrite_file)

    @staticmethod
    def _refused(path: str, base_dir: str) -> str:
        return "Error: Invalid directory: " + format_sandbox_error(_outside(path, base_dir), WRITE_REMEDY)

    def _write(self, root: safefs.Root, filename: str, content: str, directory: str, overwrite: bool) -> str:
        try:
            top = _canonical(root, directory)
        except safefs.PathEscapeError:
            return self._refused(os.path.join(root.anchors[-1], directory), root.anchors[-1])
        # The file is the one the original resolves (a link's target, ``..`` physical), spelled
        # from the directory it resolves to, and must lie under it; a symlink swapped in
        # meanwhile is judged by the directory's own root below.
        name = _file_under(root, top, filename)
        if name is None:
            return FILENAME_ESCAPES
        directory = top
        display = name
        try:
            # One makedirs of the file's directory, as the original's: its answers are makedirs'.
            root.mkdir(posixpath.dirname(posixpath.join(directory, name)), parents=True, exist_ok=True)
            with root.opendir(directory) as target_dir:
                return self._put(target_dir, name, content, overwrite, display)
        except safefs.PathEscapeError:
            return FILENAME_ESCAPES
        except FileExistsError:  # makedirs' answer where a file stands for the directory itself
            return (
                f"Error: Cannot write to {display} because a file already exists where a directory is needed."
            )
        except OSError as exc:
            return f"Error: Could not create the directory for {display}. {format_error_for_display(exc)}"

    def _put(self, target_dir: safefs.Root, name: str, content: str, overwrite: bool, display: str) -> str:
        exists = f"File {display} already exists and overwrite option was not passed."
        try:
            if overwrite:
                target_dir.write_bytes(name, content.encode(self.encoding))
            else:
                with target_dir.open(name, "x", encoding=self.encoding) as file:
                    file.write(content)
        except FileExistsError:
            return exists
        except safefs.PathEscapeError:
            return FILENAME_ESCAPES
        except Exception as exc:
            return f"An error occurred while writing to the file: {format_error_for_display(exc)}"
        return f"Content successfully written to {display}"


class DirectoryReadTool(_HoldsRoots, _OriginalDirectoryReadTool):
    def _run(self, **kwargs: Any) -> Any:
        directory: str | None = kwargs.get("directory", self.directory)
        if directory is None:
            raise ValueError("Directory must be provided.")
        root = self._root_on(None)
        given, directory = directory, _beneath(root, directory)
        # Listed under the directory's real path, as the original's realpath names it: an
        # entry's ``real`` is its path from the root, the start's real path included.
        prefix = root.anchors[-1].rstrip("/") + "/"
        try:
            # os.walk's order: each directory's files, then its subdirectories', top down.
            walk = Walk(root, directory, max_depth=None, ignore=False, skip_git=False)
            by_dir: dict[str, list[str]] = {}
            for entry in walk:
                if entry.kind == "dir":
                    by_dir.setdefault(entry.real, [])
                elif entry.kind == "file" or not leads_to_directory(root, entry):
                    parent = entry.real.rpartition("/")[0] or "."  # dirname, without its checks
                    by_dir.setdefault(parent, []).append(prefix + entry.real)
            # The start directory's own files first: its key is the shortest.
            start = min(by_dir, key=lambda d: (d.count("/") + (d != "."), d), default=None)
            if start is not None:
                by_dir = {start: by_dir.pop(start), **by_dir}
            files = [path for listed in by_dir.values() for path in listed]
        except WorkspaceError:  # the walk could not start: the original's refusal, or no files
            _refuse_unlisted(root, directory, given)
            files = []  # a directory it cannot read: os.walk lists nothing there
        return "File paths: \n-" + "\n- ".join(files)


def _refuse_unlisted(root: safefs.Root, directory: str, given: str) -> None:
    """Raise the original's refusal of ``directory`` (spelled ``given`` by the caller), which the
    walk could not start from: outside the root, or not a directory (nothing, for a directory it
    cannot read)."""
    try:
        is_dir = stat.S_ISDIR(root.stat(directory).st_mode)
    except safefs.PathEscapeError:
        raise _outside(os.path.join(root.anchors[-1], directory), root.anchors[-1]) from None
    except OSError:
        is_dir = False
    if not is_dir:
        raise ValueError(f"Path '{given}' is not a directory.")
