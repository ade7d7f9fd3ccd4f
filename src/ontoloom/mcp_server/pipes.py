"""The stdio transport of ``ontoloom mcp``: JSON-RPC messages, one per line, in and out.

The SDK's own (``mcp.server.stdio.stdio_server``) reads each line and writes and flushes each
answer through a worker thread (``anyio.wrap_file``), and hands every message between its
reader task, the session and its writer task over memory streams: three thread hand-offs and
two task switches a call, which cost more than a validated write does. When stdin and stdout
are pipes or sockets — as an MCP client starts a server — the session here reads a line and
parses it when it asks for the next message, and writes each answer as it sends it, on the
event loop (non-blocking, with back-pressure). Otherwise (a terminal, a file, Windows) the
SDK's transport runs, with a worker thread reading each line. The messages are parsed and
written exactly as the SDK's transport does it. Either way, reading stdin never keeps a
cancelled server (a signal) from ending.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import stat
import sys
from collections.abc import AsyncIterator, Sequence
from typing import IO, Any

import anyio
import mcp.types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

__all__ = ["stdio_streams"]

_LINE_LIMIT = 1 << 30  # the longest message line read; the SDK's own reader has no limit


class _Messages(ObjectReceiveStream[SessionMessage | Exception]):
    """Messages read from a pipe: each line parsed as the SDK's transport parses it (a line
    that is no JSON-RPC message becomes the exception, which the session reports)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def receive(self) -> SessionMessage | Exception:
        line = await self._reader.readline()
        if not line:
            raise anyio.EndOfStream
        try:
            message = types.JSONRPCMessage.model_validate_json(
                line.decode("utf-8", errors="replace")
            )
        except Exception as exc:
            return exc
        return SessionMessage(message)

    async def aclose(self) -> None:
        pass  # the pipe is closed by stdio_streams, after the session


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


class _Answers(ObjectSendStream[SessionMessage]):
    """Messages written to a pipe, one line each, when sent; a send waits while the reader
    is behind."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def send(self, item: SessionMessage) -> None:
        text = item.message.model_dump_json(by_alias=True, exclude_none=True)
        self._writer.write((text + "\n").encode("utf-8"))
        await self._writer.drain()

    async def aclose(self) -> None:
        pass  # the pipe is closed by stdio_streams, after the session


def _is_pipe(stream: IO[bytes]) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _connect(stdin: IO[bytes], stdout: IO[bytes]) -> tuple[_Messages, _Answers, Any] | None:
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
    return _Messages(reader), _Answers(writer), (read, write, ends)


def _release(ends: Sequence[IO[bytes]]) -> None:
    """The files blocking again (the flag is shared with the process's own stdin and
    stdout, which a command after the server may use), and closed."""
    for end in ends:
        with contextlib.suppress(OSError, ValueError):
            os.set_blocking(end.fileno(), True)
        with contextlib.suppress(OSError, ValueError):
            end.close()


@contextlib.asynccontextmanager
async def stdio_streams(
    stdin: IO[bytes], stdout: IO[bytes]
) -> AsyncIterator[tuple[ObjectReceiveStream[Any], ObjectSendStream[Any]]]:
    """The (read, write) message streams that :meth:`mcp.server.lowlevel.Server.run` takes."""
    connected = await _connect(stdin, stdout)
    if connected is None:
        text_out = anyio.wrap_file(io.TextIOWrapper(stdout, encoding="utf-8"))
        # stdio_server annotates its stdin as anyio.AsyncFile[str] but only iterates it
        # (``async for line in stdin``), which _ThreadLines provides.
        lines = _ThreadLines(stdin)
        async with stdio_server(lines, text_out) as streams:  # type: ignore[arg-type]
            yield streams
        return
    messages, answers, (read, write, ends) = connected
    try:
        yield messages, answers
    finally:
        read.close()
        write.close()  # every answer was drained: flush waits for it
        _release(ends)
