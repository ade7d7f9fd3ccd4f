"""Talking to the owner of a data dir (see :mod:`ontoloom.owner`), from any other process.

Standard library only: the prompt hook forwards through this module before anything heavy
is imported. One request per connection: a JSON object, newline-terminated, answered by a
JSON object, newline-terminated.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it alike)

if TYPE_CHECKING:  # the hook's fast path imports this module: nothing at run time
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

__all__ = ["SOCKET_NAME", "OwnerGone", "forward", "socket_address"]

SOCKET_NAME = "owner.sock"
_MAX_PATH = 100  # sun_path holds 104–108 bytes depending on the platform
HAS_UNIX_SOCKETS = hasattr(socket, "AF_UNIX")


class OwnerGone(Exception):
    """The owner accepted the request and died before answering: it may have been applied."""


@contextlib.contextmanager
def socket_address(data_dir: str | Path) -> Iterator[str]:
    """A path for the data dir's socket that fits in ``sun_path``: the path itself, or (a
    long path, Linux) the same file reached through an open handle on the data dir."""
    path = os.path.join(data_dir, SOCKET_NAME)
    if len(path.encode()) <= _MAX_PATH or not os.path.isdir("/proc/self/fd"):
        yield path
        return
    fd = os.open(data_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        yield f"/proc/self/fd/{fd}/{SOCKET_NAME}"
    finally:
        os.close(fd)


def forward(data_dir: str | Path, request: dict[str, Any]) -> dict[str, Any] | None:
    """The owner's answer to ``request``; None when no owner is alive (no socket, or a stale
    one left by an owner that died: nothing was sent, the caller does the work itself).

    :raises OwnerGone: the owner died after taking the request.
    """
    if not HAS_UNIX_SOCKETS or not os.path.exists(os.path.join(data_dir, SOCKET_NAME)):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            with socket_address(data_dir) as address:
                conn.connect(address)
        except OSError:
            return None
        payload = json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n"
        try:
            conn.sendall(payload)
            conn.shutdown(socket.SHUT_WR)
        except OSError:
            return None  # it went away before reading a byte: nothing was done
        chunks: list[bytes] = []
        while True:
            try:
                chunk = conn.recv(1 << 16)
            except ConnectionResetError:
                if not chunks:
                    # Reset unanswered: the owner closed its socket before accepting this
                    # connection (an owner reads a request whole before acting on it, so
                    # one that took it and died closes cleanly instead). Nothing was done.
                    return None
                chunk = b""
            except OSError:
                chunk = b""
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        conn.close()
    data = b"".join(chunks)
    if not data.endswith(b"\n"):
        raise OwnerGone(
            f"the process serving {data_dir} stopped before answering; "
            "the request may or may not have been applied — look before retrying"
        )
    answer: dict[str, Any] = json.loads(data)
    if answer.get("retry"):  # the owner was closing and did nothing: do it here
        return None
    return answer


def client_env() -> dict[str, str]:
    """The environment a forwarded command runs with: the ontoloom settings of the caller."""
    return {k: v for k, v in os.environ.items() if k.startswith("ONTOLOOM_") or k == "NO_COLOR"}


def write_out(answer: dict[str, Any]) -> int:
    """Print a forwarded command's output as if it had run here; its exit code."""
    out, err = answer.get("stdout", ""), answer.get("stderr", "")
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return int(answer.get("exit", 0))
