"""Drop-in for agno's ``FileTools`` (extra ``agno``): switch one import::

    from safefs.integrations.agno import FileTools

:class:`FileTools` subclasses ``agno.tools.file.FileTools``: the same constructor (``base_dir``,
the ``enable_*`` switches, ``max_file_length``, ``max_file_lines``, ``line_separator``,
``exclude_patterns``, ``expose_base_directory``, ``all``), the same tool functions with the same
signatures and docstrings (so the same schemas an agent sees) and the same result strings. The
original checks a path by resolving it (``safe_join_relative_path``: realpath, then
``relative_to``) and then opens the resolved path string again; here every file operation goes
through a :class:`safefs.Root` on ``base_dir``, so a path or a symlink leading outside gets the
original's own refusal (``"Error reading file"``, ``"Error saving file"``, ``"Incorrect
file_name"``, ``"{}"``), whenever the swap happens. Listing and searching walk through
:mod:`safefs.workspace`; ``search_files`` patterns are matched by RE2 in linear time. Error texts
name the path as the model gave it, never the host path of ``base_dir``. Every difference from
the original is listed in docs/integrations.md.
"""

from __future__ import annotations

import errno
import io
import json
import os
import posixpath
import stat
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path, PureWindowsPath
from typing import Any, TypeVar

from agno.exceptions import PathSecurityError
from agno.tools.file import TEXT_EXTENSIONS
from agno.tools.file import FileTools as _Original

# The original's own size and snippet formatting for search_content, so its results are the
# installed version's (module helpers of the public agno.tools.file.file, not a private module).
from agno.tools.file.file import _extract_snippet, _format_size
from agno.utils.log import log_debug as _agno_log_debug
from agno.utils.log import log_error as _agno_log_error
from agno.utils.path_safety import sanitize_filename

import safefs
from safefs.integrations._lazy_root import LazyRoot, leaves_missing
from safefs.workspace.errors import WorkspaceError
from safefs.workspace.limits import MAX_ENTRIES
from safefs.workspace.patterns import compile_glob, glob_depth, matches
from safefs.workspace.search import SEARCH_SECONDS
from safefs.workspace.walk import Entry, Walk

__all__ = ["FileTools"]

CONTENT_SEARCH_BYTES = 500 * 1024  # the original searches text files up to this size
MAX_BYTES_PER_CHAR = 4  # no codec spends more on one character: a longer file is too long unread

_T = TypeVar("_T")
# agno's own log calls (the original logs the same events; nothing logged reaches the model).
log_debug: Callable[[str], None] = _agno_log_debug
log_error: Callable[[str], None] = _agno_log_error


class _Refused(Exception):
    """The path leads outside ``base_dir`` or is one agno's path rules refuse."""


def agent_path(subpath: str) -> str:
    """``subpath`` as agno's ``safe_join_relative_path`` spells it before resolving it (NFKC,
    ``\\`` as ``/``, each name sanitized by agno's own ``sanitize_filename``); ``_Refused`` where
    those rules refuse it. Nothing is resolved here: the root judges where it leads."""
    if not subpath or not subpath.strip():
        raise _Refused(subpath)
    spelled = unicodedata.normalize("NFKC", subpath)
    windows = PureWindowsPath(spelled)
    if windows.drive or windows.is_absolute():
        raise _Refused(subpath)
    names = []
    for name in spelled.replace("\\", "/").split("/"):
        if name not in ("", ".", ".."):
            try:
                name = sanitize_filename(name)  # one name, no separator: agno's segment rule
            except PathSecurityError:
                raise _Refused(subpath) from None
        names.append(name)
    return "/".join(names)


class _MissingRoot(FileNotFoundError):
    """``base_dir`` does not exist (yet): the original finds nothing there, and its first
    ``save_file`` makes it. Names the path as the model gave it, never the host path."""

    def __init__(self, name: str = ".") -> None:
        super().__init__(errno.ENOENT, os.strerror(errno.ENOENT), name)


def _hidden(exc: OSError) -> OSError:
    """``exc`` without a file name: opening ``base_dir`` itself failed, and its host path is
    not for the model."""
    return type(exc)(exc.errno, exc.strerror) if exc.errno is not None else exc


