from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from ontoloom.api import Graph
from ontoloom.cli import main

# The reliability suite's table (tests/reliability): rows recorded by its scenarios.
pytest_plugins = ["reliability.plugin"]

# `make test` replays the same examples every run (CI must not fail on a draw it never made
# before); `make soak` searches afresh, with many more examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("soak", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("ONTOLOOM_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's ONTOLOOM_HOME or waits long on a lock."""
    monkeypatch.delenv("ONTOLOOM_HOME", raising=False)
    monkeypatch.setenv("ONTOLOOM_LOCK_TIMEOUT", "0.3")
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def data_dir(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """An instance's data dir; with ONTOLOOM_TEST_BACKEND=oxigraph (`make test-endpoint`),
    its graph lives in a real `oxigraph serve`, emptied for each test."""
    path = tmp_path / "instance" / ".ontoloom"
    if os.environ.get("ONTOLOOM_TEST_BACKEND") == "oxigraph":
        server = request.getfixturevalue("oxigraph_server")
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "ontoloom.toml").write_text(
            f'[store]\nendpoint = "{server.query_url}"\nupdate_endpoint = "{server.update_url}"\n'
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


# -- provisional: replaced by tests/endpoint_servers.py's fixture ------------------------------
@pytest.fixture(scope="session")
def _oxigraph_process(tmp_path_factory: pytest.TempPathFactory):
    import shutil
    import socket
    import subprocess
    import sys
    import time
    import types

    import httpx

    binary = shutil.which("oxigraph") or str(Path(sys.executable).with_name("oxigraph"))
    if not Path(binary).exists():
        pytest.skip("the oxigraph server (PyPI package oxigraph) is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    where = tmp_path_factory.mktemp("oxigraph")
    proc = subprocess.Popen(
        [
            binary,
            "serve",
            "--location",
            str(where),
            "--bind",
            f"127.0.0.1:{port}",
            "--union-default-graph",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            httpx.get(base + "/query?query=ASK%7B%7D", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    server = types.SimpleNamespace(
        query_url=base + "/query",
        update_url=base + "/update",
        reset=lambda: httpx.post(base + "/update", data={"update": "DROP ALL"}),
    )
    yield server
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def oxigraph_server(_oxigraph_process):
    _oxigraph_process.reset()
    return _oxigraph_process
