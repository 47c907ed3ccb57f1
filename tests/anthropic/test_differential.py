"""The same inputs to the SDK's implementation and to safefs's, on twin trees: the results are
equal, except for the differences docs/anthropic.md lists (each one checked here as it is)."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools import agent_toolset as sdk_toolset
from anthropic.tools import BetaAsyncLocalFilesystemMemoryTool as SdkAsyncMemory
from anthropic.tools import BetaLocalFilesystemMemoryTool as SdkMemory

from safefs.anthropic import BetaAsyncLocalFilesystemMemoryTool, BetaLocalFilesystemMemoryTool, sdk
from safefs.anthropic import agent_toolset as our_toolset
from tests.anthropic.sandboxed import sandbox_refusal

MEMORY_COMMANDS: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/notes/todo.txt", "file_text": "one\r\ntwo\nthree\n"},
    {"command": "create", "path": "/memories/notes/todo.txt", "file_text": "again"},
    {"command": "create", "path": "/memories/.hidden", "file_text": "not listed"},
    {"command": "create", "path": "/memories/deep/a/b/c.txt", "file_text": "three levels down"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/notes/todo.txt"},
    {"command": "view", "path": "/memories/notes/todo.txt", "view_range": [2, -1]},
    {"command": "view", "path": "/memories/notes/todo.txt", "view_range": [1, 2]},
    {"command": "view", "path": "/memories/missing.txt"},
    {"command": "str_replace", "path": "/memories/notes/todo.txt", "old_str": "two", "new_str": "2"},
    {"command": "str_replace", "path": "/memories/notes/todo.txt", "old_str": "e", "new_str": "E"},
    {"command": "str_replace", "path": "/memories/notes/todo.txt", "old_str": "absent", "new_str": "x"},
    {"command": "str_replace", "path": "/memories/notes", "old_str": "a", "new_str": "b"},
    {"command": "str_replace", "path": "/memories/nope.txt", "old_str": "a", "new_str": "b"},
    {"command": "insert", "path": "/memories/notes/todo.txt", "insert_line": 1, "insert_text": "inserted\n"},
    {"command": "insert", "path": "/memories/notes/todo.txt", "insert_line": 0, "insert_text": "first"},
    {"command": "insert", "path": "/memories/notes/todo.txt", "insert_line": 99, "insert_text": "x"},
    {"command": "view", "path": "/memories/notes/todo.txt"},
    {"command": "view", "path": "/elsewhere/file"},
    {"command": "view", "path": "/memories/../outside"},
    {"command": "create", "path": "/memories/../../escape.txt", "file_text": "x"},
    {"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/archive/notes"},
    {"command": "rename", "old_path": "/memories/deep", "new_path": "/memories/archive"},
    {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
    {"command": "rename", "old_path": "/memories/gone", "new_path": "/memories/new"},
    {"command": "view", "path": "/memories"},
    {"command": "delete", "path": "/memories"},
    {"command": "delete", "path": "/memories/archive/notes/todo.txt"},
    {"command": "delete", "path": "/memories/deep"},
    {"command": "delete", "path": "/memories/gone"},
    {"command": "view", "path": "/memories"},
]


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except ToolError as exc:
        return ("error", str(exc))


def test_memory_tool_matches_the_sdk_command_by_command(tmp_path: Path) -> None:
    sdk = SdkMemory(str(tmp_path / "sdk"))
    ours = BetaLocalFilesystemMemoryTool(str(tmp_path / "ours"))
    compared = 0
    for command in MEMORY_COMMANDS:
        expected = outcome(partial(sdk.call, command))
        got = outcome(partial(ours.call, command))
        assert got == expected, command
        compared += 1
    assert outcome(sdk.clear_all_memory) == outcome(ours.clear_all_memory)
    assert os.listdir(tmp_path / "ours" / "memories") == []
    print(f"memory tool: {compared} commands, results equal")


def test_async_memory_tool_matches_the_sdk(tmp_path: Path) -> None:
    async def run_all(tool: Any) -> list[tuple[str, Any]]:
        results = []
        for command in MEMORY_COMMANDS:
            try:
                results.append(("ok", await tool.call(command)))
            except ToolError as exc:
                results.append(("error", str(exc)))
        return results

    sdk = asyncio.run(run_all(SdkAsyncMemory(str(tmp_path / "sdk"))))
    ours = asyncio.run(run_all(BetaAsyncLocalFilesystemMemoryTool(str(tmp_path / "ours"))))
    assert ours == sdk


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o777])
def test_memory_directories_are_0700_under_any_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        tool = BetaLocalFilesystemMemoryTool(str(tmp_path / "base"))
        tool.call({"command": "create", "path": "/memories/a/b/c.txt", "file_text": "x"})
    finally:
        os.umask(old)
    for d in (tmp_path / "base", tmp_path / "base/memories", tmp_path / "base/memories/a/b"):
        assert d.stat().st_mode & 0o777 == 0o700, d
    assert (tmp_path / "base/memories/a/b/c.txt").stat().st_mode & 0o777 == 0o600


def test_memory_symlinks_that_stay_inside_work_as_in_the_sdk(tmp_path: Path) -> None:
    tools = {
        "sdk": SdkMemory(str(tmp_path / "sdk")),
        "ours": BetaLocalFilesystemMemoryTool(str(tmp_path / "ours")),
    }
    results = {}
    for name, tool in tools.items():
        mem = tmp_path / name / "memories"
        (mem / "real").mkdir()
        (mem / "real" / "f.txt").write_text("through a link\n")
        os.symlink("real", mem / "alias")  # relative, stays inside
        os.symlink(tmp_path, mem / "out")  # leads outside
        results[name] = [
            outcome(partial(tool.call, {"command": "view", "path": "/memories/alias/f.txt"})),
            outcome(partial(tool.call, {"command": "view", "path": "/memories/out"})),
            outcome(partial(tool.call, {"command": "create", "path": "/memories/out/x", "file_text": "x"})),
        ]
    assert results["ours"] == results["sdk"]
    assert results["ours"][0][0] == "ok"
    assert results["ours"][1] == ("error", "Path /memories/out would escape /memories directory")
    assert not (tmp_path / "x").exists()


# -- the agent toolset -------------------------------------------------------------------------


def build_tree(top: Path) -> None:
    (top / "src").mkdir(parents=True)
    (top / "src" / "main.py").write_text("print('hello')\nprint('world')\n")
    (top / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (top / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (top / "binary.bin").write_bytes(b"\xff\xfe\x00")
    (top / "big.txt").write_text("x" * 100 + "\n" + "short\n")
    (top / "link_in").symlink_to("src")  # relative, stays inside
    (top / "link_out").symlink_to(top.parent / "secret")
    (top.parent / "secret").mkdir(exist_ok=True)
    (top.parent / "secret" / "key").write_text("outside\n")


TOOLSET_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read", {"file_path": "notes.txt"}),
    ("read", {"file_path": "notes.txt", "view_range": [2, 3]}),
    ("read", {"file_path": "notes.txt", "view_range": [2, 0]}),
    ("read", {"file_path": "notes.txt", "view_range": [1]}),
    ("read", {"file_path": "crlf.txt"}),
    ("read", {"file_path": "binary.bin"}),
    ("read", {"file_path": "src"}),
    ("read", {"file_path": "missing.txt"}),
    ("read", {"file_path": "../secret/key"}),
    ("read", {"file_path": "link_out/key"}),
    ("read", {"file_path": "link_in/main.py"}),
    ("read", {"file_path": "big.txt"}),
    ("read", {"file_path": "big.txt", "view_range": [2, 2]}),
    ("read", {"file_path": "big.txt", "view_range": [1, 1]}),
    ("read", {"file_path": "big.txt", "view_range": [1, 2]}),
    ("write", {"file_path": "new/dir/file.txt", "content": "fresh\n"}),
    ("read", {"file_path": "new/dir/file.txt"}),
    ("write", {"file_path": "link_out/planted", "content": "x"}),
    ("write", {"file_path": "../planted", "content": "x"}),
    ("edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}),
    ("edit", {"file_path": "notes.txt", "old_string": "a", "new_string": "A"}),
    ("edit", {"file_path": "notes.txt", "old_string": "a", "new_string": "A", "replace_all": True}),
    ("edit", {"file_path": "notes.txt", "old_string": "zzz", "new_string": "y"}),
    ("edit", {"file_path": "binary.bin", "old_string": "a", "new_string": "b"}),
    ("edit", {"file_path": "big.txt", "old_string": "short", "new_string": "b"}),
    ("edit", {"file_path": "link_out/key", "old_string": "outside", "new_string": "pwned"}),
    ("read", {"file_path": "notes.txt"}),
    ("glob", {"pattern": "/etc/*"}),
    ("glob", {"pattern": "../*"}),
    ("glob", {"pattern": "*.nothing"}),
    ("glob", {"pattern": "src/*.py"}),
    ("glob", {"pattern": "*.py", "path": "src"}),
    ("glob", {"pattern": "*", "path": "../secret"}),
    ("grep", {"pattern": "world", "path": "src/main.py"}),
    ("grep", {"pattern": "nothing-matches-this"}),
    ("grep", {"pattern": "hello", "path": "src"}),
    ("grep", {"pattern": "x", "path": "../secret"}),
]


def call_sync(tool: Any, args: dict[str, Any]) -> tuple[str, Any]:
    async def run() -> Any:
        return await tool.call(args)

    return outcome(lambda: asyncio.run(run()))


def test_agent_toolset_matches_the_sdk_call_by_call(tmp_path: Path) -> None:
    results: dict[str, list[tuple[str, Any]]] = {}
    for name, module in (("sdk", sdk_toolset), ("ours", our_toolset)):
        top = tmp_path / name / "work"
        build_tree(top)
        ctx = module.AgentToolContext(workdir=str(top), max_file_bytes=64)
        tools = {t.name: t for t in module.beta_agent_toolset_20260401(ctx) if t.name != "bash"}
        shown = str(top.resolve())
        results[name] = [
            (kind, value.replace(shown, "<work>") if isinstance(value, str) else value)
            for kind, value in (call_sync(tools[tool], args) for tool, args in TOOLSET_CALLS)
        ]
    for call, theirs, ours in zip(TOOLSET_CALLS, results["sdk"], results["ours"], strict=True):
        assert ours == theirs, call
    assert not (tmp_path / "sdk" / "planted").exists() and not (tmp_path / "ours" / "planted").exists()
    print(f"agent toolset: {len(TOOLSET_CALLS)} calls, results equal")


def test_an_absolute_symlink_that_stays_inside_is_refused_where_the_sdk_follows_it(tmp_path: Path) -> None:
    """The listed difference: RESOLVE_BENEATH refuses every absolute symlink, even one that lands
    inside the workdir, because an absolute target is resolved from the host's /."""
    results = {}
    for name, module in (("sdk", sdk_toolset), ("ours", our_toolset)):
        top = tmp_path / name
        build_tree(top)
        (top / "abs_in").symlink_to(top / "notes.txt")
        ctx = module.AgentToolContext(workdir=str(top))
        (read,) = [t for t in module.beta_agent_toolset_20260401(ctx) if t.name == "read"]
        results[name] = call_sync(read, {"file_path": "abs_in"})
    assert results["sdk"] == ("ok", "alpha\nbeta\ngamma\n")
    assert results["ours"] == ("error", f"read: {sdk.outside_message('abs_in', others=False)}")


