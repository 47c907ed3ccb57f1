"""Escape attempts made for real from inside an approved command; each must fail with nothing
changed outside, and legitimate work must still succeed.

Every attempt runs twice: with the agent as root (the command then drops to uid 65534) and with
the agent as an ordinary user (made with ``useradd``; the test forks and drops the child to it
before it opens the workspace and runs the tool). The outside directory is world-writable and its
secret world-readable, and the victim process has the command's own uid, so file modes and uid
checks are not what stops an attempt: the sandbox is.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import socket
import subprocess
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import safefs
from agent.tools import BashTool
from safefs.sandbox.linux import DROPPED_UID, Limits, LinuxSandbox
from tests.agent.processes import survivors
from tests.sandbox.harness import (
    PATH,
    as_user,
    chown_tree,
    make_base,
    ordinary_user,
    ran_in_sandbox,
    sandbox_refusal,
)

SECRET = "outside-secret-7f3a"
AGENT_MARKER = "agent-environment-marker-91c2"
FORK_LIMIT = 64
WHEEL = "tinypkg-1.0-py3-none-any.whl"


pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the test drops to each identity itself, as root"),
    pytest.mark.skipif(sandbox_refusal() is not None, reason=str(sandbox_refusal())),
]


@dataclass
class World:
    """What lies outside the sandbox: a directory with a secret, listeners, a victim process."""

    base: Path
    workspace: Path
    outside: Path
    tcp: socket.socket
    udp: socket.socket
    unix: socket.socket  # world-writable, as the D-Bus system bus or an X11 socket is
    victim: subprocess.Popen[bytes]

    def format(self, command: str) -> str:
        return command.format(
            outside=self.outside,
            tcp=self.tcp.getsockname()[1],
            udp=self.udp.getsockname()[1],
            unix=self.unix.getsockname(),
            victim=self.victim.pid,
            agent=os.getpid(),
        )

    def close(self) -> None:
        self.victim.kill()
        self.victim.wait()
        for sock in (self.tcp, self.udp, self.unix):
            sock.close()
        shutil.rmtree(self.base, ignore_errors=True)

    def outside_state(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(self.outside.iterdir())}

    def git_state(self) -> dict[str, bytes]:
        """Every file under .git, and the .git entry itself."""
        git = self.workspace / ".git"
        state = {".git": str(git.lstat().st_ino).encode()}
        for dirpath, _dirs, files in os.walk(git):
            for name in files:
                path = Path(dirpath, name)
                state[str(path.relative_to(git))] = path.read_bytes()
        return state

    def connections(self, listener: socket.socket) -> int:
        n = 0
        listener.settimeout(0.2)
        try:
            while True:
                conn, _ = listener.accept()
                conn.close()
                n += 1
        except TimeoutError:
            return n

    def udp_datagrams(self) -> int:
        n = 0
        self.udp.settimeout(0.2)
        try:
            while True:
                self.udp.recv(100)
                n += 1
        except TimeoutError:
            return n


def write_wheel(path: Path) -> None:
    """A minimal wheel of a one-module package, so ``pip install`` needs no network."""
    files = {
        "tinypkg/__init__.py": b"ANSWER = 42\n",
        "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
        "tinypkg-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = ""
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(data)}\n"
    record += "tinypkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr("tinypkg-1.0.dist-info/RECORD", record)


def build_world(uid: int) -> World:
    base = make_base("safefs-escape-")
    workspace, outside = base / "work", base / "outside"
    workspace.mkdir()
    outside.mkdir()
    outside.chmod(0o777)
    (outside / "secret.txt").write_text(SECRET + "\n")
    (outside / "secret.txt").chmod(0o666)
    (workspace / "hello.txt").write_text("hello from inside\n")
    (workspace / "Makefile").write_text("built.txt:\n\techo built > built.txt\n")
    write_wheel(workspace / WHEEL)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    chown_tree(workspace, uid)
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    (base / "run").mkdir(mode=0o777)
    (base / "run").chmod(0o777)
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(base / "run" / "bus.sock"))
    (base / "run" / "bus.sock").chmod(0o777)
    unix.listen(8)
    # The victim has the command's own uid: only the sandbox stands between them.
    victim_uid = DROPPED_UID if uid == 0 else uid
    victim = subprocess.Popen(["sleep", "3300"], user=victim_uid, group=victim_uid)
    return World(base, workspace, outside, tcp, udp, unix, victim)


@dataclass(frozen=True)
class Attempt:
    name: str
    command: str
    limits: Limits | None = None


ATTEMPTS = [
    Attempt(
        "read_secret_outside",
        "cat {outside}/secret.txt; cat ../outside/secret.txt; cp {outside}/secret.txt got; "
        "ln {outside}/secret.txt hard; cat hard",
    ),
    Attempt(
        "write_outside",
        "echo pwned > {outside}/new; echo pwned >> {outside}/secret.txt; "
        "rm -f {outside}/secret.txt; mv {outside}/secret.txt here; mkdir {outside}/d; "
        "ln -s /etc/passwd {outside}/link; touch ../outside/new2",
    ),
    Attempt("tcp_connect", "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {tcp}), 2)'"),
    Attempt(
        "udp_send",
        "python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        's.sendto(b"x", ("127.0.0.1", {udp}))\'',
    ),
    Attempt(
        "unix_connect", "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{unix}\")'"
    ),
    Attempt(
        "read_agent_environ",
        "cat /proc/$PPID/environ; cat /proc/1/environ; cat /proc/{agent}/environ; "
        "tr '\\0' '\\n' < /proc/1/cmdline; ls /proc",
    ),
    Attempt("signal_outside", "kill -KILL {victim}; kill -KILL 1; kill -STOP -1; echo sent"),
    Attempt(
        "ptrace_outside",
        "python3 -c 'import ctypes; libc = ctypes.CDLL(None); "
        'print("attach", libc.ptrace(16, {victim}, 0, 0), libc.ptrace(16, 1, 0, 0))\'',
    ),
    Attempt(
        "write_git_hooks",
        "echo 'echo owned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
        "git config core.hooksPath /tmp; echo '[core]' >> .git/config; "
        "mv .git/hooks .git/old-hooks; rm -rf .git/hooks; mv .git .git-old; "
        "mv .git/config .git/config.old; echo ../cfg > .git/commondir; "
        "printf '[core]\\n\\tfsmonitor = touch /tmp/ran\\n' > .git/config.worktree; "
        "mkdir -p .git/modules/x .git/info; echo '*' > .git/info/exclude; rm -rf .git/objects",
    ),
    Attempt(
        "fork_bomb",
        "python3 -c 'import os, time\n"
        "n = 0\n"
        "try:\n"
        "    while n < 1000:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(3400)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "except OSError as e:\n"
        '    print("stopped at", n, e.errno)\'',
        limits=Limits(processes=FORK_LIMIT),
    ),
    Attempt(
        "background_jobs_survive",
        "set -m; sleep 3501 & setsid sleep 3502 & (setsid sh -c 'sleep 3503 &') ; "
        "nohup sleep 3504 >/dev/null 2>&1 & disown; echo started",
    ),
    Attempt(
        "legitimate_work",
        "ls; cat hello.txt; python3 -c 'print(6 * 7)'; git status --short; "
        "touch made && rm made && echo made-and-removed; echo kept > kept.txt; "
        'touch "$TMPDIR/t" && ls "$TMPDIR" && rm "$TMPDIR/t" && echo tmp-ok; '
        "make -s && cat built.txt; "
        f"python3 -m pip install -q --no-index --target vendor {WHEEL} && "
        "PYTHONPATH=vendor python3 -c 'import tinypkg; print(\"pip-ok\", tinypkg.ANSWER)'; "
        "git init -q nested && cd nested && echo n > n.txt && git add n.txt && "
        "git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline | wc -l",
    ),
]


def run_attempts(world: World) -> dict[str, tuple[str, bool]]:
    results: dict[str, tuple[str, bool]] = {}
    with safefs.Root(world.workspace) as root:
        for attempt in ATTEMPTS:
            sandbox = LinuxSandbox(root, limits=attempt.limits or Limits())
            tool = BashTool(root, sandbox=sandbox, timeout=20, base_env={"PATH": PATH})
            out = tool.execute({"command": world.format(attempt.command)})
            tool.close()
            results[attempt.name] = (out.content, out.is_error)
    return results


@dataclass
class Run:
    world: World
    results: dict[str, tuple[str, bool]]
    before_outside: dict[str, bytes]
    after_outside: dict[str, bytes]
    before_git: dict[str, bytes]
    after_git: dict[str, bytes]
    tcp_connections: int
    udp_datagrams: int
    unix_connections: int


@pytest.fixture(scope="module", params=["root", "ordinary-user"])
def run(request: pytest.FixtureRequest) -> Iterator[Run]:
    uid = 0 if request.param == "root" else ordinary_user()
    world = build_world(uid)
    os.environ["SAFEFS_TEST_AGENT_MARKER"] = AGENT_MARKER
    try:
        before_outside, before_git = world.outside_state(), world.git_state()
        results = {name: (c, e) for name, (c, e) in as_user(uid, lambda: run_attempts(world)).items()}
        for name, (content, _) in results.items():
            print(f"--- {request.param} {name}\n{content}")
        yield Run(
            world,
            results,
            before_outside,
            world.outside_state(),
            before_git,
            world.git_state(),
            world.connections(world.tcp),
            world.udp_datagrams(),
            world.connections(world.unix),
        )
    finally:
        del os.environ["SAFEFS_TEST_AGENT_MARKER"]
        world.close()


def output(run: Run, name: str) -> str:
    """The result of one attempt, which must have run (not been refused) in the sandbox."""
    return ran_in_sandbox(run.results[name][0])


def test_read_secret_outside(run: Run) -> None:
    text = output(run, "read_secret_outside")
    assert SECRET not in text
    assert "Permission denied" in text
    assert not (run.world.workspace / "got").exists()


def test_write_outside(run: Run) -> None:
    output(run, "write_outside")
    assert run.after_outside == run.before_outside


def test_tcp_connect_to_a_listener_outside(run: Run) -> None:
    text = output(run, "tcp_connect")
    assert run.results["tcp_connect"][1], text  # the connect raised
    assert run.tcp_connections == 0


def test_udp_datagram_to_a_socket_outside(run: Run) -> None:
    output(run, "udp_send")
    assert run.udp_datagrams == 0


def test_unix_socket_connect_outside(run: Run) -> None:
    text = output(run, "unix_connect")
    assert run.results["unix_connect"][1], text
    assert run.unix_connections == 0


def test_read_agent_environment(run: Run) -> None:
    text = output(run, "read_agent_environ")
    assert AGENT_MARKER not in text
    assert "SAFEFS_TEST_AGENT_MARKER" not in text
    listed = text.split("\n", 3)[3].split()
    assert str(os.getpid()) not in listed  # the fresh /proc shows only the sandbox's processes


def test_signal_a_process_outside(run: Run) -> None:
    text = output(run, "signal_outside")
    assert run.world.victim.poll() is None, text
    assert Path(f"/proc/{run.world.victim.pid}/stat").read_text().split(")")[1].split()[0] != "T"


def test_ptrace_a_process_outside(run: Run) -> None:
    text = output(run, "ptrace_outside")
    assert "attach -1 -1" in text
    status = Path(f"/proc/{run.world.victim.pid}/status").read_text()
    assert "TracerPid:\t0" in status


def test_write_git_hooks(run: Run) -> None:
    text = output(run, "write_git_hooks")
    assert run.after_git == run.before_git, text
    assert not (run.world.workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (run.world.workspace / ".git-old").exists()
    # the result names it (and the workspace's Makefile, a starter file)
    assert text.split("\n")[1].endswith(", read-only: .git, Makefile"), text


def test_fork_bomb_is_bounded(run: Run) -> None:
    text = output(run, "fork_bomb")
    line = next(x for x in text.splitlines() if x.startswith("stopped at"))
    started, err = map(int, line.split()[2:])
    assert err == 11 and started < FORK_LIMIT, text  # EAGAIN from the process limit
    assert survivors("sleep 3400", "time.sleep(3400)") == []


def test_background_jobs_do_not_survive(run: Run) -> None:
    text = output(run, "background_jobs_survive")
    assert text.split("\n", 1)[0] == "exit status 0"
    assert survivors("sleep 350") == []


def test_legitimate_work_still_works(run: Run) -> None:
    text = output(run, "legitimate_work")
    status, _, _, body = text.split("\n", 3)
    assert status == "exit status 0", text
    for expected in ("hello.txt", "hello from inside", "42", "made-and-removed", "t\n", "tmp-ok"):
        assert expected in body
    assert "built" in body and (run.world.workspace / "built.txt").exists()  # make
    assert "pip-ok 42" in body and (run.world.workspace / "vendor" / "tinypkg").is_dir()
    # One commit in a repository made below the workspace works inside the command; after it,
    # the repository is disabled, so that git outside does not use a config the command wrote.
    output_lines = body.rstrip().splitlines()
    assert output_lines[-3] == "1" and "nested/.git/HEAD -> nested/.git/HEAD.untrusted" in output_lines[-1], (
        body
    )
    assert not (run.world.workspace / "nested" / ".git" / "HEAD").exists()
    kept = run.world.workspace / "kept.txt"
    assert kept.read_text() == "kept\n"
    assert kept.stat().st_uid == (run.world.workspace.stat().st_uid)  # owned by the owner


def test_network_is_reachable_when_allowed() -> None:
    """The control for the network attempts: the same connect works with the network allowed."""
    world = build_world(0)
    try:
        with safefs.Root(world.workspace) as root:
            tool = BashTool(root, allow_network=True, base_env={"PATH": PATH})
            out = tool.execute({"command": world.format(ATTEMPTS[2].command)})
            tool.close()
        assert "network allowed" in out.content
        assert not out.is_error, out.content
        assert world.connections(world.tcp) == 1
    finally:
        world.close()
