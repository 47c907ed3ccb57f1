"""Agent frameworks' own file tools as contestants, and safefs's drop-ins for them
(:mod:`safefs.integrations`).

- ``pydantic-ai-workspace``: pydantic-ai's ``LocalWorkspaceBackend`` (``read_bytes``,
  ``write_bytes``, ``list_dir``, ``make_dir`` by absolute path), which confines nothing;
  ``safefs-pydantic-ai-workspace``: the drop-in, resolved beneath the workspace's fd.
- ``langchain-file-tools``: langchain-community's ``read_file``, ``write_file`` and
  ``list_directory`` tools with ``root_dir``: resolve, check, then open the path string;
  ``safefs-langchain-file-tools``: the drop-ins.
- ``agno-file-tools``: agno's ``FileTools`` (``read_file``, ``save_file``, ``list_files``) on
  ``base_dir``: resolve, check, then open the resolved path string;
  ``safefs-agno-file-tools``: the drop-in.
- ``deepagents-backend``: deepagents' ``FilesystemBackend`` in its guarded ``virtual_mode=True``
  (``read``, ``write``, ``ls``): resolve, check with ``relative_to``, then open the resolved path
  string; ``safefs-deepagents-backend``: the drop-in.
- ``google-adk-environment``: Google ADK's ``LocalEnvironment`` (``read_file``, ``write_file``
  by working-dir-relative path; listing is a command, ``ls``, as ADK's agents list): resolve,
  check, then open the path string; ``safefs-google-adk-environment``: the drop-in, whose
  commands run in the kernel sandbox.
- ``crewai-file-tools``: crewai-tools' ``FileReadTool`` and ``FileWriterTool`` with
  ``base_dir``, and ``DirectoryReadTool`` (which lists under the current directory): realpath,
  check, then open the path string; ``safefs-crewai-file-tools``: the drop-ins.
- ``strands-file-tools``: strands-agents-tools' ``file_read`` (``view``, and ``find`` for a
  listing) and ``file_write``, which open any path they are given (here the workspace's absolute
  path); ``safefs-strands-file-tools``: the drop-ins, confined to the workspace
  (``SAFEFS_STRANDS_ROOT``).

Each operation is one real call of the framework's API (the async backend driven on one event
loop; the tools through ``BaseTool.run``, as an agent calls them). A tool's ``Error...`` result
is a refusal, raised as ``PermissionError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import warnings
from pathlib import Path
from typing import Any

from safefs_bench.strategies import Strategy, StrategyUnavailable


def _require(module: str, extra: str) -> None:
    try:
        __import__(module)
    except ImportError as exc:
        raise StrategyUnavailable(f"{module} is not installed (safefs[{extra}]): {exc}") from None


class PydanticAiWorkspace(Strategy):
    """pydantic-ai's ``LocalWorkspaceBackend``, or safefs's."""

    def __init__(self, root: str, implementation: str) -> None:
        _require("pydantic_ai.workspaces", "pydantic-ai")
        if implementation == "original":
            from pydantic_ai.workspaces import LocalWorkspaceBackend
        else:
            from safefs.integrations.pydantic_ai import LocalWorkspaceBackend  # type: ignore[assignment]
        self._root = os.path.abspath(root)
        self._backend: Any = LocalWorkspaceBackend(self._root)
        self._loop = asyncio.new_event_loop()

    def _run(self, call: Any) -> Any:
        return self._loop.run_until_complete(call)

    def _path(self, rel: str) -> str:
        return os.path.join(self._root, rel)

    def read(self, rel: str) -> bytes:
        data: bytes = self._run(self._backend.read_bytes(self._path(rel)))
        return data

    def write(self, rel: str, data: bytes) -> None:
        self._run(self._backend.write_bytes(self._path(rel), data))

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("the workspace's stat returns a FileEntry, not a stat result")

    def listdir(self, rel: str) -> list[str]:
        return [entry.name for entry in self._run(self._backend.list_dir(self._path(rel)))]

    def makedirs(self, rel: str) -> None:
        self._run(self._backend.make_dir(self._path(rel)))

    def close(self) -> None:
        closer = getattr(self._backend, "close", None)
        if closer is not None:
            closer()
        self._loop.close()


class LangchainFileTools(Strategy):
    """langchain-community's ``read_file``, ``write_file`` and ``list_directory``, or safefs's."""

    def __init__(self, root: str, implementation: str) -> None:
        _require("langchain_community.agent_toolkits", "langchain")
        if implementation == "original":
            from langchain_community.agent_toolkits import FileManagementToolkit
        else:
            from safefs.integrations.langchain import FileManagementToolkit  # type: ignore[assignment]
        names = ["read_file", "write_file", "list_directory"]
        self._tools: dict[str, Any] = {
            t.name: t for t in FileManagementToolkit(root_dir=root, selected_tools=names).get_tools()
        }

    def _call(self, name: str, args: dict[str, Any]) -> str:
        text = str(self._tools[name].run(args))
        if text.startswith("Error"):
            raise PermissionError(text)
        return text

    def read(self, rel: str) -> bytes:
        return self._call("read_file", {"file_path": rel}).encode("utf-8")

    def write(self, rel: str, data: bytes) -> None:
        self._call("write_file", {"file_path": rel, "text": data.decode("utf-8")})

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("these tools have no stat of their own")

    def listdir(self, rel: str) -> list[str]:
        text = self._call("list_directory", {"dir_path": rel})
        return [] if text.startswith("No files found") else text.split("\n")

    def makedirs(self, rel: str) -> None:
        raise OSError("these tools make directories only as parents of a file they write")

    def close(self) -> None:
        for tool in self._tools.values():
            closer = getattr(tool, "close", None)
            if closer is not None:
                closer()


class AgnoFileTools(Strategy):
    """agno's ``FileTools`` ``read_file``, ``save_file`` and ``list_files``, or safefs's."""

    REFUSALS = ("Error", "{}")  # the tools' refusal and failure texts

    def __init__(self, root: str, implementation: str) -> None:
        _require("agno.tools.file", "agno")
        from pathlib import Path

        if implementation == "original":
            from agno.tools.file import FileTools
        else:
            from safefs.integrations.agno import FileTools  # type: ignore[assignment]
        self._tools: Any = FileTools(base_dir=Path(root), exclude_patterns=[])
        # agno logs every refusal and failure on its own handler: tens of thousands of lines in
        # one attack. The contest counts them itself; only agno's critical messages stay.
        logging.getLogger("agno").setLevel(logging.CRITICAL)

    def _checked(self, text: str) -> str:
        if text.startswith(self.REFUSALS):
            raise PermissionError(text)
        return text

    def read(self, rel: str) -> bytes:
        return self._checked(self._tools.read_file(file_name=rel)).encode("utf-8")

    def write(self, rel: str, data: bytes) -> None:
        text = self._tools.save_file(contents=data.decode("utf-8"), file_name=rel)
        if text != rel:
            raise PermissionError(text)

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("FileTools has no stat of its own")

    def listdir(self, rel: str) -> list[str]:
        found: list[str] = json.loads(self._checked(self._tools.list_files(directory=rel)))
        return [name.rsplit("/", 1)[-1] for name in found]

    def makedirs(self, rel: str) -> None:
        raise OSError("FileTools makes directories only as parents of a file it saves")

    def close(self) -> None:
        closer = getattr(self._tools, "close", None)
        if closer is not None:
            closer()


class DeepagentsBackend(Strategy):
    """deepagents' ``FilesystemBackend(virtual_mode=True)``, or safefs's: ``read``, ``write`` and
    ``ls`` by virtual path. A refusal (its ``ValueError``) or an error result is a
    ``PermissionError``."""

    def __init__(self, root: str, implementation: str) -> None:
        _require("deepagents.backends.filesystem", "deepagents")
        if implementation == "original":
            from deepagents.backends.filesystem import FilesystemBackend
        else:
            from safefs.integrations.deepagents import FilesystemBackend  # type: ignore[assignment]
        self._backend: Any = FilesystemBackend(root_dir=root, virtual_mode=True)

    def _call(self, method: str, *args: Any) -> Any:
        try:
            result = getattr(self._backend, method)(*args)
        except ValueError as exc:
            raise PermissionError(str(exc)) from None
        if result.error is not None:
            raise PermissionError(result.error)
        return result

    def read(self, rel: str) -> bytes:
        result = self._call("read", "/" + rel, 0, 1 << 30)
        return str(result.file_data["content"]).encode("utf-8")

    def write(self, rel: str, data: bytes) -> None:
        self._call("write", "/" + rel, data.decode("utf-8"))

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("the backend has no stat of its own")

    def listdir(self, rel: str) -> list[str]:
        entries = self._call("ls", "/" + rel).entries or []
        return [entry["path"].rstrip("/").rpartition("/")[2] for entry in entries]

    def makedirs(self, rel: str) -> None:
        raise OSError("the backend makes directories only as parents of a file it writes")

    def close(self) -> None:
        closer = getattr(self._backend, "close", None)
        if closer is not None:
            closer()


class GoogleAdkEnvironment(Strategy):
    """Google ADK's ``LocalEnvironment``, or safefs's. Its ``ValueError`` refusal ("Path escapes
    working directory") is raised as ``PermissionError``."""

    def __init__(self, root: str, implementation: str) -> None:
        _require("google.adk.environment", "google-adk")
        if implementation == "original":
            from google.adk.environment import LocalEnvironment
        else:
            from safefs.integrations.google_adk import LocalEnvironment  # type: ignore[assignment]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ADK marks LocalEnvironment experimental
            self._environment: Any = LocalEnvironment(working_dir=Path(root))
        self._loop = asyncio.new_event_loop()
        self._run(self._environment.initialize())

    def _run(self, call: Any) -> Any:
        try:
            return self._loop.run_until_complete(call)
        except ValueError as exc:
            raise PermissionError(str(exc)) from None

    def read(self, rel: str) -> bytes:
        data: bytes = self._run(self._environment.read_file(rel))
        return data

    def write(self, rel: str, data: bytes) -> None:
        self._run(self._environment.write_file(rel, data))

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("the environment has no stat")

    def listdir(self, rel: str) -> list[str]:
        result = self._run(self._environment.execute(f"ls -A -- {shlex.quote(rel)}"))
        if result.exit_code != 0:
            raise OSError(f"ls exited {result.exit_code}: {result.stderr.strip()}")
        return [line for line in result.stdout.split("\n") if line]

    def makedirs(self, rel: str) -> None:
        raise OSError("the environment makes directories only as parents of a file it writes")

    def close(self) -> None:
        self._loop.run_until_complete(self._environment.close())
        self._loop.close()


class CrewaiFileTools(Strategy):
    """crewai-tools' ``FileReadTool``, ``FileWriterTool`` and ``DirectoryReadTool``, or safefs's,
    called through ``BaseTool.run``. A result reporting an error is raised as
    ``PermissionError``. ``listdir`` is ``DirectoryReadTool``, which lists every file of the
    tree under the current directory: it runs with the workspace as the current directory
    (process-wide, for the call) and returns the files' paths relative to ``rel``."""

    FAILED = ("Error", "An error", "File ")  # a refusal or failure text of either tool

    def __init__(self, root: str, implementation: str) -> None:
        _require("crewai_tools", "crewai")
        if implementation == "original":
            import crewai_tools as tools
        else:
            from safefs.integrations import crewai as tools  # type: ignore[no-redef]
        self._root = os.path.abspath(root)
        self._reader: Any = tools.FileReadTool(base_dir=self._root)
        self._writer: Any = tools.FileWriterTool(base_dir=self._root)
        self._lister: Any = tools.DirectoryReadTool()

    def read(self, rel: str) -> bytes:
        text = str(self._reader.run(file_path=rel))
        if text.startswith(self.FAILED):
            raise PermissionError(text)
        return text.encode("utf-8")

    def write(self, rel: str, data: bytes) -> None:
        directory, name = os.path.split(rel)
        text = str(
            self._writer.run(
                filename=name, directory=directory or "./", content=data.decode("utf-8"), overwrite=True
            )
        )
        if not text.startswith("Content successfully written"):
            raise PermissionError(text)

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("these tools have no stat of their own")

    def listdir(self, rel: str) -> list[str]:
        with contextlib.chdir(self._root):
            try:
                text = str(self._lister.run(directory=rel))
            except ValueError as exc:  # the tools' refusal of a path outside, or not a directory
                raise PermissionError(str(exc)) from None
        paths = text.removeprefix("File paths: \n-").split("\n- ")
        base = os.path.realpath(os.path.join(self._root, rel))
        return [os.path.relpath(path, base) for path in paths if path]

    def makedirs(self, rel: str) -> None:
        raise OSError("these tools make directories only as parents of a file they write")

    def close(self) -> None:
        for tool in (self._reader, self._writer, self._lister):
            closer = getattr(tool, "close", None)
            if closer is not None:
                closer()


class StrandsFileTools(Strategy):
    """strands-agents-tools' ``file_read`` and ``file_write``, or safefs's, called as strands
    calls a module tool (a tool-use dict in, a result dict out). The originals are given the
    workspace's absolute paths; the drop-ins paths relative to ``SAFEFS_STRANDS_ROOT``, set to
    the workspace while the strategy is open. An error result is a ``PermissionError``.

    A file of ``TOO_LONG`` bytes or more is not read (an ``OSError``, so the contest notes it as
    refused): the original renders every read into a console panel, whether shown or not, about
    4 s a MiB, so 64 MiB would take minutes a read."""

    TOO_LONG = 1024 * 1024

    def __init__(self, root: str, implementation: str) -> None:
        _require("strands_tools.file_read", "strands")
        if implementation == "original":
            from strands_tools import file_read, file_write
        else:
            from safefs.integrations.strands import file_read, file_write  # type: ignore[no-redef]
        self._read, self._write = file_read.file_read, file_write.file_write
        self._root = os.path.abspath(root)
        self._original = implementation == "original"
        self._saved = {k: os.environ.get(k) for k in ("SAFEFS_STRANDS_ROOT", "BYPASS_TOOL_CONSENT")}
        os.environ["BYPASS_TOOL_CONSENT"] = "true"  # no consent prompt in a benchmark
        os.environ["SAFEFS_STRANDS_ROOT"] = self._root

    def _path(self, rel: str) -> str:
        return os.path.join(self._root, rel) if self._original else rel

    def _texts(self, result: dict[str, Any]) -> list[str]:
        texts = [str(item.get("text", "")) for item in result["content"]]
        if result["status"] != "success":
            raise PermissionError(" ".join(texts))
        return texts

    def read(self, rel: str) -> bytes:
        path = self._path(rel)
        size = 0
        with contextlib.suppress(OSError):  # the harness's own look at its tree, not the tool's
            size = os.path.getsize(os.path.join(self._root, rel))
        if size >= self.TOO_LONG:
            raise OSError(f"not read: {rel} is {self.TOO_LONG} bytes or more")
        texts = self._texts(self._read({"toolUseId": "b", "input": {"path": path, "mode": "view"}}))
        prefix = f"Content of {path}:\n"
        if len(texts) != 1 or not texts[0].startswith(prefix):
            raise PermissionError(" ".join(texts))
        return texts[0][len(prefix) :].encode("utf-8")

    def write(self, rel: str, data: bytes) -> None:
        tool_use = {"toolUseId": "b", "input": {"path": self._path(rel), "content": data.decode("utf-8")}}
        self._texts(self._write(tool_use))

    def stat(self, rel: str) -> os.stat_result:
        raise OSError("file_read has a stats mode, not a stat")

    def listdir(self, rel: str) -> list[str]:
        tool_use = {"toolUseId": "b", "input": {"path": self._path(rel), "mode": "find", "recursive": False}}
        found = self._texts(self._read(tool_use))[0].split("\n")[1:]
        return [os.path.basename(path) for path in found]

    def makedirs(self, rel: str) -> None:
        raise OSError("file_write makes directories only as parents of a file it writes")

    def close(self) -> None:
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if not self._original:
            from safefs.integrations.strands import close

            close()
