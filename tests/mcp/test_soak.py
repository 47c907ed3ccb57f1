"""One stdio session through 10,000 calls, 1,000 roots changes and a client that stops reading
3,000 answers: the server's fds and threads end where they started, and its memory stays flat.
The figures are printed, and quoted in docs/mcp.md."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from safefs.mcp.stdio_server import MAX_PENDING, MAX_RUNNING
from tests.mcp.raw_stdio import RawServer, call

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's /proc"),
    pytest.mark.slow,  # 10,000 calls
]

ROUNDS = 10
CALLS_PER_ROUND = 1000
ROOTS_CHANGES_PER_ROUND = 100
BATCH = 100  # calls sent before their answers are read
UNREAD = 3000
RSS_SLACK_KIB = 16 << 10  # what the allocator may keep of a stall's answers, at most


def _calls(first: int, count: int) -> list[dict[str, Any]]:
    """A mix of every read-only kind of call, each naming files both roots hold."""
    kinds: list[tuple[str, dict[str, Any]]] = [
        ("read_text_file", {"path": "same.txt"}),
        ("list_directory", {"path": "."}),
        ("list_directory_with_sizes", {"path": ".", "sortBy": "size"}),
        ("directory_tree", {"path": "."}),
        ("search_files", {"path": ".", "pattern": "**/*.txt"}),
        ("search_file_contents", {"path": ".", "pattern": "line [0-9]+"}),
        ("get_file_info", {"path": "same.txt"}),
        ("read_multiple_files", {"paths": ["same.txt", "sub/deep.txt"]}),
        ("list_allowed_directories", {}),
        ("read_text_file", {"path": "missing.txt"}),  # an error result, on purpose
    ]
    return [call(i, *kinds[i % len(kinds)]) for i in range(first, first + count)]


class SoakClient:
    """Reads answers, answering the server's roots/list requests with the current roots."""

    def __init__(self, server: RawServer, roots: list[str]) -> None:
        self.server = server
        self.roots = roots

    def collect(self, count: int) -> list[dict[str, Any]]:
        answers: list[dict[str, Any]] = []
        while len(answers) < count:
            message = self.server.next(60)
            if message.get("method") == "roots/list":
                roots = {"roots": [{"uri": u} for u in self.roots]}
                self.server.send({"jsonrpc": "2.0", "id": message["id"], "result": roots})
            else:
                answers.append(message)
        return answers

    def change_roots(self, roots: list[str]) -> None:
        self.roots = roots
        self.server.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})


def make_roots(base: Path) -> list[Path]:
    roots = []
    for name in ("a", "b"):
        root = base / "ws" / name
        (root / "sub").mkdir(parents=True)
        (root / "same.txt").write_text("".join(f"line {i} of {name}\n" for i in range(50)))
        (root / "sub" / "deep.txt").write_text("deep\n")
        for i in range(20):
            (root / f"f{i:02}.txt").write_text("x" * i)
        roots.append(root)
    return roots


def test_soak(tmp_path: Path) -> None:
    a, b = make_roots(tmp_path)
    with RawServer(str(tmp_path / "ws")) as server:
        server.start(roots=[a.as_uri()])
        client = SoakClient(server, [a.as_uri()])
        next_id = 0

        def run_round() -> tuple[int, int]:
            nonlocal next_id
            errors = answered = 0
            changes_every = CALLS_PER_ROUND // ROOTS_CHANGES_PER_ROUND
            for _ in range(CALLS_PER_ROUND // BATCH):
                for i in range(BATCH // changes_every):  # a roots change among every batch's calls
                    client.change_roots([(a if (next_id // changes_every + i) % 2 else b).as_uri()])
                    server.send(*_calls(next_id, changes_every))
                    next_id += changes_every
                for answer in client.collect(BATCH):
                    result = answer["result"]
                    answered += 1
                    errors += bool(result.get("isError"))
            return answered, errors

        run_round()  # warm up: every module imported, every cache filled
        server.wait_until_still(0.2)
        base_fds, base_threads, base_rss = server.fds(), server.threads(), server.rss_kib()
        rows = [("after warm-up", base_fds, base_threads, base_rss)]
        total = errors = 0
        for r in range(ROUNDS):
            done, failed = run_round()
            total, errors = total + done, errors + failed
            server.wait_until_still(0.2)  # a worker whose answer was read may not have ended yet
            rows.append(
                (f"after {(r + 1) * CALLS_PER_ROUND} calls", server.fds(), server.threads(), server.rss_kib())
            )
        # A client that stops reading: the server meets its cap, then stops reading it.
        server.pause_reading()
        sender = threading.Thread(target=server.send, args=_calls(next_id, UNREAD), daemon=True)
        sender.start()
        server.wait_until_still()
        rows.append(("client not reading", server.fds(), server.threads(), server.rss_kib()))
        stalled_threads = server.threads()
        server.resume_reading()
        unread = client.collect(UNREAD)
        sender.join(30)
        refused = sum("error" in answer for answer in unread)
        server.wait_until_still()
        rows.append(("after reading again", server.fds(), server.threads(), server.rss_kib()))
        print(
            f"\n{total} calls ({errors} error results, 1 in 10 on purpose), "
            f"{ROUNDS * ROOTS_CHANGES_PER_ROUND} roots changes; {UNREAD} unread calls: "
            f"{UNREAD - refused} answered, {refused} refused with -32000"
        )
        print(f"{'':24} {'fds':>5} {'threads':>8} {'RSS KiB':>9}")
        for label, fds, threads, rss in rows:
            print(f"{label:24} {fds:>5} {threads:>8} {rss:>9}")
        code, err = server.close()

    assert total == ROUNDS * CALLS_PER_ROUND and errors == total // 10
    assert all(fds == base_fds for _, fds, _, _ in rows)
    assert all(threads == base_threads for label, _, threads, _ in rows if label != "client not reading")
    assert stalled_threads <= base_threads + MAX_RUNNING
    assert 0 < refused < UNREAD - MAX_PENDING + 1
    memory = [r for _, _, _, r in rows]
    half = ROUNDS // 2
    assert memory[ROUNDS] - memory[half] < 1 << 10, memory  # the second half of the calls: flat
    assert max(memory[: ROUNDS + 1]) - memory[0] < 4 << 10, memory  # the first settles within 4 MiB
    assert memory[-1] - memory[0] < RSS_SLACK_KIB, memory  # and after a stall's queued answers
    assert code == 0 and b"Traceback" not in err, err.decode(errors="replace")
