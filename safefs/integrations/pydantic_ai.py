"""Drop-in for pydantic-ai's local workspace (extra ``pydantic-ai``): switch one import::

    from safefs.integrations.pydantic_ai import LocalWorkspace, LocalWorkspaceBackend

:class:`LocalWorkspaceBackend` subclasses ``pydantic_ai.workspaces.LocalWorkspaceBackend``: the
same constructor (``working_dir``, ``env=``), ``ref`` and every workspace protocol it implements
(``WorkspaceBackend``, ``SupportsFilesystem``, ``SupportsRealpath``, ``SupportsCommands``). The
original "isolates nothing"; here the working directory is a :class:`safefs.Root`:

- every file operation resolves its (absolute) path beneath the root's directory fd; a path
  outside it, or a symlink leading out, raises ``PermissionError`` (a
  :class:`safefs.PathEscapeError`), the builtin file error the workspace protocol asks for;
- ``run`` runs the command in the kernel sandbox (:mod:`safefs.sandbox`) with the same
  environment rule (``PATH``, ``HOME``, ``LANG``, ``LC_ALL``, ``LC_CTYPE``, then ``env``).

:class:`LocalWorkspace` is pydantic-ai's capability of that name, building this backend. Every
difference from the original is listed in docs/integrations.md.
"""

from __future__ import annotations

import errno
import math
import os
import posixpath
import stat as stat_module
import threading
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any, TypeVar

import anyio
from anyio.to_thread import run_sync
from pydantic_ai.capabilities import LocalWorkspace as _UpstreamLocalWorkspace
from pydantic_ai.workspaces import (
    CommandResult,
    FileEntry,
    ReadOnlyWorkspace,
    Workspace,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceOutputLimitError,
    WorkspaceRef,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
)
from pydantic_ai.workspaces import LocalWorkspaceBackend as _UpstreamBackend

import safefs
from safefs.integrations._commands import run_split
from safefs.integrations._lazy_root import LazyRoot

__all__ = ["LocalWorkspace", "LocalWorkspaceBackend"]

# The variables the original's docstring says every command inherits (tests/integrations compare
# the environment a command sees under both).
INHERITED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE")
OUTPUT_LIMIT = 10 * 1024 * 1024  # combined stdout and stderr, as the original's cap
PREVIEW = 64 * 1024
POLL_SECONDS = 0.1  # how often a running command's workspace is checked for deletion

_T = TypeVar("_T")