# -- what changed between SDK releases: each checked against the installed SDK -----------------


def test_the_tool_definitions_are_the_installed_sdks(tmp_path: Path) -> None:
    """Names, descriptions and input schemas, async and sync: the SDK's own, as installed."""
    sdk_tools = sdk_toolset.beta_agent_toolset_20260401(sdk_toolset.AgentToolContext(workdir=str(tmp_path)))
    expected = [t.to_dict() for t in sdk_tools]
    ctx = our_toolset.AgentToolContext(workdir=str(tmp_path))
    assert [t.to_dict() for t in our_toolset.beta_agent_toolset_20260401(ctx)] == expected
    assert [t.to_dict() for t in our_toolset.beta_agent_toolset_20260401_sync(ctx)] == expected
    ctx.close()


def twin_results(
    tmp_path: Path,
    calls: list[tuple[str, dict[str, Any]]],
    prepare: Callable[[Path], None],
    **context: Any,
) -> dict[str, list[tuple[str, Any]]]:
    """``calls`` made to the SDK's toolset and to ours on twin trees, host paths masked."""
    results: dict[str, list[tuple[str, Any]]] = {}
    for name, module in (("sdk", sdk_toolset), ("ours", our_toolset)):
        base = tmp_path / name
        top = base / "work"
        top.mkdir(parents=True)
        prepare(top)
        extra = {k: [base / p for p in v] if k == "allowed_roots" else v for k, v in context.items()}
        for root in extra.get("allowed_roots", ()):
            root.mkdir(exist_ok=True)
        ctx = module.AgentToolContext(workdir=str(top), **extra)
        tools = {t.name: t for t in module.beta_agent_toolset_20260401(ctx)}
        results[name] = [
            (kind, value.replace(str(base.resolve()), "<base>") if isinstance(value, str) else value)
            for kind, value in (call_sync(tools[tool], args) for tool, args in calls)
        ]
    return results


