"""``AgentToolContext``: the SDK's context for the agent toolset, with its directories held as roots.

The fields are the SDK's (``anthropic.lib.tools.agent_toolset.AgentToolContext``): ``workdir``,
``allowed_roots``, ``read_only_roots``, ``env``, ``max_file_bytes``, ``max_image_base64_bytes``
and ``max_pdf_bytes``. What differs is how a tool path is judged: the SDK canonicalises it with
``realpath`` and then operates on the resulting path string, which anyone who can rename inside
the workdir can redirect between the check and the use. Here the workdir and each allowed and
read-only directory is opened once as a :class:`safefs.Root`, and every operation resolves its
path beneath the root's directory fd: nothing a rename does can lead it outside.

A tool path is routed to a root by :meth:`AgentToolContext.locate`: a relative path belongs to the
workdir; an absolute one to the root (workdir or allowed) under whose spelling it lies, the most
specific one when they nest. ``read`` and ``grep`` also reach the file in which ``bash`` saved its
last long output (SDK 2.16 and later), held as a root of its own outside the workdir.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anthropic import NotGiven, not_given
from anthropic.lib.tools import ToolError

import safefs
from safefs.anthropic import sdk
from safefs.anthropic.shell import ConfinedShell

SAVED_OUTPUT_NAME = "output.txt"


def effective_cap(configured: int | NotGiven | None, default: int) -> int | None:
    """``not_given`` selects ``default``; ``None`` means no cap; an int is the cap."""
    return default if isinstance(configured, NotGiven) else configured


@dataclass(frozen=True)
class Located:
    """Where a tool path leads: the root that holds it and the path relative to that root."""

    root: safefs.Root
    rel: str
    # The absolute spelling the root is shown by in results (the SDK shows resolved host paths).
    shown_root: str

    def shown(self, rel: str) -> str:
        """``rel`` (relative to this root) as the SDK shows a result path: absolute."""
        return self.shown_root if rel in ("", ".") else os.path.join(self.shown_root, rel)


class SavedOutput:
    """A private directory outside the workdir that holds the last long ``bash`` output, as the
    SDK keeps one per shell; ``read`` and ``grep`` reach it, nothing writes to it but ``bash``."""

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="bash-output-")
        self.root = safefs.Root(self.directory)

    def save(self, text: str) -> str:
        """Replace the saved output with ``text``; the path the tools read it by."""
        self.root.write_bytes(SAVED_OUTPUT_NAME, text.encode("utf-8", "replace"))
        return os.path.join(self.root.anchors[-1], SAVED_OUTPUT_NAME)

    def close(self) -> None:
        self.root.close()
        shutil.rmtree(self.directory, ignore_errors=True)


@dataclass
class _ReadOnlyArea:
    """A read-only directory as seen from one of the roots: its root-relative spelling there."""

    root: safefs.Root
    rel: str
    shown: str  # as the caller configured it, for the error text


def _empty_paths() -> list[Path]:
    return []


@dataclass
class AgentToolContext:
    """Workdir and path policy for the safefs agent toolset; the SDK's fields, the SDK's defaults.

    The roots open on first use (so a context may be built before its workdir exists, as with
    the SDK) and close with :meth:`close` or ``async with``. The SDK's skill download
    (``client``, ``session``, ``session_id``) is not offered: it writes archives into the
    workdir with the SDK's own path handling.
    """

    workdir: str | os.PathLike[str] = field(default_factory=os.getcwd)
    allowed_roots: list[Path] = field(default_factory=_empty_paths)
    env: Mapping[str, str] | None = None
    max_file_bytes: int | NotGiven | None = not_given
    max_image_base64_bytes: int | NotGiven | None = not_given
    max_pdf_bytes: int | NotGiven | None = not_given
    read_only_roots: list[Path] = field(default_factory=_empty_paths)
    _roots: list[safefs.Root] | None = field(default=None, init=False, repr=False)
    _read_only: list[_ReadOnlyArea] = field(default_factory=list, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _shell: ConfinedShell | None = field(default=None, init=False, repr=False)
    _saved_output: SavedOutput | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_sdk(cls, sdk_context: Any) -> AgentToolContext:
        """The same policy as the SDK's ``AgentToolContext`` ``sdk_context``."""
        return cls(
            workdir=sdk_context.workdir,
            allowed_roots=list(sdk_context.allowed_roots),
            env=sdk_context.env,
            max_file_bytes=sdk_context.max_file_bytes,
            max_image_base64_bytes=sdk_context.max_image_base64_bytes,
            max_pdf_bytes=sdk_context.max_pdf_bytes,
            read_only_roots=list(sdk_context.read_only_roots),
        )

    # -- roots -------------------------------------------------------------------------------

    def roots(self) -> list[safefs.Root]:
        """The workdir's root, then one per allowed directory, opened on first call."""
        with self._lock:
            if self._roots is None:
                opened = [safefs.Root(self.workdir)]
                try:
                    opened += [safefs.Root(p) for p in self.allowed_roots]
                    self._read_only = self._read_only_areas(opened)
                except BaseException:
                    for root in opened:
                        root.close()
                    raise
                self._roots = opened
            return self._roots

    def _read_only_areas(self, roots: list[safefs.Root]) -> list[_ReadOnlyArea]:
        areas = []
        for configured in self.read_only_roots:
            # Held open for the context's life: the directory it names now is the one refused.
            with safefs.Root(configured) as held:
                for spelling in held.anchors:
                    for root in roots:
                        try:
                            rel = root.relative(spelling)
                            rel = root.resolve(rel)
                        except OSError:
                            continue
                        areas.append(_ReadOnlyArea(root, rel, os.fspath(configured)))
        return areas

    @property
    def workdir_root(self) -> safefs.Root:
        return self.roots()[0]

    def locate(self, op: str, path: str, *, saved_output: bool = False) -> Located:
        """The root and root-relative path of the tool path ``path``; a ToolError naming ``op``
        when it lies in none of them. With ``saved_output`` (read, grep), the directory of the
        saved ``bash`` output counts too."""
        roots = self.roots()
        if saved_output:
            with self._lock:
                if self._saved_output is not None:
                    roots = [*roots, self._saved_output.root]
        if "\0" in path:
            raise ToolError(f"{op}: path {path!r}: embedded null byte")
        if not os.path.isabs(path):
            return Located(roots[0], path or ".", roots[0].anchors[-1])
        best: Located | None = None
        for root in roots:
            try:
                rel = root.relative(path)
            except OSError:
                continue
            if best is None or len(rel) < len(best.rel):
                best = Located(root, rel or ".", root.anchors[-1])
        if best is None:
            raise self.outside(op, path)
        return best

    def outside(self, op: str, path: str) -> ToolError:
        """The SDK's refusal text for a path outside every permitted directory."""
        return ToolError(f"{op}: {sdk.outside_message(path, bool(self.allowed_roots))}")

    def refuse_read_only(self, op: str, located: Located, file_path: str) -> None:
        """A ToolError when the write to ``located`` would land in a read-only directory."""
        if not self._read_only:
            return
        try:
            target = located.root.resolve(located.rel)
        except OSError:
            return  # the write itself fails on the same path, with its own error
        for area in self._read_only:
            if area.root is located.root and (
                area.rel == "." or target == area.rel or target.startswith(area.rel + "/")
            ):
                raise ToolError(f"{op}: {file_path} is inside read-only directory {area.shown}")

    # -- the shell ---------------------------------------------------------------------------

    def shell(self) -> ConfinedShell:
        """The context's one shell session (started on first use), confined by the sandbox."""
        workdir = self.workdir_root
        with self._lock:
            if self._shell is None or self._shell.closed:
                self._shell = ConfinedShell(workdir, env=self.env)
            return self._shell

    def save_output(self, text: str) -> str:
        """Keep ``text`` (a long ``bash`` output) in the saved-output file; its path."""
        with self._lock:
            if self._saved_output is None:
                self._saved_output = SavedOutput()
            return self._saved_output.save(text)

    def close_shell(self) -> None:
        with self._lock:
            shell, self._shell = self._shell, None
            saved, self._saved_output = self._saved_output, None
        if shell is not None:
            shell.close()
        if saved is not None:
            saved.close()

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        self.close_shell()
        with self._lock:
            for root in self._roots or ():
                root.close()
            self._roots = None
            self._read_only = []

    async def __aenter__(self) -> AgentToolContext:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __enter__(self) -> AgentToolContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
