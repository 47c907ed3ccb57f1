"""The documentation against the tree: every relative link leads to a file (and heading) that
exists, the MCP tool table names exactly the server's tools, and every client snippet starts
``safefs-mcp`` with arguments its command line accepts."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from safefs.mcp.cli import parser
from safefs.mcp.http_transport import TOKEN_VARIABLE
from safefs.mcp.tools import DELETE_TOOL, all_tools

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted(REPO.glob("*.md")), *sorted((REPO / "docs").glob("*.md"))]
DOCS = list(dict.fromkeys(DOCS))
MCP_DOC = REPO / "docs" / "mcp.md"

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _prose(text: str) -> str:
    """The text without its code blocks, where brackets and parentheses are not links."""
    return FENCE.sub("", text)


def _anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} (.+)$", _prose(path.read_text()), re.M)
    return {_anchor(h) for h in headings}


def _relative_links(path: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(_prose(path.read_text()))
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target)
    ]  # http:, https:, mailto: ...


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_leads_somewhere(doc: Path) -> None:
    broken = []
    for target in _relative_links(doc):
        file_part, _, fragment = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(REPO)}")
        elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.relative_to(REPO)}")
    assert broken == []


def test_the_docs_link_test_sees_links() -> None:
    # A link pattern that matched nothing would pass every file above.
    assert "docs/threat-model.md" in _relative_links(REPO / "README.md")
    assert _anchor("The bash sandbox (`safefs.sandbox`)") == "the-bash-sandbox-safefssandbox"


def test_every_doc_is_reachable_from_the_readme() -> None:
    linked = {(REPO / t.partition("#")[0]).resolve() for t in _relative_links(REPO / "README.md")}
    assert [str(d.relative_to(REPO)) for d in DOCS if d not in linked | {REPO / "README.md"}] == []


def _tool_table_names() -> list[str]:
    section = MCP_DOC.read_text().split("## Tool by tool", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[1])]


def test_the_mcp_tool_table_names_every_tool_once() -> None:
    served = sorted(t.name for t in [*all_tools(), DELETE_TOOL])
    assert sorted(_tool_table_names()) == served


def _blocks(path: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(path.read_text()) if lang == language]


def _accepted(command: str, args: list[str]) -> None:
    assert PurePosixPath(command).name == "safefs-mcp", command
    try:
        parsed = parser().parse_args(args)
    except SystemExit:
        pytest.fail(f"safefs-mcp refuses the arguments {args}")
    assert all(PurePosixPath(d).is_absolute() for d in parsed.dirs), args  # clients need them


def _served_urls(path: Path) -> set[str]:
    """The URLs of the ``safefs-mcp --http HOST:PORT`` commands the page runs."""
    return {f"http://{m}/mcp" for m in re.findall(r"safefs-mcp --http (\S+)", path.read_text())}


def _check_http(url: str, token_variable: str, urls: set[str]) -> None:
    assert url in urls, f"{url} is served by no --http command on the page"
    assert token_variable == TOKEN_VARIABLE


def _check_servers(servers: dict[str, Any], urls: set[str]) -> int:
    for entry in servers.values():
        if "command" in entry:
            _accepted(entry["command"], entry.get("args", []))
        elif "httpUrl" in entry:  # Gemini CLI: the header names the variable it expands
            header = entry["headers"]["Authorization"]
            _check_http(entry["httpUrl"], header.removeprefix("Bearer $"), urls)
        else:  # Codex: the token comes from the variable it names
            _check_http(entry["url"], entry["bearer_token_env_var"], urls)
    return len(servers)


def test_every_client_snippet_starts_safefs_mcp_as_it_accepts() -> None:
    urls = _served_urls(MCP_DOC)
    checked = 0
    for body in _blocks(MCP_DOC, "json"):
        checked += _check_servers(json.loads(body)["mcpServers"], urls)
    for body in _blocks(MCP_DOC, "toml"):
        checked += _check_servers(tomllib.loads(body)["mcp_servers"], urls)
    for doc in (MCP_DOC, REPO / "README.md"):
        for body in _blocks(doc, "sh"):
            for line in body.splitlines():
                words = shlex.split(line, comments=True)
                if words[:3] == ["claude", "mcp", "add"] and "--" in words:
                    rest = words[words.index("--") + 1 :]
                    _accepted(rest[0], rest[1:])
                elif words[:3] == ["claude", "mcp", "add"]:
                    url = next(w for w in words if w.startswith("http://"))
                    header = words[words.index("--header") + 1]
                    _check_http(url, header.removeprefix("Authorization: Bearer $"), urls)
                elif words[:2] == ["npx", "@modelcontextprotocol/inspector"]:
                    _accepted(words[2], words[3:])
                else:
                    continue
                checked += 1
    # Claude Code (2 and the README's), Claude Desktop, Codex (2), Gemini CLI (2), MCP Inspector
    # (this page's and the README's).
    assert checked == 10


# -- the tree, the commands and the make targets the docs name ---------------------------------

ARCHITECTURE = REPO / "docs" / "architecture.md"


def _first_table_names(path: Path) -> set[str]:
    """Every backticked name in the first column of the first table of ``path``."""
    rows = [line for line in path.read_text().splitlines() if line.startswith("| ")]
    names: set[str] = set()
    for row in rows:
        names.update(re.findall(r"`([^`]+)`", row.split("|")[1]))
    return names


def _top_level_folders() -> set[str]:
    try:
        listed = subprocess.run(
            ["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True, check=True, timeout=60
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout: the tracked folders are unknown")
    return {line.split("/")[0] for line in listed if "/" in line}


def test_the_architecture_table_names_every_subpackage_and_top_level_folder() -> None:
    named = _first_table_names(ARCHITECTURE)
    subpackages = {
        f"safefs/{p.parent.name}/" for p in (REPO / "safefs").glob("*/*.py") if p.parent.name != "__pycache__"
    }
    assert subpackages >= {"safefs/anthropic/", "safefs/mcp/"}, subpackages
    assert subpackages <= named, sorted(subpackages - named)
    folders = {f"{name}/" for name in _top_level_folders()}
    assert {"safefs/", "agent/", "tests/"} <= folders
    assert folders <= named, sorted(folders - named)
    # build_ext.py lies at the top level, beside pyproject.toml, and the table says so.
    assert (REPO / "build_ext.py").exists() and "build_ext.py" in named


def readme_commands() -> list[list[str]]:
    """Each command of the README's command table, up to its first argument."""
    commands = []
    for line in (REPO / "README.md").read_text().splitlines():
        cell = re.match(r"\| `(safefs-[\w-]+[^`]*)` \|", line)
        if cell:
            words = []
            for word in cell.group(1).split():
                if not re.fullmatch(r"[a-z][\w-]*", word):
                    break
                words.append(word)
            commands.append(words)
    return commands


