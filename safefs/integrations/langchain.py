"""Drop-in for LangChain's file management tools (extra ``langchain``): switch one import::

    from safefs.integrations.langchain import FileManagementToolkit

Each tool subclasses ``langchain_community``'s own (``ReadFileTool``, ``WriteFileTool``,
``CopyFileTool``, ``MoveFileTool``, ``DeleteFileTool``, ``ListDirectoryTool``,
``FileSearchTool``), so its name, description, argument schema, ``root_dir`` field and result
texts are the installed version's; :class:`FileManagementToolkit` subclasses the original
toolkit and hands out these tools. The original resolves a path, checks it lies under
``root_dir`` and then opens the path string again; here every operation goes through a
:class:`safefs.Root` on ``root_dir`` (the current directory when it is None), so a path or a
symlink leading outside is refused with the original's own "Access denied" text, whenever the
swap happens. Listing and search walk through :mod:`safefs.workspace`. Every difference from
the original is listed in docs/integrations.md.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import posixpath
import shutil
import stat as stat_module
from collections.abc import Callable, Iterator

from langchain_community.agent_toolkits import FileManagementToolkit as _OriginalToolkit
from langchain_community.tools import file_management as _original
from langchain_community.tools.file_management.utils import INVALID_PATH_TEMPLATE
from langchain_core.callbacks import CallbackManagerForToolRun
from langchain_core.tools import BaseTool
from pydantic import BaseModel, PrivateAttr

import safefs
from safefs.integrations._lazy_root import LazyRoots, leaves_missing
from safefs.workspace.patterns import compile_glob, matches
from safefs.workspace.walk import Walk, leads_to_directory

__all__ = [
    "CopyFileTool",
    "DeleteFileTool",
    "FileManagementToolkit",
    "FileSearchTool",
    "ListDirectoryTool",
    "MoveFileTool",
    "ReadFileTool",
    "WriteFileTool",
]


class _Refused(Exception):
    """A path argument leads outside ``root_dir``; carries the original's refusal text."""


class _MissingRoot(Exception):
    """``root_dir`` does not exist (yet): the call answers as the original does there."""


class _ConfinedTool(BaseModel):
    """The root every call of one tool works through, opened on ``root_dir`` at first use and
    opened again when ``root_dir`` is changed, as the original reads it on every call."""

    _roots: LazyRoots = PrivateAttr(default_factory=LazyRoots)

    def _directory(self) -> str:
        directory = getattr(self, "root_dir", None)
        return str(directory) if directory is not None else "."

    def _opened(self) -> safefs.Root:
        try:
            return self._roots.on(self._directory())
        except FileNotFoundError:
            raise _MissingRoot() from None

    def close(self) -> None:
        """Release the root's directory fd (the next call opens it again)."""
        self._roots.close()

    @staticmethod
    def _refusal(arg_name: str, value: str) -> str:
        return INVALID_PATH_TEMPLATE.format(arg_name=arg_name, value=value)

    def _call(
        self,
        work: Callable[[safefs.Root], str],
        *,
        missing: Callable[[], str] | None = None,
        create: bool = False,
        **paths: str,
    ) -> str:
        """``work(root)``, with the original's texts for a path leading out and for a failure.

        With two path arguments, each is judged first, so the refusal names the one that leads
        out; otherwise the operation's own PathEscapeError says which. ``root_dir`` missing:
        ``missing()``, the original's answer there (its error, spelled with the caller's path
        where the original names the host's), a path leading out still refused; with ``create``
        (a write) the directory is made, as the original's write makes it."""
        try:
            try:
                root = self._opened()
            except _MissingRoot:
                for arg_name, value in paths.items():
                    if leaves_missing(value, self._directory()):
                        return self._refusal(arg_name, value)
                if not create:
                    if missing is not None:
                        return missing()
                    first = next(iter(paths.values()))
                    return "Error: " + str(FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), first))
                os.makedirs(self._directory(), exist_ok=True)  # as the original's write makes it
                root = self._opened()
            if len(paths) > 1:
                for arg_name, value in paths.items():
                    _within(root, arg_name, value)
            return work(root)
        except _Refused as refused:
            return str(refused)
        except safefs.PathEscapeError as exc:
            # The argument the error names (safefs names the caller's path), else the first.
            named = [(a, v) for a, v in paths.items() if v == exc.filename] or list(paths.items())
            return self._refusal(*named[0])
        except Exception as exc:
            return "Error: " + str(exc)


