"""`ontoloom query` stays inside the store and inside its time: a SERVICE call reaches no
endpoint unless ontoloom.toml allows it, and every query runs under a deadline after which
it is stopped, its lock released, and a waiting writer goes ahead."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import Cli, Listener, wait_until

ONTOLOOM = str(Path(sys.executable).with_name("ontoloom"))


@pytest.fixture
def store(cli: Cli) -> Cli:
    assert (
        cli("create", "Task", "--id", "task_a", "-p", "title=A", "-p", "status=open").exit_code == 0
    )
    return cli


def allow(cli: Cli, *endpoints: str) -> None:
    listed = ", ".join(f'"{e}"' for e in endpoints)
    (cli.data_dir.parent / "ontoloom.toml").write_text(f"[query]\nservice_allow = [{listed}]\n")


def service_spellings(url: str) -> list[str]:
    """SERVICE as a query may spell it: any case, SILENT, a prefixed name, nested anywhere,
    after a comment that a carriage return ends, in every query form."""
    base, _, local = url.rpartition("/")
    return [
        f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        f"select * where {{ service silent <{url}> {{ ?s ?p ?o }} }}",
        f"PREFIX ep: <{base}/> SELECT * WHERE {{ SeRvIcE ep:{local} {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ ?x ?y ?z OPTIONAL {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
        f"SELECT * WHERE {{ {{ SELECT ?s WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
        # inside a FILTER inside EXISTS: rdflib's algebra drops such a filter from the tree
        f"SELECT * WHERE {{ ?s ?p ?o FILTER EXISTS {{ ?s ?p ?x "
        f"FILTER EXISTS {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }} }}",
        f"ASK {{ ?s ?p ?o FILTER NOT EXISTS {{ ?s ?p ?x FILTER(?x = 1 || "
        f"EXISTS {{ SERVICE SILENT <{url}> {{ ?a ?b ?c }} }}) }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o # a note\rSERVICE <{url}> {{ ?a ?b ?c }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o # a note\rSERVICE <{url}> {{ ?a ?b ?c }}\n}}",
        f"ASK {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ {{ ?s ?p ?o }} UNION {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
    ]


# -- SERVICE -------------------------------------------------------------------------------------
def test_a_service_call_is_refused_and_reaches_no_endpoint(
    store: Cli, listener: Listener, tmp_path: Path
) -> None:
    rq = tmp_path / "remote.rq"
    rq.write_text(f"SELECT * WHERE {{ SERVICE <{listener.url}> {{ ?s ?p ?o }} }}\n")
    for query in [*service_spellings(listener.url), str(rq)]:
        for fmt in ("table", "json"):
            result = store("query", query, "--format", fmt)
            assert result.exit_code == 2, (query, result.output)
            assert f"SERVICE <{listener.url}>" in result.output, result.output
            assert "service_allow" in result.output and "ontoloom.toml" in result.output
            assert "Traceback" not in result.output
    assert listener.requests == 0


def test_a_query_naming_service_that_the_checker_cannot_read_is_refused(
    store: Cli, listener: Listener
) -> None:
    # rdflib's parser loops on a SERVICE inside FILTER EXISTS inside a SERVICE; Oxigraph runs it.
    url = listener.url
    query = f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{url}> {{ }} }} }} }}"
    result = store("query", query)
    assert result.exit_code == 2
    assert "mentions SERVICE" in result.output and "service_allow" in result.output
    assert listener.requests == 0


def test_a_service_with_a_variable_endpoint_is_always_refused(
    store: Cli, listener: Listener
) -> None:
    allow(store, listener.url)
    query = f"SELECT * WHERE {{ VALUES ?ep {{ <{listener.url}> }} SERVICE ?ep {{ ?s ?p ?o }} }}"
    result = store("query", query)
    assert result.exit_code == 2
    assert "SERVICE ?ep" in result.output and "variable" in result.output
    assert listener.requests == 0


def test_an_endpoint_the_allow_list_names_is_called_and_no_other(
    store: Cli, listener: Listener
) -> None:
    allow(store, "https://query.wikidata.org/sparql")
    query = f"SELECT * WHERE {{ SERVICE <{listener.url}> {{ ?s ?p ?o }} }}"
    assert store("query", query).exit_code == 2
    assert listener.requests == 0
    allow(store, "https://query.wikidata.org/sparql", listener.url)
    result = store("query", query, "--format", "json")
    assert result.exit_code == 0, result.output
    assert listener.requests >= 1


def test_queries_that_only_mention_the_word_service_run(store: Cli, listener: Listener) -> None:
    for query in [
        "SELECT ?c WHERE { ?c ol:service ?x }",
        f'SELECT * WHERE {{ ?s ?p "SERVICE <{listener.url}> {{ }}" }}',
        f"SELECT * WHERE {{ ?s ?p ?o # SERVICE <{listener.url}> {{ ?a ?b ?c }}\n }}",
    ]:
        result = store("query", query)
        assert result.exit_code == 0, (query, result.output)
    assert listener.requests == 0


@pytest.mark.parametrize(
    "setting",
    ['service_allow = "https://x.org/sparql"', "service_allow = [1]", 'service_allow = ["x"]'],
)
def test_a_malformed_allow_list_is_refused_naming_the_key(store: Cli, setting: str) -> None:
    (store.data_dir.parent / "ontoloom.toml").write_text(f"[query]\n{setting}\n")
    result = store("query", "SELECT * WHERE { SERVICE <https://x.org/sparql> { ?s ?p ?o } }")
    assert result.exit_code == 2
    assert "[query] service_allow" in result.output and "ontoloom.toml" in result.output


# -- deadlines -----------------------------------------------------------------------------------
def _big_graph(cli: Cli, tmp_path: Path, triples: int = 3000) -> None:
    data = tmp_path / "big.nt"
    data.write_text(
        "".join(f'<urn:x:n{i}> <urn:x:p{i % 7}> "v{i}" .\n' for i in range(triples)),
        encoding="utf-8",
    )
    assert cli("import", str(data)).exit_code == 0


CARTESIAN = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f }"


def _ontoloom(data_dir: Path, *args: str, lock_timeout: str = "30") -> subprocess.Popen[str]:
    env = {**os.environ, "ONTOLOOM_LOCK_TIMEOUT": lock_timeout}
    return subprocess.Popen(
        [ONTOLOOM, "--data-dir", str(data_dir), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _locked(data_dir: Path) -> bool:
    """Whether another process holds the data dir's lock (shared or not): a try for the
    write lock that never waits, let go at once when it is granted."""
    from ontoloom.errors import Busy
    from ontoloom.store.lock import DataDirLock

    try:
        with DataDirLock(data_dir, exclusive=True, wait=0):
            return False
    except Busy:
        return True


def test_a_slow_query_is_stopped_at_its_deadline_and_a_waiting_writer_then_succeeds(
    store: Cli, tmp_path: Path
) -> None:
    _big_graph(store, tmp_path)
    started = time.monotonic()
    query = _ontoloom(store.data_dir, "query", CARTESIAN, "--timeout", "0.5")
    wait_until(
        lambda: query.poll() is not None or _locked(store.data_dir),
        what="the query to take the read lock",
    )
    writer = _ontoloom(store.data_dir, "create", "Person", "-p", "name=Wanda")
    _, err = query.communicate(timeout=60)
    query_done = time.monotonic()
    assert query.returncode == 2, err
    assert "the query ran longer than 0.5 s and was stopped; narrow it or raise --timeout" in err
    assert "Traceback" not in err
    assert query_done - started < 10  # stopped within a few seconds of its deadline
    _, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert time.monotonic() - query_done < 10  # the writer got the lock right after
    assert "Wanda" in store("list", "--type", "Person", "--json").output


def test_a_service_that_never_answers_is_stopped_at_the_deadline(
    store: Cli, tmp_path: Path
) -> None:
    silent = Listener(answer=False)
    try:
        allow(store, silent.url)
        started = time.monotonic()
        query = f"SELECT * WHERE {{ SERVICE <{silent.url}> {{ ?s ?p ?o }} }}"
        result = store("query", query, "--timeout", "1")
        assert result.exit_code == 2
        assert "ran longer than 1 s and was stopped" in result.output
        assert time.monotonic() - started < 10
        assert silent.requests == 1  # it was called, and never answered
    finally:
        silent.close()
    # The lock was released: a write goes straight through.
    assert store("create", "Person", "-p", "name=Walt").exit_code == 0


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_the_timeout_is_a_positive_number_of_seconds(store: Cli, value: str) -> None:
    result = store("query", "SELECT * WHERE { ?s ?p ?o }", "--timeout", value)
    assert result.exit_code == 2
    assert "--timeout" in result.output and "Traceback" not in result.output


def test_quick_queries_answer_as_before_in_every_form(store: Cli) -> None:
    assert "task_a" in store("query", "SELECT ?t WHERE { ?t a ol:Task }").output
    ask = store("query", "ASK { ?t a ol:Task }")
    assert ask.exit_code == 0 and ask.output.strip() == "true"
    graph = store("query", "CONSTRUCT { ?t a ol:Task } WHERE { ?t a ol:Task }")
    assert graph.exit_code == 0 and "task_a" in graph.output
    bad = store("query", "SELECT * WHERE { ?s ?p }")
    assert bad.exit_code == 2 and "SPARQL syntax error" in bad.output
