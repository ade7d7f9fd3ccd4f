"""Faults between a gateway and its SPARQL store (issue 13): the endpoint down, slow, failing,
answering half, or losing the answer to a write that was applied. Every command fails with
one message naming the endpoint; no acknowledged write is lost; nothing is half-applied; a
write reported as not committed never lands later. A fault-injecting proxy on loopback sits
between the gateway and a real `oxigraph serve` (tests/fault_proxy.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import wait_until
from fault_proxy import commits, updates
from gateways import cli as _cli
from gateways import gateway
from gateways import titles as _titles
from ontoloom.cli import main

pytestmark = pytest.mark.endpoint


def _instance(tmp_path: Path, server, proxy, timeout: float = 2.0) -> Path:
    query, update = proxy.url_for(server.query_url), proxy.url_for(server.update_url)
    return gateway(tmp_path / "inst", query, update, timeout)


def _create(data_dir: Path, title: str):
    return _cli(data_dir, "create", "Task", "-p", f"title={title}", "-p", "status=open")


def _reached_the_store(proxy) -> None:
    """Wait until the request the proxy held (``slow``) reached the store and was answered."""
    wait_until(
        lambda: proxy.forwarded_by["slow"] == 1,
        proxy.delay + 30,
        what="the held request to reach the store",
    )


@pytest.fixture
def setup(tmp_path: Path, endpoint_server, fault_proxy):
    proxy = fault_proxy(endpoint_server.query_url, delay=4.0)
    data_dir = _instance(tmp_path, endpoint_server, proxy)
    assert _create(data_dir, "before").exit_code == 0
    return data_dir, proxy


@pytest.mark.parametrize(
    "args",
    [
        ["create", "Task", "-p", "title=x", "-p", "status=open"],
        ["list"],
        ["check"],
        ["search", "before"],
        ["query", "SELECT * WHERE { ?s ?p ?o } LIMIT 1"],
        ["export", "-o", "out.ttl"],
    ],
)
def test_the_endpoint_down_is_one_message_naming_it(setup, args: list[str]) -> None:
    data_dir, proxy = setup
    proxy.set_mode("down")
    result = _cli(data_dir, *args)
    assert result.exit_code == 2, result.output
    assert f"127.0.0.1:{proxy.port}" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) <= 2
    proxy.set_mode("pass")
    assert _titles(data_dir) == ["before"]


def test_a_slow_endpoint_times_out_and_a_late_write_never_lands(setup) -> None:
    data_dir, proxy = setup
    proxy.set_mode("slow", only=commits, times=1)  # the commit is held past the timeout
    result = _create(data_dir, "late")
    assert result.exit_code == 2 and "did not answer" in result.output
    assert "nothing was committed" in result.output
    _reached_the_store(proxy)  # the held update: fenced off
    assert _titles(data_dir) == ["before"]
    assert _cli(data_dir, "check").exit_code == 0


@pytest.mark.parametrize("status", [500, 503])
def test_an_error_on_the_commit_stores_nothing(setup, status: int) -> None:
    data_dir, proxy = setup
    proxy.set_mode("error", status=status, only=commits, times=1)
    result = _create(data_dir, "refused")
    assert result.exit_code == 2
    assert f"HTTP {status}" in result.output and "nothing was committed" in result.output
    assert _titles(data_dir) == ["before"]
    assert _create(data_dir, "after").exit_code == 0
    assert _titles(data_dir) == ["after", "before"]


@pytest.mark.parametrize("mode", ["truncate", "drop_after_forward"])
def test_a_lost_answer_to_an_applied_commit_is_still_an_acknowledged_write(
    setup, mode: str
) -> None:
    """The store applied it and the answer never arrived (an endpoint restarted mid-write):
    the commit token says it happened, so it is acknowledged, once."""
    data_dir, proxy = setup
    proxy.set_mode(mode, only=commits, times=1)
    result = _create(data_dir, "landed")
    assert result.exit_code == 0, result.output
    assert _titles(data_dir) == ["before", "landed"]
    assert _cli(data_dir, "check").exit_code == 0


@pytest.mark.parametrize("mode", ["slow", "error", "drop_after_forward"])
def test_a_claim_that_fails_or_lands_late_commits_nothing_and_blocks_no_later_write(
    setup, mode: str
) -> None:
    """The claim a writer takes before its commit (store/endpoint.py, _claim) fails, times
    out and lands later, or lands with its answer lost: nothing is committed, the message
    names the endpoint, and this gateway's next write is not held up by its own claim."""
    data_dir, proxy = setup
    proxy.set_mode(mode, only=updates, times=1)  # the first update of a write: its claim
    result = _create(data_dir, "claimed")
    assert result.exit_code == 2 and f"127.0.0.1:{proxy.port}" in result.output
    assert "Traceback" not in result.output
    if mode == "slow":
        _reached_the_store(proxy)  # the held claim
    assert _titles(data_dir) == ["before"]
    assert _create(data_dir, "after").exit_code == 0
    assert _titles(data_dir) == ["after", "before"]


def test_a_half_written_answer_to_a_read_is_one_message(setup) -> None:
    data_dir, proxy = setup
    proxy.set_mode("truncate", only=lambda r: not updates(r), times=1)
    result = _cli(data_dir, "list")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"127.0.0.1:{proxy.port}" in result.output


def test_an_endpoint_restarted_after_a_write_still_holds_it(
    tmp_path: Path, endpoint_server
) -> None:
    root = tmp_path / "inst"
    CliRunner().invoke(
        main,
        [
            "init",
            str(root),
            "--endpoint",
            endpoint_server.query_url,
            "--update-endpoint",
            endpoint_server.update_url,
        ],
    )
    data_dir = root / ".ontoloom"
    assert _create(data_dir, "durable").exit_code == 0
    endpoint_server.restart(crash=True)
    assert _titles(data_dir) == ["durable"]
