"""Real SPARQL 1.1 engines on loopback for the endpoint backend's tests and benches (issue 13).

Each launcher starts its engine in a directory of its own on free loopback ports, waits
(bounded) until it answers a query, and stops it again; :meth:`EndpointServer.restart`
stops and starts it on the same ports and the same data, for "restarted mid-write" tests.

* :class:`OxigraphServer`: ``oxigraph serve --union-default-graph`` (PyPI package
  ``oxigraph``, the CLI of the pyoxigraph version in use).
* :class:`VirtuosoServer`: Debian's ``virtuoso-opensource-7`` (``virtuoso-t``), with a
  minimal ``virtuoso.ini`` written into the directory (its own database files, HTTP and
  ISQL ports: the package's default database is never touched). Updates over plain
  ``/sparql`` are allowed by granting ``SPARQL_UPDATE`` to the anonymous user ``SPARQL``
  through ``isql-vt`` after start, so ``auth`` is None, as for Oxigraph.

No pytest here: ``bench/`` imports this module too (``tests/conftest.py`` has the fixtures)::

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from endpoint_servers import ENGINES, EngineMissing

    with ENGINES["virtuoso"](workdir, max_rows=1_000_000) as server:
        ...  # server.query_url, server.update_url, server.store_url

A missing engine raises :class:`EngineMissing`, whose message says what to install.
Engine quirks met while writing these launchers are listed in tests/README.md.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

__all__ = [
    "ENGINES",
    "EndpointServer",
    "EngineMissing",
    "EngineStartFailed",
    "OxigraphServer",
    "VirtuosoServer",
    "free_port",
]

READY_TIMEOUT = 60.0  # seconds; a fresh Virtuoso database takes ~8 s on 2 busy cores
STOP_TIMEOUT = 20.0
# The oracle's own queries and updates (a reset lists every graph: on Virtuoso a scan of
# every quad, which took over 60 s once on a machine running other work beside the suite).
ORACLE_TIMEOUT = 300.0


class EngineMissing(RuntimeError):
    """The engine's program is not installed; the message says how to install it."""


class EngineStartFailed(RuntimeError):
    """The engine did not answer in time or exited; the message ends with its log's tail."""


