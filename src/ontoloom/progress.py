"""Progress on long work: one bar on stderr, for a person watching a terminal.

The command line opens :func:`shown` around a long command; library code reports with
:func:`task` and never knows whether anything is drawn. A step that counts (a total given)
shows how many are done, the rate (per second) and the time left (eta). Nothing is drawn when stderr is not a
terminal (pipes and JSON stay clean), with ``--quiet`` or ``--json``, or before the work has
run for ``ONTOLOOM_PROGRESS_AFTER`` seconds (default 1): short commands never flash a bar.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["shown", "task"]

_DEFAULT_AFTER = 1.0


class _Bar:
    """A rich Progress started only once the work has lasted ``after`` seconds."""

    def __init__(self, stream: IO[str], after: float, force_terminal: bool | None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(file=stream, force_terminal=force_terminal, stderr=stream is sys.stderr)
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _rate_column(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        # A timer, not the next report, starts the bar: one long opaque step (a bulk load
        # inside the store) reports nothing until it ends, and still gets its spinner.
        self.lock = threading.Lock()
        self.live = self.closed = False
        self.timer = threading.Timer(after, self._start)
        self.timer.daemon = True
        if after <= 0:
            self._start()
        else:
            self.timer.start()

    def _start(self) -> None:
        with self.lock:
            if not self.closed:
                self.progress.start()
                self.live = True

    def stop(self) -> None:
        self.timer.cancel()
        with self.lock:
            self.closed = True
            if self.live:
                self.progress.stop()


def _rate_column() -> Any:
    """How many a second (a step that counts), e.g. ``48,213/s``; blank until known."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text("" if speed is None else f"{speed:,.0f}/s")

    return Rate()


_current: _Bar | None = None


def enabled(quiet: bool, as_json: bool, stream: IO[str] | None = None) -> bool:
    """Whether a bar may be drawn: a terminal on stderr, and neither --quiet nor --json."""
    stream = stream or sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and not quiet and not as_json


@contextmanager
def shown(
    quiet: bool = False,
    as_json: bool = False,
    *,
    stream: IO[str] | None = None,
    force: bool = False,
) -> Iterator[None]:
    """Draw the progress the enclosed work reports (see the module doc for when).

    ``force`` draws on ``stream`` even when it is not a terminal (tests)."""
    global _current
    stream = stream or sys.stderr
    if not (force or enabled(quiet, as_json, stream)) or _current is not None:
        yield
        return
    try:
        after = float(os.environ.get("ONTOLOOM_PROGRESS_AFTER", _DEFAULT_AFTER))
    except ValueError:
        after = _DEFAULT_AFTER
    _current = _Bar(stream, after, True if force else None)
    try:
        yield
    finally:
        _current.stop()
        _current = None


@contextmanager
def task(description: str, total: int | None = None) -> Iterator[Callable[..., None]]:
    """One step of long work; yields ``advance(done=None, total=None, description=None)``:
    ``done`` sets the count, without it the count goes up by one. A no-op when nothing is
    shown."""
    bar = _current
    if bar is None:
        yield _nothing
        return
    ident = bar.progress.add_task(description, total=total)
    if bar.live:
        bar.progress.refresh()  # each step is drawn at least once, however short

    def advance(
        done: int | None = None, total: int | None = None, description: str | None = None
    ) -> None:
        fields: dict[str, Any] = {}
        if total is not None:
            fields["total"] = total
        if description is not None:
            fields["description"] = description
        if done is None:
            bar.progress.advance(ident)
        else:
            fields["completed"] = done
        if fields:
            bar.progress.update(ident, **fields)

    try:
        yield advance
    finally:
        bar.progress.remove_task(ident)


def _nothing(*_args: Any, **_kwargs: Any) -> None:
    return None
