"""The ``ontoloom`` console script.

Claude Code runs ``ontoloom hook prompt-context`` on every prompt, so the two hooks are
dispatched here without importing click or the CLI (which cost ~100 ms before any work):
exactly ``[--data-dir DIR] hook prompt-context|session-start [--data-dir DIR]``. Every other
command line — ``--help`` included — goes to :func:`ontoloom.cli.main`.
"""

from __future__ import annotations

import io
import json
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks start here)
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["forward_command", "hook_route", "main"]

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


# Commands that use the store: when the data dir has an owner, they run there.
FORWARDED = {
    *[
        "check",
        "create",
        "delete",
        "enrich",
        "export",
        "gc",
        "get",
        "guard",
        "hints",
        "import",
        "infer",
        "links",
        "list",
        "plan",
    ],
    *[
        "proposals",
        "query",
        "rebuild",
        "reindex",
        "relate",
        "relations",
        "schema",
        "search",
        "summary",
    ],
    *["traverse", "unrelate", "update", "view", "why", "mine", "skill"],
}


def command_of(argv: list[str]) -> tuple[str | None, str | None]:
    """(the command, the ``--data-dir`` given before it) of a command line.

    >>> command_of(["--json", "--data-dir", "d", "list", "Task"])
    ('list', 'd')
    """
    data_dir = None
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        found = _data_dir_option(argv, i)
        if found is None:
            i += 1
        else:
            data_dir, i = found
    return (argv[i] if i < len(argv) else None), data_dir


def reads_stdin(argv: list[str]) -> bool:
    """Whether a command line names standard input (``-`` as a file, not as ``-o -``).

    >>> reads_stdin(["import", "-"]), reads_stdin(["export", "-o", "-"])
    (True, False)
    """
    outputs = ("-o", "--output")
    return any(a == "-" and (i == 0 or argv[i - 1] not in outputs) for i, a in enumerate(argv))


def forward_command(argv: list[str]) -> int | None:
    """Run the command line in the data dir's owner, if it has one: the exit code."""
    command, data_dir = command_of(argv)
    if command not in FORWARDED or {"-h", "--help", "--version"} & set(argv):
        return None
    import shutil

    from ontoloom.config import resolve_data_dir
    from ontoloom.owner_client import SOCKET_NAME, caller_wait, client_env, forward, write_out
    from ontoloom.store import lock_timeout

    try:
        path = resolve_data_dir(data_dir)
    except Exception:  # the command itself will say what is wrong
        return None
    from ontoloom.owner import owns

    if owns(path) or not (path / SOCKET_NAME).exists():  # the owner itself, or none
        return None
    stdin = sys.stdin.read() if reads_stdin(argv) and not sys.stdin.isatty() else None
    answer = forward(
        path,
        {
            "kind": "cli",
            "argv": argv,
            "cwd": os.getcwd(),
            "env": client_env(),
            "stdin": stdin,
            "columns": shutil.get_terminal_size().columns if sys.stdout.isatty() else None,
        },
        wait=caller_wait(lock_timeout()),
    )
    if answer is None:
        if stdin is not None:  # already read: hand it to the command run here
            sys.stdin = io.StringIO(stdin)
        return None
    return write_out(answer)


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
        event = {}
    path = hook_data_dir(data_dir, event.get("cwd") if isinstance(event, dict) else None)
    if not os.path.exists(os.path.join(path, SOCKET_NAME)):
        return False
    # The owner answers a hook at once (quiet when busy): past HOOK_WAIT it is not answering.
    answer = forward(path, {"kind": "hook", "name": name, "stdin": text}, wait=HOOK_WAIT)
    if answer is None:  # a stale socket: the hook runs here, on what it was given
        return False
    sys.stdout.write(answer.get("stdout", ""))
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


def _run_through_owner(argv: list[str], error: Exception) -> None:
    """Run a command line that met a new owner again, through it; ``error`` when it cannot
    be (it read standard input, which is gone now, or the owner is gone again)."""
    code = None if reads_stdin(argv) else _forwarded(argv)
    if code is not None:
        sys.exit(code)
    _error_exit(argv, "busy", error)


def _forwarded(argv: list[str]) -> int | None:
    """:func:`forward_command`, an owner that does not answer reported as the CLI would."""
    try:
        return forward_command(argv)
    except Exception as exc:  # OwnerGone, OwnerUnresponsive: the owner did not answer
        kind = "busy" if type(exc).__name__ == "OwnerUnresponsive" else "owner_gone"
        _error_exit(argv, kind, exc)


def _error_exit(argv: list[str], kind: str, error: Exception) -> NoReturn:
    if "--json" in argv:  # as the CLI prints an error with --json
        message = {"error": kind, "message": str(error)}
        sys.stdout.write(json.dumps(message, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"error: {error}\n")
    sys.exit(2)


def main() -> None:
    route = hook_route(sys.argv[1:])
    if route is None:
        _stop_on_signals()
        code = _forwarded(sys.argv[1:])
        if code is not None:
            sys.exit(code)
        from ontoloom.cli import main as cli_main
        from ontoloom.errors import RetryThroughOwner

        try:
            # The same program name whether run as the script or as ``python -m ontoloom``.
            cli_main(prog_name="ontoloom")
        except RetryThroughOwner as retry:  # an owner took over before anything was done
            _run_through_owner(sys.argv[1:], retry.error)
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
