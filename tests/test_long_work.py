"""Long work: inference against the owlrl oracle, progress on a terminal only, bulk imports
all-or-nothing, and a full reindex that finds what the incremental index finds."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Cli, quads_of
from ontoloom.api import Graph
from ontoloom.store.base import Delta
from ontoloom.terms import NamedNode, Quad
from ontoloom.vocab import FACTS, OL, OWL, RDF_TYPE, RDFS, SCHEMA_GRAPH


def _team(g: Graph) -> None:
    from ontoloom.demo import load_entities
    from ontoloom.resources import resource_dir

    load_entities(g, resource_dir("examples") / "team" / "entities.json")


# -- inference: the one-pass engine against owlrl -----------------------------------------------
def _same_as_owlrl(g: Graph, engine: str) -> list[Quad]:
    from ontoloom.infer import _compute, compute_owlrl

    ours, used, _why = _compute(g)
    assert used == engine
    assert set(ours) == set(compute_owlrl(g))
    return ours


def test_inference_on_the_team_graph_equals_owlrl(graph: Graph) -> None:
    _team(graph)
    quads = _same_as_owlrl(graph, "rules")
    assert len(quads) > 100


def test_inference_on_the_records_instance_equals_owlrl(tmp_path: Path) -> None:
    from ontoloom.instance import init_instance
    from records_fixture import build

    root = build(tmp_path / "inst")
    info = init_instance(root)
    with Graph.open(info["data_dir"], write=True) as g:
        g.rebuild(full=True)
        assert len(_same_as_owlrl(g, "rules")) > 10


EXTENSION = [  # equivalences, an inverse, a symmetric property and a union, of the user's own
    (OL + "Squad", OWL + "equivalentClass", OL + "Team"),
    (OL + "Team", RDFS + "subClassOf", OL + "Organization"),
    (OL + "leads", OWL + "inverseOf", OL + "led_by"),
    (OL + "led_by", RDFS + "subPropertyOf", OL + "member_of"),
    (OL + "pairs_with", RDF_TYPE.value, OWL + "SymmetricProperty"),
    (OL + "pairs_with", RDFS + "domain", OL + "Person"),
    (OL + "colleague_of", OWL + "equivalentProperty", OL + "pairs_with"),
]


def _extend(g: Graph, extra: list[tuple[str, str, str]]) -> None:
    g.writes.commit(
        Delta(adds={Quad(*map(NamedNode, t), SCHEMA_GRAPH) for t in extra}), trusted="test schema"
    )


def _individuals(g: Graph) -> None:
    ol = lambda local: NamedNode(OL + local)  # noqa: E731
    ada, bob, sq = g.ids.iri("pers_ada"), g.ids.iri("pers_bob"), g.ids.iri("org_squad")
    g.writes.commit(
        Delta(
            adds={
                Quad(sq, RDF_TYPE, ol("Squad"), FACTS),
                Quad(ada, ol("leads"), sq, FACTS),
                Quad(ada, ol("colleague_of"), bob, FACTS),
            }
        ),
        trusted="test individuals",
    )


def test_inference_with_user_axioms_equals_owlrl(graph: Graph) -> None:
    _team(graph)
    _extend(graph, EXTENSION)
    _individuals(graph)
    quads = {q.triple for q in _same_as_owlrl(graph, "rules")}
    bob = graph.ids.iri("pers_bob")
    assert any(t.subject == bob and t.predicate.value == OL + "pairs_with" for t in quads)


def test_a_schema_beyond_the_rules_goes_to_owlrl_and_says_so(cli: Cli) -> None:
    with Graph.open(cli.data_dir, write=True, create=True) as g:
        _team(g)
        _extend(g, [*EXTENSION, (OL + "blocks", RDF_TYPE.value, OWL + "TransitiveProperty")])
        _individuals(g)
        _same_as_owlrl(g, "owlrl")
    data = json.loads(cli.json("infer").output)
    assert data["engine"] == "owlrl" and "owl:TransitiveProperty" in data["engine_reason"]


def test_infer_names_its_engine(cli: Cli) -> None:
    with Graph.open(cli.data_dir, write=True, create=True) as g:
        _team(g)
    data = json.loads(cli.json("infer").output)
    assert data["engine"] == "rules" and "engine_reason" not in data


# -- progress: a terminal only ------------------------------------------------------------------
def test_progress_draws_each_step_when_forced() -> None:
    from ontoloom import progress

    out = io.StringIO()
    os.environ["ONTOLOOM_PROGRESS_AFTER"] = "0"
    try:
        with progress.shown(stream=out, force=True), progress.task("crunching", 3) as advance:
            advance()
            advance(3)
    finally:
        del os.environ["ONTOLOOM_PROGRESS_AFTER"]
    assert "crunching" in out.getvalue()


def test_no_progress_without_a_terminal_or_with_quiet_or_json() -> None:
    from ontoloom import progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert progress.enabled(False, False, Tty())
    assert not progress.enabled(True, False, Tty())
    assert not progress.enabled(False, True, Tty())
    assert not progress.enabled(False, False, io.StringIO())
    with progress.shown(stream=io.StringIO()), progress.task("nothing") as advance:
        advance(1)  # a no-op: nothing is drawn, nothing fails


def _run_on_a_terminal(data_dir: Path, *args: str) -> tuple[int, str, bytes]:
    """``ontoloom ARGS`` with stderr on a pseudo-terminal: (exit code, stdout, stderr)."""
    master, slave = pty.openpty()
    env = {**os.environ, "ONTOLOOM_PROGRESS_AFTER": "0", "COLUMNS": "100"}
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("ontoloom")), "--data-dir", str(data_dir), *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    out, _ = proc.communicate()
    os.close(master)
    return proc.returncode, out.decode(), err


@pytest.fixture
def team_dir(cli: Cli) -> Path:
    with Graph.open(cli.data_dir, write=True, create=True) as g:
        _team(g)
    return cli.data_dir


def test_a_terminal_sees_progress_and_stdout_stays_clean(team_dir: Path) -> None:
    code, out, err = _run_on_a_terminal(team_dir, "infer")
    assert code == 0 and out.startswith("inferred ")
    assert b"inferring" in err or b"reading the graph" in err
    code, out, err = _run_on_a_terminal(team_dir, "reindex")
    assert code == 0 and b"search index" in err


@pytest.mark.parametrize("flag", ["--quiet", "--json"])
def test_quiet_and_json_draw_nothing_on_a_terminal(team_dir: Path, flag: str) -> None:
    code, out, err = _run_on_a_terminal(team_dir, "infer", flag)
    assert code == 0 and err == b""
    if flag == "--json":
        assert json.loads(out)["engine"] == "rules"


def test_a_pipe_gets_no_progress(team_dir: Path) -> None:
    script = str(Path(sys.executable).with_name("ontoloom"))
    done = subprocess.run(
        [script, "--data-dir", str(team_dir), "infer"],
        capture_output=True,
        env={**os.environ, "ONTOLOOM_PROGRESS_AFTER": "0"},
        check=True,
    )
    assert done.stderr == b""


# -- bulk imports: all or nothing -----------------------------------------------------------------
def _bulk(path: Path, count: int, broken: bool) -> Path:
    lines = ["@prefix ol: <https://ontoloom.dev/ns#> . @prefix id: <https://ontoloom.dev/id/> ."]
    for i in range(count):
        status = "someday" if broken and i == count - 1 else "open"
        lines.append(f'id:task_bulk{i} a ol:Task ; ol:title "Bulk {i}" ; ol:status "{status}" .')
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_refused_bulk_import_leaves_the_store_as_it_was(cli: Cli, tmp_path: Path) -> None:
    with Graph.open(cli.data_dir, write=True, create=True) as g:
        _team(g)
    before = quads_of(cli.data_dir)
    result = cli("import", str(_bulk(tmp_path / "bad.ttl", 1500, broken=True)))
    assert result.exit_code == 1 and "task_bulk1499" in result.output
    assert quads_of(cli.data_dir) == before


def test_a_bulk_import_is_stored_and_found(cli: Cli, tmp_path: Path) -> None:
    with Graph.open(cli.data_dir, write=True, create=True) as g:
        _team(g)
    assert cli("import", str(_bulk(tmp_path / "ok.ttl", 1500, broken=False))).exit_code == 0
    hits = json.loads(cli.json("search", "Bulk 1234").output)
    assert hits[0]["id"] == "task_bulk1234"


# -- reindex: the same index, faster ------------------------------------------------------------------
def test_a_full_reindex_finds_what_the_incremental_index_found(graph: Graph) -> None:
    _team(graph)
    queries = ["deploy", "checkout page", "blocked", "ada", "task_deploy", "timeout payment"]

    def answers() -> list:
        # equal scores may come in another order (index order): compare what and how well
        return [
            sorted((h.id, round(h.score, 3)) for h in graph.search(q, limit=20)) for q in queries
        ]

    incremental = answers()
    graph.reindex()
    assert answers() == incremental


def _index_contents(graph: Graph) -> dict[str, object]:
    """Every document of the search index by its key (rowids differ between the two paths)."""
    from ontoloom.search import SearchIndex

    assert graph.data_dir is not None
    index = SearchIndex.of(graph.data_dir, readonly=True)
    try:
        db = index.db
        keys = dict(db.execute("SELECT rowid, key FROM docs"))
        return {
            "docs": sorted(
                db.execute(
                    "SELECT key, kind, id, type, title, private, from_id, rel, to_id FROM docs"
                ).fetchall()
            ),
            "tags": sorted((keys[r], t) for r, t in db.execute("SELECT rowid, tag FROM tags")),
            "text": sorted(
                (keys[r], *rest)
                for r, *rest in db.execute("SELECT rowid, id, title, body, tags FROM fts")
            ),
            "df": sorted(db.execute("SELECT term, n FROM df WHERE n > 0")),
        }
    finally:
        index.close()


def test_a_full_reindex_writes_the_documents_the_incremental_index_wrote(
    tmp_path: Path,
) -> None:
    """Built one write at a time (the team graph, a record instance's literals written in
    other forms, a relation between two objects of different graphs), then whole."""
    with Graph.open(tmp_path / "d", write=True, create=True) as g:
        _team(g)
        g.create("Task", {"title": "Count", "status": "open", "estimate": 7}, id="task_n")
        g.writes.commit(
            Delta(
                adds={
                    Quad(
                        g.ids.iri("task_n"),
                        NamedNode(OL + "estimate_text"),
                        _literal("007", "integer"),
                        FACTS,
                    )
                }
            )
        )
        g.relate("task_n", "blocks", "task_deploy")
        g.search("anything")  # caught up
        incremental = _index_contents(g)
        g.reindex()
        assert _index_contents(g) == incremental


def _literal(value: str, xsd_type: str):
    from ontoloom.terms import Literal
    from ontoloom.vocab import XSD

    return Literal(value, datatype=NamedNode(XSD + xsd_type))
