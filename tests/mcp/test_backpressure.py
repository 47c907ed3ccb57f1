"""A client that stops reading its answers: a call counts as in progress until its answer is
written, so the server meets its cap (-32000 refusals), then stops reading the client; its
threads stay at the worker pool's size, and every call is answered or refused once the client
reads again."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from safefs.mcp.stdio_server import MAX_PENDING, MAX_RUNNING
from tests.mcp.raw_stdio import RawServer, call

CALLS = 3000


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="counts threads in /proc")
def test_a_client_that_stops_reading_meets_the_cap_and_no_growth(tmp_path: Path) -> None:
    for i in range(40):  # an answer of about 1 KiB: 3,000 of them are far more than a pipe holds
        (tmp_path / f"file-{i:03}.txt").write_text("x")
    with RawServer(str(tmp_path)) as server:
        server.start()
        idle_threads = server.threads()
        server.pause_reading()
        sender = threading.Thread(
            target=server.send,
            args=[call(i, "list_directory", {"path": "."}) for i in range(CALLS)],
            daemon=True,
        )
        sender.start()
        server.wait_until_still()
        stalled_threads, stalled_rss = server.threads(), server.rss_kib()
        server.resume_reading()
        answers = [server.next() for _ in range(CALLS)]
        sender.join(30)
        answered = [a for a in answers if "result" in a]
        refused = [a for a in answers if "error" in a]
        print(
            f"\nthreads idle {idle_threads}, stalled {stalled_threads}; RSS stalled {stalled_rss} KiB; "
            f"{len(answered)} answered, {len(refused)} refused"
        )
        assert stalled_threads <= idle_threads + MAX_RUNNING
        assert sorted(a["id"] for a in answers) == list(range(CALLS))
        assert all(a["result"]["content"][0]["text"].startswith("[FILE] file-000.txt") for a in answered)
        assert refused and all(
            a["error"] == {"code": -32000, "message": f"{MAX_PENDING} calls are in progress; try again"}
            for a in refused
        )
        assert len(answered) >= MAX_PENDING  # the cap counts calls in progress, not calls made
        assert server.close()[0] == 0