class LocalWorkspaceBackend(_UpstreamBackend):
    """pydantic-ai's ``LocalWorkspaceBackend``, confined to ``working_dir`` by safefs.

    Built without I/O, like the original; the first operation opens the root (or raises
    ``WorkspaceUnavailableError`` when the directory is missing) and keeps it.
    """

    def __init__(self, working_dir: str | Path, *, env: Mapping[str, str] | None = None):
        super().__init__(working_dir, env=env)
        self._extra_env = dict(env or {})
        # The spelling the original keeps (``ref.id`` is its lexical normalization): the kernel
        # resolves it when the root is opened, so ``link/..`` means what it means on disk.
        expanded = Path(working_dir).expanduser()
        self._root = LazyRoot(str(expanded if expanded.is_absolute() else Path.cwd() / expanded))

    # -- the root ----------------------------------------------------------------------------

    def _opened(self) -> safefs.Root:
        """The root, opened on first use; ``WorkspaceUnavailableError`` once its directory is gone
        (the root keeps the directory it opened: one created later under the same name is another
        environment)."""
        try:
            root = self._root.get()
        except OSError as exc:
            raise self._unavailable() from exc
        if _removed(root):
            raise self._unavailable()
        return root

    def _unavailable(self) -> WorkspaceUnavailableError:
        return WorkspaceUnavailableError(f"local workspace directory {self.ref.id} does not exist")

    async def _in_root(self, operation: Callable[[safefs.Root], _T]) -> _T:
        """``operation(root)`` in a worker thread: file calls block and must not stall the loop."""
        return await run_sync(lambda: operation(self._opened()))

    def close(self) -> None:
        """Release the root's directory fd (the next operation opens it again)."""
        self._root.close()

    @staticmethod
    def _absolute(path: str) -> str:
        if not Path(path).is_absolute():
            raise ValueError(f"path must be absolute, got {path!r}")
        return path

    async def working_dir(self) -> str:
        root = await run_sync(self._opened)
        return root.anchors[-1]  # its realpath spelling, when that denotes the root

    # -- SupportsFilesystem ------------------------------------------------------------------

    async def read_bytes(self, path: str) -> bytes:
        target = self._absolute(path)
        return await self._in_root(lambda root: root.read_bytes(target))

    async def write_bytes(self, path: str, data: bytes) -> None:
        target = self._absolute(path)

        def write(root: safefs.Root) -> None:
            try:
                root.write_bytes(target, data, parents=True)
            except FileExistsError:
                raise NotADirectoryError(path) from None  # a parent exists and is no directory
            except safefs.PathEscapeError:
                raise
            except OSError as exc:
                # A parent that is a dangling or looping link: the original's mkdir finds it there.
                if exc.errno in (errno.ENOENT, errno.ELOOP) and _not_a_directory(
                    root, posixpath.dirname(target)
                ):
                    raise NotADirectoryError(path) from None
                raise

        await self._in_root(write)

    async def stat(self, path: str) -> FileEntry:
        target = self._absolute(path)
        name = posixpath.basename(posixpath.normpath(target))

        def described(root: safefs.Root) -> os.stat_result | None:
            try:
                return root.stat(target)
            except safefs.PathEscapeError:
                if not _unfollowable_link(root, target):
                    raise
                return None  # described as list_dir lists it, not followed

        info = await self._in_root(described)
        if info is None:
            return FileEntry(name=name, path=path, is_dir=False, size=None)
        is_dir = stat_module.S_ISDIR(info.st_mode)
        return FileEntry(name=name, path=path, is_dir=is_dir, size=None if is_dir else info.st_size)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        target = str(Path(self._absolute(path)))  # spelled as the original's Path spells it

        def entries(root: safefs.Root) -> list[FileEntry]:
            # One listing of the directory, each entry's lstat taken on its fd: what the
            # original's scandir costs, and nothing resolved again but a symlink.
            out = []
            for entry in sorted(root.scandir(target, lstat=True), key=_by_name):
                # Files and directories by the lstat the listing kept (this runs once per
                # entry), links and the rest (or an entry gone since) in _file_entry.
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    out.append(_file_entry(entry))
                    continue
                if stat_module.S_ISREG(info.st_mode):
                    out.append(FileEntry(name=entry.name, path=entry.path, is_dir=False, size=info.st_size))
                elif stat_module.S_ISDIR(info.st_mode):
                    out.append(FileEntry(name=entry.name, path=entry.path, is_dir=True, size=None))
                else:
                    out.append(_file_entry(entry))
            return out

        return await self._in_root(entries)

    async def make_dir(self, path: str) -> None:
        target = self._absolute(path)

        def make(root: safefs.Root) -> None:
            try:
                root.mkdir(target, parents=True, exist_ok=True)
            except FileNotFoundError:
                # The original's mkdir(parents=True) climbs to the nearest entry that exists: a
                # dangling link there is FileExistsError (it exists, and is no directory).
                if _nearest_entry_is_no_directory(root, target):
                    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path) from None
                raise

        await self._in_root(make)

    async def remove(self, path: str) -> None:
        target = self._absolute(path)

        def remove(root: safefs.Root) -> None:
            try:
                rel = root.relative(target)
            except safefs.PathEscapeError:
                if any(_lies_under(anchor, target) for anchor in root.anchors):
                    raise ValueError("cannot remove the workspace root or its ancestor") from None
                raise
            if root.is_symlink(rel) or not root.is_dir(rel):
                root.remove(rel)
            elif root.resolve(rel) == ".":
                raise ValueError("cannot remove the workspace root or its ancestor")
            else:
                root.rmtree(rel)

        await self._in_root(remove)

    async def exists(self, path: str) -> bool:
        target = self._absolute(path)

        def exists(root: safefs.Root) -> bool:
            try:
                return root.exists(target)
            except safefs.PathEscapeError:
                if not _unfollowable_link(root, target):
                    raise
                return True  # the entry is there; where it leads is not for this workspace

        return await self._in_root(exists)

    # -- SupportsRealpath --------------------------------------------------------------------

    async def realpath(self, path: str) -> str:
        target = self._absolute(path)

        def resolve(root: safefs.Root) -> str:
            rel = _resolve_leniently(root, target)
            base = root.anchors[-1]
            return base if rel == "." else posixpath.join(base, rel)

        return await self._in_root(resolve)

    # -- SupportsCommands --------------------------------------------------------------------

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if timeout is not None and (
            not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0
        ):
            raise ValueError("timeout must be a positive finite number or None")
        if isinstance(command, str) != shell:
            raise TypeError(
                "a string command requires shell=True; pass an argv sequence otherwise"
                if isinstance(command, str)
                else "an argv sequence cannot be combined with shell=True; pass a single command string"
            )
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else [str(a) for a in command]
        inherited = {name: os.environ[name] for name in INHERITED_ENV if name in os.environ}
        merged = inherited | self._extra_env | dict(env or {})
        root = await run_sync(self._opened)
        cancel = threading.Event()
        limit = math.inf if timeout is None else float(timeout)
        outcome = await _supervised(
            lambda: run_split(root, argv, merged, timeout=limit, output_cap=OUTPUT_LIMIT, cancel=cancel),
            cancel,
            stop_when=lambda: _removed(root),
        )
        if outcome.cancelled:
            await self.working_dir()  # stopped because the workspace was deleted: unavailable
        stdout = outcome.stdout.decode("utf-8", errors="replace")
        stderr = outcome.stderr.decode("utf-8", errors="replace")
        if outcome.refusal is not None:
            raise WorkspaceUnavailableError(outcome.refusal)
        if outcome.over_cap:
            raise WorkspaceOutputLimitError(
                "command output exceeded the 10 MiB limit of this workspace; redirect it to a file "
                "and read part of it instead",
                limit=OUTPUT_LIMIT,
                stdout=stdout[:PREVIEW],
                stderr=stderr[:PREVIEW],
            )
        if outcome.timed_out:
            raise WorkspaceTimeoutError(
                f"command timed out after {timeout:g}s and was killed", stdout=stdout, stderr=stderr
            )
        await self.working_dir()  # a workspace deleted under the command is not an ordinary exit
        code = outcome.exit_code if outcome.exit_code is not None else -1
        return CommandResult(exit_code=128 - code if code < 0 else code, stdout=stdout, stderr=stderr)


