"""The test engines and the fault proxy the endpoint backend is tested with (issue 13).

Each real engine (oxigraph serve, Virtuoso 7) answers a SELECT, applies an INSERT DATA into a
named graph that is then visible through the default graph (the union of all graphs) and
through GRAPH, serves it over the Graph Store Protocol, and is emptied by ``reset()``. The
fault proxy's every mode does what tests/fault_proxy.py says, against a real upstream."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pyoxigraph
import pytest

from endpoint_servers import (
    EndpointServer,
    EngineMissing,
    EngineStartFailed,
    OxigraphServer,
    oxigraph_binary,
    virtuoso_binaries,
)
from fault_proxy import FaultProxy, Request, updates

JSON = "application/sparql-results+json"
G = "http://example.org/smoke/g"
TRIPLE = '<http://example.org/smoke/a> <http://example.org/smoke/p> "smoke"'


def _select(server: EndpointServer, sparql: str, url: str | None = None) -> list[dict]:
    response = httpx.post(
        url or server.query_url,
        data={"query": sparql},
        headers={"Accept": JSON},
        auth=server.auth,
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return list(response.json()["results"]["bindings"])


def _insert(server: EndpointServer, url: str | None = None, timeout: float = 30) -> httpx.Response:
    return httpx.post(
        url or server.update_url,
        data={"update": f"INSERT DATA {{ GRAPH <{G}> {{ {TRIPLE} }} }}"},
        auth=server.auth,
        timeout=timeout,
    )


def _stored(server: EndpointServer) -> bool:
    return bool(_select(server, f'SELECT ?s WHERE {{ GRAPH <{G}> {{ ?s ?p "smoke" }} }}'))


# -- the engines ------------------------------------------------------------------------------
def test_an_engine_answers_a_select(endpoint_server: EndpointServer) -> None:
    rows = _select(endpoint_server, "SELECT ?x WHERE { VALUES ?x { <http://example.org/x> } }")
    assert rows == [{"x": {"type": "uri", "value": "http://example.org/x"}}]


def test_a_named_graphs_triple_is_in_the_union_default_graph_the_gsp_and_gone_after_reset(
    endpoint_server: EndpointServer,
) -> None:
    server = endpoint_server
    response = _insert(server)
    assert response.status_code in (200, 204), response.text

    # The default graph without FROM is the union of all graphs (oxigraph started without
    # --union-default-graph: a graph of its own, empty here).
    union = getattr(server, "union", True)
    assert _select(server, 'SELECT ?s WHERE { ?s <http://example.org/smoke/p> "smoke" }') == (
        [{"s": {"type": "uri", "value": "http://example.org/smoke/a"}}] if union else []
    )
    assert _select(server, 'SELECT ?g WHERE { GRAPH ?g { ?s ?p "smoke" } }') == [
        {"g": {"type": "uri", "value": G}}
    ]
    assert G in server.graphs()

    dump = httpx.get(
        server.store_url,
        params={"graph": G},
        headers={"Accept": "application/n-triples"},
        auth=server.auth,
        timeout=30,
    )
    assert dump.status_code == 200, dump.text
    assert dump.headers["content-type"].startswith("application/n-triples")
    triples = list(pyoxigraph.parse(dump.content, format=pyoxigraph.RdfFormat.N_TRIPLES))
    assert [str(t.object) for t in triples] == ['"smoke"']

    server.reset()
    assert not _stored(server)
    assert G not in server.graphs()
    assert not _select(server, 'SELECT ?s WHERE { ?s ?p "smoke" }')


def test_restart_keeps_the_port_and_the_data(endpoint_server: EndpointServer) -> None:
    server = endpoint_server
    _insert(server).raise_for_status()
    url = server.query_url
    server.restart()
    assert server.query_url == url and server.running
    assert _stored(server)
    server.restart(crash=True)  # SIGKILL: an acknowledged update survives a crash too
    assert _stored(server)


def test_a_missing_engine_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(EngineMissing, match=r"pip install -e '\.\[dev\]'"):
        oxigraph_binary()
    with pytest.raises(EngineMissing, match=r"virtuoso-opensource-7|install it"):
        virtuoso_binaries()


def test_an_engine_that_cannot_start_fails_with_its_log_not_a_hang(tmp_path: Path) -> None:
    try:
        oxigraph_binary()
    except EngineMissing as missing:
        pytest.skip(str(missing))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        server = OxigraphServer(tmp_path / "ox", port=taken.getsockname()[1])
        with pytest.raises(EngineStartFailed, match="exited") as failed:
            server.start()
    assert str(server.log_path) in str(failed.value)
    assert not server.running


# -- the fault proxy --------------------------------------------------------------------------
Proxied = tuple[OxigraphServer, FaultProxy]


@pytest.fixture
def proxied(oxigraph_server: OxigraphServer, fault_proxy: Callable[..., FaultProxy]) -> Proxied:
    return oxigraph_server, fault_proxy(oxigraph_server.query_url, delay=30)


def test_pass_forwards_queries_and_updates(proxied: Proxied) -> None:
    server, proxy = proxied
    assert proxy.url != server.query_url
    assert _insert(server, proxy.url_for(server.update_url)).status_code == 204
    assert _select(server, "SELECT * WHERE { ?s ?p ?o }", proxy.url)
    assert proxy.counts == {"pass": 2} and proxy.forwarded == 2


def test_down_refuses_connections_until_switched_back(proxied: Proxied) -> None:
    server, proxy = proxied
    proxy.mode = "down"
    with pytest.raises(httpx.ConnectError):
        _insert(server, proxy.url_for(server.update_url))
    assert not _stored(server)
    proxy.mode = "pass"
    assert _insert(server, proxy.url_for(server.update_url)).status_code == 204
    assert _stored(server)


def test_slow_answers_only_after_its_delay(proxied: Proxied) -> None:
    server, proxy = proxied
    proxy.set_mode("slow", delay=30)
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(proxy.url, data={"query": "SELECT * WHERE { ?s ?p ?o }"}, timeout=0.2)
    proxy.set_mode("slow", delay=0.05)
    assert _select(server, "SELECT ?x WHERE { VALUES ?x { 1 } }", proxy.url)
    assert proxy.counts["slow"] == 2


@pytest.mark.parametrize("status", [500, 503])
def test_error_answers_without_forwarding(proxied: Proxied, status: int) -> None:
    server, proxy = proxied
    proxy.set_mode("error", status=status)
    assert _insert(server, proxy.url_for(server.update_url)).status_code == status
    assert proxy.forwarded == 0 and proxy.counts == {"error": 1}
    assert not _stored(server)


def test_truncate_sends_half_an_answer_after_forwarding(proxied: Proxied) -> None:
    server, proxy = proxied
    proxy.mode = "truncate"
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(proxy.url, data={"query": "SELECT ?x WHERE { VALUES ?x { 1 2 3 } }"})
    # An update's answer has no body (204): it is cut in its headers, and it was applied.
    with pytest.raises(httpx.RemoteProtocolError):
        _insert(server, proxy.url_for(server.update_url))
    assert proxy.forwarded == 2 and proxy.counts == {"truncate": 2}
    assert _stored(server)


def test_drop_after_forward_applies_the_update_and_never_answers(proxied: Proxied) -> None:
    server, proxy = proxied
    proxy.mode = "drop_after_forward"
    with pytest.raises(httpx.RemoteProtocolError, match="without sending"):
        _insert(server, proxy.url_for(server.update_url))
    assert proxy.forwarded == 1 and proxy.counts == {"drop_after_forward": 1}
    assert _stored(server)


def test_a_fault_can_meet_only_the_next_update(proxied: Proxied) -> None:
    server, proxy = proxied
    proxy.set_mode("drop_after_forward", only=updates, times=1)
    assert _select(server, "SELECT ?x WHERE { VALUES ?x { 1 } }", proxy.url)  # a query passes
    with pytest.raises(httpx.RemoteProtocolError):
        _insert(server, proxy.url_for(server.update_url))
    assert proxy.mode == "pass"  # one update met the fault; the proxy is back to pass
    assert _insert(server, proxy.url_for(server.update_url)).status_code == 204
    assert proxy.counts == {"pass": 2, "drop_after_forward": 1} and proxy.forwarded == 3


@pytest.mark.parametrize(
    ("method", "kind", "body", "update"),
    [
        ("POST", "application/x-www-form-urlencoded", b"update=INSERT+DATA+%7B%7D", True),
        ("POST", "application/x-www-form-urlencoded", b"query=ASK+%7B%7D", False),
        ("POST", "application/sparql-update", b"INSERT DATA {}", True),
        ("POST", "application/sparql-query", b"ASK {}", False),
        ("POST", "application/n-triples", b"<a> <b> <c> .", True),
        ("PUT", "text/turtle", b"", True),
        ("DELETE", "", b"", True),
        ("GET", "", b"", False),
    ],
)
def test_updates_are_told_from_queries(method: str, kind: str, body: bytes, update: bool) -> None:
    headers = {"Content-Type": kind} if kind else {}
    assert updates(Request(method, "/x", headers, body)) is update


def test_the_proxy_refuses_what_it_cannot_do(proxied: Proxied) -> None:
    _server, proxy = proxied
    with pytest.raises(ValueError, match="unknown fault mode"):
        proxy.set_mode("flaky")  # a typo in a test: refused by name
    with pytest.raises(ValueError, match="no `only`"):
        proxy.set_mode("down", only=updates)
    with pytest.raises(ValueError, match="at least 1"):
        proxy.set_mode("error", times=0)
    with pytest.raises(ValueError, match="not on the proxied origin"):
        proxy.url_for("http://127.0.0.1:1/query")
    with pytest.raises(ValueError, match="http:// URLs only"):
        FaultProxy("https://127.0.0.1/query")
