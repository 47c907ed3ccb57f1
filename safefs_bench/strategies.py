"""The contestants: ways of confining a path to a workspace, behind one small interface.

Each strategy is opened on a workspace directory and then takes paths relative to it. Two of them
are *baselines that are racy by design* and exist only to be measured against:

- ``unconfined``: the joined path handed to ``open()``; the physical floor, contains nothing.
- ``realpath``: the check-then-use guard most agent tools ship (a port of the reference agent's
  guard, :class:`safefs.testing.RealpathGuard`): canonicalise the root and the target with
  ``realpath``, check containment with ``relative()`` logic, then use the *path string*. Between
  the check and the use, anyone who can write inside the workspace can swap a directory for a
  symlink, and the use goes outside.

The others resolve beneath a directory fd they hold: ``safefs-walk`` and ``safefs-openat2``
(``safefs.Root`` with each backend) and ``pathrs`` (libpathrs' Python bindings, when they import).
The baselines are never part of ``safefs.Root``: ``unconfined`` lives here, and ``realpath`` in the
attack harness, whose races show it escaping.

``landlock`` is kernel confinement instead of user-space resolution: plain ``open()`` of the
joined path string, as ``unconfined`` does, but in a worker process that Landlock restricts to
the workspace. The kernel judges the inode each open actually reaches, so a swapped-in symlink
leads nowhere. Each operation is one round trip to the worker; for the cost table the worker
times its own loop (:meth:`Strategy.timed`), so the round trip is not counted.
"""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import time
from abc import ABC, abstractmethod
from types import TracebackType
from typing import Any

import safefs
from safefs import capabilities, testing

UNCONFINED = "unconfined"
REALPATH = "realpath"
SAFEFS_WALK = "safefs-walk"
SAFEFS_OPENAT2 = "safefs-openat2"
PATHRS = "pathrs"
LANDLOCK = "landlock"
ANTHROPIC_TOOLSET = "anthropic-toolset"
ANTHROPIC_MEMORY = "anthropic-memory"
SAFEFS_ANTHROPIC_TOOLSET = "safefs-anthropic-toolset"
SAFEFS_ANTHROPIC_MEMORY = "safefs-anthropic-memory"
# The Anthropic SDK's own file tools and safefs's drop-ins for them (safefs_bench.anthropic_tools).
ANTHROPIC_STRATEGIES: tuple[str, ...] = (
    ANTHROPIC_TOOLSET,
    SAFEFS_ANTHROPIC_TOOLSET,
    ANTHROPIC_MEMORY,
    SAFEFS_ANTHROPIC_MEMORY,
)
PYDANTIC_AI_WORKSPACE = "pydantic-ai-workspace"
SAFEFS_PYDANTIC_AI_WORKSPACE = "safefs-pydantic-ai-workspace"
LANGCHAIN_FILE_TOOLS = "langchain-file-tools"
SAFEFS_LANGCHAIN_FILE_TOOLS = "safefs-langchain-file-tools"
AGNO_FILE_TOOLS = "agno-file-tools"
SAFEFS_AGNO_FILE_TOOLS = "safefs-agno-file-tools"
DEEPAGENTS_BACKEND = "deepagents-backend"
SAFEFS_DEEPAGENTS_BACKEND = "safefs-deepagents-backend"
GOOGLE_ADK_ENVIRONMENT = "google-adk-environment"
SAFEFS_GOOGLE_ADK_ENVIRONMENT = "safefs-google-adk-environment"
CREWAI_FILE_TOOLS = "crewai-file-tools"
SAFEFS_CREWAI_FILE_TOOLS = "safefs-crewai-file-tools"
CLAUDE_AGENT_SDK_TOOLS = "claude-agent-sdk-tools"
SAFEFS_CLAUDE_AGENT_SDK_TOOLS = "safefs-claude-agent-sdk-tools"
STRANDS_FILE_TOOLS = "strands-file-tools"
SAFEFS_STRANDS_FILE_TOOLS = "safefs-strands-file-tools"
# Agent frameworks' own file tools and safefs's drop-ins for them (safefs_bench.framework_tools).
FRAMEWORK_STRATEGIES: tuple[str, ...] = (
    PYDANTIC_AI_WORKSPACE,
    SAFEFS_PYDANTIC_AI_WORKSPACE,
    LANGCHAIN_FILE_TOOLS,
    SAFEFS_LANGCHAIN_FILE_TOOLS,
    AGNO_FILE_TOOLS,
    SAFEFS_AGNO_FILE_TOOLS,
    DEEPAGENTS_BACKEND,
    SAFEFS_DEEPAGENTS_BACKEND,
    GOOGLE_ADK_ENVIRONMENT,
    SAFEFS_GOOGLE_ADK_ENVIRONMENT,
    CREWAI_FILE_TOOLS,
    SAFEFS_CREWAI_FILE_TOOLS,
    CLAUDE_AGENT_SDK_TOOLS,
    SAFEFS_CLAUDE_AGENT_SDK_TOOLS,
    STRANDS_FILE_TOOLS,
    SAFEFS_STRANDS_FILE_TOOLS,
)

