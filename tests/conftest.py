from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from endpoint_servers import (
    EndpointServer,
    EngineMissing,
    OxigraphNamedServer,
    OxigraphServer,
    RdflibServer,
    VirtuosoServer,
)
from fault_proxy import FaultProxy
from ontoloom.api import Graph
from ontoloom.cli import main

# The reliability suite's table (tests/reliability): rows recorded by its scenarios.
pytest_plugins = ["reliability.plugin"]

# `make test` replays the same examples every run (CI must not fail on a draw it never made
# before); `make soak` searches afresh, with many more examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("soak", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("ONTOLOOM_HYPOTHESIS_PROFILE", "ci"))


POLL = 0.01  # seconds between two looks of wait_until


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, *, what: str = "") -> object:
    """Poll ``predicate`` every :data:`POLL` seconds until it is true, and return its value;
    fail the test when ``timeout`` seconds pass first, saying ``what`` it waited for.

    For a condition another thread or process brings about: instead of a sleep that is too
    long on a fast machine and too short on a loaded one."""
    __tracebackhide__ = True
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() >= deadline:
            pytest.fail(f"waited {timeout:g} s for {what or 'the condition'}: it never held")
        time.sleep(POLL)
    return value


async def wait_until_async(
    predicate: Callable[[], object], timeout: float = 10.0, *, what: str = ""
) -> object:
    """:func:`wait_until` in a coroutine: the event loop runs on between two looks."""
    __tracebackhide__ = True
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() >= deadline:
            pytest.fail(f"waited {timeout:g} s for {what or 'the condition'}: it never held")
        await asyncio.sleep(POLL)
    return value


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's ONTOLOOM_HOME or per-user data dir, or waits long on a
    lock."""
    monkeypatch.delenv("ONTOLOOM_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("ONTOLOOM_LOCK_TIMEOUT", "0.3")
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def data_dir(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """An instance's data dir; with ONTOLOOM_TEST_BACKEND=oxigraph (`make test-endpoint`),
    =oxigraph_named (oxigraph without a union default graph) or =virtuoso (`make
    test-virtuoso`), its graph lives in that real engine, emptied for each test."""
    path = tmp_path / "instance" / ".ontoloom"
    engine = os.environ.get("ONTOLOOM_TEST_BACKEND")
    if engine in ("oxigraph", "oxigraph_named", "virtuoso"):
        server = request.getfixturevalue(f"{engine}_server")
        path.parent.mkdir(parents=True, exist_ok=True)
        semantics = "named" if engine == "oxigraph_named" else "union"  # as init finds it
        (path.parent / "ontoloom.toml").write_text(
            f'[store]\nendpoint = "{server.query_url}"\nupdate_endpoint = "{server.update_url}"\n'
            f'default_graph = "{semantics}"\n'
        )
    return path


@pytest.fixture
def graph(data_dir: Path) -> Iterator[Graph]:
    with Graph.open(data_dir, write=True, create=True) as g:
        yield g


class Cli:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None) -> Result:
        return self.runner.invoke(main, ["--data-dir", str(self.data_dir), *args], input=input)

    def json(self, *args: str) -> Result:
        return self(*args, "--json")


@pytest.fixture
def cli(data_dir: Path) -> Cli:
    return Cli(data_dir)


def quads_of(data_dir: Path) -> set:
    """Every quad of a data dir's store (outside of bookkeeping)."""
    from ontoloom.errors import Busy
    from ontoloom.store import open_backend, store_path
    from ontoloom.store.embedded import EmbeddedBackend
    from ontoloom.vocab import META

    try:
        with open_backend(data_dir, write=False) as backend:
            return {q for q in backend.quads() if q.graph_name != META}
    except Busy:
        if not (data_dir / "owner.sock").exists():
            raise
    # A running owner keeps the store open: read it read-only beside it (tests only).
    backend = EmbeddedBackend.open(store_path(data_dir), writable=False)
    try:
        return {q for q in backend.quads() if q.graph_name != META}
    finally:
        backend.close()


os.environ.setdefault("HYPOTHESIS_PROFILE", "ci")


class Listener:
    """A real HTTP endpoint on 127.0.0.1, in a thread, that counts every request it gets.

    It answers like a SPARQL endpoint with one empty solution; with ``answer=False`` it
    accepts the connection and never answers (a query calling it would hang)."""

    def __init__(self, answer: bool = True) -> None:
        import http.server
        import threading

        self.requests = 0
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self) -> None:
                listener.requests += 1
                if not answer:
                    threading.Event().wait(120)
                    return
                body = b'{"head": {"vars": []}, "results": {"bindings": [{}]}}'
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _any

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


