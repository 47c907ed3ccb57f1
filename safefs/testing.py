"""Attack harness: a real attacker process, and races that count what a victim let out.

Threat model: docs/threat-model.md.

Public so that programs built on safefs (and its own tests and benchmarks) can show the attack
and the defence without private imports. Linux only (the attacker needs renameat2).

:class:`Swapper` is a separate process swapping two names with ``renameat2(RENAME_EXCHANGE)``
(a thread would be serialised with the victim by the GIL). :func:`race` builds a workspace
beside an ``outside`` directory, attacks a victim for a bounded time and classifies every
attempt:

- ``inside``: it succeeded and touched only the workspace;
- ``refused``: it raised an ``OSError`` and touched nothing outside;
- ``escapes``: outside content was read, or a file outside was created or changed. A write that
  reports success but cannot be found inside is counted as an escape too: when in doubt the
  count goes against the victim.

Two attacks (``swap=``): ``"dir"`` exchanges ``d/`` (a real directory holding ``f``) with
``evil``, a symlink to the outside directory (reads go to ``d/f``; each write creates a new
``d/wN``); ``"final"`` exchanges the file ``f`` with ``link``, a symlink to an outside file.
"""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self

from safefs import ResolverName, Root, _sys


def _swap_forever(a: bytes, b: bytes, stop: Any, ready: Any, swaps: Any) -> None:
    dirfd = _sys.AT_FDCWD
    n = 0
    ready.set()
    while not stop.is_set():
        for _ in range(64):
            try:
                _sys.renameat2(dirfd, a, dirfd, b, _sys.RENAME_EXCHANGE)
            except FileNotFoundError:
                continue  # the victim took one name back for a moment (an operation undone)
            n += 1
        swaps.value = n


class Swapper:
    """``with Swapper(a, b) as s:`` swaps ``a`` and ``b`` until the block ends; ``s.swaps`` counts.

    On exit an even number of swaps is ensured, so ``a`` and ``b`` are as they were.
    """

    def __init__(self, a: str | bytes, b: str | bytes) -> None:
        if not _sys.have_renameat2():
            raise OSError("the attacker needs renameat2(RENAME_EXCHANGE), which this platform lacks")
        self.a = os.fsencode(a)
        self.b = os.fsencode(b)
        ctx = mp.get_context("spawn")
        self._stop = ctx.Event()
        self._ready = ctx.Event()
        self._swaps = ctx.Value("q", 0, lock=False)
        self._proc = ctx.Process(
            target=_swap_forever, daemon=True, args=(self.a, self.b, self._stop, self._ready, self._swaps)
        )
        self.swaps = 0

    def __enter__(self) -> Swapper:
        self._proc.start()
        if not self._ready.wait(30):
            self._proc.kill()
            raise RuntimeError("attacker process did not start")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self.swaps = int(self._swaps.value)
        # Leave the tree as we found it: the loop may have stopped after an odd swap.
        if self._is_swapped():
            _sys.renameat2(_sys.AT_FDCWD, self.a, _sys.AT_FDCWD, self.b, _sys.RENAME_EXCHANGE)

    def _is_swapped(self) -> bool:
        return os.path.islink(self.a) and not os.path.islink(self.b)


def run_for(seconds: float, attempt: Any) -> int:
    """Call ``attempt()`` repeatedly for ``seconds``; returns how many times it ran."""
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        for _ in range(32):
            attempt()
        n += 32
    return n


OPS = ("read", "write")
SWAPS = ("dir", "final")

INSIDE_CONTENT = b"inside: the workspace's own file\n"
OUTSIDE_CONTENT = b"outside: a secret the workspace must never see\n"
OUTSIDE_TARGET = b"outside: a file the workspace must never change\n"


@dataclass
class RaceCounts:
    attempts: int = 0
    inside: int = 0
    refused: int = 0
    escapes: int = 0
    strategy: str = ""
    op: str = ""
    swap: str = ""
    swaps: int = field(default=0)  # exchanges the attacker made meanwhile

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Arena:
    """The temporary tree of one race: ``ws/`` (the workspace) beside ``outside/``."""

    base: str
    ws: str
    outside: str

    @classmethod
    def build(cls, swap: str) -> _Arena:
        base = tempfile.mkdtemp(prefix="safefs-race-")
        arena = cls(base, os.path.join(base, "ws"), os.path.join(base, "outside"))
        os.mkdir(arena.ws)
        os.mkdir(arena.outside)
        _put(os.path.join(arena.outside, "f"), OUTSIDE_CONTENT)
        _put(os.path.join(arena.outside, "target"), OUTSIDE_TARGET)
        if swap == "dir":
            os.mkdir(os.path.join(arena.ws, "d"))
            _put(os.path.join(arena.ws, "d", "f"), INSIDE_CONTENT)
            os.symlink(arena.outside, os.path.join(arena.ws, "evil"))
        else:
            _put(os.path.join(arena.ws, "f"), INSIDE_CONTENT)
            os.symlink(os.path.join(arena.outside, "target"), os.path.join(arena.ws, "link"))
        return arena

    def swap_pair(self, swap: str) -> tuple[str, str]:
        """(the real entry, the symlink) the attacker exchanges."""
        if swap == "dir":
            return os.path.join(self.ws, "d"), os.path.join(self.ws, "evil")
        return os.path.join(self.ws, "f"), os.path.join(self.ws, "link")

    def remove(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)  # rmtree never follows the symlinks


