"""Secrets as each tool shows them: grep's ``path:N:`` and ``path-N-`` lines (the grep tool's and
GNU grep's under bash), read's numbered lines, the text editor's view, and keys written in forms a
person or a program keeps them in (string literals joined with ``+`` or ``\\n``, ``echo`` lines,
quoted Markdown). Each form of a key is found as gitleaks' private-key rule finds it: its BEGIN and
END lines with anything between."""

from __future__ import annotations

import random
import shutil
import string
import subprocess
from pathlib import Path

import pytest

from agent.policy.guard import guard_tools
from agent.secret_scanner import SecretScanner
from agent.tools import GrepTool, ReadTool
from agent.tools.anthropic_defined import TextEditorTool
from tests.agent.conftest import AgentWorkspace

_rng = random.Random(34)
B64 = string.ascii_letters + string.digits + "+/"
PRIV = "PRIVATE KEY"


def key_block(label: str = f"RSA {PRIV}", lines: int = 26) -> tuple[str, list[str]]:
    """A PEM block shaped as a 2048-bit RSA key (26 full lines and a short one), and its body lines."""
    body = ["".join(_rng.choice(B64) for _ in range(64)) for _ in range(lines)]
    body.append("".join(_rng.choice(B64) for _ in range(36)) + "==")
    return "\n".join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----"]) + "\n", body


def leaked(shown: str, body: list[str]) -> list[str]:
    """The body lines (their first 24 characters, enough to be a piece of the key) still visible."""
    return [line for line in body if line[:24] in shown]


def test_a_key_is_redacted_in_the_grep_tools_content_and_context_lines(ws: AgentWorkspace) -> None:
    """Three grep calls that together show every line of a key: a match with context after it, a
    match with context before, and every line as a match; no body line reaches the model."""
    key, body = key_block()
    (ws.path / "deploy_key.pem").write_text(key)
    tool = guard_tools([GrepTool(ws.root)], scanner=SecretScanner())[0]
    calls = [
        {"pattern": "BEGIN", "output_mode": "content", "-A": 14},
        {"pattern": "END", "output_mode": "content", "-B": 15},
        {"pattern": "[A-Za-z]", "output_mode": "content"},
        {"pattern": body[12][:10], "output_mode": "content", "literal": True, "-C": 6},
    ]
    for args in calls:
        shown = tool.execute(args).content
        assert "deploy_key.pem" in shown
        assert not leaked(shown, body), (args, shown)
        assert "[REDACTED:private-key]" in shown


@pytest.mark.skipif(shutil.which("grep") is None, reason="no grep")
@pytest.mark.parametrize(
    "flags", [["-rn", "-A", "30", "BEGIN"], ["-rn", "-B", "30", "END"], ["-rn", "-C", "3", "+"], ["-rn", "."]]
)
def test_a_key_is_redacted_in_gnu_greps_output(tmp_path: Path, flags: list[str]) -> None:
    """GNU grep as bash runs it over several files: ``path:N:`` match lines, ``path-N-`` context
    lines and ``--`` between groups."""
    key, body = key_block()
    (tmp_path / "my_keys").mkdir()
    (tmp_path / "my_keys" / "id_rsa").write_text(key)
    (tmp_path / "notes.txt").write_text("BEGIN here\nnothing + END\n")
    shown = subprocess.run(
        ["grep", *flags, "."], cwd=tmp_path, capture_output=True, text=True, check=False
    ).stdout
    assert "my_keys/id_rsa" in shown
    assert len(leaked(shown, body)) >= 3 or flags[-1] == "+"  # the form is what grep shows
    redacted = SecretScanner().redact(shown).text
    assert not leaked(redacted, body), redacted
    assert "notes.txt" in redacted


def _python(key: str) -> str:
    lines = key.splitlines()
    return "KEY = (\n" + "".join(f'    "{line}\\n"\n' for line in lines) + ")\n"


def _java(key: str) -> str:
    lines = key.splitlines()
    return (
        "    private static final String KEY =\n"
        + " +\n".join(f'        "{line}\\n"' for line in lines)
        + ";\n"
    )


def _c(key: str) -> str:
    return "static const char key[] =\n" + "".join(f'\t"{line}\\n"\n' for line in key.splitlines()) + "\t;\n"


def _echo(key: str) -> str:
    lines = key.splitlines()
    return f"echo '{lines[0]}' > key.pem\n" + "".join(f"echo '{line}' >> key.pem\n" for line in lines[1:])


def _markdown(key: str) -> str:
    return "The key:\n\n" + "".join(f"> {line}\n" for line in key.splitlines()) + "\nKeep it safe.\n"


