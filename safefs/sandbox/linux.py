"""The Linux sandbox: Landlock, namespaces, rlimits, no-new-privs and an unprivileged uid.

Each command runs as the child of an init process, pid 1 of a new PID namespace, in a new mount
namespace and (unless the network is allowed) a new network namespace, which has only a
loopback device that is down. The command:

- reaches, through Landlock, the workspace and a private temporary directory read-write, the
  system directories read-only, a few devices, and its own /proc (a fresh one, showing only the
  namespace's processes); TCP bind and connect are denied, and signals and abstract unix
  sockets cannot leave the domain;
- finds ``.git/hooks`` and ``.git/config`` read-only and ``.git`` pinned in place (bind mounts:
  Landlock can only add rights beneath a directory, never take them away);
- runs with rlimits on CPU time, address space, file size, open files and processes, and a
  seccomp filter refusing AF_UNIX and AF_VSOCK sockets and io_uring: Landlock does not mediate
  connecting to a Unix socket by path, and a world-writable one (D-Bus, X11, a user's systemd)
  would lead out;
- when the agent is root, runs as uid/gid 65534, which keeps no capability anywhere. The
  workspace is then seen through an idmapped mount that shows its owner's files as 65534's, so
  the command can write them and what it creates is owned, on disk, by the workspace's owner.
  Files of other owners in the workspace are not writable to it.
- when the agent is an ordinary user, runs as that user inside a user namespace (which is what
  lets it make the other namespaces), with every capability dropped at exec.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import safefs
from safefs.sandbox import landlock
from safefs.sandbox.process import CommandOutcome, run_in_process_group, spawn_and_supervise

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

DROPPED_UID = DROPPED_GID = 65534
SYSTEM_READ_ONLY = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


@dataclass(frozen=True)
class Limits:
    """Per-command rlimits (``processes`` counts the sandbox uid's processes)."""

    cpu_seconds: int = 600
    address_space: int = 16 << 30
    file_size: int = 4 << 30
    open_files: int = 1024
    processes: int = 512


class LinuxSandbox:
    """Runs commands confined as the module docstring says; :meth:`run` never leaves a process."""

    def __init__(self, root: safefs.Root, *, allow_network: bool = False, limits: Limits = Limits()) -> None:
        self.root = root
        self.allow_network = allow_network
        self.limits = limits
        self.abi = landlock.abi_version()  # LandlockUnavailable: the caller fails closed
        self.as_root = os.geteuid() == 0
        self._lock = threading.Lock()
        self._idmap_fd: int | None = None
        self._tmp: str | None = None

    @property
    def uid(self) -> int:
        return DROPPED_UID if self.as_root else os.getuid()

    def describe(self) -> str:
        parts = [
            f"landlock abi {self.abi}",
            "network allowed" if self.allow_network else "no network",
            "no unix sockets",
            f"uid {self.uid}",
            "pid ns",
            "rlimits",
            ".git/hooks read-only",
        ]
        return "sandbox: " + ", ".join(parts)

    def close(self) -> None:
        """Remove the private temporary directory and release the idmap namespace."""
        with self._lock:
            if self._idmap_fd is not None:
                os.close(self._idmap_fd)
                self._idmap_fd = None
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None

    def _idmap_userns(self) -> int:
        """The user namespace mapping the workspace owner's ids to the dropped ones (made once)."""
        with self._lock:
            if self._idmap_fd is None:
                st = os.fstat(self.root.fileno())
                fd = int(
                    landlock.native.lib.sbx_make_idmap_userns(st.st_uid, st.st_gid, DROPPED_UID, DROPPED_GID)
                )
                if fd < 0:
                    raise OSError(-fd, f"cannot create the idmap user namespace: {os.strerror(-fd)}")
                self._idmap_fd = fd
            return self._idmap_fd

    def _ruleset(self, tmp: str) -> int:
        grants = [landlock.Grant(tmp, landlock.READ_WRITE)]
        grants += [landlock.Grant(p, landlock.READ_ONLY) for p in SYSTEM_READ_ONLY]
        grants += [landlock.Grant(p, landlock.DEVICE_READ_WRITE) for p in DEVICES]
        return landlock.create_ruleset(
            grants,
            abi=self.abi,
            restrict_network=not self.allow_network,
            extra_fds=[(self.root.fileno(), landlock.READ_WRITE)],
        )

    def private_tmp(self) -> str:
        """$TMPDIR (and $HOME) of every command: made on first use, removed by :meth:`close`."""
        with self._lock:
            if self._tmp is None or not os.path.isdir(self._tmp):
                tmp = tempfile.mkdtemp(prefix="safefs-sandbox-tmp-")
                if self.as_root:
                    os.chown(tmp, DROPPED_UID, DROPPED_GID)
                self._tmp = tmp
                # Removed at close(), or at the latest when the agent exits.
                weakref.finalize(self, shutil.rmtree, tmp, True)
            return self._tmp

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        timeout: float,
        output_cap: int,
        cancel: threading.Event | None,
    ) -> CommandOutcome:
        tmp = self.private_tmp()
        ruleset = -1
        try:
            ruleset = self._ruleset(tmp)
            idmap = self._idmap_userns() if self.as_root else -1
            env = {**env, "TMPDIR": tmp, "HOME": tmp}
            keep: list[Any] = []
            spec = self._spec(argv, env, ruleset, idmap, keep)
            return spawn_and_supervise(
                lambda out_w, st_w: _spawn(spec, keep, out_w, st_w),
                timeout=timeout,
                output_cap=output_cap,
                cancel=cancel,
            )
        except OSError as exc:
            return CommandOutcome(b"", None, setup_error=str(exc))
        finally:
            if ruleset >= 0:
                os.close(ruleset)

    def _spec(
        self, argv: Sequence[str], env: Mapping[str, str], ruleset: int, idmap: int, keep: list[Any]
    ) -> Any:
        ffi = landlock.native.ffi
        fd = self.root.fileno()
        workspace = os.readlink(f"/proc/self/fd/{fd}")
        if not workspace.startswith("/") or not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(f"the workspace has no path any more ({workspace!r})")
        flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
        if not self.allow_network:
            flags |= CLONE_NEWNET
        if not self.as_root:
            flags |= CLONE_NEWUSER
        spec = _command_spec(keep, argv, env, fd)
        spec.workspace = _cstr(ffi, keep, workspace)
        spec.ruleset_fd = ruleset
        spec.proc_access = landlock.READ_FILE | landlock.READ_DIR
        spec.clone_flags = flags
        spec.drop_uid = DROPPED_UID if self.as_root else -1
        spec.drop_gid = DROPPED_GID if self.as_root else -1
        spec.idmap_userns_fd = idmap
        spec.mount_proc = 1
        spec.protect_git = 1
        spec.seccomp = 1
        spec.rlim_cpu = self.limits.cpu_seconds
        spec.rlim_as = self.limits.address_space
        spec.rlim_fsize = self.limits.file_size
        spec.rlim_nofile = self.limits.open_files
        spec.rlim_nproc = self.limits.processes
        return spec