TARFILE_DATA = "tarfile-data"
SAFEFS_ARCHIVE = "safefs-archive"
FSSPEC_DIRFS = "fsspec-dirfs"
SAFEFS_FSSPEC = "safefs-fsspec"
# Archive extraction and fsspec, the originals and safefs's (safefs_bench.integrations).
INTEGRATION_STRATEGIES: tuple[str, ...] = (TARFILE_DATA, SAFEFS_ARCHIVE, FSSPEC_DIRFS, SAFEFS_FSSPEC)

# In-process strategies (what the pytest-benchmark suite times call by call).
STRATEGY_NAMES: tuple[str, ...] = (UNCONFINED, REALPATH, SAFEFS_WALK, SAFEFS_OPENAT2, PATHRS)
# Everything the contest runs: the in-process ones and kernel confinement in a worker.
CONTEST_STRATEGIES: tuple[str, ...] = (
    *STRATEGY_NAMES,
    LANDLOCK,
    *ANTHROPIC_STRATEGIES,
    *INTEGRATION_STRATEGIES,
    *FRAMEWORK_STRATEGIES,
)
SAFEFS_STRATEGIES: tuple[str, ...] = (SAFEFS_WALK, SAFEFS_OPENAT2)
BASELINES: tuple[str, ...] = (UNCONFINED, REALPATH)

DESCRIPTIONS: dict[str, str] = {
    UNCONFINED: "baseline: open() of the joined path, no containment at all",
    REALPATH: "racy baseline: realpath + relative() check, then open() of the path string",
    SAFEFS_WALK: "safefs.Root(resolver='walk'): openat(O_NOFOLLOW) per component",
    SAFEFS_OPENAT2: "safefs.Root(resolver='openat2'): one openat2(RESOLVE_BENEATH)",
    PATHRS: "libpathrs Python bindings (pathrs.Root)",
    LANDLOCK: "open() of the joined path in a worker process Landlock restricts to the workspace",
    ANTHROPIC_TOOLSET: "the Anthropic SDK's agent_toolset_20260401 read/write: realpath, then a path string",
    SAFEFS_ANTHROPIC_TOOLSET: "safefs.anthropic.agent_toolset, the drop-in: the same tools on safefs.Root",
    ANTHROPIC_MEMORY: "the Anthropic SDK's BetaLocalFilesystemMemoryTool view/create: resolve(), then a path",
    SAFEFS_ANTHROPIC_MEMORY: "safefs.anthropic.BetaLocalFilesystemMemoryTool, the drop-in, on safefs.Root",
    TARFILE_DATA: "tarfile.extractall(filter='data') of a one-member tar (a read: a hard-link member)",
    SAFEFS_ARCHIVE: "safefs.archive.extractall of the same tar, every member made through safefs.Root",
    FSSPEC_DIRFS: "fsspec's DirFileSystem over the local filesystem: cat_file and pipe_file",
    SAFEFS_FSSPEC: "safefs.fsspec.SafeFileSystem: the same calls resolved beneath a directory fd",
    PYDANTIC_AI_WORKSPACE: "pydantic-ai's LocalWorkspaceBackend read/write by absolute path, unconfined",
    SAFEFS_PYDANTIC_AI_WORKSPACE: "safefs.integrations.pydantic_ai.LocalWorkspaceBackend, the drop-in",
    LANGCHAIN_FILE_TOOLS: "langchain-community's read_file/write_file: resolve + is_relative_to, then a path",
    SAFEFS_LANGCHAIN_FILE_TOOLS: "safefs.integrations.langchain's read_file/write_file, the drop-ins",
    AGNO_FILE_TOOLS: "agno's FileTools read_file/save_file: resolve + relative_to, then a path",
    SAFEFS_AGNO_FILE_TOOLS: "safefs.integrations.agno.FileTools, the drop-in",
    DEEPAGENTS_BACKEND: "deepagents' FilesystemBackend (virtual mode): resolve + relative_to, then a path",
    SAFEFS_DEEPAGENTS_BACKEND: "safefs.integrations.deepagents.FilesystemBackend, the drop-in",
    GOOGLE_ADK_ENVIRONMENT: "Google ADK's LocalEnvironment read_file/write_file: resolve + is_relative_to",
    SAFEFS_GOOGLE_ADK_ENVIRONMENT: "safefs.integrations.google_adk.LocalEnvironment, the drop-in",
    CREWAI_FILE_TOOLS: "crewai-tools' FileReadTool/FileWriterTool: realpath + startswith, then a path",
    SAFEFS_CREWAI_FILE_TOOLS: "safefs.integrations.crewai's FileReadTool/FileWriterTool, the drop-ins",
    CLAUDE_AGENT_SDK_TOOLS: "Claude Code's built-in Read/Write, run by the SDK's binary, allowed by name",
    SAFEFS_CLAUDE_AGENT_SDK_TOOLS: "safefs.integrations.claude_agent_sdk: Claude Code's Read/Write on a Root",
    STRANDS_FILE_TOOLS: "strands-agents-tools' file_read/file_write: any path opened as given, unconfined",
    SAFEFS_STRANDS_FILE_TOOLS: "safefs.integrations.strands' file_read/file_write, the drop-ins",
}


