"""The README's client snippets: each is parsed and starts safefs-mcp with arguments it accepts.
Then the real clients from npm: Gemini CLI reads its snippet as its configuration and connects
(``gemini mcp list`` does the MCP handshake); MCP Inspector (0.15, and 2.12 on Node 22, which
sends an empty roots list) runs its line in CLI mode and calls a tool; Codex reads its snippet (it
refuses an unknown approval mode, so the approval line is checked), and, since it connects to a
server only inside a model session, runs one with ``codex exec`` against a loopback model
(``fake_model.py`` on 127.0.0.1) that is offered the safefs tools, calls one and gets its result.
Claude Code's line is run by test_claude_code.py. Claude Desktop has no Linux build, so for it
the parse is the check."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from safefs.mcp.cli import parser
from safefs.mcp.tools import tools_for
from tests.mcp.fake_model import FakeModel, function_call, message
from tests.mcp.node_clients import (
    CODEX,
    GEMINI_CLI,
    INSPECTOR,
    INSPECTOR_2,
    NODE_22,
    NODE_22_PREFIX,
    client_env,
    npm_binary,
)

pytestmark = pytest.mark.slow  # real MCP clients, installed from npm on first use

README = Path(__file__).resolve().parents[2] / "README.md"
PLACEHOLDER_COMMAND = "/abs/path/.venv/bin/safefs-mcp"
PLACEHOLDER_DIR = "/abs/path/project"
CLIENTS = ("Claude Code", "Claude Desktop", "Codex", "Gemini CLI", "MCP Inspector")


def snippets() -> dict[str, tuple[str, str]]:
    """The MCP section's fenced blocks by the client the paragraph before names:
    {client: (language, body)}."""
    section = README.read_text().split("## Use it from your agent", 1)[1].split("\n## ", 1)[0]
    found: dict[str, tuple[str, str]] = {}
    lead = ""
    for part in section.split("\n\n"):
        fenced = re.fullmatch(r"```(\w+)\n(.*?)```\n?", part, re.DOTALL)
        if fenced is None:
            lead = part.strip()
            continue
        for client in CLIENTS:
            if lead.startswith(client):
                found[client] = (fenced[1], fenced[2])
    return found


def _accepted(command: str, args: list[str]) -> None:
    assert command == PLACEHOLDER_COMMAND, command
    parsed = parser().parse_args(args)
    assert parsed.dirs == [PLACEHOLDER_DIR]


def _server(config: dict[str, Any]) -> dict[str, Any]:
    servers = config.get("mcpServers") or config["mcp_servers"]
    assert list(servers) == ["safefs"]
    return dict(servers["safefs"])


def test_every_client_has_a_snippet_that_starts_safefs_mcp() -> None:
    found = snippets()
    assert sorted(found) == sorted(CLIENTS)
    claude = shlex.split(found["Claude Code"][1])
    _accepted(claude[claude.index("--") + 1], claude[claude.index("--") + 2 :])
    for client in ("Claude Desktop", "Gemini CLI"):
        language, body = found[client]
        entry = _server(json.loads(body))
        assert language == "json"
        _accepted(entry["command"], entry["args"])
    codex = _server(tomllib.loads(found["Codex"][1]))
    _accepted(codex["command"], codex["args"])
    assert codex["default_tools_approval_mode"] == "approve"
    inspector = shlex.split(found["MCP Inspector"][1])
    assert inspector[:2] == ["npx", "@modelcontextprotocol/inspector"]
    _accepted(inspector[2], inspector[3:])


def _real(body: str, project: Path) -> str:
    script = Path(sys.executable).with_name("safefs-mcp")
    return body.replace(PLACEHOLDER_COMMAND, str(script)).replace(PLACEHOLDER_DIR, str(project))


def _client_env(home: Path) -> dict[str, str]:
    return client_env(home, "GEMINI_", "GOOGLE_", "OPENAI_", "CODEX_")


def test_gemini_cli_connects_with_the_readme_snippet(tmp_path: Path, project: Path) -> None:
    gemini = npm_binary(*GEMINI_CLI)
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(_real(snippets()["Gemini CLI"][1], project))
    # A folder must be trusted before Gemini CLI starts its servers in it.
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    done = subprocess.run(
        [str(gemini), "mcp", "list"],
        cwd=project,
        env=_client_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    listed = done.stdout + done.stderr
    line = next((x for x in listed.splitlines() if "safefs:" in x), "")
    assert "Connected" in line, listed


def test_codex_reads_the_readme_snippet(tmp_path: Path, project: Path) -> None:
    codex = npm_binary(*CODEX)
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(_real(snippets()["Codex"][1], project))
    done = subprocess.run(
        [str(codex), "mcp", "get", "safefs", "--json"],
        cwd=project,
        env=_client_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Codex refuses a configuration with an unknown approval mode, so success means it took it.
    assert done.returncode == 0, done.stderr
    transport = json.loads(done.stdout)["transport"]
    assert transport["command"] == str(Path(sys.executable).with_name("safefs-mcp"))
    assert transport["args"] == [str(project)]


def _run_bounded(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of a command in a session of its own, which is killed whole
    (the client and the servers it started) if it outlives ``timeout`` or the test fails."""
    process = subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
        return process.returncode, out, err
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate(timeout=10)


