"""``safefs-mcp`` over raw stdio, for what the SDK's client cannot express: ids of any JSON type,
a client that stops reading, thousands of roots changes. Lines go out as they are; answers are
read by a thread into a queue, which :meth:`RawServer.pause_reading` stops."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.mcp.client import server_command


def call(request_id: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def initialize(roots: bool = False) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"roots": {"listChanged": True}} if roots else {}
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}


class RawServer:
    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*server_command(), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self.reading = threading.Event()
        self.reading.set()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            self.reading.wait()
            line = self.proc.stdout.readline()
            if not line:
                return
            self.answers.put(json.loads(line))

    def pause_reading(self) -> None:
        """Stop reading answers (after the one being read, if any): the pipe fills."""
        self.reading.clear()

    def resume_reading(self) -> None:
        self.reading.set()

    def send(self, *messages: dict[str, Any]) -> None:
        self.send_lines([json.dumps(m).encode() for m in messages])

    def send_lines(self, lines: Sequence[bytes]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(line + b"\n" for line in lines))
        self.proc.stdin.flush()

    def next(self, timeout: float = 30.0) -> dict[str, Any]:
        return self.answers.get(timeout=timeout)

    def start(self, roots: Sequence[str] | None = None) -> None:
        """Initialize; with ``roots``, offer roots and answer the first roots/list with them."""
        self.send(initialize(roots is not None))
        assert self.next()["id"] == "init"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if roots is not None:
            self.answer_roots(roots)

    def answer_roots(self, roots: Sequence[str]) -> None:
        asked = self.next()
        assert asked.get("method") == "roots/list", asked
        self.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": u} for u in roots]}})

    def change_roots(self, roots: Sequence[str]) -> None:
        self.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        self.answer_roots(roots)

    def text(self, request_id: Any, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        self.send(call(request_id, tool, arguments))
        answer = self.next()
        assert answer["id"] == request_id, answer
        result = answer["result"]
        return bool(result.get("isError")), result["content"][0]["text"]

    # -- what the process holds, from /proc --------------------------------------------------

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def _status(self, field: str) -> int:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith(field + ":")).split()[1])

    def threads(self) -> int:
        return self._status("Threads")

    def rss_kib(self) -> int:
        return self._status("VmRSS")

    def bytes_read(self) -> int:
        io = Path(f"/proc/{self.proc.pid}/io").read_text()
        return int(next(line for line in io.splitlines() if line.startswith("rchar:")).split()[1])

    def activity(self) -> tuple[int, int]:
        """Bytes read and CPU ticks used so far: both stay still once the server waits."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return self.bytes_read(), int(fields[11]) + int(fields[12])

    def wait_until_still(self, seconds: float = 0.5, timeout: float = 60.0) -> None:
        """Until the server has read nothing and used no CPU for ``seconds``."""
        last, since, deadline = self.activity(), time.monotonic(), time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.activity()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= seconds:
                return
        raise AssertionError(f"the server was still busy after {timeout:g} s")

    def close(self) -> tuple[int, bytes]:
        """End the input; the exit status and what the server wrote on stderr."""
        self.resume_reading()
        assert self.proc.stdin is not None and self.proc.stderr is not None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            code = self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code, err

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
