"""Storage: the backend seam, the embedded Oxigraph backend, and the data dir lock.

No floor above this package imports pyoxigraph. Who owns a data dir (:mod:`ontoloom.owner`,
floors above) is told to this one through :func:`lend_backends`, never imported.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ontoloom.errors import BadInput, NoStore
from ontoloom.store.base import Backend, Commits, Delta, QuadReads, Queries, Row, Scratch
from ontoloom.store.journal import StoreDirs
from ontoloom.store.lock import DataDirLock
from ontoloom.terms import Quad

if TYPE_CHECKING:
    from ontoloom.store.embedded import EmbeddedBackend
    from ontoloom.store.endpoint import EndpointConfig

__all__ = [
    "Backend",
    "Commits",
    "Delta",
    "EmbeddedBackend",
    "QuadReads",
    "Queries",
    "Row",
    "Scratch",
    "initialised",
    "lend_backends",
    "lock_timeout",
    "open_backend",
    "scratch",
    "store_path",
]

# A new data dir is this user's alone: what it holds (store, index, requests) is theirs.
DATA_DIR_MODE = 0o700

DEFAULT_LOCK_TIMEOUT = 10.0


class BackendLender(Protocol):
    """The backend this process keeps open for a data dir it owns (held for the block)."""

    def __call__(self, data_dir: Path) -> AbstractContextManager[Backend | None]: ...


@contextmanager
def _nobody(data_dir: Path) -> Iterator[Backend | None]:
    yield None


_lender: BackendLender = _nobody


def lend_backends(lender: BackendLender) -> None:
    """Called once by the hosting floor: from then on :func:`open_backend` of an owned data
    dir yields the owner's open backend."""
    global _lender
    _lender = lender


def __getattr__(name: str) -> Any:
    # Imported on first use: the embedded backend needs ontoloom.vocab, which needs
    # ontoloom.terms — importing it here would make that a cycle.
    if name == "EmbeddedBackend":
        from ontoloom.store.embedded import EmbeddedBackend

        return EmbeddedBackend
    raise AttributeError(name)


def scratch(quads: Iterable[Quad] = (), *, union: bool = True) -> Scratch:
    """A local, in-memory working copy of ``quads`` (as written), whatever the store is:
    validation and inference read what they need into one and work there."""
    from ontoloom.store.embedded import EmbeddedBackend

    return EmbeddedBackend.scratch(quads, union=union)


def endpoint_of(data_dir: Path) -> EndpointConfig | None:
    """The SPARQL endpoint ``[store]`` in the instance's ontoloom.toml names, if any."""
    from ontoloom.config import load_config

    config = load_config(data_dir)
    table = config.raw.get("store")
    if table is None:
        return None
    from ontoloom.store.endpoint import EndpointConfig

    if not isinstance(table, dict):
        raise BadInput(f"{config.instance}/ontoloom.toml: [store] must be a table")
    return EndpointConfig.from_table(table, f"{config.instance}/ontoloom.toml")


@contextmanager
def _endpoint_backend(
    data_dir: Path, endpoint: EndpointConfig, *, write: bool, create: bool, wait: float | None
) -> Iterator[Backend]:
    from ontoloom.store.endpoint import SparqlEndpointBackend, credentials

    backend = SparqlEndpointBackend(endpoint, writable=write or create, auth=credentials(data_dir))
    try:
        if not create and not backend.is_initialised():  # before anything is made here
            raise NoStore(
                f"no ontoloom store at the SPARQL endpoint {endpoint.query_url}: run "
                "`ontoloom init --endpoint URL` in your instance"
            )
        # the lock, search index and caches: this user's alone (0700), as for an embedded store
        data_dir.mkdir(mode=DATA_DIR_MODE, parents=True, exist_ok=True)
        wait = lock_timeout() if wait is None else wait
        with DataDirLock(data_dir, exclusive=write or create, wait=wait) as lock:
            backend.lock = lock
            if write or create:  # under the exclusive lock: made once, by one process
                backend.gateway = gateway_id(data_dir)
            if create and not backend.is_initialised():
                backend.initialise()
            yield backend
    finally:
        backend.close()


def gateway_id(data_dir: Path) -> str:
    """This data dir's name for itself among the gateways of one endpoint (made once)."""
    import uuid

    path = data_dir / "gateway-id"
    try:
        return path.read_text().strip() or _new_gateway_id(path, uuid.uuid4().hex)
    except FileNotFoundError:
        return _new_gateway_id(path, uuid.uuid4().hex)


