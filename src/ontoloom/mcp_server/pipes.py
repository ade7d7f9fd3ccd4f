"""Standard input and output for the SDK's stdio transport, read and written by the event loop.

The SDK reads each line and writes and flushes each answer through a worker thread
(``anyio.wrap_file``): three thread hand-offs a call, which cost more than a validated write
does. When stdin and stdout are pipes or sockets — as an MCP client starts a server — the
event loop reads and writes them itself (non-blocking, with back-pressure); otherwise (a
terminal, a file, Windows) a worker thread reads each line and the SDK's own way writes. What
goes over the wire is the same. Either way, reading stdin never keeps a cancelled server (a
signal) from ending.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import stat
import sys
from collections.abc import AsyncIterator
from typing import IO, Any

import anyio

__all__ = ["stdio_files"]

_LINE_LIMIT = 1 << 30  # the longest message line read; the SDK's own reader has no limit


class _Lines:
    """Lines of a pipe as text, as ``async for line in stdin`` reads them."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _ThreadLines:
    """Lines of a terminal or a file, each read by a worker thread. A read cannot be
    interrupted: a cancelled server (a signal) leaves it behind instead of waiting for a line
    that may never come, and the process exits without it."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream

    def __aiter__(self) -> _ThreadLines:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self._stream.readline, abandon_on_cancel=True)
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _Out:
    """A pipe written as text; ``flush`` waits while the reader is behind."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _is_pipe(stream: IO[bytes]) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _connect(stdin: IO[bytes], stdout: IO[bytes]) -> tuple[_Lines, _Out, Any] | None:
    if sys.platform == "win32" or not (_is_pipe(stdin) and _is_pipe(stdout)):
        return None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    # The transports close what they are given: copies, so that the process's own stdin and
    # stdout stay open for whatever runs after the server.
    ends = [os.fdopen(os.dup(stdin.fileno()), "rb", 0), os.fdopen(os.dup(stdout.fileno()), "wb", 0)]
    try:
        read, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), ends[0]
        )
        write, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, ends[1])
    except (OSError, ValueError, NotImplementedError):
        _release(ends)
        return None
    writer = asyncio.StreamWriter(write, protocol, None, loop)
    return _Lines(reader), _Out(writer), (read, write, ends)


def _release(ends: list[IO[bytes]]) -> None:
    """The files blocking again (the flag is shared with the process's own stdin and
    stdout, which a command after the server may use), and closed."""
    for end in ends:
        with contextlib.suppress(OSError, ValueError):
            os.set_blocking(end.fileno(), True)
        with contextlib.suppress(OSError, ValueError):
            end.close()


@contextlib.asynccontextmanager
async def stdio_files(stdin: IO[bytes], stdout: IO[bytes]) -> AsyncIterator[tuple[Any, Any]]:
    """(stdin, stdout) for :func:`mcp.server.stdio.stdio_server`."""
    connected = await _connect(stdin, stdout)
    if connected is None:
        yield _ThreadLines(stdin), anyio.wrap_file(io.TextIOWrapper(stdout, encoding="utf-8"))
        return
    lines, out, (read, write, ends) = connected
    try:
        yield lines, out
    finally:
        read.close()
        write.close()  # every answer was drained: flush waits for it
        _release(ends)
