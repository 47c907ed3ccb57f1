"""Each framework's own file calls against safefs's drop-in, on the same tree: one benchmark
group per (framework, call), the original and the drop-in side by side, so the group's table
shows their ratio. Each framework's benchmarks skip where it is not installed: run them in a venv
that has it (and ``./safefs_bench``, which ``benchmarks/conftest.py`` imports)::

    .venv-compat/pydantic-ai-dev/bin/python -m pytest benchmarks/bench_integrations.py \\
        --benchmark-only --benchmark-group-by=group --benchmark-columns=median,iqr,ops
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

IMPLEMENTATIONS = ("original", "safefs")
FILES = 64


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("integrations") / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    for i in range(FILES):
        (root / "src" / "pkg" / f"m{i}.py").write_bytes(b"x = 1\n" * 700)  # about 4 KiB
    return root


# -- pydantic-ai -------------------------------------------------------------------------------


@pytest.fixture
def pydantic_ai_backend(tree: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    workspaces = pytest.importorskip("pydantic_ai.workspaces")
    from safefs.integrations import pydantic_ai

    original = request.param == "original"
    cls = workspaces.LocalWorkspaceBackend if original else pydantic_ai.LocalWorkspaceBackend
    backend = cls(tree)
    yield backend
    if request.param == "safefs":
        backend.close()


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _label(benchmark: Any, framework: str, call: str, implementation: str) -> None:
    benchmark.group = f"{framework} {call}"
    benchmark.extra_info.update(framework=framework, call=call, implementation=implementation)


@pytest.mark.parametrize("pydantic_ai_backend", IMPLEMENTATIONS, indirect=True)
def test_pydantic_ai_read(
    benchmark: Any, pydantic_ai_backend: Any, loop: asyncio.AbstractEventLoop, tree: Path, request: Any
) -> None:
    _label(benchmark, "pydantic-ai", "read_bytes 4 KiB", request.node.callspec.id)
    path = str(tree / "src" / "pkg" / "m7.py")
    data = benchmark(lambda: loop.run_until_complete(pydantic_ai_backend.read_bytes(path)))
    assert len(data) == 4200


@pytest.mark.parametrize("pydantic_ai_backend", IMPLEMENTATIONS, indirect=True)
def test_pydantic_ai_write(
    benchmark: Any, pydantic_ai_backend: Any, loop: asyncio.AbstractEventLoop, tree: Path, request: Any
) -> None:
    _label(benchmark, "pydantic-ai", "write_bytes 4 KiB", request.node.callspec.id)
    path = str(tree / "out" / f"{request.node.callspec.id}.txt")
    data = b"y" * 4096
    benchmark(lambda: loop.run_until_complete(pydantic_ai_backend.write_bytes(path, data)))
    assert Path(path).read_bytes() == data


@pytest.mark.parametrize("pydantic_ai_backend", IMPLEMENTATIONS, indirect=True)
def test_pydantic_ai_list(
    benchmark: Any, pydantic_ai_backend: Any, loop: asyncio.AbstractEventLoop, tree: Path, request: Any
) -> None:
    _label(benchmark, "pydantic-ai", f"list_dir {FILES} files", request.node.callspec.id)
    path = str(tree / "src" / "pkg")
    entries = benchmark(lambda: loop.run_until_complete(pydantic_ai_backend.list_dir(path)))
    assert len(entries) == FILES


# -- LangChain ---------------------------------------------------------------------------------


@pytest.fixture
def langchain_tools(tree: Path, request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    toolkits = pytest.importorskip("langchain_community.agent_toolkits")
    from safefs.integrations import langchain

    kit = toolkits.FileManagementToolkit if request.param == "original" else langchain.FileManagementToolkit
    tools = {tool.name: tool for tool in kit(root_dir=str(tree)).get_tools()}
    yield tools
    for tool in tools.values():
        close = getattr(tool, "close", None)
        if close is not None:
            close()


@pytest.mark.parametrize("langchain_tools", IMPLEMENTATIONS, indirect=True)
def test_langchain_read(benchmark: Any, langchain_tools: dict[str, Any], request: Any) -> None:
    _label(benchmark, "langchain", "read_file 4 KiB", request.node.callspec.id)
    tool = langchain_tools["read_file"]
    text = benchmark(lambda: tool.run({"file_path": "src/pkg/m7.py"}))
    assert len(text) == 4200


@pytest.mark.parametrize("langchain_tools", IMPLEMENTATIONS, indirect=True)
def test_langchain_write(benchmark: Any, langchain_tools: dict[str, Any], request: Any) -> None:
    _label(benchmark, "langchain", "write_file 4 KiB", request.node.callspec.id)
    tool = langchain_tools["write_file"]
    args = {"file_path": f"out/{request.node.callspec.id}.txt", "text": "y" * 4096}
    assert benchmark(lambda: tool.run(args)).startswith("File written successfully")


@pytest.mark.parametrize("langchain_tools", IMPLEMENTATIONS, indirect=True)
def test_langchain_list(benchmark: Any, langchain_tools: dict[str, Any], request: Any) -> None:
    _label(benchmark, "langchain", f"list_directory {FILES} files", request.node.callspec.id)
    tool = langchain_tools["list_directory"]
    text = benchmark(lambda: tool.run({"dir_path": "src/pkg"}))
    assert len(text.split("\n")) == FILES


# -- Google ADK --------------------------------------------------------------------------------


@pytest.fixture
def adk_environment(
    tree: Path, request: pytest.FixtureRequest, loop: asyncio.AbstractEventLoop
) -> Iterator[Any]:
    environment_module = pytest.importorskip("google.adk.environment")
    import warnings

    from safefs.integrations import google_adk

    original = request.param == "original"
    cls = environment_module.LocalEnvironment if original else google_adk.LocalEnvironment
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ADK marks LocalEnvironment experimental
        environment = cls(working_dir=tree)
    loop.run_until_complete(environment.initialize())
    yield environment
    loop.run_until_complete(environment.close())


@pytest.mark.parametrize("adk_environment", IMPLEMENTATIONS, indirect=True)
def test_google_adk_read(
    benchmark: Any, adk_environment: Any, loop: asyncio.AbstractEventLoop, request: Any
) -> None:
    _label(benchmark, "google-adk", "read_file 4 KiB", request.node.callspec.id)
    data = benchmark(lambda: loop.run_until_complete(adk_environment.read_file("src/pkg/m7.py")))
    assert len(data) == 4200


@pytest.mark.parametrize("adk_environment", IMPLEMENTATIONS, indirect=True)
def test_google_adk_write(
    benchmark: Any, adk_environment: Any, loop: asyncio.AbstractEventLoop, tree: Path, request: Any
) -> None:
    _label(benchmark, "google-adk", "write_file 4 KiB", request.node.callspec.id)
    path = f"out/adk-{request.node.callspec.id}.txt"
    data = b"y" * 4096
    benchmark(lambda: loop.run_until_complete(adk_environment.write_file(path, data)))
    assert (tree / path).read_bytes() == data


@pytest.mark.parametrize("adk_environment", IMPLEMENTATIONS, indirect=True)
def test_google_adk_list(
    benchmark: Any, adk_environment: Any, loop: asyncio.AbstractEventLoop, request: Any
) -> None:
    """ADK's environment has no listing call: its agents list with a command (``ls``), which
    the drop-in runs in the kernel sandbox."""
    _label(benchmark, "google-adk", f"execute ls {FILES} files", request.node.callspec.id)
    result = benchmark(lambda: loop.run_until_complete(adk_environment.execute("ls src/pkg")))
    assert len(result.stdout.split()) == FILES


# -- crewAI ------------------------------------------------------------------------------------


@pytest.fixture
def crewai_tools_of(tree: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    original = pytest.importorskip("crewai_tools")
    from safefs.integrations import crewai

    monkeypatch.chdir(tree)  # DirectoryReadTool lists under the current directory
    return original if request.param == "original" else crewai


@pytest.mark.parametrize("crewai_tools_of", IMPLEMENTATIONS, indirect=True)
def test_crewai_read(benchmark: Any, crewai_tools_of: Any, tree: Path, request: Any) -> None:
    _label(benchmark, "crewai", "FileReadTool 4 KiB", request.node.callspec.id)
    tool = crewai_tools_of.FileReadTool(base_dir=str(tree))
    text = benchmark(lambda: tool._run(file_path="src/pkg/m7.py"))
    assert len(text) == 4200


@pytest.mark.parametrize("crewai_tools_of", IMPLEMENTATIONS, indirect=True)
def test_crewai_write(benchmark: Any, crewai_tools_of: Any, tree: Path, request: Any) -> None:
    _label(benchmark, "crewai", "FileWriterTool 4 KiB", request.node.callspec.id)
    tool = crewai_tools_of.FileWriterTool(base_dir=str(tree))
    args = {"filename": f"crewai-{request.node.callspec.id}.txt", "directory": "out", "content": "y" * 4096}
    assert benchmark(lambda: tool._run(**args, overwrite=True)).startswith("Content successfully written")


@pytest.mark.parametrize("crewai_tools_of", IMPLEMENTATIONS, indirect=True)
def test_crewai_list(benchmark: Any, crewai_tools_of: Any, request: Any) -> None:
    _label(benchmark, "crewai", f"DirectoryReadTool {FILES} files", request.node.callspec.id)
    tool = crewai_tools_of.DirectoryReadTool()
    text = benchmark(lambda: tool._run(directory="src/pkg"))
    assert text.count("\n") == FILES


# -- agno --------------------------------------------------------------------------------------


@pytest.fixture
def agno_file_tools(tree: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    original = pytest.importorskip("agno.tools.file")
    from safefs.integrations import agno

    cls = original.FileTools if request.param == "original" else agno.FileTools
    tools = cls(base_dir=tree)
    yield tools
    if request.param == "safefs":
        tools.close()


@pytest.mark.parametrize("agno_file_tools", IMPLEMENTATIONS, indirect=True)
def test_agno_read(benchmark: Any, agno_file_tools: Any, request: Any) -> None:
    _label(benchmark, "agno", "read_file 4 KiB", request.node.callspec.id)
    text = benchmark(lambda: agno_file_tools.read_file(file_name="src/pkg/m7.py"))
    assert len(text) == 4200


@pytest.mark.parametrize("agno_file_tools", IMPLEMENTATIONS, indirect=True)
def test_agno_write(benchmark: Any, agno_file_tools: Any, request: Any) -> None:
    _label(benchmark, "agno", "save_file 4 KiB", request.node.callspec.id)
    name = f"out/agno-{request.node.callspec.id}.txt"
    assert benchmark(lambda: agno_file_tools.save_file(contents="y" * 4096, file_name=name)) == name


@pytest.mark.parametrize("agno_file_tools", IMPLEMENTATIONS, indirect=True)
def test_agno_list(benchmark: Any, agno_file_tools: Any, request: Any) -> None:
    _label(benchmark, "agno", f"list_files {FILES} files", request.node.callspec.id)
    text = benchmark(lambda: agno_file_tools.list_files(directory="src/pkg"))
    assert len(json.loads(text)) == FILES


# -- deepagents --------------------------------------------------------------------------------


@pytest.fixture
def deepagents_backend(tree: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    filesystem = pytest.importorskip("deepagents.backends.filesystem")
    from safefs.integrations import deepagents

    original = request.param == "original"
    cls = filesystem.FilesystemBackend if original else deepagents.FilesystemBackend
    backend = cls(root_dir=tree, virtual_mode=True)
    yield backend
    if not original:
        backend.close()


@pytest.mark.parametrize("deepagents_backend", IMPLEMENTATIONS, indirect=True)
def test_deepagents_read(benchmark: Any, deepagents_backend: Any, request: Any) -> None:
    _label(benchmark, "deepagents", "read 4 KiB", request.node.callspec.id)
    result = benchmark(lambda: deepagents_backend.read("/src/pkg/m7.py"))
    assert result.total_lines == 700


@pytest.mark.parametrize("deepagents_backend", IMPLEMENTATIONS, indirect=True)
def test_deepagents_write(benchmark: Any, deepagents_backend: Any, request: Any) -> None:
    _label(benchmark, "deepagents", "write 4 KiB", request.node.callspec.id)
    path = f"/out/deepagents-{request.node.callspec.id}.txt"
    assert benchmark(lambda: deepagents_backend.write(path, "y" * 4096)).error is None


@pytest.mark.parametrize("deepagents_backend", IMPLEMENTATIONS, indirect=True)
def test_deepagents_list(benchmark: Any, deepagents_backend: Any, request: Any) -> None:
    _label(benchmark, "deepagents", f"ls {FILES} files", request.node.callspec.id)
    result = benchmark(lambda: deepagents_backend.ls("/src/pkg"))
    assert len(result.entries) == FILES


# -- strands -----------------------------------------------------------------------------------


@pytest.fixture
def strands_tools_of(
    tree: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """(file_read, file_write) modules of one implementation, in the tree (the current directory)."""
    pytest.importorskip("strands_tools.file_read")
    from strands_tools import file_read, file_write

    from safefs.integrations import strands

    monkeypatch.chdir(tree)
    monkeypatch.setenv("BYPASS_TOOL_CONSENT", "true")
    monkeypatch.delenv(strands.ROOT_VARIABLE, raising=False)
    if request.param == "original":
        yield file_read, file_write
        return
    from safefs.integrations.strands import file_read as read_drop_in
    from safefs.integrations.strands import file_write as write_drop_in

    yield read_drop_in, write_drop_in
    strands.close()


def _strands_call(module: Any, name: str, **arguments: Any) -> dict[str, Any]:
    result: dict[str, Any] = getattr(module, name)({"toolUseId": "b", "input": arguments})
    return result


@pytest.mark.parametrize("strands_tools_of", IMPLEMENTATIONS, indirect=True)
def test_strands_read(benchmark: Any, strands_tools_of: Any, request: Any) -> None:
    _label(benchmark, "strands", "file_read view 4 KiB", request.node.callspec.id)
    reader = strands_tools_of[0]
    result = benchmark(lambda: _strands_call(reader, "file_read", path="src/pkg/m7.py", mode="view"))
    assert result["content"][0]["text"].count("x = 1") == 700


@pytest.mark.parametrize("strands_tools_of", IMPLEMENTATIONS, indirect=True)
def test_strands_write(benchmark: Any, strands_tools_of: Any, request: Any) -> None:
    _label(benchmark, "strands", "file_write 4 KiB", request.node.callspec.id)
    writer = strands_tools_of[1]
    path = f"out/strands-{request.node.callspec.id}.txt"
    assert (
        benchmark(lambda: _strands_call(writer, "file_write", path=path, content="y" * 4096))["status"]
        == "success"
    )


@pytest.mark.parametrize("strands_tools_of", IMPLEMENTATIONS, indirect=True)
def test_strands_list(benchmark: Any, strands_tools_of: Any, request: Any) -> None:
    _label(benchmark, "strands", f"file_read find {FILES} files", request.node.callspec.id)
    reader = strands_tools_of[0]
    result = benchmark(lambda: _strands_call(reader, "file_read", path="src/pkg", mode="find"))
    assert result["content"][0]["text"].startswith(f"Found {FILES} files")