@pytest.mark.parametrize("allowed", [[], ["store"]], ids=["workdir-only", "with-allowed-roots"])
def test_the_outside_path_refusal_is_worded_as_the_sdk_words_it(tmp_path: Path, allowed: list[str]) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read", {"file_path": "../secret"}),
        ("read", {"file_path": "../it's here"}),
        ("write", {"file_path": '/etc/"quoted"', "content": "x"}),
        ("glob", {"pattern": "*", "path": "/"}),
    ]
    results = twin_results(tmp_path, calls, lambda top: None, allowed_roots=allowed)
    assert results["ours"] == results["sdk"]
    assert all(kind == "error" and "is outside the session's" in text for kind, text in results["ours"])


def test_read_refuses_a_text_file_over_the_installed_sdks_default_cap(tmp_path: Path) -> None:
    """SDK 2.16 caps a plain read at 110,000 bytes (2.15 at 256 KiB); a 150,000-byte file."""

    def prepare(top: Path) -> None:
        (top / "big.txt").write_text(("y" * 99 + "\n") * 1500)

    calls: list[tuple[str, dict[str, Any]]] = [
        ("read", {"file_path": "big.txt"}),
        ("read", {"file_path": "big.txt", "view_range": [1, 3]}),
    ]
    results = twin_results(tmp_path, calls, prepare)
    assert results["ours"] == results["sdk"]
    refused = results["ours"][0][0] == "error"
    assert refused == (sdk.read_cap() < 150_000), results["ours"][0]