def _put(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _exists_at(dirfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _unlink_at(dirfd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dirfd)
    except FileNotFoundError:
        pass


class Victim(Protocol):
    """What a race attacks: reads and writes by root-relative path, inside ``with``."""

    def __enter__(self) -> Any: ...

    def __exit__(self, exc_type: Any, exc: Any, tb: Any, /) -> Any: ...

    def read(self, rel: str) -> bytes: ...

    def write(self, rel: str, data: bytes) -> None: ...


class SafefsVictim:
    """A :class:`safefs.Root` on the workspace, as a race victim."""

    def __init__(self, workspace: str, resolver: ResolverName = "auto") -> None:
        self.root = Root(workspace, resolver=resolver)

    def __enter__(self) -> SafefsVictim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.root.close()

    def read(self, rel: str) -> bytes:
        return self.root.read_bytes(rel)

    def write(self, rel: str, data: bytes) -> None:
        self.root.write_bytes(rel, data)


class GuardRefusal(PermissionError):
    """The realpath guard judged the path to be outside the workspace."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EXDEV, "path escapes workspace", path)


def is_inside(real_root: str, real_target: str) -> bool:
    """Node's ``relative()`` containment test: never a string-prefix comparison (which would let
    ``/ws-evil`` pass for ``/ws``)."""
    rel = os.path.relpath(real_target, real_root)
    return not (rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel))


def realpath_of_nearest_existing(path: str) -> str:
    """``realpath`` of ``path``, or of its nearest existing ancestor when it does not exist yet
    (a file about to be created), as the reference does for writes."""
    probe = path
    while True:
        try:
            return os.path.realpath(probe, strict=True)
        except FileNotFoundError:
            parent = os.path.dirname(probe)
            if parent == probe:
                raise
            probe = parent


class RealpathGuard:
    """The check-then-use guard most agent tools ship, a faithful port of the reference agent's.
    RACY BY DESIGN: the baseline a race shows escaping, not a defence.

    Per call: realpath of the root, the target resolved lexically against it (as Node's
    ``path.resolve``), realpath of the target (or nearest existing ancestor), a ``relative()``
    check, then the operation on the *path string*, which the kernel resolves all over again.
    Between the check and the use, anyone who can write inside the workspace can swap a directory
    for a symlink, and the use goes outside.
    """

    def __init__(self, workspace: str) -> None:
        self._root = os.path.abspath(workspace)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def check(self, rel: str) -> str:
        """The path string the operation will use, once the guard has accepted it."""
        real_root = os.path.realpath(self._root)
        target = os.path.normpath(os.path.join(real_root, rel))
        if not is_inside(real_root, target):
            raise GuardRefusal(rel)
        if not is_inside(real_root, realpath_of_nearest_existing(target)):
            raise GuardRefusal(rel)
        return target

    def read(self, rel: str) -> bytes:
        path = self.check(rel)
        with open(path, "rb") as f:  # the window: the path string is resolved again here
            return f.read()

    def write(self, rel: str, data: bytes) -> None:
        path = self.check(rel)
        with open(path, "wb") as f:
            f.write(data)

    def stat(self, rel: str) -> os.stat_result:
        return os.stat(self.check(rel))

    def listdir(self, rel: str) -> list[str]:
        return os.listdir(self.check(rel))

    def makedirs(self, rel: str) -> None:
        os.makedirs(self.check(rel), exist_ok=True)


GUARDS: dict[str, Callable[[str], Victim]] = {
    "realpath": RealpathGuard,
    "safefs-openat2": lambda ws: SafefsVictim(ws, "openat2"),
    "safefs-walk": lambda ws: SafefsVictim(ws, "walk"),
}


def race(
    open_victim: Callable[[str], Victim], op: str, seconds: float, swap: str = "dir", name: str = ""
) -> RaceCounts:
    """Attack the victim ``open_victim(workspace)`` doing ``op`` ("read" or "write") for
    ``seconds`` with the ``swap`` attack ("dir" or "final"); returns the counts. Needs
    renameat2 (Linux)."""
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, not {op!r}")
    if swap not in SWAPS:
        raise ValueError(f"swap must be one of {SWAPS}, not {swap!r}")
    if seconds <= 0:
        raise ValueError("seconds must be positive")
    arena = _Arena.build(swap)
    counts = RaceCounts(strategy=name, op=op, swap=swap)
    fds: list[int] = []
    try:
        with open_victim(arena.ws) as victim:
            # Descriptors for where things really are, whatever names the attacker has swapped.
            outside_fd = os.open(arena.outside, os.O_RDONLY | os.O_DIRECTORY)
            fds.append(outside_fd)
            real_dir_fd = os.open(
                os.path.join(arena.ws, "d") if swap == "dir" else arena.ws, os.O_RDONLY | os.O_DIRECTORY
            )
            fds.append(real_dir_fd)
            attempt = _make_attempt(
                victim.read, victim.write, op, swap, arena, counts, outside_fd, real_dir_fd, fds
            )
            with Swapper(*arena.swap_pair(swap)) as swapper:
                run_for(seconds, attempt)
            counts.swaps = swapper.swaps
    finally:
        for fd in fds:
            os.close(fd)
        arena.remove()
    return counts


def race_guard(guard: str, op: str, seconds: float, swap: str = "dir") -> RaceCounts:
    """:func:`race` against one of :data:`GUARDS` by name."""
    return race(GUARDS[guard], op, seconds, swap, name=guard)


def _make_attempt(
    read: Callable[[str], bytes],
    write: Callable[[str, bytes], None],
    op: str,
    swap: str,
    arena: _Arena,
    counts: RaceCounts,
    outside_fd: int,
    real_dir_fd: int,
    fds: list[int],
) -> Callable[[], None]:
    """The attempt for this op and attack; descriptors it opens go into ``fds`` (closed by the
    caller)."""
    target = "d/f" if swap == "dir" else "f"

    def read_once() -> None:
        counts.attempts += 1
        try:
            data = read(target)
        except OSError:
            counts.refused += 1
            return
        if data == INSIDE_CONTENT:
            counts.inside += 1
        else:
            counts.escapes += 1

    def write_new_file_once() -> None:
        n = counts.attempts
        counts.attempts += 1
        name = f"w{n}"
        try:
            write(f"d/{name}", b"written by attempt %d\n" % n)
            ok = True
        except OSError:
            ok = False
        landed_outside = _exists_at(outside_fd, name)
        landed_inside = _exists_at(real_dir_fd, name)
        if landed_outside:
            counts.escapes += 1
            _unlink_at(outside_fd, name)
        elif ok and landed_inside:
            counts.inside += 1
        elif ok:
            counts.escapes += 1  # reported success, found nowhere inside: counted against it
        else:
            counts.refused += 1
        if landed_inside:
            _unlink_at(real_dir_fd, name)

    outside_target = os.path.join(arena.outside, "target")
    link_name = os.path.join(arena.ws, "link")
    relink = os.path.join(arena.ws, ".relink")
    # The symlink inode, held by an O_PATH fd: its link count drops to 0 the moment a rename
    # replaces it, which a name-by-name check could not tell while the attacker is swapping.
    link_slot = len(fds)
    if op == "write" and swap == "final":
        fds.append(os.open(link_name, os.O_PATH | os.O_NOFOLLOW))

    def overwrite_final_once() -> None:
        n = counts.attempts
        counts.attempts += 1
        try:
            write("f", b"written by attempt %d\n" % n)
            ok = True
        except OSError:
            ok = False
        with open(outside_target, "rb") as f:
            changed = f.read() != OUTSIDE_TARGET
        if changed:
            counts.escapes += 1
            _put(outside_target, OUTSIDE_TARGET)
        elif ok:
            counts.inside += 1
        else:
            counts.refused += 1
        if os.fstat(fds[link_slot]).st_nlink == 0:
            # An atomic write renamed a regular file over the name that held the symlink: both
            # names are now regular files and the attack is disarmed. Exchanges preserve the
            # pair's kinds, so planting a new symlink over either name re-arms it.
            os.symlink(outside_target, relink)
            fd = os.open(relink, os.O_PATH | os.O_NOFOLLOW)
            os.rename(relink, link_name)
            os.close(fds[link_slot])
            fds[link_slot] = fd

    if op == "read":
        return read_once
    return write_new_file_once if swap == "dir" else overwrite_final_once