FORMS = {"python": _python, "java": _java, "c": _c, "echo": _echo, "markdown": _markdown}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_key_in_string_echo_or_quoted_lines_is_found(form: str) -> None:
    key, body = key_block()
    text = FORMS[form](key)
    assert len(leaked(text, body)) == len(body)
    redaction = SecretScanner().redact(text)
    assert not leaked(redaction.text, body), redaction.text
    assert redaction.kinds() == ["private-key"]


@pytest.mark.parametrize("form", list(FORMS))
def test_a_key_in_string_echo_or_quoted_lines_is_found_as_read_and_grep_show_it(
    form: str, ws: AgentWorkspace
) -> None:
    key, body = key_block()
    (ws.path / "keys.txt").write_text(FORMS[form](key))
    read, grep = guard_tools([ReadTool(ws.root), GrepTool(ws.root)], scanner=SecretScanner())
    for tool, args in [
        (read, {"path": "keys.txt"}),
        (read, {"path": "keys.txt", "offset": 6, "limit": 12}),
        (grep, {"pattern": "[A-Za-z0-9]{20}", "output_mode": "content"}),
    ]:
        shown = tool.execute(args).content
        assert not leaked(shown, body), (form, args, shown)


@pytest.mark.parametrize("lines", [[], [4]])
def test_the_same_text_without_a_key_is_left_alone(lines: list[int]) -> None:
    """Code that handles PEM markers and short base64 strings between them is not a key."""
    text = (
        f'if line == "-----BEGIN RSA {PRIV}-----":\n'
        "    inside = True\n"
        '    digest = "q3lE9mC0u1ZxPlq2oA7JbvXn"\n'
        "    count = count + 1\n"
        f'elif line == "-----END RSA {PRIV}-----":\n'
        "    inside = False\n"
    )
    shown = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(text.splitlines(), 1)) if lines else text
    assert SecretScanner().find(shown) == []


def test_an_xml_element_value_is_redacted_as_read_and_the_editor_show_it(ws: AgentWorkspace) -> None:
    """``<apiToken>`` with its value on a line of its own, as read (``     N\\t``), the text
    editor's view (``N: ``) and grep with context show it."""
    value = "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(32))
    (ws.path / "settings.xml").write_text(
        f"<settings>\n  <server>\n    <apiToken>\n      {value}\n    </apiToken>\n  </server>\n</settings>\n"
    )
    assert value not in SecretScanner().redact((ws.path / "settings.xml").read_text()).text
    read, grep, editor = guard_tools(
        [ReadTool(ws.root), GrepTool(ws.root), TextEditorTool(ws.root)], scanner=SecretScanner()
    )
    for tool, args in [
        (read, {"path": "settings.xml"}),
        (editor, {"command": "view", "path": "settings.xml"}),
        (grep, {"pattern": "apiToken", "output_mode": "content", "-A": 2}),
    ]:
        shown = tool.execute(args).content
        assert value[:12] not in shown, (args, shown)
        assert "[REDACTED:secret-assignment]" in shown


@pytest.mark.skipif(shutil.which("grep") is None, reason="no grep")
@pytest.mark.parametrize("label", ["PGP PUBLIC KEY BLOCK", "CERTIFICATE", "PUBLIC KEY"])
def test_a_public_block_is_left_alone_as_grep_shows_it(tmp_path: Path, label: str) -> None:
    """A certificate or public key as grep shows it with context (``path-28------END ...``) is
    not taken for a key body."""
    block, _body = key_block(label)
    if label.startswith("PGP"):
        block = block.replace("-----\n", "-----\nVersion: GnuPG v2\nComment: https://gnupg.org\n\n", 1)
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "release-2.asc").write_text(block)
    for flags in (["-rn", "-A", "40", "BEGIN"], ["-rn", "-B", "40", "END"], ["-rn", "."]):
        shown = subprocess.run(
            ["grep", *flags, "."], cwd=tmp_path, capture_output=True, text=True, check=False
        ).stdout
        assert "keys/release-2.asc" in shown
        assert SecretScanner().find(shown) == [], (flags, shown)


def test_a_token_in_a_file_name_is_redacted_in_greps_list_of_files(ws: AgentWorkspace) -> None:
    """``files_with_matches`` (grep ``-l``): one path a line, a token in a name redacted."""
    token = "ghp_" + "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    (ws.path / "backup").mkdir()
    (ws.path / "backup" / f"{token}.txt").write_text("needle\n")
    (ws.path / "notes.txt").write_text("needle\n")
    tool = guard_tools([GrepTool(ws.root)], scanner=SecretScanner())[0]
    shown = tool.execute({"pattern": "needle"}).content
    assert token not in shown and "notes.txt" in shown
    assert "backup/[REDACTED:github-token].txt" in shown