# -- real SPARQL engines and the fault proxy (issue 13; tests/README.md, "Test engines") --------
_Engine = TypeVar("_Engine", bound=EndpointServer)


def _session_engine(kind: type[_Engine], tmp_path_factory: pytest.TempPathFactory):
    """Start one engine for the session (per xdist worker); skip, naming what to install, when
    it is missing; fail instead under ONTOLOOM_REQUIRE_ENGINES=1 (set by .ci/run), so CI never
    passes by skipping."""
    try:
        server = kind(tmp_path_factory.mktemp(kind.name))
    except EngineMissing as exc:
        missing = str(exc)
    else:
        server.start()
        return server
    if os.environ.get("ONTOLOOM_REQUIRE_ENGINES") == "1":
        pytest.fail(f"{missing} (ONTOLOOM_REQUIRE_ENGINES=1)", pytrace=False)
    pytest.skip(missing)


def _serving(kind: type[_Engine], tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Engine]:
    """One engine for the session, stopped and its files removed at the end (a Virtuoso
    database is ~50 MB)."""
    server = _session_engine(kind, tmp_path_factory)
    yield server
    server.stop()
    shutil.rmtree(server.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def _oxigraph_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OxigraphServer]:
    yield from _serving(OxigraphServer, tmp_path_factory)


@pytest.fixture(scope="session")
def _oxigraph_named_session(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[OxigraphNamedServer]:
    yield from _serving(OxigraphNamedServer, tmp_path_factory)


@pytest.fixture(scope="session")
def _rdflib_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RdflibServer]:
    yield from _serving(RdflibServer, tmp_path_factory)


@pytest.fixture(scope="session")
def _virtuoso_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VirtuosoServer]:
    yield from _serving(VirtuosoServer, tmp_path_factory)


def _fresh(server: _Engine) -> _Engine:
    if not server.running:  # a test stopped (or killed) it and did not start it again
        server.start()
    server.reset()
    return server


@pytest.fixture
def oxigraph_server(_oxigraph_session: OxigraphServer) -> OxigraphServer:
    """`oxigraph serve --union-default-graph` on loopback, emptied for this test."""
    return _fresh(_oxigraph_session)


@pytest.fixture
def oxigraph_named_server(_oxigraph_named_session: OxigraphNamedServer) -> OxigraphNamedServer:
    """`oxigraph serve` without `--union-default-graph` (its default graph is its own)."""
    return _fresh(_oxigraph_named_session)


@pytest.fixture
def rdflib_server(_rdflib_session: RdflibServer) -> RdflibServer:
    """rdflib-endpoint (an in-memory rdflib Dataset, updates on) on loopback, emptied."""
    return _fresh(_rdflib_session)


@pytest.fixture
def virtuoso_server(_virtuoso_session: VirtuosoServer) -> VirtuosoServer:
    """Virtuoso 7 on loopback (updates granted to the anonymous user), emptied for this test."""
    return _fresh(_virtuoso_session)


@pytest.fixture(
    params=[
        "oxigraph",
        pytest.param("oxigraph_named", marks=pytest.mark.oxigraph_named),
        pytest.param("virtuoso", marks=pytest.mark.virtuoso),
    ]
)
def endpoint_server(request: pytest.FixtureRequest) -> EndpointServer:
    """Each real engine in turn: oxigraph with and without a union default graph, Virtuoso
    (its run carries the `virtuoso` marker). The run without a union default graph carries the
    `oxigraph_named` marker: `make test-endpoint` runs it (so CI does, .ci/run), `make test`
    leaves it out (it ran every endpoint test a second time; the named-graph tests of
    test_endpoint_answers.py that ask for `oxigraph_named_server` itself stay in `make test`)."""
    return request.getfixturevalue(f"{request.param}_server")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Every test that runs over Virtuoso is in the `virtuoso` subset (`-m virtuoso`).
    for item in items:
        if "virtuoso_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.virtuoso)
        if "rdflib_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.rdflib_endpoint)


@pytest.fixture
def fault_proxy() -> Iterator[Callable[..., FaultProxy]]:
    """``fault_proxy(upstream_url, delay=…, status=…)``: a FaultProxy closed after the test."""
    made: list[FaultProxy] = []

    def make(upstream: str, *, delay: float = 5.0, status: int = 503) -> FaultProxy:
        proxy = FaultProxy(upstream, delay=delay, status=status)
        made.append(proxy)
        return proxy

    yield make
    for proxy in made:
        proxy.close()
