"""The ``ontoloom`` console script.

Claude Code runs ``ontoloom hook prompt-context`` on every prompt, so the two hooks are
dispatched here without importing click or the CLI (which cost ~100 ms before any work):
exactly ``[--data-dir DIR] hook prompt-context|session-start [--data-dir DIR]``. When the
data dir has an owner, the hook asks it for the hook's operation (standard library only);
else it runs here. Every other command line — ``--help`` included — goes to
:func:`ontoloom.cli.main`, whose commands run their operations where the graph is open.
"""

from __future__ import annotations

import io
import json
import os
import sys

__all__ = ["hook_route", "main"]

HOOKS = {"prompt-context": "prompt_context", "session-start": "session_start"}
HOOK_WAIT = 2.0  # seconds


def _data_dir_option(argv: list[str], i: int) -> tuple[str | None, int] | None:
    """``--data-dir DIR`` or ``--data-dir=DIR`` at ``argv[i]``: (DIR, next index)."""
    arg = argv[i]
    if arg == "--data-dir" and i + 1 < len(argv):
        return argv[i + 1], i + 2
    if arg.startswith("--data-dir="):
        return arg.partition("=")[2], i + 1
    return None


def hook_route(argv: list[str]) -> tuple[str, str | None] | None:
    """(hook function name, data dir) when ``argv`` runs a hook the fast way, else None.

    >>> hook_route(["hook", "prompt-context"])
    ('prompt_context', None)
    >>> hook_route(["--data-dir", "d", "hook", "session-start"])
    ('session_start', 'd')
    >>> hook_route(["hook", "prompt-context", "--data-dir=d"])
    ('prompt_context', 'd')
    >>> hook_route(["hook", "prompt-context", "--help"]) is None
    True
    """
    data_dir: str | None = None
    i = 0
    while i < len(argv) and argv[i].startswith("--data-dir"):
        found = _data_dir_option(argv, i)
        if found is None:
            return None
        data_dir, i = found
    if argv[i : i + 1] != ["hook"] or i + 1 >= len(argv) or argv[i + 1] not in HOOKS:
        return None
    name = HOOKS[argv[i + 1]]
    i += 2
    while i < len(argv):
        found = _data_dir_option(argv, i)
        if found is None:
            return None
        data_dir, i = found
    return name, data_dir


def _forward_hook(name: str, data_dir: str | None) -> bool:
    """Hand the hook to the owner of its data dir, if one is alive: standard library only
    (:mod:`ontoloom.locate`, :mod:`ontoloom.owner_client`), so a hook the owner answers
    costs the interpreter's start and a socket round trip, not ontoloom's imports."""
    from ontoloom.locate import hook_data_dir
    from ontoloom.owner_client import SOCKET_NAME, forward

    data = b"" if sys.stdin.isatty() else sys.stdin.buffer.read()
    text = data.decode("utf-8", "replace")
    sys.stdin = io.StringIO(text)  # whatever happens next reads what was given
    try:
        event = json.loads(text) if text.strip() else {}
    except ValueError:
        event = None
    if not isinstance(event, dict):
        return True  # not a hook event: silence, as the hook itself would be
    path = hook_data_dir(data_dir, event.get("cwd"))
    if not os.path.exists(os.path.join(path, SOCKET_NAME)):
        return False
    # The hook's operation (the owner answers it at once, quiet when busy: "wait" 0); past
    # HOOK_WAIT the owner is not answering.
    prompt = event.get("prompt")
    if name == "prompt_context" and (not isinstance(prompt, str) or not prompt.strip()):
        return True  # nothing to look up: silence, as the hook itself would be
    request = {
        "kind": "op",
        "name": f"hook_{name}",
        "arguments": {"prompt": prompt} if name == "prompt_context" else {},
        "wait": 0,
    }
    answer = forward(path, request, wait=HOOK_WAIT)
    if answer is None:  # a stale socket: the hook runs here, on what it was given
        return False
    if "error" in answer:  # busy: silent; anything else (no store yet): the hook runs here
        return answer["error"].get("error") == "busy"
    text = (answer.get("result") or {}).get("text") or ""
    if text:  # as the hook writes it: UTF-8 whatever the locale says
        sys.stdout.flush()
        sys.stdout.buffer.write((text + "\n").encode("utf-8"))
    return True


def _stop_on_signals() -> None:
    """SIGTERM and SIGINT unwind the command instead of killing it or printing "Aborted!"
    with exit 1, the code of a refused write (see :class:`ontoloom.errors.Stopped`)."""
    import signal

    from ontoloom.errors import Stopped

    def stop(signum: int, _frame: object) -> None:
        raise Stopped(128 + signum)

    for name in ("SIGTERM", "SIGINT"):
        signal.signal(getattr(signal, name), stop)


def main() -> None:
    route = hook_route(sys.argv[1:])
    if route is None:
        _stop_on_signals()
        from ontoloom.cli import main as cli_main

        # The same program name whether run as the script or as ``python -m ontoloom``.
        cli_main(prog_name="ontoloom")
        return
    name, data_dir = route
    try:
        if not _forward_hook(name, data_dir):  # the owner answers without importing hooks
            from ontoloom import hooks

            getattr(hooks, name)(sys.stdin, sys.stdout, data_dir or None)
        sys.stdout.flush()
    except BaseException:  # a hook is silent and exits 0 on every path
        pass
    finally:
        # Nothing may reach stderr, not even a flush failing at exit (a closed pipe).
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass
    sys.exit(0)


if __name__ == "__main__":
    main()