class FileTools(_Original):
    """agno's ``FileTools``, every file operation through a :class:`safefs.Root` on ``base_dir``
    (opened on the first call and kept; ``close()`` releases its directory fd)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Opened on base_dir as given (pinned to today's directory, as the original resolves it
        # now), so both that spelling and the realpath the original keeps are the root's anchors:
        # an absolute path through a symlink the directory was given by is inside, as there.
        given = kwargs.get("base_dir", args[0] if args else None)
        self._safefs_base = str(self.base_dir)
        spelled = os.path.join(os.getcwd(), os.fspath(given)) if given else self._safefs_base
        self._safefs_root = LazyRoot(spelled)

    def close(self) -> None:
        """Release the root's directory fd (the next call opens it again)."""
        self._safefs_root.close()

    # -- the root --------------------------------------------------------------------------

    def _root(self) -> safefs.Root:
        if self._safefs_base != str(self.base_dir):
            # base_dir reassigned: the original reads it on every call, so the root follows it.
            self._safefs_root.close()
            self._safefs_base = str(self.base_dir)
            self._safefs_root = LazyRoot(self._safefs_base)
        try:
            return self._safefs_root.get()
        except FileNotFoundError:
            raise _MissingRoot() from None
        except OSError as exc:
            raise _hidden(exc) from None

    def _canonical(self, name: str, *, make: bool = False) -> str:
        """The root-relative path ``name`` designates, its final symlink followed as the
        original's ``resolve()`` follows it; ``_Refused`` when it leads outside; ``_MissingRoot``
        while ``base_dir`` does not exist, unless ``make`` (a write) makes it. A path that
        cannot be resolved (a file where a directory is needed) is left for the operation to
        report in its own words: this is no safety check, the operation resolves beneath the
        root again and a swap in between is refused there."""
        rel = agent_path(name)
        try:
            return str(self._root().resolve(rel))
        except _MissingRoot:
            # base_dir missing: judged by spelling; a write makes it, as the original's does.
            if leaves_missing(rel, str(self.base_dir)):
                raise _Refused(name) from None
            if not make:
                raise _MissingRoot(name) from None
            os.makedirs(self.base_dir, exist_ok=True)
            return self._canonical(name)
        except safefs.PathEscapeError:
            raise _Refused(name) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # the original's resolve() fails on a loop too
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), name) from None
            return rel

    def _confined(self, work: Callable[[safefs.Root], _T]) -> _T:
        """``work(root)``; a PathEscapeError (a swap during the call) is a refusal."""
        try:
            return work(self._root())
        except safefs.PathEscapeError as exc:
            raise _Refused(str(exc.filename)) from None

    def _read_text(self, file_name: str, encoding: str) -> str:
        """The file's text, as ``Path.read_text`` decodes it."""
        rel = self._canonical(file_name)
        return self._confined(lambda root: self._text(root, rel, encoding))

    def _read_text_within(self, file_name: str, encoding: str, max_chars: int) -> str | None:
        """``_read_text``, or None, unread, when the file has more bytes than any codec spends
        on ``max_chars`` characters (too long however it decodes)."""
        rel = self._canonical(file_name)

        def read(root: safefs.Root) -> str | None:
            if root.stat(rel).st_size > MAX_BYTES_PER_CHAR * max_chars:
                return None
            return self._text(root, rel, encoding)

        return self._confined(read)

    def _text(self, root: safefs.Root, rel: str, encoding: str, errors: str = "strict") -> str:
        """The file decoded as ``Path.read_text`` decodes it (universal newlines)."""
        return io.TextIOWrapper(io.BytesIO(root.read_bytes(rel)), encoding=encoding, errors=errors).read()

    def _listed(self, rel: str) -> bool:
        """Whether the original lists a found entry's path: one agno's name rules accept and
        ``exclude_patterns`` does not exclude (a symlink must also lead inside: ``_leads_inside``)."""
        try:
            agent_path(rel)
        except _Refused:
            return False
        return not self._is_excluded(self.base_dir / rel)

    def _leads_inside(self, root: safefs.Root, entry: Entry) -> bool:
        """Whether a found entry is no symlink, or one the root can follow (leading inside)."""
        if entry.kind != "link":
            return True
        try:
            root.resolve(entry.real)
        except safefs.PathEscapeError:
            return False
        except OSError:
            return True  # a dangling link inside: the original's resolve() keeps it too
        return True

    def _answer(self, work: Callable[[], str], refused: tuple[str, str], failed: tuple[str, str]) -> str:
        """``work()``, or the original's answers: ``refused`` (what it logs, if anything, and
        what it returns) for a path leading outside, ``failed`` (the prefixes it logs and returns, before the
        error) for any other failure."""
        try:
            return work()
        except _Refused:
            if refused[0]:
                log_error(refused[0])
            return refused[1]
        except Exception as e:
            log_error(f"{failed[0]}: {e!s}")
            return f"{failed[1]}: {e}"

    def _read_refused(self, file_name: str) -> tuple[str, str]:
        return f"Attempted to read file: {file_name}", "Error reading file"

    # -- the tools -------------------------------------------------------------------------

    def save_file(
        self, contents: str, file_name: str, overwrite: bool = True, encoding: str = "utf-8"
    ) -> str:
        def save() -> str:
            rel = self._canonical(file_name, make=True)
            log_debug(f"Saving contents to {rel}")

            def write(root: safefs.Root) -> str:
                parent = posixpath.dirname(rel)
                if parent and not root.exists(parent):  # as the original, which asks first
                    root.mkdir(parent, parents=True, exist_ok=True)
                if root.exists(rel) and not overwrite:
                    return f"File {file_name} already exists"
                root.write_text(rel, contents, encoding=encoding)
                return str(file_name)

            return self._confined(write)

        refused = (f"Attempted to save file: {file_name}", "Error saving file")
        return self._answer(save, refused, ("Error saving to file", "Error saving to file"))

    def read_file_chunk(self, file_name: str, start_line: int, end_line: int, encoding: str = "utf-8") -> str:
        def chunk() -> str:
            log_debug(f"Reading file: {file_name}")
            lines = self._read_text(file_name, encoding).split(self.line_separator)
            return self.line_separator.join(lines[start_line : end_line + 1])

        failed = ("Error reading file", "Error reading file")
        return self._answer(chunk, self._read_refused(file_name), failed)

    def replace_file_chunk(
        self, file_name: str, start_line: int, end_line: int, chunk: str, encoding: str = "utf-8"
    ) -> str:
        def replace() -> str:
            log_debug(f"Patching file: {file_name}")
            if start_line < 0 or end_line < start_line:
                return "Error patching file: require 0 <= start_line <= end_line"
            lines = self._read_text(file_name, encoding).split(self.line_separator)
            # A trailing separator ends the last line; its empty split element is kept so the
            # file keeps its terminator.
            line_count = len(lines) - 1 if lines[-1] == "" else len(lines)
            if end_line >= line_count:
                return f"Error patching file: end_line must be less than {line_count}"
            patched = [*lines[0:start_line], chunk, *lines[end_line + 1 :]]
            return self.save_file(
                file_name=file_name, contents=self.line_separator.join(patched), encoding=encoding
            )

        failed = ("Error patching file", "Error patching file")
        return self._answer(replace, self._read_refused(file_name), failed)

    def read_file(self, file_name: str, encoding: str = "utf-8") -> str:
        def read() -> str:
            log_debug(f"Reading file: {file_name}")
            contents = self._read_text_within(file_name, encoding, self.max_file_length)
            too_long = "Error reading file: file too long. Use read_file_chunk instead"
            if contents is None or len(contents) > self.max_file_length:
                return too_long
            if len(contents.split(self.line_separator)) > self.max_file_lines:
                return too_long
            return str(contents)

        failed = ("Error reading file", "Error reading file")
        return self._answer(read, self._read_refused(file_name), failed)

    def delete_file(self, file_name: str) -> str:
        def delete() -> str:
            rel = self._canonical(file_name)

            def remove(root: safefs.Root) -> str:
                if root.is_dir(rel):
                    root.rmdir(rel)
                else:
                    root.remove(rel)
                return ""

            return self._confined(remove)

        refused = (f"Attempt to delete file outside {self.base_dir}: {file_name}", "Incorrect file_name")
        return self._answer(delete, refused, (f"Error removing {file_name}", "Error removing file"))

    def list_files(self, directory: str = ".") -> str:
        def listing() -> str:
            rel = self._canonical(directory) if directory else "."
            log_debug(f"Reading files in : {rel}")

            def names(root: safefs.Root) -> list[str]:
                if not root.is_dir(rel):
                    root.listdir(rel)  # the error iterdir() raises, naming the path as given
                walk = Walk(root, rel, max_depth=1, ignore=False, skip_git=False)
                return [e.real for e in walk if self._listed(e.real) and self._leads_inside(root, e)]

            return json.dumps(self._confined(names), indent=4)

        refused = ("", "{}")  # the original logs nothing here
        return self._answer(listing, refused, ("Error reading files", "Error reading files"))

    def search_files(self, pattern: str) -> str:
        try:
            if not pattern or not pattern.strip():
                return "Error: Pattern cannot be empty"
            if pattern.startswith("/"):
                raise NotImplementedError("Non-relative patterns are unsupported")  # pathlib's glob
            log_debug(f"Searching files with pattern {pattern}")
            # Matched by RE2 in linear time, however the model spells the pattern.
            regex = compile_glob(pattern)
            # pathlib's glob takes a last name without wildcards as it is, if it exists: a
            # dangling link of that name is not found (a wildcard lists every name).
            literal_last = not any(c in pattern.rpartition("/")[2] for c in "*?[")

            def search(root: safefs.Root) -> list[str]:
                walk = Walk(
                    root,
                    ".",
                    max_depth=glob_depth(pattern),
                    ignore=False,
                    skip_git=False,
                    hide=lambda entry: not self._listed(entry.real),
                    deadline=_deadline(),
                )
                found = []
                for entry in walk:
                    if not matches(regex, entry.rel) or not self._leads_inside(root, entry):
                        continue
                    if not (literal_last and entry.kind == "link" and not root.exists(entry.real)):
                        found.append(entry.real)
                        if len(found) >= MAX_ENTRIES:
                            break
                return found

            try:
                matching = self._confined(search)
            except _MissingRoot:
                matching = []  # pathlib's glob finds nothing in a missing directory
            result: dict[str, Any]
            if self.expose_base_directory:
                file_paths = [str(self.base_dir / rel) for rel in matching]
                result = {
                    "pattern": pattern,
                    "matches_found": len(file_paths),
                    "base_directory": str(self.base_dir),
                    "files": file_paths,
                }
            else:
                result = {"pattern": pattern, "matches_found": len(matching), "files": matching}
            log_debug(f"Found {len(matching)} files matching pattern {pattern}")
            return json.dumps(result, indent=2)
        except (WorkspaceError, _Refused) as e:
            return f"Error searching files with pattern '{pattern}': {e}"
        except Exception as e:
            error_msg = f"Error searching files with pattern '{pattern}': {e}"
            log_error(error_msg)
            return error_msg

    def search_content(self, query: str, directory: str | None = None, limit: int = 10) -> str:
        try:
            if not query or not query.strip():
                return "Error: Query cannot be empty"
            try:
                start = self._canonical(directory) if directory else "."
            except _Refused:
                log_error(f"Attempted to search outside base directory: {directory}")
                return "Error: Directory is outside the allowed base directory"
            except _MissingRoot:
                return f"Error: '{directory}' is not a directory"
            try:
                is_dir = self._confined(lambda root: root.is_dir(start))
            except _MissingRoot:
                is_dir = False
            if not is_dir:
                return f"Error: '{directory}' is not a directory"
            log_debug(f"Searching file contents in {start} for '{query}'")
            matches_found = self._confined(lambda root: self._content_matches(root, start, query, limit))
            result = {"query": query, "matches_found": len(matches_found), "files": matches_found}
            log_debug(f"Found {len(matches_found)} files containing '{query}'")
            return json.dumps(result, indent=2)
        except Exception as e:
            error_msg = f"Error searching content for '{query}': {e}"
            log_error(error_msg)
            return error_msg

    def _content_matches(self, root: safefs.Root, start: str, query: str, limit: int) -> list[dict[str, Any]]:
        """The first ``limit`` text files under ``start`` holding ``query`` (case-insensitive),
        in the walk's order: files and symlinks to files inside, as ``os.walk`` lists them."""
        lower_query = query.lower()
        found: list[dict[str, Any]] = []
        walk = Walk(
            root,
            start,
            ignore=False,
            skip_git=False,
            hide=lambda entry: self._is_excluded(self.base_dir / entry.real),
            deadline=_deadline(),
        )
        for entry in walk:
            if len(found) >= limit:
                break
            if entry.kind not in ("file", "link") or not self._listed(entry.real):
                continue
            if Path(entry.name).suffix.lower() not in TEXT_EXTENSIONS:
                continue
            try:
                st = root.stat(entry.real)
            except OSError:
                continue  # a link leading outside or nowhere: the original skips it too
            if not stat.S_ISREG(st.st_mode) or st.st_size > CONTENT_SEARCH_BYTES:
                continue
            try:
                content = self._text(root, entry.real, "utf-8", errors="ignore")
            except (OSError, ValueError):
                continue
            if lower_query in content.lower():
                found.append(
                    {
                        "file": entry.real,
                        "size": _format_size(st.st_size),
                        "snippet": _extract_snippet(content, query),
                    }
                )
        return found


def _deadline() -> float:
    return time.monotonic() + SEARCH_SECONDS


# The tool functions' docstrings and annotations are the installed original's: agno builds each
# tool's description and argument schema from them, so the model sees exactly what it sees there.
TOOLS = (
    "save_file",
    "read_file",
    "list_files",
    "search_files",
    "delete_file",
    "read_file_chunk",
    "replace_file_chunk",
    "search_content",
)
for _name in TOOLS:
    _ours, _theirs = getattr(FileTools, _name), getattr(_Original, _name)
    _ours.__doc__ = _theirs.__doc__
    _ours.__annotations__ = dict(_theirs.__annotations__)