@pytest.mark.parametrize("command", readme_commands(), ids=" ".join)
def test_every_readme_command_starts(command: list[str]) -> None:
    script = Path(sys.executable).with_name(command[0])
    if not script.exists():
        pytest.skip(f"{command[0]} is not installed beside {sys.executable}")
    done = subprocess.run(
        [str(script), *command[1:], "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower(), done.stdout


def test_the_readme_has_every_command_of_each_distribution() -> None:
    named = {words[0] for words in readme_commands()}
    declared: set[str] = set()
    for project in ("", "agent", "safefs_bench"):
        with open(REPO / project / "pyproject.toml", "rb") as f:
            declared |= set(tomllib.load(f)["project"].get("scripts", {}))
    assert named == declared


def test_the_readme_says_what_each_make_target_is_for() -> None:
    phony = re.search(r"^\.PHONY:(.*)$", (REPO / "Makefile").read_text(), re.M)
    assert phony is not None
    targets = set(phony.group(1).split())
    described = set(re.findall(r"^\| `make ([\w-]+)` \|", (REPO / "README.md").read_text(), re.M))
    assert targets == described, (sorted(targets - described), sorted(described - targets))


def test_the_contributing_test_table_names_every_test_directory() -> None:
    text = (REPO / "CONTRIBUTING.md").read_text()
    described = set(re.findall(r"^\| `(tests/[\w]+)` \|", text, re.M))
    present = {f"tests/{p.parent.name}" for p in (REPO / "tests").glob("*/__init__.py")}
    assert present == described, (sorted(present - described), sorted(described - present))
