"""The text_editor_20250728 handler: each command's result text, and the handler driven by the
SDK's real tool runner against a Messages API on 127.0.0.1 next to the bash_20250124 handler."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.lib.tools import ToolError

import safefs
from safefs.anthropic import BashTool, TextEditor, TextEditorTool
from safefs.sandbox import Refused, make_sandbox
from tests.agent.messages_api_server import LoopbackMessagesAPI, serve, text_reply, tool_reply

API_KEY = "sk-ant-test-loopback-editor"


@pytest.fixture
def root(tmp_path: Path) -> Iterator[safefs.Root]:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "secret.txt").write_text("outside\n")
    with safefs.Root(work) as r:
        yield r


def result(editor: TextEditor, **args: Any) -> tuple[str, str]:
    try:
        return ("ok", editor.execute(args))
    except ToolError as exc:
        return ("error", str(exc))


def test_each_command_answers_with_the_documented_texts(root: safefs.Root) -> None:
    editor = TextEditor(root, max_characters=30)
    path = "src/app.py"
    assert result(editor, command="create", path=path, file_text="a = 1\nb = 2\nc = 3\n") == (
        "ok",
        "File created successfully at: src/app.py",
    )
    assert result(editor, command="create", path=path, file_text="x")[1].startswith(
        "Error: File already exists"
    )
    assert result(editor, command="view", path=path) == ("ok", "1: a = 1\n2: b = 2\n3: c = 3")
    assert result(editor, command="view", path=path, view_range=[2, -1]) == ("ok", "2: b = 2\n3: c = 3")
    assert result(editor, command="view", path=path, view_range=[3, 9])[0] == "error"
    assert result(editor, command="str_replace", path=path, old_str="b = 2", new_str="b = 20") == (
        "ok",
        "Successfully replaced text at exactly one location.",
    )
    assert result(editor, command="str_replace", path=path, old_str="nowhere", new_str="x") == (
        "error",
        "Error: No match found for replacement. Please check your text and try again.",
    )
    assert result(editor, command="str_replace", path=path, old_str=" = ", new_str="=") == (
        "error",
        "Error: Found 3 matches for replacement text. Please provide more context to make a unique match.",
    )
    assert result(editor, command="insert", path=path, insert_line=1, insert_text="# one\n")[0] == "ok"
    assert result(editor, command="insert", path=path, insert_line=99, insert_text="x")[0] == "error"
    assert root.read_text(path) == "a = 1\n# one\nb = 20\nc = 3\n"
    clipped = result(editor, command="view", path=path)[1]
    assert clipped == "1: a = 1\n2: # one\n3: b = 20\n4: c "[:30] + "\n<response clipped>"
    assert result(editor, command="view", path="src")[1].splitlines()[1:] == ["src/", "src/app.py"]
    assert result(editor, command="view", path="missing.txt") == ("error", "Error: File not found")
    escaped = result(editor, command="view", path="../secret.txt")
    assert escaped == ("error", "Error: The path ../secret.txt is outside the workspace")
    assert root.path not in escaped[1]
    assert result(editor, command="undo_edit", path=path)[0] == "error"  # not in this tool version


def test_the_handlers_work_under_the_sdks_tool_runner(root: safefs.Root) -> None:
    with root.opendir(".") as probe:
        sandbox = make_sandbox(probe)
        refusal = sandbox.refusal if isinstance(sandbox, Refused) else None
        sandbox.close()
    if refusal is not None:
        pytest.skip(refusal)
    api_gen = serve(API_KEY)
    api: LoopbackMessagesAPI = next(api_gen)
    try:
        editor = "str_replace_based_edit_tool"
        api.queue(tool_reply("", ("t1", editor, {"command": "create", "path": "n.txt", "file_text": "hi\n"})))
        api.queue(tool_reply("", ("t2", "bash", {"command": "cat n.txt; cat ../secret.txt"})))
        api.queue(text_reply("Done."))
        client = anthropic.Anthropic(api_key=API_KEY, base_url=api.url, max_retries=0)
        bash = BashTool(root)
        runner = client.beta.messages.tool_runner(
            model="loopback-model",
            max_tokens=512,
            messages=[{"role": "user", "content": "go"}],
            tools=[TextEditorTool(root, max_characters=1000), bash],
            thread=False,  # the loopback server keeps no server-side threads
        )
        final = runner.until_done()
        bash.close()
        client.close()
        assert [b.text for b in final.content if b.type == "text"] == ["Done."]
        sent = api.requests[0]["tools"]
        assert [(t["type"], t["name"]) for t in sent] == [
            ("text_editor_20250728", editor),
            ("bash_20250124", "bash"),
        ]
        last = api.requests[-1]["messages"]
        results = [
            b for m in last if m["role"] == "user" and isinstance(m["content"], list) for b in m["content"]
        ]
        by_id = {b["tool_use_id"]: b for b in results if b.get("type") == "tool_result"}
        assert "File created successfully" in str(by_id["t1"]["content"])
        assert by_id["t2"].get("is_error") is True  # the cat outside fails in the sandbox
        assert "hi" in str(by_id["t2"]["content"]) and "outside" not in str(by_id["t2"]["content"])
    finally:
        next(api_gen, None)
