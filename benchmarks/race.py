"""Escapes under attack: one strategy reads or writes while a separate process swaps names.

``race_strategy`` builds its own workspace beside an ``outside`` directory, starts
:class:`benchmarks.attacker.Swapper` and has the strategy work for a bounded time, classifying
every attempt:

- ``inside``: it succeeded and touched only the workspace;
- ``refused``: it raised an ``OSError`` and touched nothing outside;
- ``escapes``: outside content was read, or a file outside was created or changed. A write that
  reports success but cannot be found inside is counted as an escape too: when in doubt the
  count goes against the strategy.

Two attacks (``swap=``):

- ``"dir"``: ``d/`` (a real directory holding ``f``) is exchanged with ``evil``, a symlink to the
  outside directory. Reads go to ``d/f``; each write creates a new file ``d/wN``.
- ``"final"``: the file ``f`` is exchanged with ``link``, a symlink to an outside file. Reads and
  writes go to ``f``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from benchmarks.attacker import Swapper, run_for
from benchmarks.strategies import open_strategy

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


def race_strategy(strategy: str, op: str, seconds: float, swap: str = "dir") -> RaceCounts:
    """Attack ``strategy`` doing ``op`` ("read" or "write") for ``seconds`` with the ``swap``
    attack ("dir" or "final"); returns the counts. Needs renameat2 (Linux)."""
    return race_victim(strategy, lambda ws: open_strategy(strategy, ws), op, seconds, swap)


def race_victim(label: str, open_victim: Callable[[str], Any], op: str, seconds: float,
                swap: str = "dir") -> RaceCounts:
    """As :func:`race_strategy`, for any victim: ``open_victim(workspace)`` returns a context
    manager whose value has ``read(path) -> bytes`` and ``write(path, data)``, failing with
    OSError (such as an MCP server behind a client session)."""
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, not {op!r}")
    if swap not in SWAPS:
        raise ValueError(f"swap must be one of {SWAPS}, not {swap!r}")
    if seconds <= 0:
        raise ValueError("seconds must be positive")
    arena = _Arena.build(swap)
    counts = RaceCounts(strategy=label, op=op, swap=swap)
    fds: list[int] = []
    try:
        with open_victim(arena.ws) as victim:
            # Descriptors for where things really are, whatever names the attacker has swapped.
            outside_fd = os.open(arena.outside, os.O_RDONLY | os.O_DIRECTORY)
            fds.append(outside_fd)
            real_dir_fd = os.open(os.path.join(arena.ws, "d") if swap == "dir" else arena.ws,
                                  os.O_RDONLY | os.O_DIRECTORY)
            fds.append(real_dir_fd)
            attempt = _make_attempt(victim.read, victim.write, op, swap, arena, counts,
                                    outside_fd, real_dir_fd, fds)
            with Swapper(*arena.swap_pair(swap)) as swapper:
                run_for(seconds, attempt)
            counts.swaps = swapper.swaps
    finally:
        for fd in fds:
            os.close(fd)
        arena.remove()
    return counts


def _make_attempt(read: Callable[[str], bytes], write: Callable[[str, bytes], None], op: str,
                  swap: str, arena: _Arena, counts: RaceCounts, outside_fd: int,
                  real_dir_fd: int, fds: list[int]) -> Callable[[], None]:
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
