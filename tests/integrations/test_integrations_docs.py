"""docs/integrations.md: each framework's one-line switch runs, and names classes that stand in
for the framework's own (same name, a subclass of the original)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[2] / "docs" / "integrations.md"
# The framework's section heading -> (the module whose classes the snippet replaces).
ORIGINALS = {
    "pydantic-ai": {
        "LocalWorkspaceBackend": "pydantic_ai.workspaces",
        "LocalWorkspace": "pydantic_ai.capabilities",
    },
    "LangChain": {"FileManagementToolkit": "langchain_community.agent_toolkits"},
    "Google ADK": {"LocalEnvironment": "google.adk.environment"},
    "crewAI": {
        "FileReadTool": "crewai_tools",
        "FileWriterTool": "crewai_tools",
        "DirectoryReadTool": "crewai_tools",
    },
    "agno": {"FileTools": "agno.tools.file"},
    "deepagents": {"FilesystemBackend": "deepagents.backends.filesystem"},
}
# A section whose snippet builds the framework's options instead: heading -> its module.
OPTIONS = {"Claude Agent SDK": "claude_agent_sdk"}

# Frameworks whose tools are modules (strands' module tools): the drop-in is a module of the same
# name carrying the same tool spec.
MODULE_ORIGINALS = {
    "Strands": {"file_read": "strands_tools", "file_write": "strands_tools", "editor": "strands_tools"}
}


def _snippets() -> dict[str, str]:
    """The first python block under each ``## <framework>`` heading."""
    found: dict[str, str] = {}
    for section in re.split(r"^## ", DOCS.read_text(), flags=re.M)[1:]:
        heading, _, body = section.partition("\n")
        block = re.search(r"```python\n(.*?)```", body, flags=re.S)
        if block is not None:
            found[heading.strip()] = block.group(1)
    return found


def test_every_framework_has_a_snippet() -> None:
    assert set(_snippets()) == set(ORIGINALS) | set(OPTIONS) | set(MODULE_ORIGINALS)


@pytest.mark.parametrize("framework", sorted(ORIGINALS))
def test_the_snippet_imports_drop_ins_for_the_originals(framework: str) -> None:
    originals = ORIGINALS[framework]
    for module in set(originals.values()):
        pytest.importorskip(module)
    names: dict[str, object] = {}
    exec(_snippets()[framework], names)
    for name, module in originals.items():
        original = getattr(importlib.import_module(module), name)
        ours = names[name]
        assert isinstance(ours, type) and issubclass(ours, original), name
        assert ours.__name__ == original.__name__
        assert ours.__module__.startswith("safefs.integrations.")


def test_the_claude_agent_sdk_snippet_builds_options_without_the_built_in_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk = pytest.importorskip(OPTIONS["Claude Agent SDK"])
    from safefs.integrations.claude_agent_sdk import BUILT_IN_TOOLS, tool_names

    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path)
    names: dict[str, object] = {}
    exec(_snippets()["Claude Agent SDK"], names)
    options = names["options"]
    assert isinstance(options, sdk.ClaudeAgentOptions)
    assert options.tools == [] and set(BUILT_IN_TOOLS) <= set(options.disallowed_tools)
    assert options.allowed_tools == tool_names() and options.permission_mode == "acceptEdits"
    assert options.cwd == str(tmp_path / "project")
    names["root"].close()  # type: ignore[attr-defined]


@pytest.mark.parametrize("framework", sorted(MODULE_ORIGINALS))
def test_the_snippet_imports_drop_in_modules_for_the_original_tools(framework: str) -> None:
    originals = MODULE_ORIGINALS[framework]
    for package in set(originals.values()):
        pytest.importorskip(package)
    names: dict[str, object] = {}
    exec(_snippets()[framework], names)
    for name, package in originals.items():
        original = importlib.import_module(f"{package}.{name}")
        ours = names[name]
        assert ours.__name__.startswith("safefs.integrations.") and ours.__name__.endswith(f".{name}")  # type: ignore[attr-defined]
        if hasattr(original, "TOOL_SPEC"):
            assert ours.TOOL_SPEC == original.TOOL_SPEC  # type: ignore[attr-defined]
        else:
            assert getattr(ours, name).tool_spec == getattr(original, name).tool_spec