class StrategyUnavailable(RuntimeError):
    """This strategy cannot run on this machine; ``str()`` says why, for a skip note."""


class Strategy(ABC):
    """Operations on paths relative to a workspace. Errors are ``OSError`` subclasses."""

    name: str = ""

    @abstractmethod
    def read(self, rel: str) -> bytes:
        """The whole content of a regular file."""

    @abstractmethod
    def write(self, rel: str, data: bytes) -> None:
        """Replace (or create) a file: atomically where the strategy can, plainly otherwise."""

    @abstractmethod
    def stat(self, rel: str) -> os.stat_result:
        """Metadata, following symlinks."""

    @abstractmethod
    def listdir(self, rel: str) -> list[str]:
        """Names in a directory, in no particular order."""

    @abstractmethod
    def makedirs(self, rel: str) -> None:
        """``mkdir -p``: create the directory and missing parents; an existing one is fine."""

    def close(self) -> None:  # noqa: B027 - the baselines hold nothing to release
        """Release whatever the strategy holds (a root fd, for most)."""

    def timed(self, op: str, n: int, *args: Any) -> float:
        """Seconds that ``n`` calls of operation ``op`` (``"read"``, ``"write"``...) take."""
        fn = getattr(self, op)
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args)
        return time.perf_counter() - t0

    def __enter__(self) -> Strategy:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Unconfined(Strategy):
    name = UNCONFINED

    def __init__(self, root: str) -> None:
        self._root = os.path.abspath(root)

    def _path(self, rel: str) -> str:
        return os.path.join(self._root, rel)

    def read(self, rel: str) -> bytes:
        with open(self._path(rel), "rb") as f:
            return f.read()

    def write(self, rel: str, data: bytes) -> None:
        with open(self._path(rel), "wb") as f:
            f.write(data)

    def stat(self, rel: str) -> os.stat_result:
        return os.stat(self._path(rel))

    def listdir(self, rel: str) -> list[str]:
        return os.listdir(self._path(rel))

    def makedirs(self, rel: str) -> None:
        os.makedirs(self._path(rel), exist_ok=True)


class RealpathGuard(testing.RealpathGuard, Strategy):
    """:class:`safefs.testing.RealpathGuard` as a contestant: the harness's baseline and the
    contest's are one guard."""

    name = REALPATH


