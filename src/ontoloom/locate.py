"""Where an instance and its data dir are, and whether someone keeps the data dir open: the
rules every front end shares, with nothing but the standard library so that the prompt hook
can find its data dir's owner before importing anything heavy.

``--data-dir`` wins, then ``ONTOLOOM_HOME``, then the nearest enclosing instance (the closest
ancestor holding ``ontoloom.toml``) → its ``.ontoloom/``, then ``./.ontoloom/``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks start here)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = [
    "DATA_DIR_NAME",
    "HAS_UNIX_SOCKETS",
    "INSTANCE_MARKER",
    "SOCKET_NAME",
    "find_instance",
    "hook_data_dir",
    "owner_alive",
    "peer_uid",
    "resolve",
    "socket_address",
]

INSTANCE_MARKER = "ontoloom.toml"
DATA_DIR_NAME = ".ontoloom"
#: The socket a data dir's owner (:mod:`ontoloom.owner`) listens on, inside the data dir.
SOCKET_NAME = "owner.sock"
_MAX_PATH = 100  # sun_path holds 104–108 bytes depending on the platform
HAS_UNIX_SOCKETS = hasattr(socket, "AF_UNIX")


def find_instance(start: str) -> str | None:
    """The closest ancestor of ``start`` (itself included) holding ``ontoloom.toml``."""
    folder = os.path.realpath(start)
    while True:
        if os.path.isfile(os.path.join(folder, INSTANCE_MARKER)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def resolve(explicit: str | None = None, cwd: str | None = None) -> str | None:
    """The data dir by the shared rules; None when outside any instance with neither
    ``--data-dir`` nor ``ONTOLOOM_HOME`` (the caller picks its own fallback)."""
    chosen = explicit or os.environ.get("ONTOLOOM_HOME")
    if chosen:
        return os.path.realpath(os.path.expanduser(chosen))
    instance = find_instance(cwd or os.getcwd())
    return None if instance is None else os.path.join(instance, DATA_DIR_NAME)


def hook_data_dir(explicit: str | None, event_cwd: object) -> str:
    """A hook's data dir: ``--data-dir``, else ``ONTOLOOM_HOME``, else the instance enclosing
    the event's ``cwd`` (the agent's project dir), else the one enclosing the process's
    working directory, else ``./.ontoloom``."""
    if explicit or os.environ.get("ONTOLOOM_HOME"):
        return resolve(explicit) or ""
    usable = isinstance(event_cwd, str) and event_cwd and "\x00" not in event_cwd
    if usable and os.path.isdir(str(event_cwd)):
        here = str(event_cwd)
        found = resolve(None, here)
        if found is not None:
            return found
        if os.path.isdir(os.path.join(here, DATA_DIR_NAME)):
            return os.path.join(os.path.realpath(here), DATA_DIR_NAME)
    return resolve() or os.path.join(os.path.realpath(os.getcwd()), DATA_DIR_NAME)


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


def peer_uid(conn: socket.socket) -> int | None:
    """The user id of the process at the other end of a connected Unix socket (the kernel's
    word: ``SO_PEERCRED``), or None where the platform does not say. Both ends of an owner's
    socket check it: a data dir's work is sent only to, and taken only from, its own user."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    size = struct.calcsize("3i")
    _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, size))
    return int(uid)


def owner_alive(data_dir: str | Path) -> bool:
    """Whether a process listens on the data dir's socket (a stale one refuses: its owner
    died). The owner reads an empty request from this probe and drops it."""
    if not HAS_UNIX_SOCKETS or not os.path.exists(os.path.join(data_dir, SOCKET_NAME)):
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            with socket_address(data_dir) as address:
                probe.connect(address)
        except OSError:
            return False
    return True
