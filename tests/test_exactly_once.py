"""Writes acknowledged exactly once (issue 35): every commit carries a write id stored with
it, and after a fault whose outcome is unknown the gateway asks the store by it — never
applies it twice, never reports "nothing was stored" for a stored write, never acknowledges
one that is not there. Over a real `oxigraph serve` behind the fault proxy
(tests/fault_proxy.py); also the schema as part of every commit's precondition (two
gateways on one endpoint) and claims timed by the store's clock (a gateway killed holding
one)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import wait_until
from fault_proxy import commits, read_backs
from gateways import cli as _cli
from gateways import gateway
from gateways import titles as _titles
from ontoloom.api import Graph
from ontoloom.errors import ValidationFailed

pytestmark = pytest.mark.endpoint

WRITE_ID = re.compile(r"ontoloom status --write ([A-Za-z0-9_-]+)")


def _instance(tmp_path: Path, name: str, query: str, update: str, timeout: float = 2.0) -> Path:
    return gateway(tmp_path / name, query, update, timeout)


def _create(data_dir: Path, title: str, *more: str):
    return _cli(data_dir, *more, "create", "Task", "-p", f"title={title}", "-p", "status=open")


def _generations(server) -> list[int]:
    """The generations the store was ever moved to, from the engine itself (the oracle):
    a write applied twice leaves two."""
    rows = server.query(
        "SELECT ?n WHERE { GRAPH <https://ontoloom.dev/graph/meta> { "
        "?c <https://ontoloom.dev/ns#generation> ?n "
        'FILTER(STRSTARTS(STR(?c), "urn:ontoloom:change:")) } }'
    )["results"]["bindings"]
    return sorted(int(r["n"]["value"]) for r in rows)


def _status(data_dir: Path, write_id: str) -> tuple[int, dict]:
    asked = _cli(data_dir, "--json", "status", "--write", write_id)
    return asked.exit_code, json.loads(asked.stdout)


@pytest.fixture
def setup(tmp_path: Path, endpoint_server, fault_proxy):
    proxy = fault_proxy(endpoint_server.query_url, delay=1.0)
    query = proxy.url_for(endpoint_server.query_url)
    data_dir = _instance(tmp_path, "inst", query, proxy.url_for(endpoint_server.update_url))
    assert _create(data_dir, "before").exit_code == 0
    return data_dir, proxy


def test_a_503_on_the_read_back_is_asked_again_and_acknowledged_once(
    setup, endpoint_server
) -> None:
    data_dir, proxy = setup
    proxy.set_mode("error", status=503, only=read_backs, times=1)
    result = _create(data_dir, "landed")
    assert result.exit_code == 0, result.output
    assert proxy.counts["error"] == 1  # the fault was met
    assert _titles(data_dir) == ["before", "landed"]
    assert _generations(endpoint_server) == [1, 2]  # applied once, not again on top


def test_a_read_back_that_never_answers_is_outcome_unknown_never_refused_nor_doubled(
    setup,
) -> None:
    data_dir, proxy = setup
    proxy.set_mode("error", status=503, only=read_backs)  # every read-back, for good
    result = _create(data_dir, "landed", "--json")
    assert result.exit_code == 4, result.output
    error = json.loads(result.stdout)
    assert error["error"] == "outcome_unknown" and "nothing was" not in error["message"]
    write_id = error["write_id"]
    assert f"ontoloom status --write {write_id}" in error["message"]
    proxy.set_mode("pass")
    assert _status(data_dir, write_id) == (
        0,
        {"write_id": write_id, "status": "committed", "generations": [2]},
    )
    assert _titles(data_dir) == ["before", "landed"]  # once
    assert _cli(data_dir, "check").exit_code == 0


def test_a_reset_after_the_update_then_no_answer_is_outcome_unknown_and_asked_later(
    setup,
) -> None:
    """The store applied the commit, the connection was reset before its answer, and the
    store answers nothing more for a while (503 to every request)."""
    data_dir, proxy = setup
    proxy.set_mode("drop_after_forward", only=commits, times=1, then="error")
    result = _create(data_dir, "landed")
    assert result.exit_code == 4, result.output
    assert "nothing was committed" not in result.output and "refused" not in result.output
    write_id = WRITE_ID.search(result.output).group(1)  # type: ignore[union-attr]
    assert _status(data_dir, write_id)[1]["status"] == "unknown"  # still unreachable
    assert _cli(data_dir, "status", "--write", write_id).exit_code == 4
    proxy.set_mode("pass")
    code, answer = _status(data_dir, write_id)
    assert (code, answer["status"]) == (0, "committed")
    assert _titles(data_dir) == ["before", "landed"]


def test_the_store_killed_mid_write_is_outcome_unknown_and_nothing_lands(
    setup, endpoint_server
) -> None:
    data_dir, proxy = setup
    proxy.set_mode("slow", only=commits, times=1)  # held, while the store is killed
    done: list = []
    writer = threading.Thread(target=lambda: done.append(_create(data_dir, "lost")))
    writer.start()
    wait_until(lambda: proxy.counts["slow"] == 1, 30, what="the commit to be held")
    endpoint_server.kill()
    writer.join(60)
    result = done[0]
    assert result.exit_code == 4, result.output
    write_id = WRITE_ID.search(result.output).group(1)  # type: ignore[union-attr]
    endpoint_server.start()
    assert _status(data_dir, write_id) == (3, {"write_id": write_id, "status": "not committed"})
    assert _titles(data_dir) == ["before"]  # no false acknowledgement


def test_a_lost_answer_to_an_applied_commit_is_acknowledged_and_its_write_id_committed(
    setup,
) -> None:
    data_dir, proxy = setup
    proxy.set_mode("drop_after_forward", only=commits, times=1)
    result = _create(data_dir, "landed", "--json")
    assert result.exit_code == 0, result.output
    assert _titles(data_dir) == ["before", "landed"]


def test_a_schema_changed_on_another_gateway_refuses_what_its_shapes_refuse(
    tmp_path: Path, endpoint_server
) -> None:
    """Gateway A stays open (a long-lived server); gateway B adds shapes to the same store;
    A's next write is validated under them, not under the schema A read when it opened."""
    a = _instance(tmp_path, "a", endpoint_server.query_url, endpoint_server.update_url)
    b = _instance(tmp_path, "b", endpoint_server.query_url, endpoint_server.update_url)
    shapes = tmp_path / "short.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        "@prefix ol: <https://ontoloom.dev/ns#> .\n"
        "ol:ShortTitle a sh:NodeShape ; sh:targetClass ol:Task ;\n"
        "  sh:property [ sh:path ol:title ; sh:maxLength 5 ] .\n"
    )
    with Graph.open(a, write=True) as gateway_a:
        gateway_a.create("Task", {"title": "ok", "status": "open"}, id="task_a1")
        added = _cli(b, "schema", "add-shapes", str(shapes))
        assert added.exit_code == 0, added.output
        with pytest.raises(ValidationFailed, match="title"):
            gateway_a.create("Task", {"title": "far too long", "status": "open"}, id="task_a2")
        gateway_a.create("Task", {"title": "short", "status": "open"}, id="task_a3")
    assert _titles(b) == ["ok", "short"]
    assert _cli(b, "check").exit_code == 0


