"""The sandbox's hardening, each attempt made for real from inside an approved command, with the
agent as root (the command runs as uid 65534 on an idmapped workspace) and as an ordinary user:

- no setuid or setgid file can be planted in the workspace, and the workspace is mounted nosuid;
- no Unix datagram reaches a world-writable datagram socket outside;
- the agent's session keyring is neither readable nor writable, and the key calls are refused;
- git's state (the whole ``.git``, a pointer file and what it names, a ``core.hooksPath`` in the
  work tree, a missing ``.git`` or ``.git/hooks``, an included config) cannot be changed, the
  directories above it cannot be renamed, and a repository a command makes, under any name, is
  disabled when it returns: the person's git, run everywhere in the workspace afterwards, runs
  nothing of the command's;
- the run's own record (``hidden``) can be neither read, written, renamed nor replaced;
- ``/tmp`` is a private tmpfs of a bounded size, and nothing of it is left when the agent is
  killed.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import safefs
from agent.tools import BashTool
from safefs.sandbox import seccomp
from safefs.sandbox.linux import Limits, LinuxSandbox
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
from tests.sandbox.host_git import host_git_ran_marker

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the test drops to each identity itself, as root"),
    pytest.mark.skipif(sandbox_refusal() is not None, reason=str(sandbox_refusal())),
]

AGENT_SECRET = b"agent-keyring-secret-5d21"
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_READ, KEYCTL_SEARCH = 0, 1, 11, 10
KEY_SPEC_SESSION_KEYRING = -3
NUMBERS = seccomp.syscall_numbers()


def git(*args: str | Path) -> None:
    subprocess.run(["git", *map(str, args)], check=True, capture_output=True)


def snapshot(path: Path) -> dict[str, bytes]:
    """Every entry under ``path`` (a file's bytes, a directory's and a link's kind), and its own."""
    if not path.exists() and not path.is_symlink():
        return {}
    state = {
        ".": str(stat.S_IFMT(path.lstat().st_mode)).encode() + (path.read_bytes() if path.is_file() else b"")
    }
    if path.is_dir():
        for dirpath, dirs, files in os.walk(path):
            for name in dirs + files:
                p = Path(dirpath, name)
                state[str(p.relative_to(path))] = p.read_bytes() if p.is_file() else b"<dir>"
    return state


# -- the world: what each attempt sets up, runs and leaves ------------------------------------


@dataclass
class World:
    base: Path
    uid: int
    datagram: socket.socket
    datagram_path: Path
    key_id: int = 0


@dataclass(frozen=True)
class Attempt:
    name: str
    command: str
    setup: Callable[[Path, World], None] = lambda workspace, world: None
    limits: Limits = field(default_factory=Limits)
    sandbox_options: dict[str, object] = field(default_factory=dict)
    hidden: tuple[str, ...] = ()  # workspace-relative files the sandbox hides


def setup_setuid(workspace: Path, world: World) -> None:
    shutil.copy("/usr/bin/id", workspace / "id-copy")


def setup_git_repo(workspace: Path, world: World) -> None:
    git("init", "-q", workspace)


def setup_git_no_hooks(workspace: Path, world: World) -> None:
    git("init", "-q", "--template=", workspace)


def setup_pointer(workspace: Path, world: World) -> None:
    git("init", "-q", f"--separate-git-dir={workspace / 'gitdir'}", workspace / "tree")
    (workspace / "tree").rename(workspace / "t")
    for entry in (workspace / "t").iterdir():
        entry.rename(workspace / entry.name)
    (workspace / "t").rmdir()


def setup_submodule(workspace: Path, world: World) -> None:
    git("init", "-q", workspace)
    git("init", "-q", workspace / "sub")
    (workspace / ".git" / "modules").mkdir()
    (workspace / "sub" / ".git").rename(workspace / ".git" / "modules" / "sub")
    (workspace / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    (workspace / ".gitmodules").write_text('[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n')


def setup_hooks_path(workspace: Path, world: World) -> None:
    git("init", "-q", workspace)
    git("-C", workspace, "config", "core.hooksPath", ".husky/_")
    (workspace / ".husky" / "_").mkdir(parents=True)
    (workspace / ".husky" / "_" / "pre-commit").write_text("#!/bin/sh\n")


def setup_missing_hooks_path(workspace: Path, world: World) -> None:
    git("init", "-q", workspace)
    git("-C", workspace, "config", "core.hooksPath", "tools/hooks")


def setup_nested_repository(workspace: Path, world: World) -> None:
    git("init", "-q", workspace)
    git("init", "-q", workspace / "libs" / "sub")


def setup_includes(workspace: Path, world: World) -> None:
    git("init", "-q", workspace)
    git("-C", workspace, "config", "include.path", "../.gitconfig")
    git("-C", workspace, "config", "includeIf.gitdir:/.path", "../conf/git.inc")
    (workspace / ".gitconfig").write_text("[user]\n\tname = p\n")


def setup_run_record(workspace: Path, world: World) -> None:
    (workspace / ".agent").mkdir()
    (workspace / ".agent" / "run.jsonl").write_text('{"run": 1}\n')


FSMONITOR = "[core]\\n\\tbare = false\\n\\tfsmonitor = touch {marker}\\n"
WITH_WORKTREE = FSMONITOR.replace("bare", "worktree = {workspace}\\n\\tbare")  # used from below too


def fresh_repository(directory: str, config: str = FSMONITOR) -> str:
    return (
        f"mkdir -p {directory}/objects {directory}/refs; echo 'ref: refs/heads/main' > {directory}/HEAD; "
        f"printf '{config}' > {directory}/config"
    )


def py(code: str) -> str:
    return f"python3 -c '{textwrap.dedent(code).strip()}'"


SETID_ATTEMPT = "; ".join(
    [
        "chmod 4755 id-copy",
        "chmod u+s id-copy",
        "chmod g+s id-copy",
        py('import os; os.chmod("id-copy", 0o6755)'),
        py('import os; os.close(os.open("planted", os.O_CREAT | os.O_WRONLY, 0o4755))'),
        py('import os; fd = os.open("id-copy", os.O_RDONLY); os.fchmod(fd, 0o2755)'),
        py('import os; os.mkdir("sgid-dir", 0o2755)'),
        py('import os; os.mkfifo("fifo", 0o4644)'),
        "install -m 4755 /usr/bin/id installed",
        'grep " $PWD " /proc/self/mountinfo',
    ]
)

DATAGRAM_ATTEMPT = py(
    """
    import socket
    D = socket.SOCK_DGRAM
    for name, kind in [("dgram", D), ("dgram-cloexec", D | socket.SOCK_CLOEXEC),
                       ("dgram-nonblock", D | socket.SOCK_NONBLOCK),
                       ("seqpacket", socket.SOCK_SEQPACKET), ("stream", socket.SOCK_STREAM)]:
        try:
            a, b = socket.socketpair(socket.AF_UNIX, kind)
        except OSError as e:
            print(name, "refused", e.errno)
            continue
        try:
            a.sendto(b"escaped", "{datagram}")
            print(name, "sent")
        except OSError as e:
            print(name, "paired, send failed", e.errno)
    """
)

KEYRING_ATTEMPT = py(
    f"""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    def call(name, nr, *args):
        r = libc.syscall(nr, *args)
        print(name, r, ctypes.get_errno() if r < 0 else 0)
    call("keyctl-session", {NUMBERS["keyctl"]}, {KEYCTL_GET_KEYRING_ID}, {KEY_SPEC_SESSION_KEYRING}, 0)
    buf = ctypes.create_string_buffer(256)
    call("keyctl-read", {NUMBERS["keyctl"]}, {KEYCTL_READ}, {{key}}, buf, 256)
    print("payload", buf.value.decode())
    call("add_key", {NUMBERS["add_key"]}, b"user", b"planted", b"x", 1, {KEY_SPEC_SESSION_KEYRING})
    call("request_key", {NUMBERS["request_key"]}, b"user", b"agent-secret", None, 0)
    """
)

ATTEMPTS = [
    Attempt("setid", SETID_ATTEMPT, setup_setuid),
    Attempt("datagram", DATAGRAM_ATTEMPT),
    Attempt("keyring", KEYRING_ATTEMPT),
    # The same, with the key calls let through: only the fresh session keyring stands in the way.
    Attempt(
        "keyring_unfiltered",
        KEYRING_ATTEMPT,
        sandbox_options={"seccomp_rules": [r for r in seccomp.RULES if "key" not in r.syscall]},
    ),
    Attempt(
        "git_commondir",
        "echo ../cfg > .git/commondir; mkdir cfg; "
        "printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > cfg/config; "
        "cp cfg/config .git/config.worktree; "
        "mkdir -p .git/modules/evil; echo x > .git/info/attributes; "
        "git config core.fsmonitor 'touch {marker}'",
        setup_git_repo,
    ),
    Attempt(
        "git_missing_hooks",
        "mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/pre-commit",
        setup_git_no_hooks,
    ),
    Attempt("git_missing", "git init -q .; mkdir .git; echo '[core]' > .git/config; ls -a"),
    Attempt(
        "git_pointer",
        "echo 'gitdir: evil' > .git; rm -f .git; mv .git moved; "
        "printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> gitdir/config; rm -rf gitdir",
        setup_pointer,
    ),
    Attempt(
        "git_submodule",
        "echo 'gitdir: ../evil' > sub/.git; rm -f sub/.git; echo x >> .git/modules/sub/config",
        setup_submodule,
    ),
    Attempt(
        "git_hooks_path",
        "echo 'touch {marker}' >> .husky/_/pre-commit; touch .husky/_/post-checkout; echo 'touch {marker}'"
        " > .husky/pre-commit; rm -rf .husky",
        setup_hooks_path,
    ),
    Attempt(
        "git_missing_hooks_path",
        "mkdir -p tools/hooks && echo 'touch {marker}' > tools/hooks/pre-commit",
        setup_missing_hooks_path,
    ),
    Attempt(
        "git_renamed_parent",
        f"mv libs/sub libs/.sub_old; mv libs libs.old; {fresh_repository('libs/sub/.git')}; "
        f"mkdir -p libs/x && mv libs/x libs/sub; {fresh_repository('libs/sub')}",
        setup_nested_repository,
    ),
    Attempt(
        "git_planted",
        # The workspace itself, a bare repository under another name, and git init.
        f"{fresh_repository('.', WITH_WORKTREE)}; mkdir -p src/pkg; "
        f"{fresh_repository('src', WITH_WORKTREE)}; "
        "git init -q new && git -C new config core.fsmonitor 'touch {marker}' && "
        f"{fresh_repository('new/.git/modules/inner')}; ls -a . src new/.git; "
        "chmod 555 src new/.git new/.git/modules/inner",  # the agent must give itself the right back
    ),
    Attempt(
        "git_included",
        "printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> .gitconfig; mv .gitconfig old; "
        "mkdir -p conf; printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > conf/git.inc; ls -la conf",
        setup_includes,
    ),
    Attempt(
        "run_record",
        "cat .agent/run.jsonl; echo forged >> .agent/run.jsonl; mv .agent moved; rm -f .agent/run.jsonl",
        setup_run_record,
        hidden=(".agent/run.jsonl",),
    ),
    Attempt(
        "tmp_is_bounded",
        'df -k "$TMPDIR" | tail -1; dd if=/dev/zero of="$TMPDIR/big" bs=1M count=16 2>&1',
        limits=Limits(tmp_size=8 << 20),
    ),
]


@dataclass
class Result:
    workspace: Path
    content: str
    before: dict[str, bytes]
    after: dict[str, bytes]


@dataclass
class Run:
    world: World
    results: dict[str, Result]
    datagrams: int
    marker: Path
    agent_keyring_has_planted: bool


def join_session_keyring_with_secret() -> int:
    """In this process: a session keyring of its own, holding a key the commands must not see."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(NUMBERS["keyctl"], KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        raise OSError(ctypes.get_errno(), "keyctl join")
    key = int(libc.syscall(NUMBERS["add_key"], b"user", b"agent-secret", AGENT_SECRET, len(AGENT_SECRET), -3))
    if key < 0:
        raise OSError(ctypes.get_errno(), "add_key")
    return key


def session_has(description: bytes) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.syscall(NUMBERS["keyctl"], KEYCTL_SEARCH, -3, b"user", description, 0)) >= 0


def run_attempts(world: World, marker: Path) -> dict[str, tuple[str, bool]]:
    """As the agent: each attempt in its own workspace (made beforehand, owned by the agent)."""
    world.key_id = join_session_keyring_with_secret()
    results: dict[str, tuple[str, bool]] = {}
    for attempt in ATTEMPTS:
        workspace = world.base / attempt.name
        with safefs.Root(workspace) as root:
            hidden = [str(workspace / path) for path in attempt.hidden]
            sandbox = LinuxSandbox(root, limits=attempt.limits, hidden=hidden, **attempt.sandbox_options)  # type: ignore[arg-type]
            tool = BashTool(root, sandbox=sandbox, timeout=20, base_env={"PATH": PATH})
            command = attempt.command.format(
                datagram=world.datagram_path, marker=marker, key=world.key_id, workspace=workspace
            )
            out = tool.execute({"command": command})
            tool.close()
        results[attempt.name] = (out.content, out.is_error)
    results["planted"] = (str(session_has(b"planted")), False)
    return results


def datagrams(sock: socket.socket) -> int:
    n = 0
    sock.settimeout(0.2)
    try:
        while True:
            sock.recv(100)
            n += 1
    except TimeoutError:
        return n


@pytest.fixture(scope="module", params=["root", "ordinary-user"])
def run(request: pytest.FixtureRequest) -> Iterator[Run]:
    uid = 0 if request.param == "root" else ordinary_user()
    base = make_base("safefs-hardening-")
    run_dir = base / "run"
    run_dir.mkdir()
    run_dir.chmod(0o777)
    datagram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    datagram_path = run_dir / "log.sock"
    datagram.bind(str(datagram_path))
    datagram_path.chmod(0o777)  # as /dev/log is
    marker = base / "git-ran-the-command"
    world = World(base, uid, datagram, datagram_path)
    try:
        before: dict[str, dict[str, bytes]] = {}
        for attempt in ATTEMPTS:
            workspace = base / attempt.name
            workspace.mkdir()
            attempt.setup(workspace, world)
            chown_tree(workspace, uid)
            before[attempt.name] = snapshot(workspace)
        got = as_user(uid, lambda: run_attempts(world, marker))
        results = {}
        for attempt in ATTEMPTS:
            content = got[attempt.name][0]
            print(f"--- {request.param} {attempt.name}\n{content}")
            results[attempt.name] = Result(
                base / attempt.name, content, before[attempt.name], snapshot(base / attempt.name)
            )
        yield Run(world, results, datagrams(datagram), marker, got["planted"][0] == "True")
    finally:
        datagram.close()
        shutil.rmtree(base, ignore_errors=True)


def output(run: Run, name: str) -> str:
    return ran_in_sandbox(run.results[name].content)


# -- setuid and setgid ------------------------------------------------------------------------


def test_no_setuid_or_setgid_file_can_be_planted(run: Run) -> None:
    text = output(run, "setid")
    workspace = run.results["setid"].workspace
    with_setid = [
        f"{p.relative_to(workspace)} {oct(p.lstat().st_mode)}"
        for p in workspace.rglob("*")
        if p.lstat().st_mode & (stat.S_ISUID | stat.S_ISGID)
    ]
    assert with_setid == [], text
    assert text.count("Operation not permitted") >= 3, text  # chmod refused, not ignored


def test_the_workspace_is_mounted_nosuid(run: Run) -> None:
    text = output(run, "setid")
    line = next(x for x in text.splitlines() if f" {run.results['setid'].workspace} " in x)
    assert "nosuid" in line.split()[5].split(","), line


# -- Unix datagrams ---------------------------------------------------------------------------


def test_no_unix_datagram_reaches_a_socket_outside(run: Run) -> None:
    text = output(run, "datagram")
    assert run.datagrams == 0, text
    for kind in ("dgram", "dgram-cloexec", "dgram-nonblock", "seqpacket"):
        assert f"{kind} refused 13" in text
    assert "stream paired" in text  # the allowed neighbour: a stream pair talks only to itself


# -- the keyring ------------------------------------------------------------------------------


def test_key_calls_are_refused(run: Run) -> None:
    text = output(run, "keyring")
    for call in ("keyctl-session", "keyctl-read", "add_key", "request_key"):
        assert f"{call} -1 1" in text, text  # EPERM
    assert AGENT_SECRET.decode() not in text
    assert not run.agent_keyring_has_planted


def test_the_session_keyring_is_fresh_and_empty(run: Run) -> None:
    text = output(run, "keyring_unfiltered")
    assert AGENT_SECRET.decode() not in text, text
    assert "keyctl-read -1" in text, text  # the agent's key is not possessed any more
    assert not run.agent_keyring_has_planted  # planted, if at all, in the command's own keyring


# -- git ----------------------------------------------------------------------------------------


def assert_git_unchanged(run: Run, name: str, read_only: str) -> str:
    text = output(run, name)
    result = run.results[name]
    changed = {
        k for k in result.before.keys() | result.after.keys() if result.before.get(k) != result.after.get(k)
    }
    git_changed = {k for k in changed if k.startswith((".git", "gitdir", "sub/.git", ".husky", "tools"))}
    assert git_changed == set(), text
    assert text.split("\n")[1].endswith(f", read-only: {read_only}"), text  # the result names it
    assert not run.marker.exists()
    return text


def test_the_whole_git_directory_is_read_only(run: Run) -> None:
    assert_git_unchanged(run, "git_commondir", ".git")
    subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", run.results["git_commondir"].workspace, "status"],
        check=True,
        capture_output=True,
    )
    assert not run.marker.exists()  # no fsmonitor was planted for a later git to run


def test_a_missing_hooks_directory_cannot_be_made(run: Run) -> None:
    assert_git_unchanged(run, "git_missing_hooks", ".git")
    assert not (run.results["git_missing_hooks"].workspace / ".git" / "hooks").exists()


def test_a_missing_git_directory_cannot_be_made(run: Run) -> None:
    text = assert_git_unchanged(run, "git_missing", ".git")
    assert not (run.results["git_missing"].workspace / ".git").exists()  # the placeholder is gone
    assert "Read-only file system" in text


def test_a_pointer_file_and_its_git_directory_are_read_only(run: Run) -> None:
    assert_git_unchanged(run, "git_pointer", ".git, gitdir")


def test_a_submodule_pointer_is_read_only(run: Run) -> None:
    assert_git_unchanged(run, "git_submodule", ".git, .gitmodules, sub/.git")  # .gitmodules: a starter file


def test_a_hooks_path_in_the_work_tree_is_read_only(run: Run) -> None:
    # husky's hooks path is .husky/_, whose scripts run .husky/<hook>: all of .husky is read-only
    assert_git_unchanged(run, "git_hooks_path", ".git, .husky")


def test_a_missing_hooks_path_cannot_be_made(run: Run) -> None:
    assert_git_unchanged(run, "git_missing_hooks_path", ".git, tools")
    assert not (run.results["git_missing_hooks_path"].workspace / "tools").exists()


def test_a_directory_above_git_state_cannot_be_renamed(run: Run) -> None:
    text = output(run, "git_renamed_parent")
    workspace = run.results["git_renamed_parent"].workspace
    assert host_git_ran_marker(workspace, run.marker, commit=True, as_owner=True) == []
    assert text.count("Device or resource busy") == 2, text  # libs/sub, then libs
    assert (workspace / "libs" / "sub" / ".git" / "HEAD").is_file()  # the repository is its own
    assert not (workspace / "libs" / "x").exists() and "libs/x" not in text


def test_a_repository_made_under_any_name_is_disabled_when_the_command_returns(run: Run) -> None:
    text = output(run, "git_planted")
    workspace = run.results["git_planted"].workspace
    assert host_git_ran_marker(workspace, run.marker, commit=True, as_owner=True) == []
    for head in ("HEAD", "src/HEAD", "new/.git/HEAD", "new/.git/modules/inner/HEAD"):
        assert f"{head} -> {head}.untrusted" in text, text
        assert not (workspace / head).exists() and (workspace / f"{head}.untrusted").is_file()


def test_an_included_config_is_read_only_and_pinned(run: Run) -> None:
    text = output(run, "git_included")
    workspace = run.results["git_included"].workspace
    assert host_git_ran_marker(workspace, run.marker, commit=True, as_owner=True) == []
    assert text.split("\n")[1].endswith(", read-only: .git, .gitconfig, conf/git.inc"), text
    assert "Device or resource busy" in text and text.count("Read-only file system") == 2, text
    assert not (workspace / "conf").exists()  # the placeholders are gone with the sandbox


def test_the_run_record_cannot_be_read_written_or_moved(run: Run) -> None:
    text = output(run, "run_record")
    workspace = run.results["run_record"].workspace
    assert text.split("\n")[1].endswith("; hidden: .agent/run.jsonl"), text
    assert text.count("Permission denied") == 2 and text.count("Device or resource busy") == 2, text
    assert (workspace / ".agent" / "run.jsonl").read_text() == '{"run": 1}\n'


# -- resources --------------------------------------------------------------------------------


def test_tmp_is_a_private_tmpfs_of_the_size_asked(run: Run) -> None:
    text = output(run, "tmp_is_bounded")
    df = next(x for x in text.splitlines() if x.startswith("tmpfs"))
    assert int(df.split()[1]) == 8 * 1024, text  # KiB
    assert "No space left on device" in text


def agent_running_a_command(uid: int, workspace: Path) -> int:
    """A forked agent, as ``uid``, running a long command that wrote to its $TMPDIR."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child, killed by the test
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            with safefs.Root(workspace) as root:
                tool = BashTool(root, timeout=60, base_env={"PATH": PATH})
                tool.execute({"command": "echo kept > $TMPDIR/left-behind; touch started; exec sleep 3601"})
        finally:
            os._exit(1)
    return pid


@pytest.mark.parametrize("who", ["root", "ordinary-user"])
def test_nothing_is_left_when_the_agent_is_killed(who: str) -> None:
    uid = 0 if who == "root" else ordinary_user()
    base = make_base("safefs-killed-")
    workspace = base / "work"
    workspace.mkdir()
    chown_tree(base, uid)
    before = set(Path("/tmp").iterdir())
    try:
        agent = agent_running_a_command(uid, workspace)
        deadline = time.monotonic() + 10
        while not (workspace / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(agent, signal.SIGKILL)
        os.waitpid(agent, 0)
        assert (workspace / "started").exists(), "the command did not start"
        assert survivors("sleep 3601") == []  # init died with the agent, and took the command
        left = [p.name for p in set(Path("/tmp").iterdir()) - before if p.name.startswith("safefs-sandbox")]
        assert left == []
        assert not list(Path("/tmp").glob("*/left-behind"))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_git_that_is_a_symlink_is_refused_not_run() -> None:
    """A link cannot be pinned (the command could replace it), so nothing runs."""
    base = make_base("safefs-git-link-")
    try:
        (base / "real-git").mkdir()
        workspace = base / "work"
        workspace.mkdir()
        (workspace / ".git").symlink_to(base / "real-git")
        with safefs.Root(workspace) as root:
            tool = BashTool(root, base_env={"PATH": PATH})
            out = tool.execute({"command": "touch ran"})
            tool.close()
        assert out.is_error
        assert ".git is a symbolic link" in out.content and "nothing ran" in out.content
        assert not (workspace / "ran").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_as_root_a_workspace_below_a_private_directory_is_reached_by_relative_paths_only() -> None:
    """docs/sandbox.md, "No root": uid 65534 cannot search a 0700 directory above a workspace
    outside /tmp, so only relative paths reach it; the same workspace below a searchable
    directory is reached by its absolute path too."""
    from safefs.sandbox import make_sandbox

    docs = " ".join((Path(__file__).resolve().parents[2] / "docs" / "sandbox.md").read_text().split())
    assert "**Outside `/tmp`, the workspace's absolute path works only where uid 65534" in docs
    base = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="safefs-private-parent-"))
    try:
        base.chmod(0o755)  # /var/tmp and this are searchable: only the parent's mode differs
        answers = {}
        for parent_mode in (0o700, 0o755):
            ws = base / oct(parent_mode) / "ws"
            ws.mkdir(parents=True)
            (ws / "a").write_text("inside\n")
            (base / oct(parent_mode)).chmod(parent_mode)
            with safefs.Root(ws) as root:
                sandbox = make_sandbox(root)
                try:
                    script = f"cat a && cat {ws}/a"
                    answers[parent_mode] = sandbox.run(
                        ["/bin/sh", "-c", script], {"PATH": PATH}, timeout=30, output_cap=1 << 16, cancel=None
                    )
                finally:
                    sandbox.close()
        private, searchable = answers[0o700], answers[0o755]
        assert private.output.startswith(b"inside\n") and b"Permission denied" in private.output, private
        assert private.returncode != 0
        assert searchable.output == b"inside\ninside\n" and searchable.returncode == 0, searchable
    finally:
        shutil.rmtree(base)
