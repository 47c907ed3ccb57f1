"""safefs's agent toolset beyond the call-by-call comparison: allowed and read-only directories,
media reads, the sync twins, the SDK's own context, and bash's session in the sandbox."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools import agent_toolset as sdk_toolset

from safefs.anthropic import agent_toolset as ours
from safefs.anthropic import sdk
from safefs.anthropic.agent_toolset import AgentToolContext
from tests.anthropic.sandboxed import sandbox_refusal


def run(tool: Any, args: dict[str, Any]) -> tuple[str, Any]:
    async def call() -> Any:
        return await tool.call(args)

    try:
        return ("ok", asyncio.run(call()))
    except ToolError as exc:
        return ("error", str(exc))


def tools_of(module: Any, ctx: Any) -> dict[str, Any]:
    return {t.name: t for t in module.beta_agent_toolset_20260401(ctx)}


def test_allowed_and_read_only_directories_as_in_the_sdk(tmp_path: Path) -> None:
    results = {}
    for name, module in (("sdk", sdk_toolset), ("ours", ours)):
        base = tmp_path / name
        work, store, frozen = base / "work", base / "store", base / "store" / "frozen"
        frozen.mkdir(parents=True)
        work.mkdir()
        (frozen / "fact.md").write_text("water is wet\n")
        ctx = module.AgentToolContext(workdir=str(work), allowed_roots=[store], read_only_roots=[frozen])
        tools = tools_of(module, ctx)
        calls: list[tuple[str, dict[str, Any]]] = [
            ("write", {"file_path": str(store / "note.md"), "content": "kept\n"}),
            ("read", {"file_path": str(store / "note.md")}),
            ("read", {"file_path": str(frozen / "fact.md")}),
            ("write", {"file_path": str(frozen / "fact.md"), "content": "changed"}),
            ("edit", {"file_path": str(frozen / "fact.md"), "old_string": "wet", "new_string": "dry"}),
            ("read", {"file_path": str(base / "elsewhere.txt")}),
        ]
        results[name] = [
            (kind, text.replace(str(base), "<base>") if isinstance(text, str) else text)
            for kind, text in (run(tools[tool], args) for tool, args in calls)
        ]
        assert (frozen / "fact.md").read_text() == "water is wet\n"
    assert results["ours"] == results["sdk"]
    assert results["ours"][3][0] == "error" and "read-only directory" in results["ours"][3][1]


def test_an_image_is_a_base64_block_and_the_caps_bind(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    (tmp_path / "pic.png").write_bytes(png)
    tools = tools_of(ours, AgentToolContext(workdir=str(tmp_path)))
    kind, blocks = run(tools["read"], {"file_path": "pic.png"})
    assert kind == "ok"
    assert blocks[0]["type"] == "image" and blocks[0]["source"]["media_type"] == "image/png"
    assert base64.b64decode(blocks[0]["source"]["data"]) == png
    capped = tools_of(ours, AgentToolContext(workdir=str(tmp_path), max_image_base64_bytes=400))
    assert run(capped["read"], {"file_path": "pic.png"}) == (
        "error",
        f"read: pic.png is {len(png)} bytes, exceeds 300-byte limit for image/PDF files.",
    )


def test_the_sync_twins_and_the_sdks_own_context(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("from the sync tool\n")
    sdk_ctx = sdk_toolset.AgentToolContext(workdir=str(tmp_path))
    sync_tools = {t.name: t for t in ours.beta_agent_toolset_20260401_sync(sdk_ctx)}
    assert sorted(sync_tools) == ["bash", "edit", "glob", "grep", "read", "write"]
    assert sync_tools["read"].call({"file_path": "a.txt"}) == "from the sync tool\n"
    for tool in sync_tools.values():  # the SDK's own input models, as the SDK's tools have
        (twin,) = [t for t in sdk_toolset.beta_agent_toolset_20260401(sdk_ctx) if t.name == tool.name]
        assert tool.to_dict() == twin.to_dict()
    with pytest.raises(ToolError, match="outside the session's working directory"):
        sync_tools["read"].call({"file_path": "/etc/passwd"})


def test_bash_keeps_its_session_and_stays_confined(tmp_path: Path) -> None:
    refusal = sandbox_refusal(tmp_path)
    if refusal is not None:
        pytest.skip(refusal)
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "outside.txt").write_text("outside\n")
    ctx = AgentToolContext(workdir=str(work), env={"PATH": "/usr/bin:/bin", "FROM_CTX": "yes"})
    bash = {t.name: t for t in ours.beta_agent_toolset_20260401_sync(ctx)}["bash"]
    assert bash.call({"command": "mkdir -p sub && cd sub && export KEPT=1 && echo started"}) == "started"
    assert str(bash.call({"command": "pwd; echo $KEPT $FROM_CTX"})).splitlines() == [
        str(work.resolve() / "sub"),
        "1 yes",
    ]
    with pytest.raises(ToolError) as refused:
        bash.call({"command": "echo planted > ../../planted.txt"})
    assert "Permission denied" in str(refused.value)
    assert not (tmp_path / "planted.txt").exists()
    with pytest.raises(ToolError) as failed:
        bash.call({"command": "exit 3"})
    assert str(failed.value) == sdk.behaviour().empty_failure_text  # test_differential checks it
    assert bash.call({"restart": True}) == "bash session restarted"
    assert str(bash.call({"command": "pwd; echo ${KEPT:-unset}"})).splitlines() == [
        str(work.resolve()),
        "unset",
    ]
    with pytest.raises(ToolError, match=r"timed out after 0\.5s"):
        bash.call({"command": "sleep 5", "timeout_ms": 500})
    with pytest.raises(ToolError, match="command is required"):
        bash.call({})
    ctx.close()  # the close hook ends the session; a later call starts a fresh one
    assert bash.call({"command": "echo again"}) == "again"
    ctx.close()
