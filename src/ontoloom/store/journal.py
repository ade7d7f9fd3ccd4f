"""Where a data dir's store lives, and how a bulk load switches it in whole.

A journaled bulk load (:meth:`ontoloom.writes.WritePath.commit` chooses it for a large delta)
never writes the live store: it makes a checkpoint of it (pyoxigraph ``Store.backup``: RocksDB
hard links, cheap), loads and validates the delta there, and then makes the checkpoint the
live store. The layout makes that last step one atomic rename:

* the live store is the directory the **pointer file** ``store.current`` names (``store.N``);
  without a pointer it is ``store`` (every data dir before the first bulk load);
* a checkpoint is built in a fresh ``store.N+1`` beside it, flushed and fsynced whole;
* the switch writes ``store.N+1`` to ``store.current.tmp``, fsyncs it, renames it over
  ``store.current`` and fsyncs the data dir: the rename is the commit record (the journal).

So a crash at any instant leaves either the old store (the pointer still names it; the
checkpoint is a stray directory) or the new one (the pointer names it; the old store is the
stray), never a mix, and no instant without a store. Every process that opens the data dir
read-write (under the exclusive lock) first settles what a crash left: it removes every
``store``/``store.N`` directory the pointer does not name and a leftover
``store.current.tmp`` — deterministically, whatever step the crash came at. Readers hold the
shared lock, so none is open while a writer switches; they read the pointer when they open.

A renamed directory was the alternative: renaming ``store`` away and the checkpoint into its
place takes two renames, with an instant between them where the data dir has no store and a
reader would be told there is none; a symlink cannot replace a directory in one rename. The
pointer needs neither.

**Test seam**: ``ONTOLOOM_TEST_STEP=STEP:ACTION`` makes the process stop itself when a bulk
load reaches ``STEP`` (one of :data:`STEPS`): ``kill`` sends it SIGKILL (a crash), ``int``
SIGINT (Ctrl-C). ``tests/test_bulk_load.py`` uses it to crash or interrupt an import at each
step; nothing else sets it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

from ontoloom.errors import StorageError

__all__ = ["POINTER", "STEPS", "StoreDirs", "deferred_signals", "drop", "step"]

POINTER = "store.current"
_TEMPORARY = POINTER + ".tmp"
_LEGACY = "store"
_NAME = re.compile(r"store(?:\.([0-9]{1,9}))?")

# The steps of a journaled bulk load, in order (the test seam's names).
STEPS = ("checkpoint", "loading", "loaded", "validated", "renamed", "switched")


def step(name: str) -> None:
    """A named step of a bulk load: where the test seam (module doc) may stop the process."""
    wanted = os.environ.get("ONTOLOOM_TEST_STEP")
    if not wanted:
        return
    at, _, action = wanted.partition(":")
    if at != name:
        return
    os.kill(os.getpid(), signal.SIGINT if action == "int" else signal.SIGKILL)


class StoreDirs:
    """The store directories of one data dir, and the pointer naming the live one."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir

    def live(self) -> Path:
        """The live store's directory.

        :raises StorageError: the pointer file names no store directory.
        """
        try:
            name = (self.data_dir / POINTER).read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return self.data_dir / _LEGACY
        except (OSError, UnicodeDecodeError) as exc:
            raise StorageError(f"cannot read {self.data_dir / POINTER}: {exc}") from None
        if _NAME.fullmatch(name) is None:
            raise StorageError(
                f"{self.data_dir / POINTER} names {name!r}, which is no store directory "
                "(store or store.N): it was edited or damaged; write the name of the store "
                "directory that holds the graph into it"
            )
        return self.data_dir / name

    def fresh(self) -> Path:
        """A directory name no store uses yet, for a checkpoint (it does not exist)."""
        taken = [self._number(p.name) for p in self._stores()]
        n = max([self._number(self.live().name), *taken]) + 1
        return self.data_dir / f"store.{n}"

    @staticmethod
    def _number(name: str) -> int:
        match = _NAME.fullmatch(name)
        return int(match.group(1)) if match is not None and match.group(1) else 0

    def _stores(self) -> list[Path]:
        try:
            entries = list(self.data_dir.iterdir())
        except FileNotFoundError:
            return []
        return [p for p in entries if _NAME.fullmatch(p.name) is not None and p.is_dir()]

    def settle(self) -> None:
        """Remove what an interrupted bulk load left: every store directory but the live one,
        and a pointer never renamed into place. Only under the exclusive lock. Nothing is
        removed while the live directory holds no store (a data dir not made yet — or one
        whose store was moved by hand: the others may be all that is left of it)."""
        live = self.live()
        if not (live / "CURRENT").exists():
            return
        for path in self._stores():
            if path != live:
                drop(path)
        with contextlib.suppress(FileNotFoundError):
            (self.data_dir / _TEMPORARY).unlink()

    def switch(self, new: Path) -> bool:
        """Make ``new`` (a complete, flushed store directory in this data dir) the live store:
        its files and itself fsynced, then the pointer replaced in one rename and the data dir
        fsynced (module doc). True when the rename is known to be on disk; False when that
        last fsync failed (the switch is made, but the store it replaced must stay until the
        next writer's :meth:`settle`, which reads the pointer as the disk kept it).

        :raises OSError: before the rename (nothing switched).
        """
        assert new.parent == self.data_dir and _NAME.fullmatch(new.name)
        _sync_tree(new)
        temporary = self.data_dir / _TEMPORARY
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, (new.name + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, self.data_dir / POINTER)
        step("renamed")
        try:
            _sync_dir(self.data_dir)
        except OSError:
            return False
        return True


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done: a signal's handler raises
    :class:`~ontoloom.errors.Stopped` wherever the main thread is, and a switch must not be
    cut between the pointer's rename and the handle that follows it. (Another thread's block
    needs nothing: Python runs handlers on the main thread only.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    names = (signal.SIGINT, signal.SIGTERM)
    before = {s: signal.signal(s, lambda signum, _frame: caught.append(signum)) for s in names}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
        if caught:
            handler = before[signal.Signals(caught[0])]
            if callable(handler):
                handler(caught[0], None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(caught[0])


def drop(path: Path) -> None:
    """Remove a store directory that is not live (a checkpoint, or the store it replaced)."""
    import shutil  # (imported where used: every command line imports this module)

    shutil.rmtree(path, ignore_errors=True)


def _sync_tree(root: Path) -> None:
    """fsync every file under ``root`` and the directories themselves: the checkpoint's hard
    links and copied files are on disk before the pointer names them."""
    for folder, _dirs, files in os.walk(root):
        for name in files:
            try:
                fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            except FileNotFoundError:  # the store, still open, compacted it away meanwhile
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _sync_dir(Path(folder))


def _sync_dir(path: Path) -> None:
    if os.name == "nt":  # a directory cannot be opened (nor fsynced) there: renames are durable
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