class SafefsRoot(Strategy):
    """``safefs.Root`` with one backend forced, so each backend is measured on its own."""

    def __init__(self, root: str, resolver: safefs.ResolverName) -> None:
        self.name = f"safefs-{resolver}"
        try:
            self.root = safefs.Root(root, resolver=resolver)
        except safefs.ResolverUnavailableError as exc:
            raise StrategyUnavailable(str(exc)) from None

    def read(self, rel: str) -> bytes:
        return self.root.read_bytes(rel)

    def write(self, rel: str, data: bytes) -> None:
        self.root.write_bytes(rel, data)

    def stat(self, rel: str) -> os.stat_result:
        return self.root.stat(rel)

    def listdir(self, rel: str) -> list[str]:
        names: list[str] = self.root.listdir(rel)
        return names

    def makedirs(self, rel: str) -> None:
        self.root.mkdir(rel, parents=True, exist_ok=True)

    def close(self) -> None:
        self.root.close()


def _import_pathrs() -> Any:
    try:
        import pathrs
    except ImportError as exc:
        raise StrategyUnavailable(
            "the pathrs bindings do not import here (they need the libpathrs system library "
            f"and pathrs.h, which this machine lacks): {exc}"
        ) from None
    return pathrs


class Pathrs(Strategy):
    """libpathrs through its Python bindings. Writes are atomic the way safefs does them: a
    uniquely named file created ``O_EXCL`` beside the target, then renamed over it."""

    name = PATHRS

    def __init__(self, root: str) -> None:
        self._pathrs = _import_pathrs()
        self._counter = 0
        self.root = self._call(self._pathrs.Root, root)

    def _call(self, fn: Any, *args: Any) -> Any:
        # pathrs.PathrsError is not an OSError; translate it so every strategy fails the same way.
        try:
            return fn(*args)
        except self._pathrs.PathrsError as exc:
            code = exc.errno or errno.EIO
            raise OSError(code, os.strerror(code), args[0] if args else None) from None

    def read(self, rel: str) -> bytes:
        with self._call(self.root.open, rel, "rb") as f:
            data: bytes = f.read()
            return data

    def write(self, rel: str, data: bytes) -> None:
        parent, name = os.path.split(rel)
        self._counter += 1
        tmp = os.path.join(parent, f".{name}.{os.getpid()}.{self._counter}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with self._call(self.root.creat_raw, tmp, flags, 0o644) as handle:
            fd = handle.fileno()
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        try:
            self._call(self.root.rename, tmp, rel)
        except OSError:
            try:
                self._call(self.root.unlink, tmp)
            except OSError:
                pass
            raise

    def stat(self, rel: str) -> os.stat_result:
        with self._call(self.root.resolve, rel) as handle:
            return os.fstat(handle.fileno())

    def listdir(self, rel: str) -> list[str]:
        with self._call(self.root.resolve, rel) as handle:
            with handle.reopen_raw(os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC) as d:
                return os.listdir(d.fileno())

    def makedirs(self, rel: str) -> None:
        self._call(self.root.mkdir_all, rel, 0o777).close()

    def close(self) -> None:
        self.root.close()


def _serve_confined(root: str, conn: Any) -> None:
    """The Landlock worker: confine this process to ``root``, then do what ``conn`` asks."""
    from safefs.sandbox import landlock

    try:
        abi = landlock.restrict_self([root])
    except OSError as exc:
        conn.send(("unavailable", str(exc)))
        return
    conn.send(("ready", abi))
    plain = Unconfined(root)
    while True:
        try:
            op, args = conn.recv()
        except EOFError:
            return
        try:
            result = plain.timed(args[0], *args[1:]) if op == "timed" else getattr(plain, op)(*args)
        except OSError as exc:
            conn.send(("error", (exc.errno, exc.strerror, exc.filename)))
        else:
            conn.send(("ok", result))


class LandlockConfined(Strategy):
    """Paths as plain strings, in a worker process Landlock confines to the workspace."""

    name = LANDLOCK

    def __init__(self, root: str) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve_confined, args=(os.path.abspath(root), child), daemon=True)
        self._proc.start()
        child.close()
        kind, detail = self._conn.recv()
        if kind != "ready":
            self.close()
            raise StrategyUnavailable(f"Landlock is not available here: {detail}")
        self.abi: int = detail

    def _ask(self, op: str, *args: Any) -> Any:
        self._conn.send((op, args))
        kind, result = self._conn.recv()
        if kind == "error":
            code, message, filename = result
            raise OSError(code, message, filename)
        return result

    def read(self, rel: str) -> bytes:
        data: bytes = self._ask("read", rel)
        return data

    def write(self, rel: str, data: bytes) -> None:
        self._ask("write", rel, data)

    def stat(self, rel: str) -> os.stat_result:
        st: os.stat_result = self._ask("stat", rel)
        return st

    def listdir(self, rel: str) -> list[str]:
        names: list[str] = self._ask("listdir", rel)
        return names

    def makedirs(self, rel: str) -> None:
        self._ask("makedirs", rel)

    def timed(self, op: str, n: int, *args: Any) -> float:
        """Timed inside the worker: the round trip to it is not part of the cost."""
        seconds: float = self._ask("timed", op, n, *args)
        return seconds

    def close(self) -> None:
        self._conn.close()
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()


