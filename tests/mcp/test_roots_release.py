"""Directories a roots change replaces are closed once no call uses them: over stdio and over
HTTP the server's fds stay flat however often the roots change. At the fd limit a narrowing
fails closed: nothing is served, and every call says why; never the whole DIR."""

from __future__ import annotations

import resource
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from safefs.mcp.directories import Directories
from safefs.mcp.in_use import DirectoriesInUse
from tests.mcp.raw_stdio import RawServer

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts fds in /proc")


def two_roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    (ws / "b").mkdir()
    (ws / "a" / "in-a.txt").write_text("a\n")
    (ws / "b" / "in-b.txt").write_text("b\n")
    return ws, ws / "a", ws / "b"


def test_roots_changes_leave_no_fd_behind_over_stdio(tmp_path: Path) -> None:
    ws, a, b = two_roots(tmp_path)
    with RawServer(str(ws)) as server:
        server.start(roots=[a.as_uri()])
        assert server.text(1, "list_directory", {"path": "."}) == (False, "[FILE] in-a.txt")
        before = server.fds()
        for i in range(300):
            server.change_roots([(b if i % 2 == 0 else a).as_uri()])
            if i % 50 == 0:  # a call in between uses the new directories, then lets them go
                assert server.text(f"c{i}", "list_directory", {"path": "."})[0] is False
        assert server.text(2, "list_directory", {"path": "."}) == (False, "[FILE] in-a.txt")
        after = server.fds()
        print(f"\nfds before 300 roots changes: {before}, after: {after}")
        assert after == before
        assert server.close()[0] == 0


def test_at_the_fd_limit_narrowing_serves_nothing_and_says_why(tmp_path: Path) -> None:
    ws, a, b = two_roots(tmp_path)
    with RawServer(str(ws)) as server:
        server.start(roots=[a.as_uri()])
        assert server.text(0, "list_directory", {"path": "."}) == (False, "[FILE] in-a.txt")  # all imported
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        held = server.fds()
        resource.prlimit(server.proc.pid, resource.RLIMIT_NOFILE, (held, hard))  # no fd can be opened
        server.change_roots([b.as_uri()])
        error, allowed = server.text(1, "list_allowed_directories", {})
        error_read, read = server.text(2, "read_text_file", {"path": f"{a}/in-a.txt"})
        resource.prlimit(server.proc.pid, resource.RLIMIT_NOFILE, (held + 64, hard))
        server.change_roots([b.as_uri()])
        recovered = server.text(3, "read_text_file", {"path": "in-b.txt"})
        code, err = server.close()
    why = "the client's roots could not be opened (Too many open files); nothing is served until they change"
    assert (error, allowed) == (False, f"Allowed directories:\n\n\nNote: {why}")
    assert (error_read, read) == (True, f"no allowed directories: {why}")
    assert recovered == (False, "b\n")
    assert code == 0 and why in err.decode()


class LeaseMachine(RuleBasedStateMachine):
    """Leases and retirements in any order: a set of directories is closed exactly when it has
    been retired and no lease on it is left, and the kept DIRs are never closed."""

    def __init__(self) -> None:
        super().__init__()
        self.keep = Directories([])
        self.sets = [Directories([]) for _ in range(3)]
        self.closed: dict[int, int] = {}
        for d in [self.keep, *self.sets]:
            d.close = self._closer(id(d))  # type: ignore[method-assign]
        self.in_use = DirectoriesInUse(self.keep)
        self.leases: dict[int, int] = {}
        self.retired: set[int] = set()

    def _closer(self, key: int) -> Callable[[], None]:
        def close() -> None:
            self.closed[key] = self.closed.get(key, 0) + 1

        return close

    def _all(self) -> list[Directories]:
        return [self.keep, *self.sets]

    @rule(i=st.integers(0, 3))
    def acquire(self, i: int) -> None:
        d = self._all()[i]
        if id(d) in self.retired and not self.leases.get(id(d)):
            return  # closed: the server never leases a set it has replaced
        self.in_use.acquire(d)
        self.leases[id(d)] = self.leases.get(id(d), 0) + 1

    @precondition(lambda self: any(self.leases.values()))
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        held = [d for d in self._all() if self.leases.get(id(d))]
        d = data.draw(st.sampled_from(held))
        self.in_use.release(d)
        self.leases[id(d)] -= 1

    @rule(i=st.integers(0, 3))
    def retire(self, i: int) -> None:
        d = self._all()[i]
        if id(d) in self.retired:
            return  # each set is replaced once
        self.in_use.retire(d)
        self.retired.add(id(d))

    @invariant()
    def closed_exactly_when_retired_and_unused(self) -> None:
        for d in self.sets:
            expected = 1 if id(d) in self.retired and not self.leases.get(id(d)) else 0
            assert self.closed.get(id(d), 0) == expected
        assert self.closed.get(id(self.keep), 0) == 0


TestLeases = LeaseMachine.TestCase
TestLeases.settings = settings(max_examples=200, stateful_step_count=30, deadline=None)


def test_an_http_call_ends_its_lease_once_whether_it_ran_or_was_abandoned_first(tmp_path: Path) -> None:
    from safefs.mcp.server import LeasedCall
    from safefs.mcp.tools import all_tools

    tool = next(t for t in all_tools() if t.name == "list_allowed_directories")
    for abandon_first in (True, False):
        keep = Directories([])
        replaced = Directories.open([str(tmp_path)])
        in_use = DirectoriesInUse(keep)
        in_use.acquire(replaced)
        in_use.retire(replaced)  # replaced while the call waits: closed when its lease ends
        call = LeasedCall(in_use, replaced)
        if abandon_first:
            call.abandon()  # cancelled before a thread took it: it never runs
            assert call.run(tool, {}) is None
        else:
            assert call.run(tool, {}) is not None
            call.abandon()  # cancelled after it ran: the lease is already over
        assert in_use.in_use() == 0
        assert replaced.directories[0].root.closed
