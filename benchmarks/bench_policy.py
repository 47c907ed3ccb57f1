"""What the permission layer costs per tool call: each tool bare and behind the layer (rules
judged on canonical paths, denied files left out of walks, secret scanner), side by side in one group;
and the scanner alone on a typical result and on adversarial text."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

import safefs
from agent.messages import ToolCall
from agent.policy.setup import prepare
from agent.secret_scanner import SecretScanner
from agent.tools import file_tools
from agent.tools.base import Tool
from benchmarks.previous_secret_scanner import SecretScanner as PreviousScanner

REPO = Path(__file__).resolve().parent.parent
# 16,000 characters of the project's own prose: a typical read result, with no secret in it.
PROSE = "\n".join(p.read_text() for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))])
ENTRIES = 500


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[safefs.Root]:
    base = tmp_path_factory.mktemp("policy") / "ws"
    (base / "src").mkdir(parents=True)
    for n in range(ENTRIES):
        (base / "src" / f"module_{n}.py").write_text(f"def f{n}():\n    return {n}\n")
    (base / "src" / ".env").write_text("TOKEN=x\n")
    (base / "notes.md").write_text(PROSE[:16000])
    with safefs.Root(base) as root:
        yield root


def _tools(root: safefs.Root, guarded: bool) -> dict[str, Tool]:
    tools = file_tools(root)
    if guarded:
        tools = prepare(tools, root, mode="edit", scanner=SecretScanner()).tools
    return {tool.name: tool for tool in tools}


CALLS = {
    "read": {"path": "notes.md"},
    "list": {"path": "src"},
    "grep": {"pattern": "return 4", "path": "src"},
}


@pytest.mark.parametrize("tool", list(CALLS))
@pytest.mark.parametrize("guarded", [False, True], ids=["bare", "policy"])
def test_tool_call(benchmark: BenchmarkFixture, workspace: safefs.Root, tool: str, guarded: bool) -> None:
    tools = _tools(workspace, guarded)
    policy = prepare(file_tools(workspace), workspace, mode="edit").policy if guarded else None
    call = ToolCall("b", tool, CALLS[tool])
    benchmark.group = f"{tool} call"

    def once() -> str:
        if policy is not None:
            assert policy(call).approved
        return tools[tool].execute(call.input).content

    out = benchmark(once)
    # The policy's walks leave the denied src/.env out, as git's ignore rules leave files out.
    assert (".env" in out) == (not guarded and tool == "list")


# Real source text: the project's own Python and Markdown, repeated to 10 MiB (no secret in it).
# The list of published keys is left out: its keys are in real keys' formats, which the previous
# scanner reports.
SOURCE = "\n".join(
    p.read_text()
    for p in sorted([*REPO.glob("agent/**/*.py"), *REPO.glob("safefs/**/*.py"), *REPO.glob("docs/*.md")])
    if p != REPO / "agent" / "published_keys.py"
)
TEXTS = {
    "read-16k": SOURCE[:16000],
    "source-10MiB": (SOURCE * (10 * 2**20 // len(SOURCE) + 1))[: 10 * 2**20],
    "base64-1MiB": base64.b64encode(os.urandom(786432)).decode(),
    "key-headers-640k": "-----BEGIN RSA PRIVATE KEY-----\n" * 20000,
    # Lines shaped as a key's body that are not one (too little entropy), as grep shows them: every
    # line a tool's prefix, a rejected candidate as long as the text.
    "key-lines-256k": "".join(f"id_rsa-{n}-{'A' * 64}\n" for n in range(3700))[: 1 << 18],
    # Assignments to secret names whose values are code, not secrets: every line a candidate
    # the checks reject.
    "assignments-1MiB": "".join(
        f"    api_token{n} = settings.get_token(name_{n})\n    password: str = self.password_{n}\n"
        for n in range(12000)
    )[: 1 << 20],
}
SCANNERS = {"previous": PreviousScanner, "re2": SecretScanner}


@pytest.mark.parametrize("scanner", list(SCANNERS))
@pytest.mark.parametrize("kind", list(TEXTS))
def test_scanner(benchmark: BenchmarkFixture, kind: str, scanner: str) -> None:
    """The scanner alone, the previous one (a ``re`` regex per pattern behind substring hints)
    and the current one (the patterns in two RE2 passes) side by side on the same text; MiB/s in
    extra_info."""
    text = TEXTS[kind]
    if benchmark.disabled:  # run once as a test (--benchmark-disable): a MiB is enough to check it
        text = text[: 1 << 20]
    benchmark.group = f"secret scanner: {kind}"
    result = benchmark(SCANNERS[scanner]().redact, text)
    if benchmark.stats is not None:  # None with --benchmark-disable
        median = benchmark.stats.stats.median
        benchmark.extra_info["MiB/s"] = round(len(text.encode()) / 2**20 / median, 1)
    assert result.count == 0  # no secret in any of them; headers without a key body are not keys