def _within(root: safefs.Root, arg_name: str, value: str) -> None:
    """Refuse ``value`` as the original refuses a path resolving outside ``root_dir``."""
    try:
        root.resolve(value)
    except safefs.PathEscapeError:
        raise _Refused(INVALID_PATH_TEMPLATE.format(arg_name=arg_name, value=value)) from None
    except (OSError, ValueError):
        pass  # not a refusal: the operation reports it in its own words


def _resolved(root: safefs.Root, path: str) -> str:
    """The canonical spelling of ``path`` as the original's non-strict resolve gives it, or
    ``path`` as spelled where a file stands for a directory on the way (the operation then
    answers in its own words); a path leading out is refused."""
    try:
        return root.resolve(path)
    except safefs.PathEscapeError:
        raise
    except OSError:
        return path


def _exists_followed(root: safefs.Root, path: str) -> bool:
    """``os.path.exists`` as shutil.move asks it (a dangling link is no obstacle: the rename
    replaces it); a link leading out counts as there, so nothing is moved over it."""
    try:
        return root.exists(path)
    except safefs.PathEscapeError:
        return True


@contextlib.contextmanager
def _naming(arg_name: str, value: str) -> Iterator[None]:
    """A path leading out met inside the block is refused as the argument ``arg_name``'s (the
    path the model gave; the source and the destination may be spelled alike)."""
    try:
        yield
    except safefs.PathEscapeError:
        raise _Refused(INVALID_PATH_TEMPLATE.format(arg_name=arg_name, value=value)) from None


def _into_directory(root: safefs.Root, source: str, destination: str) -> str:
    """``destination``, or ``destination/<name of source>`` when it is a directory (shutil's rule;
    the root's own name when ``source`` is the root, as the original's resolved path names it)."""
    if root.is_dir(destination):
        name = posixpath.basename(posixpath.normpath(source))
        if name in (".", ""):
            name = posixpath.basename(root.anchors[-1])
        return posixpath.join(destination, name)
    return destination


class ReadFileTool(_ConfinedTool, _original.ReadFileTool):
    def _run(self, file_path: str, run_manager: CallbackManagerForToolRun | None = None) -> str:
        def read(root: safefs.Root) -> str:
            if not root.exists(file_path):
                return f"Error: no such file or directory: {file_path}"
            # Decoded as the original's text-mode open decodes: strict UTF-8, universal newlines.
            return io.TextIOWrapper(io.BytesIO(root.read_bytes(file_path)), encoding="utf-8").read()

        return self._call(
            read, missing=lambda: f"Error: no such file or directory: {file_path}", file_path=file_path
        )


class WriteFileTool(_ConfinedTool, _original.WriteFileTool):
    def _run(
        self,
        file_path: str,
        text: str,
        append: bool = False,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> str:
        def write(root: safefs.Root) -> str:
            # The path the original resolves: a link's target, its missing directories made.
            target = _resolved(root, file_path)
            parent = posixpath.dirname(target)
            if parent:
                root.mkdir(parent, parents=True, exist_ok=True)
            if append:
                with root.open(target, "a", encoding="utf-8") as f:
                    f.write(text)
            else:
                root.write_text(target, text, encoding="utf-8")
            return f"File written successfully to {file_path}."

        return self._call(write, create=True, file_path=file_path)


class CopyFileTool(_ConfinedTool, _original.CopyFileTool):
    def _run(
        self,
        source_path: str,
        destination_path: str,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> str:
        def copy(root: safefs.Root) -> str:
            # As the original, which copies the paths it resolved: a link's target, its bytes.
            source = root.resolve(source_path)
            # shutil.copy2's order: into a directory, the same file, then the source opened.
            with _naming("destination_path", destination_path):
                target = _into_directory(root, source, _resolved(root, destination_path))
                same = root.exists(source) and root.exists(target) and root.resolve(target) == source
            if same:
                raise shutil.SameFileError(f"{source_path!r} and {destination_path!r} are the same file")
            info = root.stat(source)
            if stat_module.S_ISDIR(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), source_path)
            mode = stat_module.S_IMODE(info.st_mode)
            data = root.read_bytes(source)
            with _naming("destination_path", destination_path):  # its entry may be a link leading out
                root.write_bytes(target, data)
                root.chmod(target, mode)
            return f"File copied successfully from {source_path} to {destination_path}."

        return self._call(copy, source_path=source_path, destination_path=destination_path)


class MoveFileTool(_ConfinedTool, _original.MoveFileTool):
    def _run(
        self,
        source_path: str,
        destination_path: str,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> str:
        def move(root: safefs.Root) -> str:
            if not root.exists(source_path):
                return f"Error: no such file or directory {source_path}"
            # As the original, which moves the paths it resolved: a link's target itself.
            source = root.resolve(source_path)
            destination = _resolved(root, destination_path)
            if source == destination:
                return f"File moved successfully from {source_path} to {destination_path}."
            if source == ".":  # the root: whatever the destination, it lies inside
                raise OSError(f"Cannot move a directory '{source}' into itself '{destination}'.")
            target = _into_directory(root, source, destination)
            if target != destination and _exists_followed(root, target):
                raise OSError(f"Destination path '{target}' already exists")
            try:
                root.rename(source, target)
            except OSError as exc:
                # shutil.move's answers where its rename fails and it copies a directory over
                if not root.is_dir(source):
                    raise
                if (target + "/").startswith(source + "/"):
                    raise OSError(
                        f"Cannot move a directory '{source}' into itself '{destination}'."
                    ) from None
                if isinstance(exc, FileNotFoundError) and root.exists(source):
                    # copytree makes the missing directories of the destination
                    root.mkdir(posixpath.dirname(target) or ".", parents=True, exist_ok=True)
                    root.rename(source, target)
                    return f"File moved successfully from {source_path} to {destination_path}."
                if root.exists(target, follow_symlinks=False):
                    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), target) from None
                raise
            return f"File moved successfully from {source_path} to {destination_path}."

        return self._call(
            move,
            missing=lambda: f"Error: no such file or directory {source_path}",
            source_path=source_path,
            destination_path=destination_path,
        )


