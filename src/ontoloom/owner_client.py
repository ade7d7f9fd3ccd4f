"""Talking to the owner of a data dir (see :mod:`ontoloom.owner`), from any other process.

Standard library only: the prompt hook forwards through this module before anything heavy
is imported. One request per connection, each message one line: the caller sends the request
(a JSON object); the owner answers at once (busy, retry, a hook's output) or, once it has
taken the data dir's lock for it, says ``ready``; only when the caller answers ``go`` does
it do the work, then sends the answer (a JSON object). So a caller that stops waiting — the
owner stopped (SIGSTOP, Ctrl-Z) or stuck — leaves nothing done behind it: an owner that
resumes finds the caller gone and drops the request.
"""

from __future__ import annotations

import json
import os
import socket

from ontoloom.locate import HAS_UNIX_SOCKETS, SOCKET_NAME, owner_alive, peer_uid, socket_address

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it alike)

if TYPE_CHECKING:  # the hook's fast path imports this module: nothing at run time
    from pathlib import Path
    from typing import Any

__all__ = [
    "HAS_UNIX_SOCKETS",
    "SOCKET_NAME",
    "OwnerGone",
    "OwnerUnresponsive",
    "OwnerUntrusted",
    "forward",
    "owner_alive",
    "socket_address",
]

READY, GO = b"ready\n", b"go\n"
WAIT_GRACE = 5.0  # seconds a caller waits past its lock timeout for the owner to take it


class OwnerGone(Exception):
    """The owner accepted the request and died before answering: it may have been applied."""


class OwnerUnresponsive(Exception):
    """The owner did not take the request in time (stopped, or stuck): nothing was done."""


class OwnerUntrusted(Exception):
    """What listens on the data dir's socket is another user's process: nothing was sent."""


def _untrusted(data_dir: str | Path, uid: int) -> OwnerUntrusted:
    return OwnerUntrusted(
        f"{os.path.join(data_dir, SOCKET_NAME)} is served by another user's process (uid "
        f"{uid}), not by this user's ontoloom: nothing was sent to it; remove the socket if "
        "it is not yours, and check who can write to the data dir"
    )


def forward(data_dir: str | Path, request: dict[str, Any], *, wait: float) -> dict[str, Any] | None:
    """The owner's answer to ``request``; None when no owner is alive (no socket, or a stale
    one left by an owner that died: nothing was sent, the caller does the work itself).

    :raises OwnerUnresponsive: no answer and no ``ready`` within ``wait`` seconds; nothing
        was done, and the owner will not do it later.
    :raises OwnerGone: the owner died after taking the request.
    :raises OwnerUntrusted: another user's process listens there (nothing was sent).
    """
    if not HAS_UNIX_SOCKETS or not os.path.exists(os.path.join(data_dir, SOCKET_NAME)):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(wait)
        try:
            with socket_address(data_dir) as address:
                conn.connect(address)
            uid = peer_uid(conn)
            if uid is not None and uid != os.getuid():
                raise _untrusted(data_dir, uid)
            conn.sendall(json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n")
        except TimeoutError:
            raise _unresponsive(data_dir, wait) from None
        except OSError:
            return None  # nobody listens, or it went away before reading: nothing was done
        with conn.makefile("rb") as lines:
            try:
                line = lines.readline()
            except TimeoutError:
                raise _unresponsive(data_dir, wait) from None
            except OSError:
                line = b""
            if not line:
                # Closed or reset before a word: the owner died (or closed its socket) before
                # it took the request — it works only after our go. Nothing was done.
                return None
            if line == READY:
                conn.settimeout(None)  # the work runs: as long as it takes, as it would here
                try:
                    conn.sendall(GO)
                    line = lines.readline()
                except OSError:
                    line = b""
    finally:
        conn.close()
    if not line.endswith(b"\n"):
        raise OwnerGone(
            f"the process serving {data_dir} stopped before answering; "
            "the request may or may not have been applied — look before retrying"
        )
    answer: dict[str, Any] = json.loads(line)
    if answer.get("retry"):  # the owner was closing and did nothing: do it here
        return None
    return answer


def _unresponsive(data_dir: str | Path, wait: float) -> OwnerUnresponsive:
    return OwnerUnresponsive(
        f"the process serving {data_dir} (its owner) did not take the request within "
        f"{wait:g} s — stopped (Ctrl-Z, SIGSTOP) or stuck; nothing was done: resume or stop "
        "it, then try again"
    )


def caller_wait(lock_timeout: float) -> float:
    """How long a caller waits for the owner to take its request: the owner itself answers
    busy after the caller's lock timeout; past that, it is not answering at all."""
    return lock_timeout + WAIT_GRACE


def client_env() -> dict[str, str]:
    """The caller's ontoloom settings, sent with an operation (its lock timeout)."""
    return {k: v for k, v in os.environ.items() if k.startswith("ONTOLOOM_") or k == "NO_COLOR"}