def test_grep_skips_node_modules_and_git_as_the_sdks_walk_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK searches with rg when one is on PATH: the walk is what the drop-in mirrors.
    monkeypatch.setenv("PATH", "/nonexistent")

    def prepare(top: Path) -> None:
        for where in ("src", "node_modules/lib", "src/node_modules", ".git", "deep/.git/objects"):
            (top / where).mkdir(parents=True, exist_ok=True)
            (top / where / "f.js").write_text("needle\n")
        (top / "node_modules.txt").write_text("needle in a file named like the directory\n")

    calls: list[tuple[str, dict[str, Any]]] = [
        ("grep", {"pattern": "needle"}),
        ("grep", {"pattern": "needle", "path": "src"}),
        ("grep", {"pattern": "needle", "path": "node_modules"}),
    ]
    results = twin_results(tmp_path, calls, prepare)
    for ours, theirs in zip(results["ours"], results["sdk"], strict=True):
        assert ours[0] == theirs[0]
        assert sorted(str(ours[1]).splitlines()) == sorted(str(theirs[1]).splitlines())
    found = str(results["ours"][0][1]).splitlines()
    assert sorted(found) == [
        "<base>/work/node_modules.txt:1:needle in a file named like the directory",
        "<base>/work/src/f.js:1:needle",
    ]


