"""Where an instance and its data dir are: the rules every front end shares, with nothing but
``os`` so that the prompt hook can find its data dir's owner before importing anything heavy.

``--data-dir`` wins, then ``ONTOLOOM_HOME``, then the nearest enclosing instance (the closest
ancestor holding ``ontoloom.toml``) → its ``.ontoloom/``, then ``./.ontoloom/``.
"""

from __future__ import annotations

import os

__all__ = ["DATA_DIR_NAME", "INSTANCE_MARKER", "find_instance", "hook_data_dir", "resolve"]

INSTANCE_MARKER = "ontoloom.toml"
DATA_DIR_NAME = ".ontoloom"


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
