"""One owner per data dir: the process that keeps the store open and serves everyone else.

The first long-lived process that needs the store (``ontoloom mcp``, ``ontoloom serve``)
claims the data dir: it takes the data dir's write lock without waiting, opens the graph —
store, schema, compiled shapes, search index — once, and listens on ``owner.sock`` in the
data dir (mode 0600: only its user may connect). From then on every other front end on the
machine sends its work there (:mod:`ontoloom.owner_client`): an operation (:mod:`ontoloom.ops`)
by name with its arguments — a CLI command's, an MCP tool call's, a hook's — never a command
line. The owner runs each one to completion under one lock, so writes stay
serialised and validated exactly as before; only where the work happens changes.

Inside the owner, :func:`borrowed` hands ``Graph.open`` and ``open_backend`` the open graph
instead of opening the store again. When the owner exits or dies, its lock goes with it (the
kernel releases it) and its socket is stale: the next process that connects finds nobody,
does the work itself, and the next long-lived one claims the data dir anew.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontoloom import ops, session, store
from ontoloom.errors import (
    BadInput,
    Busy,
    Internal,
    OntoloomError,
    OutcomeUnknown,
    OwnerGone,
    OwnerTookOver,
    revive,
)
from ontoloom.locate import peer_uid
from ontoloom.owner_client import (
    GO,
    HAS_UNIX_SOCKETS,
    READY,
    SOCKET_NAME,
    OwnerUnresponsive,
    OwnerUntrusted,
    caller_wait,
    client_env,
    forward,
    socket_address,
)
from ontoloom.owner_client import OwnerGone as ClientOwnerGone
from ontoloom.store import write_ids

if TYPE_CHECKING:
    from ontoloom.api import Graph
    from ontoloom.store import Backend

__all__ = ["Owner", "borrowed", "owning", "owns", "run"]

_owners: dict[Path, Owner] = {}  # the data dirs this process owns
RETRY = {"retry": True}  # the owner is going away: the caller does the work itself
SETTLE = 0.02  # seconds without a write after which the search index catches up
GO_WAIT = 5.0  # seconds the owner waits for a caller's go once it said ready
OWN_UPKEEP = 2.0  # seconds work inside the owner waits for its lock at the least
CLAIM_EVERY = 0.1  # seconds between a long-lived process's tries to claim a held data dir


class Owner:
    """This process's hold on a data dir: the open graph, the lock, the socket."""

    def __init__(self, data_dir: Path, graph: Graph, stack: ExitStack) -> None:
        self.data_dir = data_dir
        self.graph = graph
        self._stack = stack
        self.lock = threading.RLock()  # one piece of work at a time, as the file lock did
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self._closing = False
        self._active = 0  # connections not yet answered
        self._answered = threading.Condition()
        # The search index follows the owner's writes behind them: caught up before any
        # read, and once no write came for SETTLE seconds (one index transaction for a
        # burst of writes instead of one per write).
        self._last_write = 0.0
        self._behind = threading.Event()
        graph.index_behind = True
        graph.on_index_behind = self._wrote
        threading.Thread(target=self._settle, name="ontoloom-index", daemon=True).start()

    # -- claiming -----------------------------------------------------------------------------
    @classmethod
    def claim(cls, data_dir: Path) -> Owner | None:
        """Become the data dir's owner, or None: another process holds it (its owner, or a
        command running now), there is no store yet, or this platform has no local sockets."""
        from ontoloom.api import Graph
        from ontoloom.store import exists

        data_dir = _canonical(data_dir)
        if not HAS_UNIX_SOCKETS or not exists(data_dir) or data_dir in _owners:
            return _owners.get(data_dir)
        stack = ExitStack()
        try:
            graph = stack.enter_context(Graph.open(data_dir, write=True, wait=0))
        except OntoloomError:
            stack.close()
            return None
        owner = cls(data_dir, graph, stack)
        _owners[data_dir] = owner  # before it listens: whoever finds it alive finds it here
        try:
            owner._listen()
        except OSError:
            del _owners[data_dir]
            stack.close()
            return None
        return owner

    def _listen(self) -> None:
        # The write lock is ours, so a socket file here is an earlier owner's, left stale.
        path = self.data_dir / SOCKET_NAME
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # created 0600, never briefly open to others
        try:
            with socket_address(self.data_dir) as address:
                listener.bind(address)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        listener.listen(64)
        self._listener = listener
        self._acceptor = threading.Thread(target=self._accept, name="ontoloom-owner", daemon=True)
        self._acceptor.start()

    def close(self) -> None:
        """Stop serving and release the data dir (the store is flushed and closed). The
        work in progress finishes; work still waiting is answered "retry" (its caller then
        does it itself), so no caller is left without an answer."""
        self._closing = True
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                (self.data_dir / SOCKET_NAME).unlink()
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() waiting on it
            with contextlib.suppress(OSError):
                listener.close()
            if self._acceptor is not None:  # every connection it accepted is counted first
                self._acceptor.join()
        with self.lock:
            _owners.pop(self.data_dir, None)
            self._stack.close()
        with self._answered:
            self._answered.wait_for(lambda: self._active == 0, timeout=60)

    # -- the search index, behind the writes ------------------------------------------------------
    def _wrote(self) -> None:
        self._last_write = time.monotonic()
        self._behind.set()

    def _settle(self) -> None:
        while not self._closing:
            if not self._behind.wait(timeout=1.0):
                continue
            while (idle := time.monotonic() - self._last_write) < SETTLE:
                time.sleep(SETTLE - idle)
            with self.lock:
                self._behind.clear()
                if not self._closing:
                    with contextlib.suppress(Exception):  # a read catches up (or rebuilds)
                        self.graph.catch_up_index()

    # -- serving --------------------------------------------------------------------------------
    def _accept(self) -> None:
        listener = self._listener
        while listener is not None and self._listener is listener:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            self._accepted(conn)

    def _accepted(self, conn: socket.socket) -> None:
        with self._answered:
            self._active += 1
        threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn, conn.makefile("rb") as lines:
                uid = peer_uid(conn)
                if uid is not None and uid != os.getuid():
                    return  # another user's process: its request is never read
                try:
                    line = lines.readline()
                    if not line:  # a probe (owner_alive): no request
                        return
                    request = json.loads(line)
                    answer = self.handle(request, lambda: _go_ahead(conn, lines))
                except Exception as exc:  # a malformed request must not take the owner down
                    answer = {"error": BadInput(f"bad request ({exc})").to_json()}
                if answer is not None:
                    with contextlib.suppress(OSError):
                        conn.sendall(json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n")
        finally:
            with self._answered:
                self._active -= 1
                self._answered.notify_all()

    def handle(
        self, request: dict[str, Any], go_ahead: Callable[[], bool] = lambda: True
    ) -> dict[str, Any] | None:
        """The answer to ``request``; None when ``go_ahead`` says its caller stopped waiting
        while this waited for the lock (nothing done: see :mod:`ontoloom.owner_client`)."""
        kind = request.get("kind")
        if self._closing:
            return RETRY
        if kind != "op":  # operations only: never a command line (nor anything else)
            return {"error": BadInput(f"unknown request kind {kind!r}").to_json()}
        # A hook never waits ("wait": 0): when the owner is busy it stays quiet, as it would
        # on a lock.
        wait = 0.0 if request.get("wait") == 0 else _lock_timeout(request.get("env"))
        if not self.lock.acquire(timeout=wait):
            busy = Busy(f"{self.data_dir} is busy with another command; try again shortly")
            return {"error": busy.to_json()}
        try:
            if self._closing:  # it waited while the owner was closing
                return RETRY
            if not go_ahead():
                return None
            checked = request.get("checked") is not False
            scope = request.get("scope")
            # The caller's write id: it asks the store by it if this process dies mid-way.
            with write_ids.writing(request.get("write_id")):
                return self._op(
                    request["name"],
                    request.get("arguments") or {},
                    checked,
                    None if scope is None else ops.Scope.from_json(scope),
                )
        finally:
            self.lock.release()

    def _op(
        self, name: str, arguments: dict[str, Any], checked: bool, scope: ops.Scope | None
    ) -> dict[str, Any]:
        """An operation's answer as JSON: its result, or the error it met (as data)."""
        try:
            return ops.call(self.data_dir, name, arguments, checked=checked, scope=scope).to_json()
        except OntoloomError as exc:
            return {"error": exc.to_json()}
        except Exception as exc:  # a bug must not take the owner down, nor go unanswered
            return {"error": Internal(f"unexpected {type(exc).__name__}: {exc}").to_json()}


_TAKEOVERS = 3  # owners appearing while a call waits, before it gives up (busy)


def run(
    data_dir: Path,
    name: str,
    arguments: dict[str, Any],
    *,
    claim: bool = False,
    checked: bool = True,
    scope: ops.Scope | None = None,
) -> ops.Result:
    """Run an operation where the data dir's graph is open: here when this process owns it,
    else in its owner (the operation and its arguments, never a command line); with no owner
    alive, here — a long-lived caller (``claim``) first claims the data dir, else it opens
    the store for just this call. ``checked``, ``scope``: see :func:`ontoloom.ops.call` (the
    scope travels with the request: the owner judges it as this process would).

    :raises OntoloomError: what the operation raised, wherever it ran; ``owner_gone`` when
        the owner died after taking it (it may have been applied), ``busy`` when the owner
        did not take it in time (nothing was done).
    """
    from ontoloom.store import lock_timeout

    known = ops.static_operations().get(name)
    if known is not None and known.on_files is not None:  # no store opened: answered here
        return ops.call(data_dir, name, arguments, checked=checked, scope=scope)
    # A write's id is made here, where the work starts, and goes with it to the owner: if
    # the owner dies mid-way this process asks the store by it instead of guessing.
    write_id = None if known is None or known.read_only else write_ids.current() or write_ids.new()
    took_over: OwnerTookOver | None = None
    for _ in range(_TAKEOVERS):
        if not owns(data_dir):
            request = {
                "kind": "op",
                "name": name,
                "arguments": arguments,
                "checked": checked,
                "env": client_env(),
            }
            if write_id is not None:
                request["write_id"] = write_id
            if scope is not None:
                request["scope"] = scope.to_json()
            try:
                answer = forward(data_dir, request, wait=caller_wait(lock_timeout()))
            except OwnerUnresponsive as exc:
                raise Busy(str(exc)) from None
            except ClientOwnerGone as exc:
                if write_id is None:
                    raise OwnerGone(str(exc)) from None
                done = _after_owner_died(data_dir, write_id, str(exc))
                if done is not None:
                    return done
                continue  # not committed, and it never will be: do it (here or anew)
            except OwnerUntrusted as exc:
                raise BadInput(str(exc)) from None
            if answer is not None:
                if "error" in answer:
                    raise revive(answer["error"])
                return ops.Result.from_json(answer)
            if claim:
                Owner.claim(data_dir)
        try:
            with write_ids.writing(write_id):
                return ops.call(data_dir, name, arguments, checked=checked, scope=scope)
        except OwnerTookOver as exc:  # another process became owner while this waited
            took_over = exc
    if took_over is None:
        raise Busy(f"{data_dir}: its owners kept dying before answering; try again")
    raise took_over


def _after_owner_died(data_dir: Path, write_id: str, said: str) -> ops.Result | None:
    """The owner took a write and died before answering: ask the store by its write id.
    Committed: its answer (the write is not done again). Not committed on an embedded
    store (the only kind an owner keeps): None — the dead owner's store holds no write in
    flight, so the caller does it (once). Otherwise (a store that cannot be asked; an
    endpoint, where a dead process's update could still be on its way):
    :class:`OutcomeUnknown`, naming the write id."""
    from ontoloom.store import endpoint_of

    try:
        found = run(data_dir, "write_status", {"write_id": write_id}).value
    except OntoloomError as exc:
        found = {"status": "unknown", "reason": exc.message}
    if found.get("status") == "committed":
        generations = ", ".join(map(str, found.get("generations", [])))
        return ops.Result(
            {**found, "answer_lost": True},
            note=(
                f"the process serving {data_dir} stopped before answering, and the write was "
                f"committed (write id {write_id}, generation {generations}): it was not done "
                "again"
            ),
        )
    if found.get("status") == "not committed" and endpoint_of(data_dir) is None:
        return None
    raise OutcomeUnknown(
        f"{said.split(';')[0]}; {found.get('reason') or 'its update may still reach the store'}",
        write_id,
    )


def _go_ahead(conn: socket.socket, lines: Any) -> bool:
    """Say ready and wait for the caller's go: False when it is gone (it stopped waiting)."""
    try:
        conn.sendall(READY)
        conn.settimeout(GO_WAIT)
        return bool(lines.readline() == GO)
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            conn.settimeout(None)


def _lock_timeout(env: dict[str, str] | None) -> float:
    """How long the caller waits for the owner: its own ``ONTOLOOM_LOCK_TIMEOUT`` when it
    sent one, as if it were waiting for the lock itself; else the owner's."""
    from ontoloom.store import lock_timeout

    with contextlib.suppress(KeyError, ValueError, TypeError):
        value = float((env or {})["ONTOLOOM_LOCK_TIMEOUT"])
        if value >= 0:
            return value
    return lock_timeout()


@functools.lru_cache(maxsize=256)
def _canonical(data_dir: Path) -> Path:
    """``data_dir`` resolved (a syscall per path component: every call asks whether this
    process owns its data dir)."""
    return data_dir.resolve()


@contextlib.contextmanager
def owning(data_dir: Path) -> Iterator[None]:
    """Own ``data_dir`` for the block (a long-lived process: ``mcp``, ``serve``): claimed
    now, or as soon as it is free — its owner died, the command holding it ended — within
    :data:`CLAIM_EVERY` seconds, not at this process's next request; released at the end,
    whichever of this process's threads claimed it."""
    data_dir = _canonical(data_dir)
    done = threading.Event()

    def keep_claiming() -> None:
        while not done.is_set() and Owner.claim(data_dir) is None:
            done.wait(CLAIM_EVERY)

    claimer = None
    if Owner.claim(data_dir) is None:
        claimer = threading.Thread(target=keep_claiming, name="ontoloom-claim", daemon=True)
        claimer.start()
    try:
        yield
    finally:
        done.set()
        if claimer is not None:
            claimer.join(timeout=10)
        owner = _owners.get(data_dir)
        if owner is not None:
            owner.close()


def owns(data_dir: Path) -> bool:
    """Whether this process owns ``data_dir``."""
    return _canonical(data_dir) in _owners


@contextlib.contextmanager
def held_at_once(data_dir: Path) -> Iterator[bool]:
    """Whether this process owns ``data_dir`` and its graph was free: then it is held for
    the block (re-entrantly: :func:`borrowed` inside it does not wait). For a caller that
    must not wait for it, such as an event loop."""
    owner = _owners.get(_canonical(data_dir)) if _owners else None
    if owner is None or not owner.lock.acquire(blocking=False):
        yield False
        return
    try:
        yield True
    finally:
        owner.lock.release()


@contextlib.contextmanager
def borrowed(data_dir: Path) -> Iterator[Graph | None]:
    """The open graph when this process owns ``data_dir`` (held under the owner's lock for
    the block), else None."""
    owner = _owners.get(_canonical(data_dir)) if _owners else None
    if owner is None:
        yield None
        return
    from ontoloom.store import lock_timeout

    # Bounded as the file lock is — a long command in the owner makes this call busy — but
    # never below OWN_UPKEEP: the owner's own upkeep (the index catching up) holds it too.
    if not owner.lock.acquire(timeout=max(lock_timeout(), OWN_UPKEEP)):
        raise Busy(f"{data_dir} is busy with another command; try again shortly")
    try:
        yield owner.graph
    finally:
        owner.lock.release()


@contextlib.contextmanager
def _borrowed_backend(data_dir: Path) -> Iterator[Backend | None]:
    with borrowed(data_dir) as graph:
        yield None if graph is None else graph.backend


class _Lending:
    """This module's answers to the floors below, which may not import it."""

    borrowed = staticmethod(borrowed)
    owns = staticmethod(owns)


session.lend_sessions(_Lending())
store.lend_backends(_borrowed_backend)
