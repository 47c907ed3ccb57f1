"""Connection limits for ``--http``: uvicorn's HTTP/1.1 protocol with a cap on open connections
and a deadline for each request head.

uvicorn times out a connection only once a request has been served on it (keep-alive), so a
client that connects and sends nothing, or a header a byte at a time, holds its socket for
ever, and enough of them exhaust the file descriptors (then every accept fails, and is
logged, many times a second). Here a connection past the cap is closed at once, and one whose
request head is not complete within the deadline is closed; each is said in one line on stderr.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_CONNECTIONS = 256  # well under the usual limit of 1024 open files
HEADER_TIMEOUT = 10.0  # seconds from the first byte of a request (or the connection) to its end of head


def _peer(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "a client"


def guarded_protocol(max_connections: int, header_timeout: float) -> type[asyncio.Protocol]:
    """The protocol class to give ``uvicorn.Config(http=...)``."""

    class GuardedH11Protocol(H11Protocol):
        refused = False
        head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if len(self.connections) >= max_connections:
                self.refused = True
                print(
                    f"safefs-mcp: refused a connection from {_peer(transport)}: "
                    f"{max_connections} connections are open",
                    file=sys.stderr,
                    flush=True,
                )
                transport.abort()
                return
            super().connection_made(transport)
            self._await_head()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._between_requests():
                self._await_head()  # bytes of the next request head: its deadline starts
            elif self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def connection_lost(self, exc: Exception | None) -> None:
            if self.refused:
                return
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None
            super().connection_lost(exc)

        def _between_requests(self) -> bool:
            return self.cycle is None or bool(self.cycle.response_complete)

        def _await_head(self) -> None:
            if self.head_timer is None:
                self.head_timer = self.loop.call_later(header_timeout, self._head_late)

        def _head_late(self) -> None:
            self.head_timer = None
            if self._between_requests() and not self.transport.is_closing():
                print(
                    f"safefs-mcp: closed a connection from {_peer(self.transport)}: no request "
                    f"within {header_timeout:g} s",
                    file=sys.stderr,
                    flush=True,
                )
                self.transport.close()

    return GuardedH11Protocol


def uvicorn_options(max_connections: int, header_timeout: float) -> dict[str, Any]:
    return {
        "http": guarded_protocol(max_connections, header_timeout),
        "timeout_keep_alive": 5,  # an idle keep-alive connection, after its last answer
        "h11_max_incomplete_event_size": 64 << 10,  # a request head larger than this is refused
    }