def open_strategy(name: str, root: str) -> Strategy:
    """Open strategy ``name`` on the workspace ``root``; :class:`StrategyUnavailable` if it
    cannot run here."""
    if name == UNCONFINED:
        return Unconfined(root)
    if name == REALPATH:
        return RealpathGuard(root)
    if name == SAFEFS_WALK:
        return SafefsRoot(root, "walk")
    if name == SAFEFS_OPENAT2:
        if not capabilities().native_extension:
            raise StrategyUnavailable("the safefs native extension (openat2) is not built")
        return SafefsRoot(root, "openat2")
    if name == PATHRS:
        return Pathrs(root)
    if name == LANDLOCK:
        return LandlockConfined(root)
    if name in ANTHROPIC_STRATEGIES:
        from safefs_bench import anthropic_tools

        implementation = "safefs" if name.startswith("safefs-") else "sdk"
        if name in (ANTHROPIC_TOOLSET, SAFEFS_ANTHROPIC_TOOLSET):
            return anthropic_tools.AgentToolset(root, implementation)
        return anthropic_tools.MemoryTool(root, implementation)
    if name in INTEGRATION_STRATEGIES:
        from safefs_bench import integrations

        if name in (TARFILE_DATA, SAFEFS_ARCHIVE):
            return integrations.TarExtraction(root, "safefs" if name == SAFEFS_ARCHIVE else "tarfile")
        return integrations.FsspecFileSystem(root, "safefs" if name == SAFEFS_FSSPEC else "dirfs")
    if name in (CLAUDE_AGENT_SDK_TOOLS, SAFEFS_CLAUDE_AGENT_SDK_TOOLS):
        from safefs_bench import claude_agent_sdk_tools

        if name == CLAUDE_AGENT_SDK_TOOLS:
            return claude_agent_sdk_tools.ClaudeCodeTools(root)
        return claude_agent_sdk_tools.ClaudeAgentSdkTools(root)
    if name in FRAMEWORK_STRATEGIES:
        from safefs_bench import framework_tools

        implementation = "safefs" if name.startswith("safefs-") else "original"
        if name in (PYDANTIC_AI_WORKSPACE, SAFEFS_PYDANTIC_AI_WORKSPACE):
            return framework_tools.PydanticAiWorkspace(root, implementation)
        if name in (AGNO_FILE_TOOLS, SAFEFS_AGNO_FILE_TOOLS):
            return framework_tools.AgnoFileTools(root, implementation)
        if name in (DEEPAGENTS_BACKEND, SAFEFS_DEEPAGENTS_BACKEND):
            return framework_tools.DeepagentsBackend(root, implementation)
        if name in (GOOGLE_ADK_ENVIRONMENT, SAFEFS_GOOGLE_ADK_ENVIRONMENT):
            return framework_tools.GoogleAdkEnvironment(root, implementation)
        if name in (CREWAI_FILE_TOOLS, SAFEFS_CREWAI_FILE_TOOLS):
            return framework_tools.CrewaiFileTools(root, implementation)
        if name in (STRANDS_FILE_TOOLS, SAFEFS_STRANDS_FILE_TOOLS):
            return framework_tools.StrandsFileTools(root, implementation)
        return framework_tools.LangchainFileTools(root, implementation)
    raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(CONTEST_STRATEGIES)}")


def availability(
    probe_dir: str | None = None, names: tuple[str, ...] = CONTEST_STRATEGIES
) -> dict[str, str | None]:
    """Each strategy's name (of ``names``) -> None if it runs here, else the reason it does not."""
    import tempfile

    out: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="safefs-probe-", dir=probe_dir) as tmp:
        for name in names:
            try:
                open_strategy(name, tmp).close()
                out[name] = None
            except StrategyUnavailable as exc:
                out[name] = str(exc)
    return out


def available_strategies() -> list[str]:
    return [name for name, why in availability().items() if why is None]
