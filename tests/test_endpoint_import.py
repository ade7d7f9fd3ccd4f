"""A bulk import into a SPARQL endpoint (issue 34, item 2; ontoloom.store.staging): the delta is
loaded into a staging named graph (Graph Store Protocol, or INSERT DATA batches where the
engine has none), validated, and moved into the data graphs in one guarded update. Against
real servers: accepted, refused (store unchanged, staging gone), a fault mid-load, a killed
import whose staging graph the next import drops, and a large file. The store is compared
with the file as pyoxigraph reads it and with what the server holds, not with ontoloom's
own output. Run by `make test-endpoint` (marker ``endpoint_import``), not `make test`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pyoxigraph
import pytest
from click.testing import CliRunner

from fault_proxy import commits, updates
from ontoloom.cli import main
from ontoloom.store.staging import STAGING_BASE

pytestmark = [pytest.mark.endpoint, pytest.mark.endpoint_import]

ID = "https://ontoloom.dev/id/"
OL = "https://ontoloom.dev/ns#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
FACTS = "https://ontoloom.dev/graph/facts"


def _tasks(count: int, status: str = "open", first: int = 0) -> str:
    lines = []
    for i in range(first, first + count):
        t = f"<{ID}task_ep{i}>"
        lines += [
            f"{t} <{RDF_TYPE}> <{OL}Task> .",
            f'{t} <{OL}title> "Endpoint task {i}" .',
            f'{t} <{OL}status> "{status}" .',
        ]
    return "\n".join(lines) + "\n"


def _instance(root: Path, query: str, update: str, store: str | None) -> Path:
    args = ["init", str(root), "--endpoint", query, "--update-endpoint", update]
    if store is not None:
        args += ["--graph-store", store]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    return root / ".ontoloom"


def _ontoloom(data_dir: Path, *args: str, step: str | None = None, bulk: str = "10"):
    env = {**os.environ, "ONTOLOOM_BULK_LOAD": bulk}
    env.pop("ONTOLOOM_TEST_STEP", None)
    if step is not None:
        env["ONTOLOOM_TEST_STEP"] = step
    script = str(Path(sys.executable).with_name("ontoloom"))
    return subprocess.run(
        [script, "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )


def _server_quads(server) -> set[tuple[str, str, str, str]]:
    """Every quad the server holds outside ontoloom's bookkeeping graph, as it answers."""
    rows = server.query("SELECT ?s ?p ?o ?g WHERE { GRAPH ?g { ?s ?p ?o } }")["results"]["bindings"]
    return {
        (r["s"]["value"], r["p"]["value"], r["o"]["value"], r["g"]["value"])
        for r in rows
        if r["g"]["value"] != "https://ontoloom.dev/graph/meta"
    }


def _staging(server) -> set[str]:
    graphs = server.graphs()
    return {g for g in graphs if g.startswith(STAGING_BASE)}


def _file_quads(text: str) -> set[tuple[str, str, str, str]]:
    triples = pyoxigraph.parse(text.encode(), format=pyoxigraph.RdfFormat.N_TRIPLES)
    return {(t.subject.value, t.predicate.value, t.object.value, FACTS) for t in triples}


@pytest.fixture(params=["gsp", "insert-data", "named-default-graph"])
def setup(request, tmp_path: Path):
    """An instance on oxigraph serve: loaded by the Graph Store Protocol, by INSERT DATA (no
    GSP service named), and on a server whose default graph is its own (GSP)."""
    named = request.param == "named-default-graph"
    server = request.getfixturevalue("oxigraph_named_server" if named else "oxigraph_server")
    store = server.store_url if request.param != "insert-data" else None
    data_dir = _instance(tmp_path / "inst", server.query_url, server.update_url, store)
    done = _ontoloom(data_dir, "create", "Task", "-p", "title=before", "-p", "status=open")
    assert done.returncode == 0, done.stderr
    return data_dir, server


def test_an_import_goes_in_whole_through_a_staging_graph(setup, tmp_path: Path) -> None:
    data_dir, server = setup
    before = _server_quads(server)
    text = _tasks(40)
    path = tmp_path / "in.nt"
    path.write_text(text)
    done = _ontoloom(data_dir, "import", str(path))
    assert done.returncode == 0, done.stderr
    after = _server_quads(server)
    assert _file_quads(text) <= after
    # nothing else but the file's quads and their history is new
    assert {q for q in after - before if q[3] == FACTS} == _file_quads(text)
    assert _staging(server) == set()
    assert _ontoloom(data_dir, "check").returncode == 0
    listed = _ontoloom(data_dir, "list", "--json")
    assert listed.stdout.count("Endpoint task") == 40


def test_a_refused_import_leaves_the_store_as_it_was_and_no_staging_graph(
    setup, tmp_path: Path
) -> None:
    data_dir, server = setup
    before = _server_quads(server)
    path = tmp_path / "bad.nt"
    path.write_text(_tasks(40, status="no-such-status"))
    done = _ontoloom(data_dir, "import", str(path))
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "status" in done.stderr
    assert _server_quads(server) == before
    assert _staging(server) == set()


