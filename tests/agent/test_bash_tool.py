"""bash: status, sandbox layers and combined output; bash (not sh) runs it; timeout, cap and
cancel as error results; every process the command started killed and named; at most
MODEL_OUTPUT_CHARS of output to the model; an environment built from an allowlist.

Most tests run in each sandbox mode (``auto``, the kernel sandbox, and ``off``): what the tool
promises besides confinement holds in both."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import safefs
from agent.cli import main
from agent.tools import BashTool
from agent.tools.bash import DEFAULT_OUTPUT_CAP, DEFAULT_SHELL, DEFAULT_TIMEOUT
from safefs.sandbox import Refused, make_sandbox
from safefs.workspace.limits import MAX_RESULT_CHARS as MODEL_OUTPUT_CHARS
from safefs.workspace.limits import truncate_middle
from tests.agent.conftest import API_KEY, AgentWorkspace
from tests.agent.messages_api_server import LoopbackMessagesAPI, text_reply, tool_reply
from tests.agent.processes import survivors

PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture(params=["auto", "off"])
def mode(request: pytest.FixtureRequest, ws: AgentWorkspace) -> str:
    name: str = request.param
    if name == "auto":
        probe = make_sandbox(ws.root, "auto")
        probe.close()
        if isinstance(probe, Refused):
            pytest.skip(probe.refusal)
    return name


@pytest.fixture
def bash(ws: AgentWorkspace, mode: str) -> Iterator[BashTool]:
    tool = BashTool(ws.root, sandbox=mode, base_env={"PATH": PATH})
    yield tool
    tool.close()


def split(content: str) -> tuple[str, str, str, str]:
    """(status line, sandbox line, killed line, output)."""
    status, layers, killed, output = content.split("\n", 3)
    return status, layers, killed, output


def test_defaults() -> None:
    assert DEFAULT_TIMEOUT == 30
    assert DEFAULT_OUTPUT_CAP == 1 << 20
    assert MODEL_OUTPUT_CHARS == 30_000


def test_reports_status_layers_and_combined_output(ws: AgentWorkspace, bash: BashTool) -> None:
    out = bash.execute({"command": "cat hello.txt; echo err >&2"})
    assert not out.is_error
    assert split(out.content) == (
        "exit status 0",
        bash.sandbox_layers,
        "killed: none (nothing else was running)",
        "hello from inside\nerr\n",
    )
    out = bash.execute({"command": "echo out; echo oops >&2; exit 3"})
    assert out.is_error and split(out.content)[0] == "exit status 3"
    assert split(out.content)[3] == "out\noops\n"
    out = bash.execute({"command": "kill -TERM $$"})
    assert out.is_error and split(out.content)[0] == "killed by signal SIGTERM"


def test_sandbox_line_names_the_layers(bash: BashTool, mode: str) -> None:
    if mode == "off":
        assert bash.sandbox_layers.startswith("sandbox: off (unconfined)")
    else:
        assert bash.sandbox_layers.startswith("sandbox: landlock abi ")
        for layer in (
            "no network",
            f"uid {65534 if os.geteuid() == 0 else os.getuid()}",
            "pid ns",
            "rlimits",
        ):
            assert layer in bash.sandbox_layers


@pytest.mark.skipif(not DEFAULT_SHELL.endswith("bash"), reason="bash is not installed")
def test_the_shell_is_bash_and_the_description_says_so(bash: BashTool) -> None:
    assert f"{DEFAULT_SHELL} -c" in bash.description
    out = bash.execute({"command": "set -o pipefail; [[ a == a ]] && echo {1..3}; false | true; echo $?"})
    assert split(out.content)[::3] == ("exit status 0", "1 2 3\n1\n")


def test_runs_in_the_directory_the_root_holds_even_after_a_rename(ws: AgentWorkspace, mode: str) -> None:
    tool = BashTool(ws.root, sandbox=mode, base_env={"PATH": PATH})
    moved = ws.base / "moved"
    os.rename(ws.path, moved)
    ws.path.mkdir()  # an impostor at the old name
    (ws.path / "hello.txt").write_text("impostor\n")
    out = tool.execute({"command": "cat hello.txt"})
    tool.close()
    assert split(out.content)[::3] == ("exit status 0", "hello from inside\n")


def test_a_background_job_does_not_make_the_command_time_out(bash: BashTool) -> None:
    started = time.monotonic()
    out = bash.execute({"command": "sleep 3101 & echo started"})
    assert time.monotonic() - started < 10
    status, _, killed, output = split(out.content)
    assert (status, output) == ("exit status 0", "started\n")
    assert killed.startswith("killed 1 process:"), killed
    assert survivors("sleep 3101") == []


def test_set_m_and_setsid_jobs_are_killed_and_named(bash: BashTool, mode: str) -> None:
    out = bash.execute(
        {
            "command": "set -m; sleep 3102 & setsid sleep 3103 & "
            "(setsid sh -c 'sleep 3104 & sleep 3105') & sleep 0.3; echo ok"
        }
    )
    status, _, killed, output = split(out.content)
    assert (status, output.splitlines()[-1]) == ("exit status 0", "ok")
    for marker in ("sleep 3102", "sleep 3103", "sleep 3105"):
        assert marker in killed, killed
    assert survivors("sleep 310") == []


def test_timeout_is_an_error_result_and_everything_is_killed(ws: AgentWorkspace, mode: str) -> None:
    tool = BashTool(ws.root, sandbox=mode, timeout=0.5, base_env={"PATH": PATH})
    out = tool.execute({"command": "sleep 3111 & setsid sleep 3112 & echo started; sleep 3113"})
    tool.close()
    status, _, killed, output = split(out.content)
    assert out.is_error
    assert (status, output) == ("command timed out after 0.5 s", "started\n")
    for marker in ("sleep 3111", "sleep 3112", "sleep 3113"):
        assert marker in killed
    assert survivors("sleep 311") == []


def test_output_cap_kills_the_producer(ws: AgentWorkspace, mode: str) -> None:
    tool = BashTool(ws.root, sandbox=mode, output_cap=100_000, base_env={"PATH": PATH})
    out = tool.execute({"command": "sleep 3121 & yes 0123456789"})
    tool.close()
    status, _, _, output = split(out.content)
    assert out.is_error
    assert status == "command output exceeded 100000 bytes and it was killed"
    assert len(output) <= MODEL_OUTPUT_CHARS + 100
    assert "[truncated " in output
    assert survivors("sleep 3121", "yes 0123456789") == []


@pytest.mark.parametrize("exit_code", [0, 1])
def test_model_sees_head_and_tail_of_long_output(bash: BashTool, exit_code: int) -> None:
    out = bash.execute({"command": f"seq 1 100000; exit {exit_code}"})
    assert out.is_error == bool(exit_code)
    output = split(out.content)[3]
    full = "".join(f"{i}\n" for i in range(1, 100_001))
    assert output == truncate_middle(full)
    head, tail = output.split("\n[truncated ", 1)[0], output.rsplit("]\n", 1)[1]
    assert full.startswith(head) and full.endswith(tail)
    assert f"[truncated {len(full) - MODEL_OUTPUT_CHARS} characters]" in output
    assert len(output) < MODEL_OUTPUT_CHARS + 40


def test_truncate_middle_keeps_short_text_whole() -> None:
    assert truncate_middle("x" * MODEL_OUTPUT_CHARS) == "x" * MODEL_OUTPUT_CHARS
    assert truncate_middle("abcdefghij", 4) == "ab\n[truncated 6 characters]\nij"


def test_cancel_kills_a_running_command(ws: AgentWorkspace, bash: BashTool) -> None:
    cancel = threading.Event()

    def press_ctrl_c_once_started() -> None:
        deadline = time.monotonic() + 20
        while not (ws.path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        cancel.set()

    threading.Thread(target=press_ctrl_c_once_started, daemon=True).start()
    out = bash.execute({"command": "setsid sleep 3131 & touch started; sleep 3132"}, cancel)
    status, _, killed, _ = split(out.content)
    assert out.is_error and status == "command cancelled"
    assert "sleep 3132" in killed
    assert survivors("sleep 313") == []


def test_an_exception_while_waiting_still_kills_everything(
    ws: AgentWorkspace, bash: BashTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import selectors

    real_select = selectors.DefaultSelector.select
    calls = {"n": 0}

    def select_then_interrupt(self: object, timeout: float | None = None) -> object:
        calls["n"] += 1
        if (ws.path / "started").exists():
            raise KeyboardInterrupt
        assert isinstance(self, selectors.DefaultSelector)
        return real_select(self, timeout)

    monkeypatch.setattr(selectors.DefaultSelector, "select", select_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        bash.execute({"command": "setsid sleep 3141 & sleep 3142 & touch started; sleep 3143"})
    monkeypatch.undo()
    assert survivors("sleep 314") == []


def test_environment_is_an_allowlist(ws: AgentWorkspace, mode: str) -> None:
    env = {
        "PATH": PATH,
        "LANG": "C.UTF-8",
        "ANTHROPIC_API_KEY": API_KEY,
        "GITHUB_TOKEN": "ghp-1",
        "MYSQL_PWD": "hunter2",
        "PGPASS": "pg",
        "GH_PAT": "pat",
        "CI_JOB_JWT": "jwt",
        "SERVICE_CREDENTIALS": "cred",
        "DATABASE_URL": "postgres://u:pw@db/x",
        "CI_JOB_TOKEN": "allowed-token-value",
        "COPY_OF_MODEL_CRED": f"prefix-{API_KEY}",
    }
    tool = BashTool(
        ws.root,
        sandbox=mode,
        base_env=env,
        env_allow=["CI_JOB_TOKEN", "ANTHROPIC_API_KEY", "COPY_OF_MODEL_CRED"],
        secret_values=[API_KEY],
    )
    out = tool.execute({"command": "env"})
    tool.close()
    assert not out.is_error
    names = {line.split("=", 1)[0] for line in split(out.content)[3].splitlines() if "=" in line}
    assert {"PATH", "LANG", "CI_JOB_TOKEN"} <= names  # allowlisted, or listed by the operator
    for gone in (
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "MYSQL_PWD",
        "PGPASS",
        "GH_PAT",
        "CI_JOB_JWT",
        "SERVICE_CREDENTIALS",
        "DATABASE_URL",
        "COPY_OF_MODEL_CRED",
    ):
        assert gone not in names
    assert API_KEY not in out.content


def test_real_process_environment_key_does_not_reach_the_child(
    ws: AgentWorkspace, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("SOME_API_TOKEN", "tok")
    tool = BashTool(ws.root, sandbox=mode)
    out = tool.execute({"command": "env; cat /proc/$$/environ | tr '\\0' '\\n'"})
    tool.close()
    assert API_KEY not in out.content
    assert "SOME_API_TOKEN" not in out.content


def test_a_refused_sandbox_runs_nothing(ws: AgentWorkspace) -> None:
    tool = BashTool(ws.root, sandbox=Refused("Landlock is disabled in this kernel"))
    out = tool.execute({"command": "touch ran"})
    assert out.is_error
    assert out.content == (
        "bash refused: the sandbox is unavailable: Landlock is disabled in "
        "this kernel; only --sandbox=off runs commands unconfined"
    )
    assert not (ws.path / "ran").exists()


def test_without_the_native_extension_the_sandbox_fails_closed(
    ws: AgentWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from safefs.sandbox import landlock

    monkeypatch.setattr(landlock, "native", None)
    tool = BashTool(ws.root)
    out = tool.execute({"command": "touch ran"})
    assert out.is_error
    assert "native extension is not built" in out.content
    assert "only --sandbox=off" in out.content
    assert not (ws.path / "ran").exists()
    off = BashTool(ws.root, sandbox="off", base_env={"PATH": PATH})
    assert off.sandbox_layers == "sandbox: off (unconfined), process group"
    assert off.execute({"command": "touch ran"}).content.startswith("exit status 0\n")
    assert (ws.path / "ran").exists()


def test_bad_input_is_an_error_result(ws: AgentWorkspace) -> None:
    bash = BashTool(ws.root)
    assert bash.execute({"cmd": "ls"}).is_error
    out = bash.execute({"command": "echo \0"})
    assert out.is_error and out.content == "command must not contain a NUL character"
    with pytest.raises(ValueError):
        BashTool(ws.root, timeout=0)
    with pytest.raises(ValueError):
        BashTool(ws.root, sandbox="sometimes")
    bash.close()


def test_the_private_tmp_is_not_the_hosts(ws: AgentWorkspace, mode: str, tmp_path: Path) -> None:
    # The host's $TMPDIR, as the operator's environment gives it, is a directory of this test's own.
    host_tmp = tmp_path / "host-tmp"
    host_tmp.mkdir()
    marker = f"safefs-private-tmp-{os.getpid()}"
    bash = BashTool(ws.root, sandbox=mode, base_env={"PATH": PATH, "TMPDIR": str(host_tmp)})
    try:
        out = bash.execute({"command": f'touch "$TMPDIR/{marker}" && echo "$TMPDIR"'})
    finally:
        bash.close()
    assert split(out.content)[0] == "exit status 0", out.content
    if mode == "auto":  # /tmp is a tmpfs of the command's own mount namespace, gone with it
        assert split(out.content)[3] == "/tmp\n"
        assert not Path("/tmp", marker).exists()
        assert list(host_tmp.iterdir()) == []
    else:  # unconfined: the command writes where the host's $TMPDIR says
        assert split(out.content)[3] == f"{host_tmp}\n"
        assert [p.name for p in host_tmp.iterdir()] == [marker]


@pytest.mark.parametrize(
    "flags, expected",
    [
        ([], "sandbox: landlock abi "),
        (["--sandbox", "off"], "sandbox: off (unconfined)"),
        (["--allow-network"], "network allowed"),
        (["--sandbox-tmp-size", "64"], "/tmp a private 64 MiB tmpfs"),
    ],
)
def test_cli_sandbox_flags_reach_the_bash_tool(
    ws: AgentWorkspace,
    messages_api: LoopbackMessagesAPI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    expected: str,
) -> None:
    if flags != ["--sandbox", "off"]:
        probe = make_sandbox(ws.root)
        probe.close()
        if isinstance(probe, Refused):
            pytest.skip(probe.refusal)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_api.url)
    monkeypatch.setenv("ANTHROPIC_MODEL", "loopback-model")
    messages_api.queue(tool_reply("", ("t1", "bash", {"command": "echo ran"})))
    messages_api.queue(text_reply("done"))
    assert main(["run", "--workspace", str(ws.path), "--allow-bash", *flags, "go"]) == 0
    capsys.readouterr()
    seen = messages_api.requests[1]["messages"][-1]["content"][0]["content"]
    status, layers, _, output = split(seen)
    assert (status, output) == ("exit status 0", "ran\n")
    assert expected in layers


def test_a_workspace_without_a_path_is_refused_not_run(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    with safefs.Root(gone) as root:
        tool = BashTool(root)
        if isinstance(tool.sandbox, Refused):
            pytest.skip(tool.sandbox.refusal)
        gone.rmdir()
        out = tool.execute({"command": "echo ran"})
        tool.close()
    assert out.is_error
    assert out.content.startswith("bash refused: the sandbox could not be set up (")
    assert "nothing ran" in out.content and "\nran\n" not in out.content


def test_commands_from_several_threads_at_once(ws: AgentWorkspace, bash: BashTool) -> None:
    """The agent has threads; the launcher shares the caller's memory and must not mind."""
    results: dict[int, list[str]] = {}

    def worker(n: int) -> None:
        results[n] = [
            bash.execute({"command": f"echo {n}-{i} > t{n}-{i}; cat t{n}-{i}"}).content for i in range(3)
        ]

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for n in range(4):
        assert [split(c)[::3] for c in results[n]] == [("exit status 0", f"{n}-{i}\n") for i in range(3)]