def _new_gateway_id(path: Path, value: str) -> str:
    path.write_text(value + "\n")
    return value


def lock_timeout() -> float:
    try:
        return float(os.environ.get("ONTOLOOM_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


def store_path(data_dir: Path) -> Path:
    """The live store's directory (:mod:`ontoloom.store.journal`: ``store``, or the
    ``store.N`` that the pointer file ``store.current`` names)."""
    return StoreDirs(data_dir).live()


def exists(data_dir: Path) -> bool:
    """Whether the data dir has a local store (embedded: the store itself; endpoint-backed:
    never — see :func:`initialised`)."""
    return (store_path(data_dir) / "CURRENT").exists()


def initialised(data_dir: Path) -> bool:
    """Whether the data dir's graph has been made: its local store, or — when ontoloom.toml
    names an endpoint — ontoloom's bookkeeping graph on that endpoint."""
    endpoint = endpoint_of(data_dir)
    if endpoint is None:
        return exists(data_dir)
    from ontoloom.store.endpoint import SparqlEndpointBackend, credentials

    backend = SparqlEndpointBackend(endpoint, writable=False, auth=credentials(data_dir))
    try:
        return backend.is_initialised()
    finally:
        backend.close()


def probe_endpoint(data_dir: Path) -> dict[str, Any]:
    """What the data dir's endpoint is (its default graph's semantics, its engine and the
    gaps found: :meth:`~ontoloom.store.endpoint.SparqlEndpointBackend.probe`), asked of it
    with a write and a read in a scratch graph of its own."""
    endpoint = endpoint_of(data_dir)
    if endpoint is None:
        raise BadInput("this instance keeps its graph in the embedded store, not an endpoint")
    from ontoloom.store.endpoint import SparqlEndpointBackend, credentials

    backend = SparqlEndpointBackend(endpoint, writable=True, auth=credentials(data_dir))
    try:
        return backend.probe()
    finally:
        backend.close()


def describe_store(data_dir: Path) -> dict[str, Any]:
    """Where the data dir's graph lives and, on an endpoint, what ``init`` found it to be:
    whether its default graph is the union of its graphs, its engine, and each gap (what it
    answers otherwise than the embedded store) with what it means. Read from ontoloom.toml:
    no request to the store."""
    endpoint = endpoint_of(data_dir)
    if endpoint is None:
        return {"store": "embedded", "path": str(store_path(data_dir)), "gaps": []}
    from ontoloom.store.endpoint import gap_text

    return {
        "store": "endpoint",
        "endpoint": endpoint.query_url,
        "update_endpoint": endpoint.update_url,
        "graph_store": endpoint.store_url,
        "default_graph": endpoint.default_graph,
        "engine": endpoint.engine,
        "gaps": [{"gap": g, "means": gap_text(g)} for g in endpoint.gaps],
    }


@contextmanager
def open_backend(
    data_dir: Path, *, write: bool, create: bool = False, wait: float | None = None
) -> Iterator[Backend]:
    """Lock the data dir and open its store for as long as the block runs.

    :raises NoStore: when there is no store and ``create`` is false.
    :raises Busy: when the lock is not granted within ``wait`` seconds.
    """
    with _lender(data_dir) as owned:
        if owned is not None:  # this process owns the data dir: its store is open
            yield owned
            return
    endpoint = endpoint_of(data_dir)
    if endpoint is not None:
        with _endpoint_backend(data_dir, endpoint, write=write, create=create, wait=wait) as b:
            yield b
        return
    if not exists(data_dir):
        if not create:
            raise NoStore(
                f"no ontoloom store at {data_dir}: run `ontoloom init` in your instance, "
                "or point --data-dir / ONTOLOOM_HOME at an existing data dir"
            )
        # The store, index, caches and mining requests quote private text: this user's alone.
        data_dir.mkdir(mode=DATA_DIR_MODE, parents=True, exist_ok=True)
        write = True
    from ontoloom.store.embedded import EmbeddedBackend

    lock = DataDirLock(data_dir, exclusive=write, wait=lock_timeout() if wait is None else wait)
    with lock:
        dirs = StoreDirs(data_dir)
        if write:  # the exclusive lock is held: what an interrupted bulk load left goes
            dirs.settle()
        backend = EmbeddedBackend.open(dirs.live(), writable=write)
        backend.lock = lock
        if write:
            backend.dirs = dirs  # a bulk load may switch the data dir to a checkpoint
        try:
            yield backend
        finally:
            backend.close()
