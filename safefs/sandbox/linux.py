"""The Linux sandbox: Landlock, namespaces, seccomp, rlimits, no-new-privs and an unprivileged uid.

Each command runs as the child of an init process, pid 1 of a new PID namespace, in a new mount
namespace and (unless the network is allowed) a new network namespace, which has only a
loopback device that is down. The command:

- reaches, through Landlock, the workspace and its own ``/tmp`` read-write, the system
  directories read-only, a few devices, and its own /proc (a fresh one, showing only the
  namespace's processes); TCP bind and connect are denied, and signals and abstract unix
  sockets cannot leave the domain. Below Landlock ABI 3 (Linux 6.2) ``truncate(2)`` is not
  mediated, so such a kernel is refused unless the operator accepts that loss;
- gets ``/tmp`` (its ``$TMPDIR`` and ``$HOME``) as a fresh tmpfs of a bounded size, which exists
  only in its mount namespace: it is gone when the command is, even if the agent is killed;
- sees the workspace mounted nosuid and nodev, finds every repository and what git reads for it
  read-only and the directories above them pinned, and has the repositories it made disabled
  after it (:mod:`safefs.sandbox.git`; bind mounts: Landlock can only add rights beneath a
  directory, never take them away); the ``hidden`` files (a run's session and audit log) are
  covered by an inaccessible device node it can neither open, rename nor replace;
- runs with rlimits on CPU time, address space, file size, open files and processes, in a fresh
  empty session keyring, under the seccomp filter of :mod:`safefs.sandbox.seccomp` (no Unix
  sockets but stream pairs, no setuid or setgid mode bits, no key calls, no io_uring);
- when the agent is root, runs as uid/gid 65534, which keeps no capability anywhere. The
  workspace is then seen through an idmapped mount that shows its owner's files as 65534's, so
  the command can write them and what it creates is owned, on disk, by the workspace's owner.
  Files of other owners in the workspace are not writable to it.
- when the agent is an ordinary user, runs as that user inside a user namespace (which is what
  lets it make the other namespaces), with every capability dropped at exec.

The free space of the workspace's filesystem is checked before and after each command, and a
note says when it is low or the command used much of it (only one file's size is bounded, by
``RLIMIT_FSIZE``). Memory is bounded by the address-space rlimit per process; no cgroup is used,
and the result says why (:mod:`safefs.sandbox.cgroup`).
"""

from __future__ import annotations

import dataclasses
import os
import stat
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import safefs
from safefs.sandbox import DEFAULT_TMP_SIZE, cgroup, changes, git, landlock, seccomp
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
COMMAND_TMP = "/tmp"
MIB = 1 << 20

LOW_SPACE = 256 * MIB  # below this much free space before a command, the result says so
LARGE_GROWTH = 256 * MIB  # a command that used this much of the workspace's filesystem is named
TRUNCATE_ABI = 3
TRUNCATE_KERNEL = "6.2"


@dataclass(frozen=True)
class Limits:
    """Per-command rlimits (``processes`` counts the sandbox uid's processes; ``file_size`` is
    the largest file a command may write, ``tmp_size`` the size of its ``/tmp``)."""

    cpu_seconds: int = 600
    address_space: int = 16 << 30
    file_size: int = 1 << 30
    open_files: int = 1024
    processes: int = 512
    tmp_size: int = DEFAULT_TMP_SIZE


class LandlockTooOld(OSError):
    """The kernel's Landlock ABI leaves a right unmediated that the sandbox relies on."""


def check_landlock_abi(abi: int, *, allow_old: bool) -> None:
    """:class:`LandlockTooOld` below ABI 3 unless ``allow_old`` accepts what is lost."""
    if abi >= TRUNCATE_ABI or allow_old:
        return
    raise LandlockTooOld(
        f"Landlock ABI {abi} of this kernel (Linux {os.uname().release}) does not mediate "
        f"truncate(2) (the TRUNCATE right, ABI {TRUNCATE_ABI}, Linux {TRUNCATE_KERNEL}): a command "
        "could empty any file outside the workspace that its uid may write; "
        "--allow-old-landlock runs commands anyway, without that protection"
    )


def free_bytes(fd: int) -> int:
    st = os.fstatvfs(fd)
    return st.f_bavail * st.f_frsize


def space_notes(before: int, after: int) -> tuple[str, ...]:
    """Notes for a result on the workspace's free space before and after the command."""
    notes = []
    if before < LOW_SPACE:
        notes.append(f"note: the workspace's filesystem had only {before // MIB} MiB free before the command")
    if before - after >= LARGE_GROWTH:
        notes.append(
            f"note: the command used {(before - after) // MIB} MiB of the workspace's filesystem "
            f"({after // MIB} MiB free now)"
        )
    return tuple(notes)