def test_a_search_of_a_missing_path_finds_nothing_as_in_the_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")

    def prepare(top: Path) -> None:
        (top / "file.txt").write_text("x\n")

    calls: list[tuple[str, dict[str, Any]]] = [
        ("glob", {"pattern": "*.py", "path": "missing"}),
        ("glob", {"pattern": "*", "path": "missing/deeper"}),
        ("glob", {"pattern": "*", "path": "file.txt/below"}),
        ("grep", {"pattern": "x", "path": "missing"}),
    ]
    results = twin_results(tmp_path, calls, prepare)
    assert results["ours"] == results["sdk"]
    assert results["ours"][0] == ("ok", "no matches")


SAVED = re.compile(r"Full output saved to: (\S+) ")


def bash_session(module: Any, top: Path, calls: list[dict[str, Any]]) -> tuple[list[tuple[str, Any]], Any]:
    """``calls`` to one bash tool on one event loop; the results, and the tool's ``read``."""
    ctx = module.AgentToolContext(workdir=str(top), env={"PATH": "/usr/bin:/bin"})
    tools = {t.name: t for t in module.beta_agent_toolset_20260401(ctx)}

    async def run_all() -> list[tuple[str, Any]]:
        results = []
        for args in calls:
            try:
                results.append(("ok", await tools["bash"].call(args)))
            except ToolError as exc:
                results.append(("error", str(exc)))
        saved = [SAVED.search(str(text)) for _, text in results]
        paths = [m.group(1) for m in saved if m]
        if paths:  # the file that holds the whole long output, read as a model would
            try:
                tail = await tools["read"].call({"file_path": paths[-1], "view_range": [39999, 40000]})
                results.append(("ok", tail))
            except ToolError as exc:
                results.append(("error", str(exc)))
        # The tool runner's cleanup: the SDK's tools keep their shell in an entered context.
        manager = getattr(tools["bash"], "_context_manager", None)
        if manager is not None:
            await manager.__aexit__(None, None, None)
        return results

    return asyncio.run(run_all()), ctx


def test_bash_matches_the_sdk_call_by_call(tmp_path: Path) -> None:
    """restart with a command, a failure with no output, a negative timeout_ms and a long
    output (SDK 2.16: its start and the path of a file with all of it; 2.15: its end)."""
    refusal = sandbox_refusal(tmp_path)
    if refusal is not None:
        pytest.skip(refusal)
    calls: list[dict[str, Any]] = [
        {"command": "export KEPT=1; echo one"},
        {"restart": True, "command": "echo ran ${KEPT:-fresh}"},
        {"restart": True},
        {"command": "(exit 3)"},
        {"command": "echo zero", "timeout_ms": 0},
        {"command": "seq 1 40000"},
        # Last: SDK 2.15 times out at once on it, and its shell is then gone.
        {"command": "echo quick", "timeout_ms": -5},
    ]
    results = {}
    for name, module in (("sdk", sdk_toolset), ("ours", our_toolset)):
        top = tmp_path / name
        top.mkdir()
        got, ctx = bash_session(module, top, calls)
        results[name] = [(kind, SAVED.sub("Full output saved to: <file> ", str(text))) for kind, text in got]
        if name == "ours":
            ctx.close()
    for call, ours, theirs in zip([*calls, "read"], results["ours"], results["sdk"], strict=False):
        if call == calls[6] and not sdk.behaviour().timeout_capped:
            continue  # SDK 2.15 times out at once on a negative timeout_ms: the listed difference
        if call == calls[5] and sdk.behaviour().long_output == "tail":
            # SDK 2.15 keeps the last bytes of a buffer that also holds its end marker: the
            # same tail, a few bytes shorter.
            assert ours[1][-10_000:] == theirs[1][-10_000:]
            assert abs(len(ours[1]) - len(theirs[1])) < 100
            continue
        assert ours == theirs, call
    assert len(results["ours"]) == len(results["sdk"])
    assert results["ours"][6] == ("ok", "quick")
    long_output = results["ours"][5][1]
    if sdk.behaviour().long_output == "head-and-file":
        assert long_output.startswith("1\n2\n3\n") and "Full output saved to: <file> " in long_output
        assert results["ours"][7] == ("ok", "39999\n40000")
    else:
        assert long_output.startswith("[output truncated]\n") and long_output.endswith("39999\n40000")