def _lies_under(anchor: str, path: str) -> bool:
    """Whether ``path`` names ``anchor`` or one of its ancestors, compared by whole components."""
    parts = [p for p in posixpath.normpath(path).split("/") if p]
    return [p for p in anchor.split("/") if p][: len(parts)] == parts


_by_name = attrgetter("name")


def _resolve_leniently(root: safefs.Root, path: str) -> str:
    """``root.resolve(path)``, except that past a file used as a directory the rest is appended
    as spelled (``..`` taking back a name), as ``os.path.realpath`` does where lstat fails, and
    a symlink loop ends the resolution where ``os.path.realpath`` ends it."""
    try:
        return root.resolve(path)
    except NotADirectoryError:
        head, tail = posixpath.split(path.rstrip("/"))
        if not head or head == path:
            raise
        joined = posixpath.normpath(posixpath.join(_resolve_leniently(root, head), tail))
        if joined.split("/")[0] == "..":
            raise safefs.PathEscapeError(path) from None
        return joined
    except safefs.PathEscapeError:
        raise
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        walked = posixpath.normpath(_LoopResolution(root).join("", root.relative(path))[0])
        if walked.split("/")[0] == "..":
            raise safefs.PathEscapeError(path) from None
        return walked


class _LoopResolution:
    """``os.path.realpath(strict=False)``'s walk, done through the root for a path whose links
    loop (the kernel's answer is ELOOP): each symlink is read one level, its target walked in its
    place, and a link met again while it is being resolved ends the walk with the path so far and
    the rest as spelled. Root-relative throughout (``""`` is the root); a ``..`` above the root
    or an absolute target under none of the root's anchors is a PathEscapeError; past
    ``BUDGET`` links followed, ELOOP."""

    BUDGET = 256

    def __init__(self, root: safefs.Root) -> None:
        self.root = root
        self.seen: dict[str, str | None] = {}
        self.followed = 0

    def join(self, path: str, rest: str) -> tuple[str, bool]:
        if rest.startswith("/"):
            path, rest = "", self.root.relative(rest)
        while rest:
            name, _, rest = rest.partition("/")
            if name in ("", "."):
                continue
            if name == "..":
                if not path:
                    raise safefs.PathEscapeError()
                path = posixpath.dirname(path)
                continue
            newpath = posixpath.join(path, name)
            try:
                is_link = self.root.is_symlink(newpath)
            except safefs.PathEscapeError:
                raise
            except OSError:
                is_link = False
            if not is_link:
                path = newpath
                continue
            if newpath in self.seen:
                done = self.seen[newpath]
                if done is None:
                    return posixpath.join(newpath, rest), False  # the loop closes here
                path = done
                continue
            self.followed += 1
            if self.followed > self.BUDGET:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), newpath)
            self.seen[newpath] = None
            path, ok = self.join(path, self.root.readlink(newpath))
            if not ok:
                return posixpath.join(path, rest), False
            self.seen[newpath] = path
        return path, True