def test_codex_calls_safefs_in_a_model_session(tmp_path: Path, project: Path) -> None:
    """``codex exec`` with the README's snippet as its configuration, its model a fake one on
    127.0.0.1: the model sees the safefs tools, calls read_text_file and gets the file back, then
    write_file, which the snippet's approval line lets run without anyone to ask."""
    codex = npm_binary(*CODEX)
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(_real(snippets()["Codex"][1], project))
    served = {tool.name for tool in tools_for(read_only=False, allow_delete=False)}

    def call_read(request: dict[str, Any]) -> dict[str, Any]:
        namespaces = {t["name"]: t for t in request["tools"] if t.get("type") == "namespace"}
        assert "mcp__safefs" in namespaces, [t.get("name") for t in request["tools"]]
        assert {t["name"] for t in namespaces["mcp__safefs"]["tools"]} == served
        return function_call("read-a", "mcp__safefs", "read_text_file", {"path": "a.txt"})

    def call_write(request: dict[str, Any]) -> dict[str, Any]:
        outputs = [i for i in request["input"] if i.get("type") == "function_call_output"]
        assert [o["call_id"] for o in outputs] == ["read-a"], outputs
        assert "hello" in json.dumps(outputs[0]["output"]), outputs
        return function_call(
            "write-b", "mcp__safefs", "write_file", {"path": "b.txt", "content": "from codex\n"}
        )

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        outputs = [i for i in request["input"] if i.get("type") == "function_call_output"]
        assert [o["call_id"] for o in outputs] == ["read-a", "write-b"], outputs
        assert "Successfully wrote to b.txt" in json.dumps(outputs[1]["output"]), outputs
        return message("a.txt says hello; b.txt written")

    with FakeModel([call_read, call_write, answer]) as model:
        provider = {
            "name": "fake",
            "base_url": model.base_url,
            "env_key": "SAFEFS_TEST_MODEL_KEY",
            "wire_api": "responses",
            "request_max_retries": 0,
            "stream_max_retries": 0,
        }
        inline = ", ".join(f"{k} = {json.dumps(v)}" for k, v in provider.items())
        env = {**_client_env(home), "CODEX_HOME": str(home / ".codex"), "SAFEFS_TEST_MODEL_KEY": "dummy"}
        status, out, err = _run_bounded(
            [
                str(codex),
                "exec",
                "--json",
                "--strict-config",  # a key of the snippet's that Codex does not know fails the run
                "--ephemeral",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                # Codex's own traffic (the plugin list from github.com, analytics to chatgpt.com)
                # off: the model on 127.0.0.1 is the only address it is given.
                "--disable",
                "plugins",
                "-c",
                "analytics.enabled=false",
                "--model",
                "fake-model",
                "-c",
                'model_provider="fake"',
                "-c",
                f"model_providers.fake={{{inline}}}",
                "Read a.txt with the safefs tools.",
            ],
            cwd=project,
            env=env,
            timeout=120,
        )
    model.check()
    assert status == 0, out + err
    assert len(model.requests) == 3, out + err
    items = [json.loads(line).get("item", {}) for line in out.splitlines() if line.startswith("{")]
    calls = [i for i in items if i.get("type") == "mcp_tool_call" and i.get("status") == "completed"]
    assert [(c["server"], c["tool"]) for c in calls] == [
        ("safefs", "read_text_file"),
        ("safefs", "write_file"),
    ], out
    assert calls[0]["result"]["content"] == [{"type": "text", "text": "hello\n"}]
    assert (project / "b.txt").read_text() == "from codex\n"


def _inspect(inspector: Path, project: Path, *call: str, env: dict[str, str] | None = None) -> Any:
    """The README's Inspector line in CLI mode (the same server command, driven from the command
    line instead of a browser), making one call: its JSON answer."""
    words = shlex.split(_real(snippets()["MCP Inspector"][1], project))
    assert words[:2] == ["npx", "@modelcontextprotocol/inspector"]
    done = subprocess.run(
        [str(inspector), "--cli", *words[2:], "--method", "tools/call", *call],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_mcp_inspector_runs_the_readme_line(project: Path) -> None:
    inspector = npm_binary(*INSPECTOR)
    answer = _inspect(inspector, project, "--tool-name", "read_text_file", "--tool-arg", "path=a.txt")
    assert answer["content"] == [{"type": "text", "text": "hello\n"}]


def test_the_current_inspector_sends_no_roots_and_the_directory_stays(project: Path) -> None:
    """Inspector 2 advertises roots and answers an empty list: the DIR is served all the same, and
    list_allowed_directories says why."""
    node = npm_binary(*NODE_22, prefix=NODE_22_PREFIX)
    inspector = npm_binary(*INSPECTOR_2, prefix=NODE_22_PREFIX)
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    read = _inspect(inspector, project, "--tool-name", "read_text_file", "--tool-arg", "path=a.txt", env=env)
    assert read["content"] == [{"type": "text", "text": "hello\n"}]
    listed = _inspect(inspector, project, "--tool-name", "list_allowed_directories", env=env)
    text = listed["content"][0]["text"]
    assert text.startswith(f"Allowed directories:\n{project}\n"), text
    assert "Note: the client's roots list is empty" in text
