"""One lock file per data dir: writers hold it exclusively, readers shared.

Oxigraph allows one read-write process per store directory, and opening read-only while
another process writes is undefined behaviour; the lock makes both impossible. A writer
or reader waits (bounded) and then fails with :class:`~ontoloom.errors.Busy`; a caller
that must never wait (the prompt hook) passes ``wait=0``.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from ontoloom.errors import Busy

__all__ = ["DataDirLock"]

_POLL = 0.02


class DataDirLock:
    def __init__(self, data_dir: Path, *, exclusive: bool, wait: float) -> None:
        self.data_dir = data_dir
        self.exclusive = exclusive
        self.wait = wait
        self._fd: int | None = None

    def acquire(self) -> None:
        path = self.data_dir / "lock"
        flags = os.O_RDWR | os.O_CREAT if self.exclusive else os.O_RDONLY
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            # A reader of a data dir whose lock file is missing: create it harmlessly.
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        mode = fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                self._fd = fd
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    role = "write" if self.exclusive else "read"
                    raise Busy(
                        f"the data dir {self.data_dir} is busy: another ontoloom process holds it "
                        f"(waited {self.wait:g}s to {role}). Retry when it is done, or raise "
                        "ONTOLOOM_LOCK_TIMEOUT."
                    ) from None
                time.sleep(_POLL)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
