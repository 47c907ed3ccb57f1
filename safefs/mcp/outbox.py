"""The messages a stdio server has yet to write, written in order by one thread.

A client that stops reading its answers must not grow the server: the pipe fills, the writer
waits, and everything that would be written waits with it, in bounded amounts.

- An answer to a tool call is queued by the thread that ran the call, which then goes on to the
  next call or ends: no thread waits on the pipe but the writer. The call still counts as in
  progress (``done`` is called once its answer is written or dropped), so the server's cap on
  calls in progress also caps the answers queued.
- The reader's own messages (answers to ``ping`` and ``tools/list``, errors, refusals) wait for
  room: past :data:`MAX_QUEUED` of them the reader stops reading, and a client that does not
  read cannot make it queue more.
- Past :data:`MAX_QUEUED_BYTES` every sender waits, so a few large answers (a media file is
  megabytes of base64) cannot add up either. A message is always taken into an empty queue.

When the client has gone (a broken pipe), what is queued is dropped and every later message is
dropped at once.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from safefs.mcp.jsonrpc import encode

MAX_QUEUED = 256  # messages from the reader waiting to be written
MAX_QUEUED_BYTES = 32 << 20  # bytes of every message waiting to be written


@dataclass
class _Message:
    data: bytes
    done: Callable[[], None] | None
    cancel: threading.Event | None
    from_reader: bool


class Outbox:
    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.changed = threading.Condition()
        self.queue: deque[_Message] = deque()
        self.queued_bytes = 0
        self.from_reader = 0
        self.gone = False  # the client closed its end: nothing more is written
        self.closed = False
        self.thread = threading.Thread(target=self._write_all, name="mcp-writer", daemon=True)
        self.thread.start()

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message of the reader's, waiting for room."""
        self._put(_Message(encode(message), None, None, True))

    def answer(
        self, message: dict[str, Any], *, done: Callable[[], None], cancel: threading.Event | None = None
    ) -> None:
        """Queue a call's answer; ``done`` runs once it is written, or dropped because the
        client cancelled the call or went away."""
        self._put(_Message(encode(message), done, cancel, False))

    def _put(self, message: _Message) -> None:
        with self.changed:
            while not self.gone and self.queue and self._full(message.from_reader):
                self.changed.wait()
            if self.gone:
                drop = True
            else:
                drop = False
                self.queue.append(message)
                self.queued_bytes += len(message.data)
                self.from_reader += message.from_reader
                self.changed.notify_all()
        if drop and message.done is not None:
            message.done()

    def _full(self, from_reader: bool) -> bool:
        return self.queued_bytes >= MAX_QUEUED_BYTES or (from_reader and self.from_reader >= MAX_QUEUED)

    def _write_all(self) -> None:
        while True:
            with self.changed:
                while not self.queue and not self.closed:
                    self.changed.wait()
                if not self.queue:
                    return
                message = self.queue[0]
            if not self.gone and not (message.cancel is not None and message.cancel.is_set()):
                self._write(message.data)
            with self.changed:
                self.queue.popleft()
                self.queued_bytes -= len(message.data)
                self.from_reader -= message.from_reader
                self.changed.notify_all()
            if message.done is not None:
                message.done()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                written = self.stream.write(view)
                view = view[len(view) if written is None else written :]
            self.stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            with self.changed:
                self.gone = True  # the client has gone; the read loop ends at end of input
                self.changed.notify_all()

    def close(self, timeout: float) -> bool:
        """Write what is queued, for up to ``timeout`` seconds; whether it was all written."""
        with self.changed:
            self.closed = True
            self.changed.notify_all()
        self.thread.join(timeout)
        return not self.thread.is_alive()