def _command_spec(keep: list[Any], argv: Sequence[str], env: Mapping[str, str], fd: int) -> Any:
    """A spec running ``argv`` with ``env`` in the directory open on ``fd``, and no layer yet."""
    ffi = landlock.native.ffi
    spec = ffi.new("struct sbx_spec *")
    keep.append(spec)
    spec.exe = _cstr(ffi, keep, argv[0])
    spec.argv = _cstrs(ffi, keep, argv)
    spec.envp = _cstrs(ffi, keep, [f"{k}={v}" for k, v in env.items()])
    spec.workspace = ffi.NULL
    spec.workspace_fd = fd
    spec.ruleset_fd = spec.drop_uid = spec.drop_gid = spec.idmap_userns_fd = -1
    spec.map_uid, spec.map_gid = os.getuid(), os.getgid()
    return spec


def _cstr(ffi: Any, keep: list[Any], text: str) -> Any:
    value = ffi.new("char[]", os.fsencode(text))
    keep.append(value)
    return value


def _cstrs(ffi: Any, keep: list[Any], items: Sequence[str]) -> Any:
    array = ffi.new("char *[]", [_cstr(ffi, keep, item) for item in items] + [ffi.NULL])
    keep.append(array)
    return array


INIT_STACK_SIZE = 64 * 1024


def _spawn(spec: Any, keep: list[Any], out_w: int, st_w: int) -> int:
    """Start the launcher's init; ``keep`` holds every buffer it reads (the spec, the strings,
    its stack) and must outlive it: init shares this process's memory until it is reaped."""
    stack = landlock.native.ffi.new("char[]", INIT_STACK_SIZE)
    keep.append(stack)
    spec.init_stack = stack
    spec.init_stack_size = INIT_STACK_SIZE
    spec.out_fd = out_w
    spec.status_fd = st_w
    pid = int(landlock.native.lib.sbx_spawn(spec))
    if pid < 0:
        raise OSError(-pid, f"cannot start the sandbox: {os.strerror(-pid)}")
    return pid


def spawn_pid_namespace_only(
    argv: Sequence[str],
    env: Mapping[str, str],
    root: safefs.Root,
    *,
    timeout: float,
    output_cap: int,
    cancel: threading.Event | None,
) -> CommandOutcome:
    """``--sandbox=off`` on Linux: no confinement at all, but still a PID namespace of its own
    so that every process the command started is killed at the end. Where no PID namespace can be
    had (user namespaces disabled), the command's process group it is."""
    keep: list[Any] = []
    spec = _command_spec(keep, argv, env, root.fileno())
    spec.clone_flags = CLONE_NEWPID | (0 if os.geteuid() == 0 else CLONE_NEWUSER)
    try:
        outcome = spawn_and_supervise(
            lambda out_w, st_w: _spawn(spec, keep, out_w, st_w),
            timeout=timeout,
            output_cap=output_cap,
            cancel=cancel,
        )
    except OSError:
        outcome = None  # nothing started
    if outcome is not None and outcome.setup_error is None:
        return outcome
    return run_in_process_group(
        argv,
        cwd=f"/proc/self/fd/{root.fileno()}",
        env=env,
        timeout=timeout,
        output_cap=output_cap,
        cancel=cancel,
    )
