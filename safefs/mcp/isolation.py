"""Tool calls that run untrusted patterns, run in a child process.

A regular expression, a glob or a ``.gitignore`` line from the client or the workspace is
compiled for Python's ``re``, which holds the interpreter lock for the whole of one match: a
catastrophic pattern would stop every other call, every session, even the reading of the next
message, and no flag can interrupt it. So on Linux the searching tools run in a forked child
(it shares the open directory fds, so nothing is re-resolved): the server's threads stay free
while it works, and a cancel kills it at once, mid-match. The child writes the call's result as
JSON to a pipe and exits; it never touches the protocol stream.

Elsewhere (fork in a threaded process is unsafe on macOS) the call runs in the thread.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

FORK_ISOLATED = sys.platform == "linux"
POLL_SECONDS = 0.05  # how often a waiting thread looks at the cancel event
ISOLATED_TOOLS = frozenset({"search_files", "search_file_contents", "directory_tree"})

Result = dict[str, Any]


def run_in_child(work: Callable[[], Result], cancel: threading.Event) -> Result | None:
    """``work()`` in a forked child; its result, or None when ``cancel`` was set first (the child
    is killed then). A child that dies without a result is reported as an internal error."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, write, exit without running any of the parent's cleanup
        status = 0
        try:
            os.close(read_end)
            data = json.dumps(work(), ensure_ascii=True).encode("ascii")
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view) :]
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    chunks: list[bytes] = []
    try:
        while True:
            if cancel.is_set():
                os.kill(pid, signal.SIGKILL)
                return None
            ready, _, _ = select.select([read_end], [], [], POLL_SECONDS)
            if ready:
                chunk = os.read(read_end, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    try:
        result: Result = json.loads(b"".join(chunks))
    except ValueError:
        return None if cancel.is_set() else _child_failed()
    return result


def _child_failed() -> Result:
    return {
        "content": [{"type": "text", "text": "internal error: the search process failed"}],
        "isError": True,
    }
