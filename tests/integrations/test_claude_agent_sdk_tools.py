"""The safefs tools through the SDK's own in-process MCP server object (``safefs_mcp_server``'s
``instance``, connected with mcp's in-process client): what a call that the binary would relay
gets back, without the binary. Bounds and refusals: arguments Claude Code's tools do not take,
a read past the result budget, a command past its timeout, escapes, and messages that name no
host path."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")
pytest.importorskip("mcp")

import sys

import mcp

import safefs
from safefs.integrations.claude_agent_sdk import BASH_ENV, TOOL_NAMES, safefs_mcp_server, safefs_options
from safefs.workspace.limits import MAX_RESULT_CHARS
from tests.integrations.support import twin

Client: Any = getattr(mcp, "Client", None)
pytestmark = pytest.mark.skipif(Client is None, reason="mcp's in-process Client (mcp 2) is not installed")


def _calls(root: safefs.Root, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, bool]]:
    """(text, is_error) of each call through the server, in order."""
    server = safefs_mcp_server(root)["instance"]

    async def go() -> list[tuple[str, bool]]:
        out = []
        async with Client(server) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == list(TOOL_NAMES)
            for name, args in calls:
                result = await client.call_tool(name, args)
                out.append(("".join(getattr(b, "text", "") for b in result.content), bool(result.is_error)))
        return out

    return asyncio.run(asyncio.wait_for(go(), 120))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = twin(tmp_path, "tools")
    (work / "a.txt").write_text("alpha\nbeta\n")
    (work / "up").symlink_to("..")
    return work


def test_calls_answer_as_claude_codes_tools_and_refuse_what_leads_out(work: Path) -> None:
    host = str(work.parent)
    (work / "big.txt").write_text("x" * 99 + "\n" * 1 + ("y" * 99 + "\n") * (MAX_RESULT_CHARS // 50))
    with safefs.Root(work) as root:
        got = _calls(
            root,
            [
                ("Read", {"file_path": "a.txt"}),
                ("Read", {"file_path": "a.txt", "pages": "1-2"}),  # not offered: validation error
                ("Read", {"file_path": "big.txt"}),
                ("Read", {"file_path": "big.txt", "offset": 2, "limit": 1}),
                ("Read", {"file_path": "up/secret.txt"}),
                ("Read", {"file_path": "nope.txt"}),
                ("Read", {"file_path": "."}),
                ("Write", {"file_path": "up/planted.txt", "content": "x"}),
                ("Edit", {"file_path": "a.txt", "old_string": "", "new_string": "x"}),
                ("Grep", {"pattern": "(", "output_mode": "content"}),
                ("Glob", {"pattern": "**/*", "path": "up"}),
            ],
        )
    for text, _ in got:
        assert host not in text, text
        assert "outside the workdir" not in text
    read, pages, big, page, link, missing, directory, planted, fill, bad_regex, glob_out = got
    assert read == ("1\talpha\n2\tbeta\n3", False)
    assert pages[1] and "pages" in pages[0]
    assert big[1] and "offset and limit" in big[0]
    assert page == ("2\t" + "y" * 99, False)
    assert link == ("path escapes workspace: 'up/secret.txt'", True)
    assert missing == ("File does not exist.", True)
    assert directory[1] and "EISDIR" in directory[0]
    assert planted == ("path escapes workspace: 'up/planted.txt'", True)
    assert fill == ("<tool_use_error>Cannot create new file - file already exists.</tool_use_error>", True)
    assert bad_regex[1]
    assert glob_out == ("path escapes workspace: 'up'", True)
    assert not (work.parent / "planted.txt").exists()
    assert (work / "a.txt").read_text() == "alpha\nbeta\n"


def test_an_emptied_line_goes_and_one_file_is_grepped_without_its_name(work: Path) -> None:
    """As the binary's (seen through it by the property test): an Edit with an empty new_string
    removes the newline after the text too, each such occurrence with replace_all; a Grep of
    one file shows its lines as rg shows them, without the file's name."""
    (work / "b.txt").write_text("Gamma x\nGamma\nbeta\n")
    with safefs.Root(work) as root:
        one, twice, every, grep = _calls(
            root,
            [
                ("Edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": ""}),
                ("Edit", {"file_path": "b.txt", "old_string": "Gamma", "new_string": ""}),
                (
                    "Edit",
                    {"file_path": "b.txt", "old_string": "Gamma", "new_string": "", "replace_all": True},
                ),
                ("Grep", {"pattern": "beta", "path": "b.txt", "output_mode": "content"}),
            ],
        )
    assert one == ("The file a.txt has been updated successfully.", False)
    assert (work / "a.txt").read_text() == "beta\n"
    assert twice[1] and "Found 2 matches" in twice[0]
    assert not every[1] and (work / "b.txt").read_text() == "Gamma x\nbeta\n"
    assert grep == ("2:beta", False)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel sandbox is Linux's")
def test_bash_runs_in_the_sandbox_with_its_own_environment_and_a_deadline(work: Path) -> None:
    with safefs.Root(work) as root:
        got = _calls(
            root,
            [
                ("Bash", {"command": "env; cat a.txt"}),
                ("Bash", {"command": "cat ../secret.txt; echo x > ../planted.txt"}),
                ("Bash", {"command": "sleep 30", "timeout": 300}),
                ("Bash", {"command": "echo out; echo err >&2; exit 3"}),
            ],
        )
    (env_and_cat, env_error), out, slow, failed = got
    assert not env_error
    assert set(BASH_ENV.items()) <= {
        tuple(line.split("=", 1)) for line in env_and_cat.split("\n") if "=" in line
    }
    assert "ANTHROPIC" not in env_and_cat and env_and_cat.endswith("alpha\nbeta")
    assert out[1] and "outside the workdir" not in out[0]
    assert not (work.parent / "planted.txt").exists()
    assert slow == ("Command timed out after 300ms", True)
    assert failed == ("Exit code 3\nout\nerr", True)


def test_the_options_keep_what_is_given_and_refuse_the_built_in_tools(work: Path) -> None:
    with safefs.Root(work) as root:
        options = safefs_options(root, tools=["WebSearch"], allowed_tools=["WebSearch"], max_turns=3)
        assert options.tools == ["WebSearch"] and options.max_turns == 3
        assert options.allowed_tools[0] == "WebSearch" and "mcp__safefs__Read" in options.allowed_tools
        assert "Read" in options.disallowed_tools and "Bash" in options.disallowed_tools
        with pytest.raises(ValueError, match="built-in tools other than"):
            safefs_options(root, tools=["Read"])
        with pytest.raises(ValueError, match="without the server name"):
            safefs_options(root, mcp_servers={"safefs": {}})
        assert "mcp__safefs__Bash" not in safefs_options(root, bash=False).allowed_tools
