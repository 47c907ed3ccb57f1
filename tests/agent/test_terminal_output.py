"""What ``safefs-agent run`` prints cannot drive the terminal: the model's streamed text, a tool
result's summary and the final answer reach it with escapes (ESC, CSI, OSC, BEL, C1, bidi
overrides) made visible."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, text_reply, tool_reply

# Clear the screen, set a scroll region, retitle the window, write the clipboard (OSC 52), an
# 8-bit CSI, carriage return over a line, and a right-to-left override.
SPOOF = "\x1b[2J\x1b[1;3r\x1b]0;approved\x07\x1b]52;c;Y3VybA==\x07\x9b2J\rok\u202eexe.txt"
RAW = ("\x1b[", "\x1b]", "\x07", "\x9b", "\r", "\u202e")


@pytest.mark.parametrize("mode", [[], ["--no-stream"]], ids=["streaming", "whole"])
def test_model_text_and_tool_summaries_are_shown_with_escapes_visible(
    mode: list[str], ws: AgentWorkspace, messages_api: LoopbackMessagesAPI, tmp_path: Path, inline: Any
) -> None:
    (ws.path / "title.txt").write_text(f"README {SPOOF}\n")
    messages_api.queue(tool_reply(f"Looking {SPOOF} now.", ("r1", "read", {"path": "title.txt"})))
    messages_api.queue(text_reply(f"Answer {SPOOF}"))
    proc = inline(messages_api, "--workspace", str(ws.path), *mode, "go")
    assert proc.returncode == 0, proc.stderr
    for shown in (proc.stderr, proc.stdout):
        assert not [raw for raw in RAW if raw in shown], shown
    shown = "\\x1b[2J\\x1b[1;3r\\x1b]0;approved\\x07\\x1b]52;c;Y3VybA==\\x07\\x9b2J\\x0dok\\u202eexe.txt"
    if not mode:  # streamed text is shown as it arrives
        assert f"Looking {shown} now." in proc.stderr
    # The read's summary (on one line: its whitespace, the carriage return too, is collapsed).
    assert (
        "[ok] README \\x1b[2J\\x1b[1;3r\\x1b]0;approved\\x07\\x1b]52;c;Y3VybA==\\x07\\x9b2J ok" in proc.stderr
    )
    assert proc.stdout == f"Answer {shown}\n"