def _nearest_entry_is_no_directory(root: safefs.Root, path: str) -> bool:
    """Whether the nearest ancestor of ``path`` that exists (not followed) leads to no directory."""
    parent = posixpath.dirname(path.rstrip("/"))
    while parent not in ("", "/"):
        try:
            if root.exists(parent, follow_symlinks=False):
                return _not_a_directory(root, parent)
        except OSError:
            return False
        parent = posixpath.dirname(parent)
    return False


def _not_a_directory(root: safefs.Root, path: str) -> bool:
    """Whether ``path`` names an entry (not followed) that does not lead to a directory."""
    try:
        if not root.exists(path, follow_symlinks=False):
            return False
    except OSError:
        return False
    try:
        return not root.is_dir(path)
    except OSError:
        return True


def _unfollowable_link(root: safefs.Root, target: str) -> bool:
    """Whether ``target`` names, inside the root, a symlink the root cannot follow (one leading
    out): such an entry is listed, so ``stat`` and ``exists`` describe it rather than refuse."""
    try:
        return root.is_symlink(target)
    except OSError:
        return False


def _file_entry(entry: safefs.DirEntry) -> FileEntry:
    """A listed entry that is neither a file nor a directory, as the original lists it: a
    symlink followed through the root (one it cannot follow is ``is_dir=False``,
    ``size=None``), anything else by its own lstat."""
    try:
        info = entry.stat()
    except OSError:
        return FileEntry(name=entry.name, path=entry.path, is_dir=False, size=None)
    is_dir = stat_module.S_ISDIR(info.st_mode)
    return FileEntry(name=entry.name, path=entry.path, is_dir=is_dir, size=None if is_dir else info.st_size)


def _removed(root: safefs.Root) -> bool:
    """Whether the root's directory has been deleted (the fd still holds it, with no name left):
    the held fd's own link count, asked of the fd (no path, so nothing to resolve; one syscall
    on every operation, as the original's own liveness check costs)."""
    return os.fstat(root.fileno()).st_nlink == 0


async def _supervised(work: Callable[[], _T], cancel: threading.Event, stop_when: Callable[[], bool]) -> _T:
    """``work()`` in a worker thread. ``cancel`` is set when the caller is cancelled (the caller
    then waits for the work to stop) or as soon as ``stop_when()`` holds (polled meanwhile)."""
    done = threading.Event()
    box: list[Any] = []

    def target() -> None:
        try:
            box.append((True, work()))
        except BaseException as exc:  # handed back to the caller below
            box.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=target, name="safefs-command", daemon=True).start()
    try:
        while not await run_sync(done.wait, POLL_SECONDS, abandon_on_cancel=True):
            if stop_when():
                cancel.set()
    except anyio.get_cancelled_exc_class():
        cancel.set()
        with anyio.CancelScope(shield=True):
            await run_sync(done.wait)
        raise
    ok, value = box[0]
    if not ok:
        raise value
    result: _T = value
    return result


class LocalWorkspace(_UpstreamLocalWorkspace[Any]):
    """pydantic-ai's ``LocalWorkspace`` capability, giving runs the safefs backend above."""

    working_dir: str | Path  # the original's field, declared for type checkers without pydantic-ai

    def __post_init__(self) -> None:
        # Pins a relative working_dir to today's directory, as the original does.
        self.working_dir = LocalWorkspaceBackend(self.working_dir).ref.id

    def get_workspace(self, ctx: Any, *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = LocalWorkspaceBackend(self.working_dir, env=self.env)
        if ref is not None and ref != backend.ref:
            return None  # a ref from history never redirects the workspace elsewhere
        return ReadOnlyWorkspace(Workspace(backend)) if self.read_only else backend
