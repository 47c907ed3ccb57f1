"""pydantic-ai's own workspace conformance suite (``WorkspaceBackendSuite``, shipped in
``pydantic_ai.workspaces.conformance``), run against the drop-in exactly as pydantic-ai's test
suite runs it against ``LocalWorkspaceBackend``: the same fixtures, with the import swapped."""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai.workspaces.conformance")

import anyio
import anyio.to_thread
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef
from pydantic_ai.workspaces.conformance import WorkspaceBackendSuite

from safefs.integrations.pydantic_ai import LocalWorkspaceBackend

pytestmark = pytest.mark.anyio


def _local_destroy_environment() -> Callable[[WorkspaceBackend], Awaitable[None]]:
    async def destroy(backend: WorkspaceBackend) -> None:
        assert backend.ref is not None
        await anyio.to_thread.run_sync(shutil.rmtree, backend.ref.id)

    return destroy


class TestLocalWorkspaceBackend(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> LocalWorkspaceBackend:
        return LocalWorkspaceBackend(tmp_path)

    @pytest.fixture
    def destructive_backend(self, tmp_path_factory: pytest.TempPathFactory) -> Callable[[], WorkspaceBackend]:
        path = tmp_path_factory.mktemp("fresh-ws")
        return lambda: LocalWorkspaceBackend(path)

    @pytest.fixture
    def attach_backend(self) -> Callable[[WorkspaceRef], WorkspaceBackend]:
        return lambda ref: LocalWorkspaceBackend(ref.id)

    @pytest.fixture
    def destroy_environment(self) -> Callable[[WorkspaceBackend], Awaitable[None]]:
        return _local_destroy_environment()

    # -- where the drop-in differs on purpose (docs/integrations.md) ------------------------------

    @pytest.fixture
    def filesystem_honors_shell_permissions(self) -> bool:
        # Commands run as the sandbox's uid, file operations as this process's: as root, the file
        # operations bypass the mode bits a command set (the suite's own hook for that case).
        return os.geteuid() != 0

    async def test_cancellation_stops_foreground_work(
        self, backend: WorkspaceBackend, has_real_posix_shell: bool
    ) -> None:
        pytest.skip(
            "each command has a PID namespace of its own, so the suite's `kill -0 <pid>` from a second "
            "command cannot see the first; test_a_cancelled_command_is_stopped checks the rule instead"
        )

    if hasattr(WorkspaceBackendSuite, "test_a_backend_attached_by_ref_reaches_a_detached_process"):

        async def test_a_backend_attached_by_ref_reaches_a_detached_process(
            self,
            backend: WorkspaceBackend,
            attach_backend: Callable[[WorkspaceRef], WorkspaceBackend] | None,
            has_real_posix_shell: bool,
        ) -> None:
            pytest.skip(
                "nothing a command started outlives it in the sandbox, a detached session included "
                "(the rule would wait 60 s for it); test_a_detached_process_does_not_outlive_its_command "
                "checks what happens instead"
            )


async def test_a_detached_process_does_not_outlive_its_command(tmp_path: Path) -> None:
    backend = LocalWorkspaceBackend(tmp_path)
    launch = "setsid sh -c 'sleep 1; echo late > late' </dev/null >/dev/null 2>&1 & echo started"
    result = await backend.run(["sh", "-c", launch])
    assert (result.exit_code, result.stdout) == (0, "started\n")
    await anyio.sleep(2)
    assert not (tmp_path / "late").exists()


async def test_a_cancelled_command_is_stopped(tmp_path: Path) -> None:
    """The rule of the skipped test, observed from the files: a cancelled command writes nothing
    after the cancellation."""
    backend = LocalWorkspaceBackend(tmp_path)
    script = "echo $$ > started; sleep 2; echo late > late"

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: backend.run(["sh", "-c", script]))
        with anyio.fail_after(30):
            while not await backend.exists(str(tmp_path / "started")):
                await anyio.sleep(0.05)
        tg.cancel_scope.cancel()
    await anyio.sleep(3)
    assert not (tmp_path / "late").exists()


async def test_the_symlink_rules_hold_with_relative_links(tmp_path: Path) -> None:
    """The two xfailed rules, with links spelled relative to their directory (which stay beneath)."""
    backend = LocalWorkspaceBackend(tmp_path)
    root = await backend.working_dir()
    await backend.write_bytes(f"{root}/target", b"old")
    assert (await backend.run(["ln", "-s", "target", f"{root}/link"])).exit_code == 0
    await backend.write_bytes(f"{root}/link", b"new")
    assert await backend.read_bytes(f"{root}/target") == b"new"
    assert await backend.realpath(f"{root}/link") == f"{root}/target"
    await backend.make_dir(f"{root}/a/b")
    assert (await backend.run(["ln", "-s", "b", f"{root}/a/rel"])).exit_code == 0
    assert await backend.realpath(f"{root}/a/rel/missing") == f"{root}/a/b/missing"
    assert (await backend.stat(f"{root}/a/rel")).is_dir
