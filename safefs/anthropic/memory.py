"""Drop-in for the SDK's memory tool (``memory_20250818``): switch one import::

    from safefs.anthropic import BetaLocalFilesystemMemoryTool

Subclasses of the SDK's ``BetaAbstractMemoryTool`` / ``BetaAsyncAbstractMemoryTool`` with the
SDK's constructor (``base_path``), ``memory_root`` and result strings; the work is done by
:class:`safefs.anthropic.memory_store.MemoryStore` on a root held on ``memory_root``.
"""

from __future__ import annotations

import threading
from pathlib import Path

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from anyio import Path as AsyncPath
from anyio.to_thread import run_sync

from safefs.anthropic.memory_store import MemoryStore


class BetaLocalFilesystemMemoryTool(BetaAbstractMemoryTool):
    """File-based memory storage for Claude, confined to ``base_path/memories`` by safefs."""

    def __init__(self, base_path: str = "./memory"):
        super().__init__()
        self.base_path = Path(base_path)
        self.memory_root = self.base_path / "memories"
        self._store: MemoryStore | None = MemoryStore(self.memory_root)
        self._lock = threading.Lock()

    def _opened(self) -> MemoryStore:
        # A runner's cleanup may close the tool; a later command opens the root again.
        with self._lock:
            if self._store is None:
                self._store = MemoryStore(self.memory_root)
            return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def _validate_path(self, path: str) -> Path:
        """The SDK's check of a memory path, judged by safefs: the host path it leads to."""
        return self._opened().host_path(path)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._opened().view(command.path, command.view_range)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._opened().create(command.path, command.file_text)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._opened().str_replace(command.path, command.old_str, command.new_str)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._opened().insert(command.path, command.insert_line, command.insert_text)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._opened().delete(command.path)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._opened().rename(command.old_path, command.new_path)

    def clear_all_memory(self) -> str:
        return self._opened().clear_all_memory()


class BetaAsyncLocalFilesystemMemoryTool(BetaAsyncAbstractMemoryTool):
    """The async twin: the same store, each command run in a worker thread. As in the SDK, the
    memory directory is created on the first command, not by the constructor."""

    def __init__(self, base_path: str = "./memory"):
        super().__init__()
        self.base_path = AsyncPath(base_path)
        self.memory_root = self.base_path / "memories"
        self._store: MemoryStore | None = None
        self._lock = threading.Lock()

    def _opened(self) -> MemoryStore:
        with self._lock:
            if self._store is None:
                self._store = MemoryStore(Path(str(self.memory_root)))
            return self._store

    async def _ensure_memory_root(self) -> None:
        await run_sync(self._opened)

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    async def _validate_path(self, path: str) -> AsyncPath:
        """The SDK's check of a memory path, judged by safefs: the host path it leads to."""
        return AsyncPath(await run_sync(lambda: self._opened().host_path(path)))

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await run_sync(lambda: self._opened().view(command.path, command.view_range))

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await run_sync(lambda: self._opened().create(command.path, command.file_text))

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await run_sync(
            lambda: self._opened().str_replace(command.path, command.old_str, command.new_str)
        )

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await run_sync(
            lambda: self._opened().insert(command.path, command.insert_line, command.insert_text)
        )

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await run_sync(lambda: self._opened().delete(command.path))

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await run_sync(lambda: self._opened().rename(command.old_path, command.new_path))

    async def clear_all_memory(self) -> str:
        return await run_sync(lambda: self._opened().clear_all_memory())
