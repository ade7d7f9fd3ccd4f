"""One lock file per data dir: writers hold it exclusively, readers shared.

Oxigraph allows one read-write process per store directory, and opening read-only while
another process writes is undefined behaviour; the lock makes both impossible. A writer
or reader waits (bounded) and then fails with :class:`~ontoloom.errors.Busy`; a caller
that must never wait (the prompt hook) passes ``wait=0``.

The lock is taken through ``portalocker``: ``flock`` on POSIX (so processes of earlier
versions, which called ``flock`` themselves, still exclude and share with these), and
``LockFileEx`` on Windows (shared locks there need pywin32, which the ``win32`` extra
installs on Windows only).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO

import portalocker

from ontoloom.errors import Busy, OntoloomError

__all__ = ["DataDirLock"]

_POLL = 0.02


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
            raise OntoloomError(
                f"cannot open the lock file {path}: {exc.strerror or exc}"
            ) from None
        kind = portalocker.LockFlags.EXCLUSIVE if self.exclusive else portalocker.LockFlags.SHARED
        deadline = time.monotonic() + self.wait
        while True:
            try:
                portalocker.lock(handle, kind | portalocker.LockFlags.NON_BLOCKING)
                self._file = handle
                return
            except portalocker.AlreadyLocked:
                if time.monotonic() >= deadline:
                    handle.close()
                    role = "write" if self.exclusive else "read"
                    raise Busy(
                        f"the data dir {self.data_dir} is busy: another ontoloom process holds it "
                        f"(waited {self.wait:g}s to {role}). Retry when it is done, or raise "
                        "ONTOLOOM_LOCK_TIMEOUT."
                    ) from None
                time.sleep(_POLL)
            except portalocker.LockException as exc:
                handle.close()
                raise OntoloomError(f"cannot lock {path}: {exc}") from None

    def fileno(self) -> int | None:
        """The descriptor of the held lock file (None when not held): a child process that
        inherits it shares the lock (see :mod:`ontoloom.store.isolated`)."""
        return self._file.fileno() if self._file is not None else None

    def release(self) -> None:
        if self._file is not None:
            try:
                portalocker.unlock(self._file)
            finally:
                self._file.close()
                self._file = None

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