def test_the_saved_output_is_read_only_and_goes_with_the_shell(tmp_path: Path) -> None:
    refusal = sandbox_refusal(tmp_path)
    if refusal is not None:
        pytest.skip(refusal)
    if sdk.behaviour().long_output != "head-and-file":
        pytest.skip(f"SDK {sdk.SDK_VERSION} keeps no file of a long output")
    ctx = our_toolset.AgentToolContext(workdir=str(tmp_path), env={"PATH": "/usr/bin:/bin"})
    tools = {t.name: t for t in our_toolset.beta_agent_toolset_20260401_sync(ctx)}
    found = SAVED.search(str(tools["bash"].call({"command": "seq 1 40000"})))
    assert found
    saved = found.group(1)
    assert not saved.startswith(str(tmp_path))
    assert str(tools["grep"].call({"pattern": "^39999$", "path": saved})) == f"{saved}:39999:39999"
    with pytest.raises(ToolError, match="is outside the session's working directory"):
        tools["write"].call({"file_path": saved, "content": "replaced"})
    ctx.close()
    assert not os.path.exists(saved)


def validated(tool: Any, path: str, base: Path) -> tuple[str, str]:
    """``tool._validate_path(path)`` (awaited for an async tool) relative to ``base``, or its error."""
    try:
        found = tool._validate_path(path)
        if asyncio.iscoroutine(found):
            found = asyncio.run(found)
        return ("ok", os.path.relpath(str(found), base.resolve()))
    except ToolError as exc:
        return ("error", str(exc))


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_validate_path_answers_as_the_sdks_does(tmp_path: Path, kind: str) -> None:
    """The SDK's own memory-tool tests call ``_validate_path``: a link inside is followed to the
    real path, an escape is refused, a missing tail is kept."""
    classes = {
        "sync": (SdkMemory, BetaLocalFilesystemMemoryTool),
        "async": (SdkAsyncMemory, BetaAsyncLocalFilesystemMemoryTool),
    }[kind]
    paths = [
        "/memories",
        "/memories/legit/file.txt",
        "/memories/link/file.txt",
        "/memories/link/new/deeper.txt",
        "/memories/abslink/file.txt",
        "/memories/abslink/new/deeper.txt",
        "/memories/../outside",
        "/memories/out/x",
        "/other/notes.txt",
    ]
    results = {}
    for name, cls in zip(("sdk", "ours"), classes, strict=True):
        base = tmp_path / name
        legit = base / "memories" / "legit"
        legit.mkdir(parents=True)
        (legit / "file.txt").write_text("content")
        os.symlink("legit", base / "memories" / "link", target_is_directory=True)
        # Absolute, pointing inside: followed from the memory directory, as realpath follows it.
        os.symlink(legit.resolve(), base / "memories" / "abslink", target_is_directory=True)
        os.symlink(tmp_path, base / "memories" / "out")
        tool = cls(str(base))
        results[name] = [validated(tool, p, base) for p in paths]
    assert results["ours"] == results["sdk"]
    assert results["ours"][2] == ("ok", "memories/legit/file.txt")
    assert results["ours"][4] == ("ok", "memories/legit/file.txt")
    assert results["ours"][6][0] == "error" and results["ours"][7][0] == "error"