_DIES_HOLDING_ITS_CLAIM = """
import os, sys
from ontoloom.store.endpoint import SparqlEndpointBackend

def die(self, *args, **kwargs):
    os._exit(9)  # after its claim was taken, before its commit

SparqlEndpointBackend._guarded = die
from ontoloom.entry import main
sys.argv = ["ontoloom", *sys.argv[1:]]
main()
"""


def test_a_gateway_killed_holding_its_claim_blocks_others_until_the_store_clock_expires_it(
    tmp_path: Path, endpoint_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = _instance(tmp_path, "dead", endpoint_server.query_url, endpoint_server.update_url)
    alive = _instance(tmp_path, "alive", endpoint_server.query_url, endpoint_server.update_url)
    died = subprocess.run(
        [
            sys.executable,
            "-c",
            _DIES_HOLDING_ITS_CLAIM,
            "--data-dir",
            str(dead),
            "create",
            "Task",
            "-p",
            "title=ghost",
            "-p",
            "status=open",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert died.returncode == 9, died.stderr
    monkeypatch.setenv("ONTOLOOM_LOCK_TIMEOUT", "0.5")
    blocked = _create(alive, "blocked")  # a process that never saw the claim before
    assert blocked.exit_code == 2 and "nothing was stored" in blocked.output, blocked.output
    # The store's clock moves on past the lease (as an hour would): every gateway reads
    # the claim's age from the store's own NOW(), so it stops blocking at once.
    endpoint_server.update(
        "PREFIX ol: <https://ontoloom.dev/ns#> "
        "DELETE { GRAPH <https://ontoloom.dev/graph/meta> { ?c ol:claimAt ?t } } "
        "INSERT { GRAPH <https://ontoloom.dev/graph/meta> { ?c ol:claimAt ?old } } "
        "WHERE { GRAPH <https://ontoloom.dev/graph/meta> { ?c ol:claimAt ?t } "
        'BIND(?t - "PT1H"^^<http://www.w3.org/2001/XMLSchema#dayTimeDuration> AS ?old) }'
    )
    assert _create(alive, "after").exit_code == 0
    assert _titles(alive) == ["after"]
