"""Claude Code hooks: ``prompt-context`` (UserPromptSubmit) and ``session-start`` (SessionStart).

The protocol: the hook event arrives as JSON on stdin; what the hook prints on stdout is added
to the agent's context when it exits 0. Both hooks always exit 0, and print nothing at all —
on stdout or stderr — on every failure path (no store, a busy store, bad input, anything): a
hook must never block or clutter a turn. What they print is :mod:`ontoloom.context`'s; when
the data dir has an owner, :mod:`ontoloom.entry` asks it for the same operation instead.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from ontoloom.context import context, salient_terms, status
from ontoloom.locate import hook_data_dir

__all__ = ["context", "prompt_context", "salient_terms", "session_start", "status"]


def prompt_context(
    stdin: IO[Any], stdout: IO[str], data_dir: str | os.PathLike[str] | None = None
) -> None:
    """UserPromptSubmit: facts the prompt points at, or nothing. Never raises."""
    try:
        payload = _payload(stdin, empty_ok=False)
        prompt = payload.get("prompt") if payload is not None else None
        if not isinstance(prompt, str) or not prompt.strip():
            return
        text = context(_data_dir(data_dir, payload or {}), prompt)
        if text:
            _write(stdout, text)
    except Exception:
        return  # silent on every failure path: a hook must never block a turn


def session_start(
    stdin: IO[Any], stdout: IO[str], data_dir: str | os.PathLike[str] | None = None
) -> None:
    """SessionStart: one status line, or once a cue to rebuild. Never raises."""
    try:
        payload = _payload(stdin, empty_ok=True)
        if payload is None:
            return
        text = status(_data_dir(data_dir, payload))
        if text:
            _write(stdout, text)
    except Exception:
        return


def _payload(stdin: IO[Any], *, empty_ok: bool) -> dict[str, Any] | None:
    """The hook event: a JSON object, else None (empty input is ``{}`` when ``empty_ok``)."""
    if stdin is None or stdin.isatty():  # run by hand: no event to read
        data: bytes | str = b""
    else:
        buffer = getattr(stdin, "buffer", None)
        data = buffer.read() if buffer is not None else stdin.read()
    if not data.strip():
        return {} if empty_ok else None
    try:
        payload = json.loads(data)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def _write(stdout: IO[str], text: str) -> None:
    """All at once, as UTF-8 whatever the locale says (Claude Code reads UTF-8)."""
    data = text + "\n"
    buffer = getattr(stdout, "buffer", None)
    if buffer is None:
        stdout.write(data)
        stdout.flush()
        return
    stdout.flush()
    buffer.write(data.encode("utf-8"))
    buffer.flush()


def _data_dir(explicit: str | os.PathLike[str] | None, payload: dict[str, Any]) -> Path:
    """See :func:`ontoloom.locate.hook_data_dir` (the forwarding client uses it too)."""
    return Path(hook_data_dir(os.fspath(explicit) if explicit else None, payload.get("cwd")))
