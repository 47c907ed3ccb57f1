"""Drop-in for Google ADK's local environment (extra ``google-adk``): switch one import::

    from safefs.integrations.google_adk import LocalEnvironment

:class:`LocalEnvironment` subclasses ``google.adk.environment.LocalEnvironment``: the same
constructor (``working_dir=``, ``env_vars=``), lifecycle (``initialize``, ``close``, a temporary
directory when ``working_dir`` is None), ``working_dir``, ``execute``, ``read_file`` and
``write_file``, so ADK's ``EnvironmentToolset`` (``Execute``, ``ReadFile``, ``EditFile``,
``WriteFile``) runs on it unchanged. The original resolves a path, checks that it lies under the
working directory and then opens the path string again; here the working directory is a
:class:`safefs.Root`:

- ``read_file`` and ``write_file`` resolve their path (relative to the working directory, or an
  absolute path inside it) beneath the root's directory fd; a path or a symlink leading out
  raises the original's ``ValueError('Path escapes working directory: ...')``, whenever the
  swap happens;
- ``execute`` runs the command in the kernel sandbox (:mod:`safefs.sandbox`), starting in the
  working directory, with the original's environment (this process's, then ``env_vars``).

Every difference from the original is listed in docs/integrations.md.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from google.adk.environment import ExecutionResult
from google.adk.environment import LocalEnvironment as _Original

import safefs
from safefs.integrations._commands import SplitOutcome, run_split
from safefs.integrations._lazy_root import LazyRoots

__all__ = ["LocalEnvironment"]

OUTPUT_LIMIT = 16 * 1024 * 1024  # combined stdout and stderr of one command; the command is stopped past it
KILLED = -9  # the exit code of a command the sandbox stopped (timeout, output cap): SIGKILL's

_T = TypeVar("_T")


class LocalEnvironment(_Original):
    """Google ADK's ``LocalEnvironment``, confined to ``working_dir`` by safefs.

    The root is opened on the first file operation or command (``initialize()`` creates the
    directory, as the original does) and kept until ``close()``.
    """

    def __init__(self, *, working_dir: Path | None = None, env_vars: dict[str, str] | None = None):
        super().__init__(working_dir=working_dir, env_vars=env_vars)
        self._roots = LazyRoots()

    # -- the root ----------------------------------------------------------------------------

    def _opened(self) -> safefs.Root:
        return self._roots.on(self.working_dir)  # the original's RuntimeError when it is not set

    def _release(self) -> None:
        self._roots.close()

    async def close(self) -> None:
        self._release()
        await super().close()

    # -- files -------------------------------------------------------------------------------

    async def read_file(self, path: str | Path) -> bytes:
        root, target = self._opened(), _spelled(path)
        return await asyncio.to_thread(_confined, path, lambda: root.read_bytes(target))

    async def write_file(self, path: str | Path, content: str | bytes) -> None:
        if isinstance(content, str):
            data = content.encode("utf-8")  # strict, as the original's text write: nothing written on error
        elif isinstance(content, bytes | bytearray | memoryview):
            data = bytes(content)
        else:
            raise TypeError(f"content must be str or bytes, not {type(content).__name__}")
        root, target = self._opened(), _spelled(path)
        await asyncio.to_thread(_confined, path, lambda: _write(root, target, data))

    # -- commands ----------------------------------------------------------------------------

    async def execute(self, command: str, *, timeout: float | None = None) -> ExecutionResult:
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or math.isnan(timeout)
        ):
            raise TypeError("timeout must be a number or None")
        root = self._opened()
        env = dict(os.environ) | dict(self._env_vars or {})
        limit = math.inf if timeout is None else max(0.0, float(timeout))  # <= 0: at once, as wait_for
        cancel = threading.Event()
        work = asyncio.ensure_future(
            asyncio.to_thread(
                run_split,
                root,
                ["/bin/sh", "-c", command],
                env,
                timeout=limit,
                output_cap=OUTPUT_LIMIT,
                cancel=cancel,
            )
        )
        try:
            outcome = await asyncio.shield(work)
        except asyncio.CancelledError:
            cancel.set()  # the sandbox kills everything the command started
            await asyncio.wait([work])
            raise
        return _result(outcome)


def _spelled(path: str | Path) -> str:
    """``path`` as the original spells it: through ``Path``, which drops ``.`` components and
    repeated slashes (``a.txt/.`` is ``a.txt``); ``..`` stays for the root to judge."""
    return os.fspath(Path(path))


def _write(root: safefs.Root, path: str, data: bytes) -> None:
    """The original's write: the path resolved (a link's target, a dangling link's too), its
    directory made (``makedirs``: ``File exists`` where a file stands in its place), then the
    file written."""
    try:
        rel = root.resolve(path)
    except safefs.PathEscapeError:
        raise
    except OSError:
        rel = os.path.normpath(root.relative(path))  # a file on the way: makedirs reports it
    parent = os.path.dirname(rel)
    if parent:
        root.mkdir(parent, parents=True, exist_ok=True)
    root.write_bytes(rel, data)


def _confined(path: str | Path, operation: Callable[[], _T]) -> _T:
    """``operation()``, with a path leading out of the root refused as the original refuses it."""
    try:
        return operation()
    except safefs.PathEscapeError:
        raise ValueError(f"Path escapes working directory: {path}") from None


def _result(outcome: SplitOutcome) -> ExecutionResult:
    if outcome.refusal is not None:
        raise RuntimeError(outcome.refusal)
    stdout = outcome.stdout.decode("utf-8", errors="replace")
    stderr = outcome.stderr.decode("utf-8", errors="replace")
    if outcome.over_cap:
        stderr += f"\n[output exceeded {OUTPUT_LIMIT} bytes: the command was stopped]"
    code = KILLED if outcome.exit_code is None else outcome.exit_code
    return ExecutionResult(exit_code=code, stdout=stdout, stderr=stderr, timed_out=outcome.timed_out)