def test_a_killed_import_leaves_a_staging_graph_the_next_import_drops(
    setup, tmp_path: Path
) -> None:
    data_dir, server = setup
    before = _server_quads(server)
    path = tmp_path / "in.nt"
    path.write_text(_tasks(30))
    killed = _ontoloom(data_dir, "import", str(path), step="loaded:kill")
    assert killed.returncode == -9
    assert _staging(server)  # left behind by the dead process
    assert _server_quads(server) - before <= {
        q for q in _server_quads(server) if q[3].startswith(STAGING_BASE)
    }
    # its lease has not run out: a second import leaves it alone, commits its own
    other = tmp_path / "other.nt"
    other.write_text(_tasks(20, first=100))
    assert _ontoloom(data_dir, "import", str(other)).returncode == 0
    left = _staging(server)
    assert left
    # lease run out (made so by the store's clock): the next import drops it
    server.update(
        "DELETE { GRAPH <https://ontoloom.dev/graph/meta> { ?m <https://ontoloom.dev/ns#stagedFor> ?f } } "
        "INSERT { GRAPH <https://ontoloom.dev/graph/meta> { ?m <https://ontoloom.dev/ns#stagedFor> 0 } } "
        "WHERE { GRAPH <https://ontoloom.dev/graph/meta> { ?m <https://ontoloom.dev/ns#stagedFor> ?f } }"
    )
    again = _ontoloom(data_dir, "import", str(path))
    assert again.returncode == 0, again.stderr
    assert _staging(server) == set()
    assert _file_quads(_tasks(30)) <= _server_quads(server)
    listed = _ontoloom(data_dir, "list", "--json")
    assert listed.stdout.count("Endpoint task") == 50


def test_an_import_killed_after_validation_commits_nothing(setup, tmp_path: Path) -> None:
    data_dir, server = setup
    before = _server_quads(server)
    path = tmp_path / "in.nt"
    path.write_text(_tasks(30))
    killed = _ontoloom(data_dir, "import", str(path), step="validated:kill")
    assert killed.returncode == -9
    assert {q for q in _server_quads(server) if not q[3].startswith(STAGING_BASE)} == before


def test_a_fault_mid_load_stores_nothing_and_drops_the_staging_graph(
    tmp_path: Path, oxigraph_server, fault_proxy
) -> None:
    proxy = fault_proxy(oxigraph_server.query_url)
    data_dir = _instance(
        tmp_path / "inst",
        proxy.url_for(oxigraph_server.query_url),
        proxy.url_for(oxigraph_server.update_url),
        proxy.url_for(oxigraph_server.store_url),
    )
    assert (
        _ontoloom(data_dir, "create", "Task", "-p", "title=b", "-p", "status=open").returncode == 0
    )
    before = _server_quads(oxigraph_server)
    path = tmp_path / "in.nt"
    path.write_text(_tasks(30))
    gsp = lambda r: updates(r) and "/store" in r.path  # noqa: E731 - the Graph Store POST
    proxy.set_mode("error", only=gsp, times=1)
    done = _ontoloom(data_dir, "import", str(path))
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "503" in done.stderr and "Traceback" not in done.stderr
    assert _server_quads(oxigraph_server) == before
    assert _staging(oxigraph_server) == set()
    proxy.set_mode("pass")
    assert _ontoloom(data_dir, "import", str(path)).returncode == 0
    assert _file_quads(_tasks(30)) <= _server_quads(oxigraph_server)


def test_a_lost_answer_to_the_bulk_commit_is_settled(tmp_path: Path, oxigraph_server, fault_proxy):
    proxy = fault_proxy(oxigraph_server.query_url)
    data_dir = _instance(
        tmp_path / "inst",
        proxy.url_for(oxigraph_server.query_url),
        proxy.url_for(oxigraph_server.update_url),
        proxy.url_for(oxigraph_server.store_url),
    )
    path = tmp_path / "in.nt"
    path.write_text(_tasks(30))
    # the guarded commit that moves the staging graph in: applied, its answer lost
    bulk = lambda r: commits(r) and b"urn%3Aontoloom%3Astaging" in r.body  # noqa: E731
    proxy.set_mode("drop_after_forward", only=bulk, times=1)
    done = _ontoloom(data_dir, "import", str(path))
    assert done.returncode == 0, done.stderr  # applied, answer lost, read back: acknowledged
    assert proxy.counts["drop_after_forward"] == 1
    assert _file_quads(_tasks(30)) <= _server_quads(oxigraph_server)
    assert _staging(oxigraph_server) == set()


def test_a_large_import_and_its_rate_beside_the_servers_own_load(
    tmp_path: Path, oxigraph_server
) -> None:
    """100k triples through the staging graph; the rate is printed beside the server's own
    bulk load of the same file (a figure, not asserted: no timing assertions)."""
    import time

    count = int(os.environ.get("ONTOLOOM_ENDPOINT_IMPORT_TASKS", "33334"))
    text = _tasks(count)
    path = tmp_path / "big.nt"
    path.write_text(text)
    triples = text.count("\n")
    data_dir = _instance(
        tmp_path / "inst",
        oxigraph_server.query_url,
        oxigraph_server.update_url,
        oxigraph_server.store_url,
    )
    began = time.monotonic()
    done = _ontoloom(data_dir, "import", str(path), bulk="10000")
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert len({q for q in _server_quads(oxigraph_server) if q[3] == FACTS}) >= triples
    assert _staging(oxigraph_server) == set()
    oxigraph_server.reset()
    began = time.monotonic()
    response = httpx.post(
        oxigraph_server.store_url,
        params={"graph": "urn:x:raw"},
        content=path.read_bytes(),
        headers={"Content-Type": "application/n-triples"},
        timeout=600,
    )
    raw = time.monotonic() - began
    assert response.status_code < 300
    print(
        f"\nendpoint import: {triples} triples in {took:.2f} s ({triples / took:,.0f}/s, "
        f"whole command); oxigraph server's own load (GSP POST): {raw:.2f} s "
        f"({triples / raw:,.0f}/s); ratio {took / raw:.1f}x"
    )
