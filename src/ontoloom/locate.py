"""Where an instance and its data dir are, and whether someone keeps the data dir open: the
rules every front end shares (the CLI, ``ontoloom mcp``, ``serve``, the hooks), with nothing
but the standard library so that the prompt hook can find its data dir's owner before
importing anything heavy.

One rule, first match wins (:func:`locate`; ``ontoloom where`` prints it):

1. ``--data-dir``;
2. ``ONTOLOOM_HOME``;
3. the nearest enclosing instance (the closest ancestor holding ``ontoloom.toml``) → its
   ``.ontoloom/``;
4. a ``.ontoloom/`` already in the working directory (made outside any instance by a version
   before this rule: it stays in use);
5. the per-user data dir: ``$XDG_DATA_HOME/ontoloom`` (``~/.local/share/ontoloom``) on Linux,
   ``~/Library/Application Support/ontoloom`` on macOS, ``%LOCALAPPDATA%\\ontoloom`` on
   Windows.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks start here)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = [
    "DATA_DIR_NAME",
    "HAS_UNIX_SOCKETS",
    "INSTANCE_MARKER",
    "RULES",
    "SOCKET_NAME",
    "Location",
    "find_instance",
    "hook_data_dir",
    "locate",
    "owner_alive",
    "peer_uid",
    "socket_address",
    "user_data_dir",
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


#: The rules of :func:`locate`, in the order they are tried.
RULES = ("--data-dir", "ONTOLOOM_HOME", "instance", "here", "user")


class Location:
    """A data dir and the rule that chose it (one of :data:`RULES`), with why in words."""

    __slots__ = ("instance", "path", "reason", "rule")

    def __init__(self, path: str, rule: str, reason: str, instance: str | None = None) -> None:
        self.path, self.rule, self.reason, self.instance = path, rule, reason, instance

    def to_json(self) -> dict[str, object]:
        """What ``ontoloom where --json`` answers."""
        return {
            "data_dir": self.path,
            "rule": self.rule,
            "reason": self.reason,
            "instance": self.instance,
            "exists": os.path.isdir(self.path),
            "owner": owner_alive(self.path),
        }


def user_data_dir() -> str:
    """The platform's per-user data directory for ontoloom, as the XDG base directory spec
    and the platforms' conventions place it (and as ``platformdirs`` did before)."""
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        base = os.path.join(home, "Library", "Application Support")
    elif sys.platform.startswith(("win", "cygwin")):
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
    else:
        xdg = os.environ.get("XDG_DATA_HOME", "").strip()
        # the spec: a relative path is invalid and ignored
        base = xdg if os.path.isabs(xdg) else os.path.join(home, ".local", "share")
    return os.path.realpath(os.path.join(base, "ontoloom"))


def locate(explicit: str | None = None, cwd: str | None = None) -> Location:
    """The data dir by the one rule (the module's docstring), seen from ``cwd`` (default:
    the working directory), and which rule matched."""
    if explicit:
        return Location(
            os.path.realpath(os.path.expanduser(explicit)), "--data-dir", "given with --data-dir"
        )
    home = os.environ.get("ONTOLOOM_HOME")
    if home:
        return Location(
            os.path.realpath(os.path.expanduser(home)), "ONTOLOOM_HOME", "ONTOLOOM_HOME is set"
        )
    here = os.path.realpath(cwd or os.getcwd())
    instance = find_instance(here)
    if instance is not None:
        marker = os.path.join(instance, INSTANCE_MARKER)
        return Location(
            os.path.join(instance, DATA_DIR_NAME), "instance", f"the nearest {marker}", instance
        )
    if os.path.isdir(os.path.join(here, DATA_DIR_NAME)):
        return Location(
            os.path.join(here, DATA_DIR_NAME),
            "here",
            f"no {INSTANCE_MARKER} around {here}, but a {DATA_DIR_NAME}/ in it (made "
            f"outside an instance; `ontoloom init` there makes it one)",
        )
    return Location(
        user_data_dir(),
        "user",
        f"no {INSTANCE_MARKER} around {here}: the per-user data dir",
    )


def hook_data_dir(explicit: str | None, event_cwd: object) -> str:
    """A hook's data dir: the one rule seen from the event's ``cwd`` (the agent's project
    dir) when it names an instance or a data dir there, else from the process's working
    directory."""
    usable = isinstance(event_cwd, str) and event_cwd and "\x00" not in event_cwd
    if usable and os.path.isdir(str(event_cwd)):
        found = locate(explicit, str(event_cwd))
        if found.rule != "user":
            return found.path
    return locate(explicit).path


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
