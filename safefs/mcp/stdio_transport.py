"""stdio for the MCP server without a thread hop per message.

The SDK's ``stdio_server`` reads and writes through ``anyio.wrap_file``: each line read and each
write runs in a worker thread, which costs more than most tool calls. Here stdin and stdout are
asyncio pipes instead, handed to the SDK as the line streams it accepts. As the SDK does, fd 0 and
fd 1 are first moved to private descriptors and pointed at /dev/null and stderr, so stray output
from a library can never corrupt the protocol stream; both are restored on exit.

Where the standard streams are not pipes or sockets (a regular file, say), the SDK's own
transport is used.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from mcp.server.stdio import stdio_server

MAX_LINE = 256 << 20  # one JSON-RPC message; a write_file of a large file is one line


class _Lines:
    """The part of ``anyio.AsyncFile[str]`` the SDK uses for stdin: async iteration over lines."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class _Writer:
    """The part of ``anyio.AsyncFile[str]`` the SDK uses for stdout: ``write`` and ``flush``."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _is_stream(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def pipe_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    if not (_is_stream(0) and _is_stream(1)):
        async with stdio_server() as streams:
            yield streams
        return
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=MAX_LINE)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
        )
        transports.append(write_transport)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        async with stdio_server(_Lines(reader), _Writer(writer)) as streams:  # type: ignore[arg-type]
            yield streams
    finally:
        for transport in transports:
            transport.close()
        for saved, fd in ((saved_in, 0), (saved_out, 1)):
            with suppress(OSError):
                os.dup2(saved, fd)
            os.close(saved)