class DeleteFileTool(_ConfinedTool, _original.DeleteFileTool):
    def _run(self, file_path: str, run_manager: CallbackManagerForToolRun | None = None) -> str:
        def delete(root: safefs.Root) -> str:
            if not root.exists(file_path):
                return f"Error: no such file or directory: {file_path}"
            root.remove(root.resolve(file_path))  # the path the original resolved: a link's target
            return f"File deleted successfully: {file_path}."

        return self._call(
            delete, missing=lambda: f"Error: no such file or directory: {file_path}", file_path=file_path
        )


class ListDirectoryTool(_ConfinedTool, _original.ListDirectoryTool):
    def _run(self, dir_path: str = ".", run_manager: CallbackManagerForToolRun | None = None) -> str:
        def listing(root: safefs.Root) -> str:
            names = sorted(root.listdir(dir_path))
            return "\n".join(names) if names else f"No files found in directory {dir_path}"

        return self._call(listing, dir_path=dir_path)


class FileSearchTool(_ConfinedTool, _original.FileSearchTool):
    def _run(
        self,
        pattern: str,
        dir_path: str = ".",
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> str:
        def search(root: safefs.Root) -> str:
            # Matched by RE2 in linear time, however the model spells the pattern.
            regex = compile_glob(pattern)
            found: list[str] = []
            if root.is_dir(dir_path):  # a missing directory is no match, as os.walk has it
                for entry in _walk(root, dir_path, max_depth=None):
                    is_file = entry.kind != "dir" and not leads_to_directory(root, entry)
                    if is_file and matches(regex, entry.name):
                        found.append(entry.rel)
            if not found:
                return f"No files found for pattern {pattern} in directory {dir_path}"
            return "\n".join(found)

        return self._call(
            search,
            missing=lambda: f"No files found for pattern {pattern} in directory {dir_path}",
            dir_path=dir_path,
        )


def _walk(root: safefs.Root, start: str, *, max_depth: int | None) -> Walk:
    """Every entry under ``start`` (git's ignore rules off: the originals apply none); symlinks
    are listed and never entered, as ``os.walk`` does."""
    return Walk(root, start, max_depth=max_depth, ignore=False, skip_git=False)


_TOOLS: tuple[type[BaseTool], ...] = (
    CopyFileTool,
    DeleteFileTool,
    FileSearchTool,
    MoveFileTool,
    ReadFileTool,
    WriteFileTool,
    ListDirectoryTool,
)
_BY_NAME: dict[str, type[BaseTool]] = {tool.model_fields["name"].default: tool for tool in _TOOLS}


class FileManagementToolkit(_OriginalToolkit):
    """LangChain's ``FileManagementToolkit``, handing out the safefs tools above."""

    def get_tools(self) -> list[BaseTool]:
        # The original's selection and order, each tool swapped for its safefs drop-in.
        return [_BY_NAME[tool.name](root_dir=self.root_dir) for tool in super().get_tools()]