def free_port() -> int:
    """A loopback port free right now (the kernel's pick; the engine binds it next)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_RUNNING: set[EndpointServer] = set()


@atexit.register
def _stop_all() -> None:
    """No engine outlives the interpreter that started it (a crashed test run included)."""
    for server in list(_RUNNING):
        server.stop()


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class EndpointServer:
    """One engine process; ``start()`` is called by the constructor's caller (or ``with``)."""

    name: str
    query_url: str
    update_url: str
    store_url: str  # the Graph Store Protocol endpoint (SPARQL 1.1 GSP, indirect identification)
    auth: tuple[str, str] | None = None

    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.workdir / f"{self.name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.start_seconds: float | None = None  # how long the last start took until ready

    # -- lifecycle ----------------------------------------------------------------------------
    def _command(self) -> list[str]:
        raise NotImplementedError

    def _before_start(self) -> None:
        """Files the engine needs before its first start (called on every start)."""

    def _after_start(self) -> None:
        """Set-up over the running engine (called on every start)."""

    def start(self) -> None:
        if self.running:
            return
        self._before_start()
        began = time.monotonic()
        with self.log_path.open("ab") as log:
            # Its own process group: a Ctrl-C in the terminal goes to pytest, which stops it.
            self.process = subprocess.Popen(
                self._command(),
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._wait_ready(READY_TIMEOUT)
            self._after_start()
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - began
        _RUNNING.add(self)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Stop the engine (SIGTERM, then SIGKILL after a bound); its data stays."""
        process, self.process = self.process, None
        _RUNNING.discard(self)
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_TIMEOUT)

    def kill(self) -> None:
        """Stop the engine abruptly (SIGKILL): a crash, not a shutdown."""
        process, self.process = self.process, None
        _RUNNING.discard(self)
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(STOP_TIMEOUT)

    def restart(self, *, crash: bool = False) -> None:
        """Stop (or with ``crash``, kill) and start again on the same ports and data."""
        if crash:
            self.kill()
        else:
            self.stop()
        self.start()

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise EngineStartFailed(
                    f"{self.name} exited (code {code}) before it answered; its log "
                    f"{self.log_path} ends:\n{_tail(self.log_path)}"
                )
            try:
                response = httpx.get(
                    self.query_url,
                    params={"query": "SELECT * WHERE { ?s ?p ?o } LIMIT 1"},
                    headers={"Accept": "application/sparql-results+json"},
                    timeout=2.0,
                )
                if response.status_code == 200:
                    return
                last = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            time.sleep(0.1)
        raise EngineStartFailed(
            f"{self.name} did not answer {self.query_url} within {timeout:.0f} s ({last}); "
            f"its log {self.log_path} ends:\n{_tail(self.log_path)}"
        )

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- data ---------------------------------------------------------------------------------
    def query(self, sparql: str) -> dict:
        """A SELECT's (or ASK's) JSON results, straight from the engine (test oracle)."""
        response = httpx.post(
            self.query_url,
            data={"query": sparql},
            headers={"Accept": "application/sparql-results+json"},
            auth=self.auth,
            timeout=ORACLE_TIMEOUT,
        )
        response.raise_for_status()
        return dict(response.json())

    def update(self, sparql: str) -> None:
        response = httpx.post(
            self.update_url, data={"update": sparql}, auth=self.auth, timeout=ORACLE_TIMEOUT
        )
        response.raise_for_status()

    def graphs(self) -> set[str]:
        """Every named graph holding a triple (the engine's own included)."""
        rows = self.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
        return {row["g"]["value"] for row in rows["results"]["bindings"]}

    def reset(self) -> None:
        """Drop every triple a test wrote (every graph, default graph included)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.query_url}>"


class OxigraphServer(EndpointServer):
    """``oxigraph serve --union-default-graph`` with its RocksDB store in ``workdir/store``."""

    name = "oxigraph"

    def __init__(self, workdir: Path, port: int | None = None, *, union: bool = True) -> None:
        super().__init__(workdir)
        # union=False: the default graph is the store's own (oxigraph's default), which
        # ontoloom must work with too (it then names its graphs in every query).
        self.union = union
        self.binary = oxigraph_binary()
        self.port = port or free_port()
        base = f"http://127.0.0.1:{self.port}"
        self.query_url = base + "/query"
        self.update_url = base + "/update"
        self.store_url = base + "/store"

    def _command(self) -> list[str]:
        return [
            self.binary,
            "serve",
            "--location",
            str(self.workdir / "store"),
            "--bind",
            f"127.0.0.1:{self.port}",
            # Queries without GRAPH see every graph, as in the embedded store.
            *(["--union-default-graph"] if self.union else []),
        ]

    def reset(self) -> None:
        self.update("DROP ALL")


class OxigraphNamedServer(OxigraphServer):
    """``oxigraph serve`` without ``--union-default-graph``: its default graph is its own."""

    name = "oxigraph-named"

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        super().__init__(workdir, port, union=False)


class RdflibServer(EndpointServer):
    """``rdflib-endpoint serve --enable-update`` (PyPI ``rdflib-endpoint``, the ``engines``
    extra): an in-memory rdflib Dataset behind FastAPI, queries and updates at ``/``. It has
    no Graph Store Protocol: ``store_url`` is None."""

    name = "rdflib"
    store_url = None  # type: ignore[assignment]

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        super().__init__(workdir)
        found = shutil.which("rdflib-endpoint") or str(
            Path(sys.executable).with_name("rdflib-endpoint")
        )
        if not Path(found).exists():
            raise EngineMissing(
                "rdflib-endpoint is not installed: `pip install -e '.[dev,engines]'` "
                "(PyPI package rdflib-endpoint)"
            )
        self.binary = found
        self.port = port or free_port()
        self.query_url = self.update_url = f"http://127.0.0.1:{self.port}/"

    def _command(self) -> list[str]:
        return [
            self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port),
            "--enable-update",
        ]  # fmt: skip

    def reset(self) -> None:
        self.update("DROP SILENT ALL")


def oxigraph_binary() -> str:
    """The ``oxigraph`` CLI: on PATH, else beside this interpreter (a venv not activated)."""
    found = shutil.which("oxigraph")
    if found:
        return found
    beside = Path(sys.executable).with_name("oxigraph")
    if beside.exists():
        return str(beside)
    raise EngineMissing(
        "the oxigraph server is not installed: `pip install -e '.[dev]'` (PyPI package oxigraph)"
    )


_VIRTUOSO_INI = """\
; Written by tests/endpoint_servers.py: a throw-away database in this directory.
[Database]
DatabaseFile       = {dir}/virtuoso.db
ErrorLogFile       = {dir}/virtuoso.errors.log
LockFile           = {dir}/virtuoso.lck
TransactionFile    = {dir}/virtuoso.trx
xa_persistent_file = {dir}/virtuoso.pxa
ErrorLogLevel      = 7
FileExtend         = 200
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile    = {dir}/virtuoso-temp.db
TransactionFile = {dir}/virtuoso-temp.trx

[Parameters]
ServerPort         = 127.0.0.1:{isql_port}
DisableUnixSocket  = 1
CheckpointInterval = 60
NumberOfBuffers    = 10000
MaxDirtyBuffers    = 6000
DirsAllowed        = .
ThreadsPerQuery    = 2
; Repeatable read: two guarded commits against one generation never both apply (at Debian's
; default, read committed, they can: the backend then reports it, README "Scaling out").
DefaultIsolation   = 4
MaxSortedTopRows   = {max_rows}

[HTTPServer]
ServerPort           = 127.0.0.1:{http_port}
ServerRoot           = {dir}
ServerThreads        = 10
MaxClientConnections = 10
EnabledGzipContent   = 0

[SPARQL]
; Debian's defaults unless max_rows is given: a SELECT answers at most ResultSetMaxRows rows
; (then with the header X-SPARQL-MaxRows), a CONSTRUCT or a GSP GET at most as many triples
; (with no sign of it), ORDER BY with LIMIT/OFFSET past MaxSortedTopRows is an error, and a
; query past MaxQueryExecutionTime may answer partially.
ResultSetMaxRows           = {max_rows}
MaxQueryCostEstimationTime = 400
MaxQueryExecutionTime      = 60
"""


class VirtuosoServer(EndpointServer):
    """Virtuoso 7 (``virtuoso-t +foreground``) with a database of its own in ``workdir``.

    Its default graph without FROM is the union of all graphs, its own system graphs
    included (:attr:`system_graphs`, ~2,500 triples, recorded after the first start;
    :meth:`reset` keeps them). ``/sparql`` takes queries and updates (form field ``update``
    or an ``application/sparql-update`` body); ``/sparql-graph-crud`` is the GSP (``graph``
    or ``graph-uri``). ``max_rows`` caps results as Debian's default does (10,000): raise
    it for a bench that dumps more. Its quirks are listed in tests/README.md."""

    name = "virtuoso"
    DBA = ("dba", "dba")  # a fresh database's administrator; loopback only

    def __init__(
        self,
        workdir: Path,
        port: int | None = None,
        isql_port: int | None = None,
        max_rows: int = 10000,
    ) -> None:
        super().__init__(workdir)
        self.binary, self.isql = virtuoso_binaries()
        self.port = port or free_port()
        self.isql_port = isql_port or free_port()
        self.max_rows = max_rows
        base = f"http://127.0.0.1:{self.port}"
        self.query_url = self.update_url = base + "/sparql"
        self.store_url = base + "/sparql-graph-crud"
        self.system_graphs: frozenset[str] | None = None

    def _before_start(self) -> None:
        (self.workdir / "virtuoso.ini").write_text(
            _VIRTUOSO_INI.format(
                dir=self.workdir,
                isql_port=self.isql_port,
                http_port=self.port,
                max_rows=self.max_rows,
            )
        )

    def _command(self) -> list[str]:
        return [self.binary, "+foreground", "+configfile", str(self.workdir / "virtuoso.ini")]

    def _after_start(self) -> None:
        # The anonymous /sparql user may read only; let it update (and write through the GSP).
        try:
            self.sql('GRANT SPARQL_UPDATE TO "SPARQL"')
        except RuntimeError as exc:  # a restart: the grant is in the database already
            if "already have role" not in str(exc):
                raise
        if self.system_graphs is None:
            self.system_graphs = frozenset(self.graphs())

    def sql(self, statement: str) -> str:
        """Run one SQL statement through ``isql-vt`` as dba; its output, or raise."""
        user, password = self.DBA
        done = subprocess.run(
            [self.isql, f"127.0.0.1:{self.isql_port}", user, password, f"exec={statement};"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        # isql-vt exits 0 even on an SQL error; its message starts with `*** Error`.
        if done.returncode != 0 or "*** Error" in done.stdout + done.stderr:
            raise RuntimeError(f"isql-vt {statement!r} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    def stop(self) -> None:
        # A checkpoint first, so the next start does not replay a long transaction log.
        if self.running:
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                self.sql("checkpoint")
        super().stop()

    def reset(self) -> None:
        drops = [
            f"DROP SILENT GRAPH <{g}>"
            for g in sorted(self.graphs() - (self.system_graphs or set()))
        ]
        if drops:
            self.update(" ;\n".join(drops))


def virtuoso_binaries() -> tuple[str, str]:
    """``virtuoso-t`` and ``isql-vt`` (Debian's names), or :class:`EngineMissing`."""
    server = shutil.which("virtuoso-t")
    isql = shutil.which("isql-vt")
    if server and isql:
        return server, isql
    hint = (
        "`apt-get install virtuoso-opensource-7`" if os.path.exists("/etc/debian_version") else ""
    )
    raise EngineMissing(
        f"Virtuoso 7 is not installed (no virtuoso-t/isql-vt on PATH): {hint or 'install it'}"
    )


ENGINES: dict[str, type[EndpointServer]] = {
    OxigraphServer.name: OxigraphServer,
    VirtuosoServer.name: VirtuosoServer,
}
