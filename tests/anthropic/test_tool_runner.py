"""The done-when of the drop-ins: a script written for the SDK's tools, driven by the SDK's real
tool runner against a Messages API on 127.0.0.1, works unchanged when one import is switched.

The script is run twice, once with the SDK's module and once with safefs's (the only change), on
twin trees; the tool results the runner sent back to the API are the same in both runs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.lib.tools import agent_toolset as sdk_toolset
from anthropic.tools import BetaLocalFilesystemMemoryTool as SdkMemoryTool

from safefs.anthropic import BetaLocalFilesystemMemoryTool as SafefsMemoryTool
from safefs.anthropic import agent_toolset as safefs_toolset
from tests.agent.messages_api_server import LoopbackMessagesAPI, serve, text_reply, tool_reply

API_KEY = "sk-ant-test-loopback-runner"


@pytest.fixture
def api() -> Iterator[LoopbackMessagesAPI]:
    yield from serve(API_KEY)


def tool_results(api: LoopbackMessagesAPI) -> list[Any]:
    """Every tool_result of the conversation the runner sent last, in order:
    (tool_use_id, is_error, content as JSON)."""
    results = []
    for request in api.requests[-1:]:
        for message in request["messages"]:
            if message["role"] != "user" or isinstance(message["content"], str):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    results.append(
                        (
                            block["id"] if "id" in block else block["tool_use_id"],
                            block.get("is_error", False),
                            json.dumps(block.get("content")),
                        )
                    )
    return results


# -- the agent toolset, with the async runner --------------------------------------------------


async def agent_script(toolset: Any, base_url: str, workdir: str) -> str:
    """What a user of ``anthropic.lib.tools.agent_toolset`` writes; ``toolset`` is the module."""
    client = anthropic.AsyncAnthropic(api_key=API_KEY, base_url=base_url, max_retries=0)
    ctx = toolset.AgentToolContext(workdir=workdir)
    tools = [t for t in toolset.beta_agent_toolset_20260401(ctx) if t.name != "bash"]
    runner = client.beta.messages.tool_runner(
        model="loopback-model",
        max_tokens=1024,
        messages=[{"role": "user", "content": "tidy up the notes"}],
        tools=tools,
        # The loopback server keeps no server-side threads: every request sends the whole history.
        thread=False,
    )
    final = await runner.until_done()
    await client.close()
    return "".join(b.text for b in final.content if b.type == "text")


def queue_agent_conversation(api: LoopbackMessagesAPI) -> None:
    api.queue(
        tool_reply(
            "Looking.",
            ("toolu_1", "read", {"file_path": "notes.txt"}),
            ("toolu_2", "glob", {"pattern": "*.txt"}),
        )
    )
    api.queue(
        tool_reply(
            "",
            ("toolu_3", "edit", {"file_path": "notes.txt", "old_string": "todo", "new_string": "done"}),
            ("toolu_4", "write", {"file_path": "sub/summary.txt", "content": "all done\n"}),
        )
    )
    api.queue(
        tool_reply(
            "", ("toolu_5", "read", {"file_path": "../outside.txt"}), ("toolu_6", "grep", {"pattern": "done"})
        )
    )
    api.queue(text_reply("Notes tidied."))


def test_the_agent_toolset_script_works_unchanged_after_the_import_swap(
    tmp_path: Path, api: LoopbackMessagesAPI
) -> None:
    sent = {}
    for name, module in (("sdk", sdk_toolset), ("safefs", safefs_toolset)):
        work = tmp_path / name / "work"
        work.mkdir(parents=True)
        (work / "notes.txt").write_text("todo: buy milk\n")
        (tmp_path / name / "outside.txt").write_text("secret\n")
        queue_agent_conversation(api)
        api.requests.clear()
        assert asyncio.run(agent_script(module, api.url, str(work))) == "Notes tidied."
        assert (work / "notes.txt").read_text() == "done: buy milk\n"
        assert (work / "sub" / "summary.txt").read_text() == "all done\n"
        shown = json.dumps(str(work.resolve()))[1:-1]
        sent[name] = [(i, err, content.replace(shown, "<work>")) for i, err, content in tool_results(api)]
    assert sent["safefs"] == sent["sdk"]
    assert [i for i, *_ in sent["safefs"]] == [f"toolu_{n}" for n in range(1, 7)]
    assert sent["safefs"][4][1] is True  # the read outside is an error result


# -- the memory tool, with the sync runner -----------------------------------------------------


def memory_script(memory_tool_class: Any, base_url: str, base_path: str) -> str:
    """What a user of ``anthropic.tools.BetaLocalFilesystemMemoryTool`` writes."""
    client = anthropic.Anthropic(api_key=API_KEY, base_url=base_url, max_retries=0)
    memory = memory_tool_class(base_path=base_path)
    runner = client.beta.messages.tool_runner(
        model="loopback-model",
        max_tokens=1024,
        messages=[{"role": "user", "content": "remember that I like coffee"}],
        tools=[memory],
        thread=False,
    )
    final = runner.until_done()
    client.close()
    return "".join(b.text for b in final.content if b.type == "text")


def test_the_memory_tool_script_works_unchanged_after_the_import_swap(
    tmp_path: Path, api: LoopbackMessagesAPI
) -> None:
    sent = {}
    for name, tool_class in (("sdk", SdkMemoryTool), ("safefs", SafefsMemoryTool)):
        api.queue(tool_reply("", ("toolu_1", "memory", {"command": "view", "path": "/memories"})))
        api.queue(
            tool_reply(
                "",
                (
                    "toolu_2",
                    "memory",
                    {"command": "create", "path": "/memories/prefs.md", "file_text": "likes tea\n"},
                ),
            )
        )
        api.queue(
            tool_reply(
                "",
                (
                    "toolu_3",
                    "memory",
                    {
                        "command": "str_replace",
                        "path": "/memories/prefs.md",
                        "old_str": "tea",
                        "new_str": "coffee",
                    },
                ),
            )
        )
        api.queue(
            tool_reply("", ("toolu_4", "memory", {"command": "view", "path": "/memories/../../etc/passwd"}))
        )
        api.queue(text_reply("Noted."))
        api.requests.clear()
        base = tmp_path / name
        assert memory_script(tool_class, api.url, str(base)) == "Noted."
        assert (base / "memories" / "prefs.md").read_text() == "likes coffee\n"
        sent[name] = tool_results(api)
    assert sent["safefs"] == sent["sdk"]
    assert sent["safefs"][3][1] is True
