"""What the sandbox tests share: the refusal check, an ordinary user made with ``useradd``, and
running a piece of the test as that user (a forked child that drops to it before it opens the
workspace or runs the tool)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import safefs
from safefs.sandbox import Refused, make_sandbox

PATH = "/usr/local/bin:/usr/bin:/bin"
TEST_USER = "safefs-sbx-test"
# Outside /tmp: each command's /tmp is a private tmpfs, which would hide a world made under it
# (and so hide what the test means to show the sandbox stopping).
WORLD_PARENT = "/var/tmp"


def sandbox_refusal() -> str | None:
    with tempfile.TemporaryDirectory() as d, safefs.Root(d) as root:
        sandbox = make_sandbox(root)
        sandbox.close()
        return sandbox.refusal if isinstance(sandbox, Refused) else None


def ordinary_user() -> int:
    """The uid of an ordinary (non-root, no capability) user, created once with ``useradd``."""
    try:
        return pwd.getpwnam(TEST_USER).pw_uid
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if useradd is None:
        raise RuntimeError("useradd is not installed")
    subprocess.run([useradd, "--system", "--no-create-home", "--shell", "/bin/false", TEST_USER], check=True)
    return pwd.getpwnam(TEST_USER).pw_uid


def make_base(prefix: str) -> Path:
    base = Path(tempfile.mkdtemp(prefix=prefix, dir=WORLD_PARENT))
    base.chmod(0o755)
    return base


def chown_tree(path: Path, uid: int) -> None:
    for dirpath, _dirs, files in os.walk(path):
        for name in [dirpath, *(os.path.join(dirpath, f) for f in files)]:
            os.chown(name, uid, uid, follow_symlinks=False)


def as_user(uid: int, fn: Callable[[], Any], *, fork: bool = False) -> Any:
    """``fn()`` as ``uid``, its JSON-able result returned here: in a forked child, or for uid 0
    without ``fork`` in this process."""
    if uid == 0 and not fork:
        return json.loads(json.dumps(fn()))
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        status = 0
        try:
            os.close(read_end)
            if uid != 0:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            payload: Any = {"result": fn()}
        except BaseException as exc:
            payload = {"error": repr(exc), "notes": getattr(exc, "__notes__", [])}
            status = 1
        try:
            data = json.dumps(payload).encode()
            while data:
                data = data[os.write(write_end, data) :]
        finally:
            os._exit(status)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    got = json.loads(b"".join(chunks))
    assert "error" not in got, got
    return got["result"]


def ran_in_sandbox(content: str) -> str:
    """``content`` of a bash result, which must have run (not been refused) in the sandbox."""
    status, layers = content.split("\n", 2)[:2]
    assert status.startswith(("exit status ", "killed by signal ")), content
    assert layers.startswith("sandbox: landlock abi "), content
    return content