class LinuxSandbox:
    """Runs commands confined as the module docstring says; :meth:`run` never leaves a process.

    ``landlock_abi`` is the ABI the rulesets are made for (default: the kernel's): an older one
    gives exactly the rights that ABI knows, as an older kernel would. ``allow_old_landlock``
    accepts an ABI below 3 (see :func:`check_landlock_abi`). ``seccomp_rules``: what the filter
    refuses (:data:`safefs.sandbox.seccomp.RULES`)."""

    def __init__(
        self,
        root: safefs.Root,
        *,
        allow_network: bool = False,
        limits: Limits = Limits(),
        landlock_abi: int | None = None,
        allow_old_landlock: bool = False,
        seccomp_rules: Sequence[seccomp.Rule] = seccomp.RULES,
        hidden: Sequence[str] = (),
    ) -> None:
        self.root = root
        self.hidden = tuple(os.path.join(os.getcwd(), path) for path in hidden)
        self.allow_network = allow_network
        self.limits = limits
        kernel_abi = landlock.abi_version()  # LandlockUnavailable: the caller fails closed
        self.abi = kernel_abi if landlock_abi is None else min(landlock_abi, kernel_abi)
        check_landlock_abi(self.abi, allow_old=allow_old_landlock)
        self.seccomp_program = seccomp.program_for_this_machine(tuple(seccomp_rules))
        self.as_root = os.geteuid() == 0
        self.no_cgroup = cgroup.unavailable_reason()
        self._lock = threading.Lock()
        self._idmap_fd: int | None = None
        # Placeholders stay until close() (or the agent's exit): removing a directory that was a
        # mount point in a namespace just torn down costs milliseconds, and commands run at once
        # share them. One left by a killed agent is an empty directory, which git passes over.
        self._git_lock = threading.Lock()
        self._placeholders = git.GitPlan()
        self._broken: str | None = None  # set when a command's repository could not be disabled
        self._base: git.GitPlan | None = None  # the repositories' plan, made by the first command
        self._recorders = changes.Recorders(root)  # the kernel's records of what commands changed
        weakref.finalize(self, self._recorders.close)
        weakref.finalize(self, git.remove_placeholders, root, self._placeholders)

    @property
    def uid(self) -> int:
        return DROPPED_UID if self.as_root else os.getuid()

    def describe(self) -> str:
        return self._layers("read-only: .git and what it names")

    def _layers(self, read_only: str) -> str:
        landlock_part = f"landlock abi {self.abi}"
        if self.abi < TRUNCATE_ABI:
            landlock_part += " (truncate not mediated)"
        parts = [
            landlock_part,
            "network allowed" if self.allow_network else "no network",
            "no unix sockets or datagram pairs",
            "no setuid/setgid bits, workspace nosuid",
            "fresh keyring",
            f"uid {self.uid}",
            "pid ns",
            f"rlimits (file size {self.limits.file_size // MIB} MiB)",
            f"/tmp a private {self.limits.tmp_size // MIB} MiB tmpfs",
            f"no cgroup ({self.no_cgroup}; memory bounded per process only)",
            read_only,
        ]
        return "sandbox: " + ", ".join(parts)

    def close(self) -> None:
        """Remove the placeholders and release the idmap namespace."""
        with self._git_lock:
            git.remove_placeholders(self.root, self._placeholders)
        self._recorders.close()
        with self._lock:
            if self._idmap_fd is not None:
                os.close(self._idmap_fd)
                self._idmap_fd = None

    def restore(self, path: str, aside: str) -> None:
        """Put back a starter file a command made and that was set aside (``set_aside`` of its
        outcome), the person having chosen to keep it; read-only from the next command on."""
        with self._git_lock:
            git.restore_starter(self.root, path, aside)
            self._base = None  # planned afresh by the next command, which finds it read-only

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

    def _ruleset(self) -> int:
        # /tmp is granted by the launcher, once its tmpfs is mounted (a new inode, like /proc).
        grants = [landlock.Grant(p, landlock.READ_ONLY) for p in SYSTEM_READ_ONLY]
        grants += [landlock.Grant(p, landlock.DEVICE_READ_WRITE) for p in DEVICES]
        return landlock.create_ruleset(
            grants,
            abi=self.abi,
            restrict_network=not self.allow_network,
            extra_fds=[(self.root.fileno(), landlock.READ_WRITE)],
        )

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        timeout: float,
        output_cap: int,
        cancel: threading.Event | None,
    ) -> CommandOutcome:
        ruleset = -1
        try:
            with self._git_lock:
                if self._broken is not None:
                    raise OSError(self._broken)
                plan = self._plan()
            ruleset = self._ruleset()
            idmap = self._idmap_userns() if self.as_root else -1
            env = {**env, "TMPDIR": COMMAND_TMP, "HOME": COMMAND_TMP}
            keep: list[Any] = []
            spec = self._spec(argv, env, ruleset, idmap, plan, keep)
            before = free_bytes(self.root.fileno())
            record = self._recorders.take()
            try:
                try:
                    outcome = supervised(spec, keep, timeout=timeout, output_cap=output_cap, cancel=cancel)
                except BaseException:
                    self._disable_repositories(plan, record)  # whatever ran of it
                    raise
                disabled, set_aside = self._disable_repositories(plan, record)
            finally:
                if record is not None:
                    self._recorders.give_back(record)
            notes = space_notes(before, free_bytes(self.root.fileno())) + disabled
            read_only = f"read-only: {', '.join(plan.read_only)}" if plan.read_only else "nothing read-only"
            if plan.hidden:
                read_only += f"; hidden: {', '.join(plan.hidden)}"
            return dataclasses.replace(
                outcome, notes=outcome.notes + notes, layers=self._layers(read_only), set_aside=set_aside
            )
        except OSError as exc:
            return CommandOutcome(b"", None, setup_error=str(exc))
        finally:
            if ruleset >= 0:
                os.close(ruleset)

    def _plan(self) -> git.GitPlan:
        """This command's plan: the workspace's repositories as found by the first command's
        search (nothing a command leaves is a repository, and nothing read-only to it changes),
        searched again only when a path of it is gone; the hidden files as they are now."""
        base = self._base
        if base is None or not all(
            self.root.exists(path, follow_symlinks=False) for path in base.read_only + base.pinned
        ):
            base = git.plan_protection(self.root)
            self._placeholders.placeholders += base.placeholders
            self._base = base
        plan = dataclasses.replace(
            base,
            read_only=list(base.read_only),
            placeholders=[],
            hidden=git.hidden_files(self.root, self.hidden),
        )
        plan.finish()
        return plan

    def _disable_repositories(
        self, plan: git.GitPlan, record: changes.Record | None
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        """Notes on the repositories the command made, disabled (:mod:`safefs.sandbox.git`),
        judged where the kernel recorded changes, or by a search of the workspace when it kept
        no complete record."""
        with self._git_lock:
            try:
                if record is not None:
                    record.end()
                changed = None if record is None else record.directories()
                done = git.disable_new_repositories(self.root, plan, changed)
                starters = git.set_aside_new_starters(self.root, plan, changed)
                if plan.stale:
                    self._base = None
            except OSError as exc:
                self._broken = f"a repository the last command made could not be disabled ({exc})"
                return (f"note: {self._broken}; no further command will run",), ()
        notes = []
        if done:
            notes.append(
                "note: this command made git repositories, disabled so that git outside the sandbox "
                "does not use their config or hooks: " + "; ".join(done)
            )
        if starters:
            notes.append(
                "note: this command made files that an editor, a shell or a tool runs when the "
                "folder is opened or used, set aside: " + "; ".join(f"{a} -> {b}" for a, b in starters)
            )
        return tuple(notes), tuple(starters)

    def _spec(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        ruleset: int,
        idmap: int,
        plan: git.GitPlan,
        keep: list[Any],
    ) -> Any:
        ffi = landlock.native.ffi
        fd = self.root.fileno()
        workspace = os.readlink(f"/proc/self/fd/{fd}")
        if not workspace.startswith("/") or not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(f"the workspace has no path any more ({workspace!r})")
        if workspace == COMMAND_TMP:
            raise OSError(f"the workspace cannot be {COMMAND_TMP}, the command's private tmpfs")
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
        owner = (DROPPED_UID, DROPPED_GID) if self.as_root else (os.getuid(), os.getgid())
        spec.tmp_options = _cstr(
            ffi, keep, f"size={self.limits.tmp_size},mode=0700,uid={owner[0]},gid={owner[1]}"
        )
        spec.tmp_access = landlock.READ_WRITE & landlock.handled_fs(self.abi)
        spec.read_only = _cstrs(ffi, keep, plan.read_only)
        spec.pinned = _cstrs(ffi, keep, plan.pinned)
        spec.hidden = _cstrs(ffi, keep, plan.hidden)
        program = ffi.new("char[]", self.seccomp_program)
        keep.append(program)
        spec.seccomp_filter = program
        spec.seccomp_len = seccomp.instruction_count(self.seccomp_program)
        spec.new_session_keyring = 1
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
    spec.tmp_options = spec.read_only = spec.pinned = spec.hidden = spec.seccomp_filter = ffi.NULL
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


def supervised(
    spec: Any, keep: list[Any], *, timeout: float, output_cap: int, cancel: threading.Event | None
) -> CommandOutcome:
    """Start ``spec``'s init and watch it until its command ends (``OSError``: nothing started)."""
    return spawn_and_supervise(
        lambda out_w, st_w: _spawn(spec, keep, out_w, st_w),
        timeout=timeout,
        output_cap=output_cap,
        cancel=cancel,
    )


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
        outcome: CommandOutcome | None = supervised(
            spec, keep, timeout=timeout, output_cap=output_cap, cancel=cancel
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
