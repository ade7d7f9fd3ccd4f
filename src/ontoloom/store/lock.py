"""One lock file per data dir: writers hold it exclusively, readers shared.

Oxigraph allows one read-write process per store directory, and opening read-only while
another process writes is undefined behaviour; the lock makes both impossible. A writer
or reader waits (bounded) and then fails with :class:`~ontoloom.errors.Busy`; a caller
that must never wait (the prompt hook) passes ``wait=0``.

Where the system has ``flock`` (POSIX) the lock is taken with it, through the standard
library: the call ``portalocker`` would make there, without importing it — its import costs
about 90 ms, more than half of what a fresh prompt hook may spend. Elsewhere (Windows) it
goes through ``portalocker`` (``LockFileEx``; shared locks need pywin32, which its ``win32``
extra installs).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ontoloom.errors import Busy, OwnerTookOver, StorageError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["DataDirLock", "held", "kept_by_owner"]

_POLL = 0.02
_OWNER_PROBE = 0.25  # seconds between looks for an owner that took over while waiting


def kept_by_owner(data_dir: Path) -> str:
    """What a process that cannot lock ``data_dir`` is told when a live owner holds it."""
    return (
        f"{data_dir} is kept open by its owner (a running `ontoloom mcp` or `ontoloom serve`) "
        "for as long as it runs; nothing was done here: work through it — the CLI, MCP or "
        "HTTP — or stop it"
    )


def _try_lock(handle: IO[Any], exclusive: bool) -> bool:
    """Take the lock on an open file without waiting: False when another process holds it.

    :raises OSError: when the system refuses the lock for another reason.
    """
    if fcntl is not None:
        try:
            fcntl.flock(
                handle.fileno(), (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
            )
        except BlockingIOError:
            return False
        return True
    import portalocker

    kind = portalocker.LockFlags.EXCLUSIVE if exclusive else portalocker.LockFlags.SHARED
    try:
        portalocker.lock(handle, kind | portalocker.LockFlags.NON_BLOCKING)
    except portalocker.AlreadyLocked:
        return False
    except portalocker.LockException as exc:
        raise OSError(str(exc)) from None
    return True


def _unlock(handle: IO[Any]) -> None:
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    else:
        import portalocker

        portalocker.unlock(handle)


@contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold ``path`` (created when missing) exclusively, waiting as long as it takes: for
    work that is run one at a time and never for long (a mining run)."""
    with path.open("a") as handle:
        while not _try_lock(handle, exclusive=True):
            time.sleep(_POLL)
        try:
            yield
        finally:
            _unlock(handle)


class DataDirLock:
    def __init__(self, data_dir: Path, *, exclusive: bool, wait: float) -> None:
        self.data_dir = data_dir
        self.exclusive = exclusive
        self.wait = wait
        self._file: IO[bytes] | None = None

    def acquire(self) -> None:
        path = self.data_dir / "lock"
        try:
            # A reader of a data dir whose lock file is missing creates it harmlessly.
            handle = path.open("a+b") if self.exclusive or not path.exists() else path.open("rb")
        except OSError as exc:
            raise StorageError(f"cannot open the lock file {path}: {exc.strerror or exc}") from None
        deadline = time.monotonic() + self.wait
        probe = time.monotonic() + _OWNER_PROBE
        while True:
            try:
                taken = _try_lock(handle, self.exclusive)
            except OSError as exc:
                handle.close()
                raise StorageError(f"cannot lock {path}: {exc.strerror or exc}") from None
            if taken:
                self._file = handle
                return
            if time.monotonic() >= deadline:
                handle.close()
                role = "write" if self.exclusive else "read"
                raise Busy(
                    f"the data dir {self.data_dir} is busy: another ontoloom process holds it "
                    f"(waited {self.wait:g}s to {role}). Retry when it is done, or raise "
                    "ONTOLOOM_LOCK_TIMEOUT."
                ) from None
            if time.monotonic() >= probe:
                from ontoloom.locate import owner_alive

                if owner_alive(self.data_dir):  # it holds the lock for as long as it lives
                    handle.close()
                    raise OwnerTookOver(kept_by_owner(self.data_dir))
                probe = time.monotonic() + _OWNER_PROBE
            time.sleep(_POLL)

    def fileno(self) -> int | None:
        """The descriptor of the held lock file (None when not held): a child process that
        inherits it shares the lock (see :mod:`ontoloom.store.isolated`)."""
        return self._file.fileno() if self._file is not None else None

    def release(self) -> None:
        if self._file is not None:
            try:
                _unlock(self._file)
            finally:
                self._file.close()
                self._file = None

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
