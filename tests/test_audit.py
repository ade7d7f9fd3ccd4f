"""`check` audits the whole graph; `validate` checks files with no store; `--legacy-json`
is the sage-memory audit drop-in."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import Cli
from ontoloom.api import Graph
from ontoloom.store.base import Delta
from ontoloom.terms import Quad
from ontoloom.vocab import FACTS

CASES = Path(__file__).parent / "cases"


def smuggle(data_dir: Path, turtle_file: Path) -> None:
    """Put invalid data in a store behind the write path's back (as an old version or a
    raw import might have), so that the audit has something to find."""
    from ontoloom.store.rdfio import read_triples

    with Graph.open(data_dir, write=True, create=True) as g:
        quads = [
            Quad(t.subject, t.predicate, t.object, FACTS) for t in read_triples(path=turtle_file)
        ]
        g.writes.commit(Delta(adds=set(quads)), trusted="test: invalid data smuggled in")


@pytest.fixture
def broken(cli: Cli) -> Cli:
    smuggle(cli.data_dir, CASES / "core-task-required" / "data.ttl")
    smuggle(cli.data_dir, CASES / "core-acyclic" / "data.ttl")
    return cli


def test_a_clean_graph_conforms(cli: Cli) -> None:
    cli("create", "Person", "-p", "name=Ann")
    result = cli("check")
    assert result.exit_code == 0 and "the graph conforms" in result.output
    assert json.loads(cli.json("check").output)["conforms"] is True


def test_check_reports_every_rule_grouped_by_focus_and_exits_1(broken: Cli) -> None:
    result = broken("check")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert "t3" in lines and '  ✗ status [in] = "wip"' in lines
    assert "A Task's status is exactly one of" in result.output


def test_each_cycle_is_reported_once_with_its_path(broken: Cli) -> None:
    data = json.loads(broken.json("check").output)
    cycles = [r for r in data["results"] if r["kind"] == "cycle"]
    assert sorted(tuple(c["cycle"]) for c in cycles) == [("a", "b", "c", "a"), ("d", "d")]
    assert not [r for r in data["results"] if r["constraint"] == "acyclic" and r["kind"] == "shape"]


def test_orphans_are_relations_to_nothing(cli: Cli) -> None:
    cli("create", "Task", "--id", "t1", "-p", "title=T", "-p", "status=open")
    with Graph.open(cli.data_dir, write=True) as g:
        orphan = Quad(g.ids.iri("t1"), g.schema.relations["blocks"].iri, g.ids.iri("gone"), FACTS)
        g.writes.commit(Delta(adds={orphan}), trusted="test: an orphan smuggled in")
    data = json.loads(cli.json("check").output)
    orphans = [r for r in data["results"] if r["kind"] == "orphan"]
    assert [(o["focus"], o["path"], o["value"]) for o in orphans] == [("t1", "blocks", "gone")]


def test_warnings_are_shown_but_do_not_fail(cli: Cli, tmp_path: Path) -> None:
    shapes = tmp_path / "warn.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .\n"
        "ol:TaskDescriptionHint a sh:PropertyShape ; sh:targetClass ol:Task ; sh:path ol:description ;\n"
        '  sh:minCount 1 ; sh:severity sh:Warning ; sh:message "Tasks read better with a description" .\n'
    )
    cli("create", "Task", "-p", "title=T", "-p", "status=open")
    with Graph.open(cli.data_dir, write=True) as g:
        from ontoloom.store.rdfio import read_triples
        from ontoloom.vocab import SCHEMA_GRAPH

        triples = read_triples(path=shapes)
        g.writes.commit(
            Delta(adds={Quad(t.subject, t.predicate, t.object, SCHEMA_GRAPH) for t in triples})
        )
    result = cli("check")
    assert result.exit_code == 0
    assert "! description [minCount]" in result.output and "1 warning(s)" in result.output


def test_turtle_report_is_a_w3c_report_isomorphic_to_pyshacls(broken: Cli) -> None:
    from rdflib.compare import isomorphic

    from ontoloom.schema import builtin_triples
    from ontoloom.shacl.oracle import pyshacl_results, to_rdflib
    from ontoloom.store.rdfio import read_triples

    smuggle(broken.data_dir, CASES / "core-domain-range" / "data.ttl")
    result = broken("check", "--format", "turtle")
    assert result.exit_code == 1
    ours = read_triples(data=result.output, format_name="turtle")
    ontology, shapes = builtin_triples()
    data = []
    for name in ("core-task-required", "core-acyclic", "core-domain-range"):
        data += read_triples(path=CASES / name / "data.ttl")
    _, _, theirs = pyshacl_results(data, shapes, ontology=ontology)
    assert isomorphic(to_rdflib(ours), to_rdflib(theirs))


def test_explain_lists_the_engine_of_every_shape(broken: Cli) -> None:
    result = broken("check", "--explain")
    assert "engines:" in result.output
    # engine, the time its queries took, the shape
    assert re.search(r"sparql +[0-9.]+ s  https://ontoloom.dev/ns#TaskTitle\n", result.output)
    assert "pyshacl" not in result.output


def test_repair_is_a_dry_run_until_yes(broken: Cli) -> None:
    before = broken.json("check").output
    dry = broken("check", "--repair")
    assert dry.exit_code == 1
    assert "auto  unrelate c blocks a (closes the cycle)" in dry.output
    assert "manual fill in title on t1" in dry.output
    assert "manual fix t3 by hand: A Task's status is exactly one of" in dry.output
    assert broken.json("check").output == before
    applied = broken("check", "--repair", "--yes")
    assert "[done]" in applied.output
    data = json.loads(broken.json("check").output)
    assert {r["kind"] for r in data["results"]} == {"shape"}, "the cycles are gone"
    assert {r["constraint"] for r in data["results"]} == {"minCount", "in", "maxCount", "datatype"}


def test_repair_keeps_one_of_too_many_relations(cli: Cli) -> None:
    smuggle(cli.data_dir, CASES / "core-cardinality" / "data.ttl")
    dry = cli("check", "--repair")
    assert "auto  keep t1 assigned_to a, unrelate the others" in dry.output
    assert "auto  keep p1 has_task t1, unrelate the others" in dry.output
    cli("check", "--repair", "--yes")
    assert cli("check").exit_code == 0
    kept = json.loads(cli.json("relations", "t1").output)
    assert sorted((r["from_id"], r["rel"], r["to_id"]) for r in kept) == [
        ("p1", "has_task", "t1"),
        ("t1", "assigned_to", "a"),
    ]


def test_repairs_go_through_the_write_path(broken: Cli) -> None:
    """A repair that would itself break a rule is refused, not forced."""
    data = json.loads(broken.json("check", "--repair").output)
    assert all({"action", "automatic", "description", "finding"} <= set(r) for r in data["repairs"])


# -- validate ----------------------------------------------------------------------------------
def test_validate_uses_our_shapes_by_default(cli: Cli) -> None:
    result = cli.runner.invoke(
        __import__("ontoloom.cli", fromlist=["main"]).main,
        ["validate", str(CASES / "core-task-required" / "data.ttl"), "--json"],
    )
    assert result.exit_code == 1
    out = json.loads(result.output)
    assert out["conforms"] is False and len(out["results"]) == 6


def test_validate_with_shapes_files_and_exit_codes(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ontoloom.cli import main

    runner = CliRunner()
    case = CASES / "counts-and-values"
    bad = runner.invoke(main, ["validate", str(case / "data.ttl"), "-s", str(case / "shapes.ttl")])
    assert bad.exit_code == 1 and "Conforms: False\nResults (16):" in bad.output
    good = tmp_path / "good.ttl"
    good.write_text("@prefix ex: <http://example.org/> . ex:x ex:y ex:z .")
    assert (
        runner.invoke(main, ["validate", str(good), "-s", str(case / "shapes.ttl")]).exit_code == 0
    )
    broken = tmp_path / "broken.ttl"
    broken.write_text('@prefix ex: <http://example.org/> .\nex:x ex:y "unterminated .\n')
    result = runner.invoke(main, ["validate", str(broken)])
    assert result.exit_code == 2 and "broken.ttl:2:" in result.output
    assert runner.invoke(main, ["validate", str(tmp_path / "missing.ttl")]).exit_code == 2


def test_a_file_holding_data_and_shapes_validates_itself() -> None:
    from click.testing import CliRunner

    from ontoloom.cli import main

    test = Path(__file__).parent / "w3c" / "core" / "property" / "minCount-001.ttl"
    result = CliRunner().invoke(main, ["validate", str(test), "--format", "turtle"])
    assert result.exit_code == 1 and "MinCountConstraintComponent" in result.output


def test_ill_formed_shapes_are_a_load_error() -> None:
    from click.testing import CliRunner

    from ontoloom.cli import main

    test = Path(__file__).parent / "w3c" / "sparql" / "pre-binding" / "unsupported-sparql-001.ttl"
    result = CliRunner().invoke(main, ["validate", str(test)])
    assert result.exit_code == 2 and "not well-formed" in result.output


# -- legacy JSON -------------------------------------------------------------------------------
LEGACY = {
    "entities": [
        {"id": "task_001", "type": "Task", "properties": {"title": "A", "status": "wip"}},
        {
            "id": "task_002",
            "type": "Task",
            "properties": {"title": "B", "status": "open", "api_key": "k"},
        },
        {"id": "p_001", "type": "Person", "properties": {"name": "Alice"}},
        {
            "id": "ev_1",
            "type": "Event",
            "properties": {"title": "E", "start": "2026-02-02", "end": "2026-02-01"},
        },
    ],
    "relations": [
        {
            "from_id": "task_001",
            "from_type": "Task",
            "rel": "blocks",
            "to_id": "task_002",
            "to_type": "Task",
        },
        {
            "from_id": "task_002",
            "from_type": "Task",
            "rel": "blocks",
            "to_id": "task_001",
            "to_type": "Task",
        },
        {
            "from_id": "task_001",
            "from_type": "Task",
            "rel": "assigned_to",
            "to_id": "task_002",
            "to_type": "Task",
        },
        {
            "from_id": "task_001",
            "from_type": "Task",
            "rel": "invented_rel",
            "to_id": "p_001",
            "to_type": "Person",
        },
    ],
}


def run_legacy(payload: object, *checks: str):  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from ontoloom.cli import main

    args = ["check", "--legacy-json", "-"] + [a for c in checks for a in ("--check", c)]
    return CliRunner().invoke(main, args, input=json.dumps(payload))


def test_legacy_json_reports_errors_and_warnings_by_entity() -> None:
    result = run_legacy(LEGACY)
    assert result.exit_code == 1
    out = json.loads(result.output)
    assert set(out) == {"valid", "errors", "warnings", "checked"}
    assert out["valid"] is False and out["checked"] == 4
    assert any("task_001" in e and "status" in e for e in out["errors"])
    assert any("task_002" in e and "api_key" in e for e in out["errors"])
    assert any("ev_1" in e for e in out["errors"])
    assert any(e.startswith("cycle in blocks: ") and "task_001" in e for e in out["errors"])
    assert any("assigned_to" in w for w in out["warnings"]), "domain/range is a warning here"
    assert not any("invented_rel" in x for x in out["errors"] + out["warnings"])


def test_legacy_json_selects_checks() -> None:
    out = json.loads(run_legacy(LEGACY, "cycles").output)
    assert len(out["errors"]) == 1 and out["errors"][0].startswith("cycle in blocks")
    assert json.loads(run_legacy(LEGACY, "forbidden").output)["errors"][0].count("api_key") == 1
    assert run_legacy(LEGACY, "nonsense").exit_code == 2


def test_legacy_json_accepts_a_bare_list_and_valid_graphs() -> None:
    result = run_legacy([{"id": "p", "type": "Person", "properties": {"name": "Ann"}}])
    assert result.exit_code == 0
    assert json.loads(result.output) == {"valid": True, "errors": [], "warnings": [], "checked": 1}


@pytest.mark.parametrize(
    "payload",
    [
        {"relations": [{"rel": "blocks", "to_id": "x"}]},
        "not json",
        {"entities": [{"type": "Task"}]},
        42,
    ],
)
def test_legacy_json_bad_input_exits_2_with_the_same_shape(payload: object) -> None:
    from click.testing import CliRunner

    from ontoloom.cli import main

    text = payload if isinstance(payload, str) else json.dumps(payload)
    result = CliRunner().invoke(main, ["check", "--legacy-json", "-"], input=text)
    assert result.exit_code == 2
    out = json.loads(result.output)
    assert (
        out["valid"] is False
        and out["errors"][0].startswith("bad input: ")
        and out["warnings"] == []
    )


# -- cycle detection: linear in the edges ------------------------------------------------------
def test_strong_components_match_reachability_on_random_graphs() -> None:
    import random

    from ontoloom.audit import strong_components

    rng = random.Random(7)
    for _ in range(200):
        nodes = [f"n{i}" for i in range(rng.randint(1, 9))]
        edges: dict[str, list[str]] = {}
        for _ in range(rng.randint(0, 20)):
            edges.setdefault(rng.choice(nodes), []).append(rng.choice(nodes))

        def reach(a: str, edges: dict[str, list[str]] = edges) -> set[str]:
            seen, todo = set(), [a]
            while todo:
                for b in edges.get(todo.pop(), []):
                    if b not in seen:
                        seen.add(b)
                        todo.append(b)
            return seen

        reaches = {n: reach(n) for n in nodes}
        component = strong_components(edges)
        for a in component:
            for b in component:
                together = a == b or (b in reaches[a] and a in reaches[b])
                assert (component[a] == component[b]) == together, (edges, a, b)


def test_cycles_in_a_long_chain_are_found_once_each_in_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import itertools

    from ontoloom.audit import find_cycles
    from ontoloom.terms import NamedNode
    from ontoloom.vocab import OL

    with Graph.open(tmp_path / "d", write=True, create=True) as g:
        task = [g.ids.iri(f"task_{i:08x}") for i in range(20000)]
        blocks = NamedNode(OL + "blocks")
        quads = {Quad(a, blocks, b, FACTS) for a, b in itertools.pairwise(task)}
        # two cycles: 3 → 2 → 3 (two tasks) and 19999 → 19000 (a thousand tasks)
        quads |= {Quad(task[3], blocks, task[2], FACTS), Quad(task[-1], blocks, task[19000], FACTS)}
        g.writes.commit(Delta(adds=quads), trusted="test: cycles smuggled in")
        # one pass over the edges (one query, whatever the chain's length), where a property
        # path ?n blocks+ ?n per node is quadratic: counted, not timed
        asked: list[str] = []
        backend = g.backend
        for name in ("select", "serialize_results", "ask"):
            real = getattr(backend, name)

            def counted(query: str, *args: object, _real=real, **kwargs: object) -> object:
                asked.append(query)
                return _real(query, *args, **kwargs)

            monkeypatch.setattr(backend, name, counted)
        cycles = find_cycles(g, g.schema.relations["blocks"])
        ids = [[g.ids.id_of(n) for n in c] for c in cycles]
    assert sorted(len(c) for c in ids) == [3, 1001]
    assert ["task_00000002", "task_00000003", "task_00000002"] in ids
    assert len(asked) == 1, asked


def test_the_audit_judges_acyclicity_on_the_nodes_on_a_cycle_as_on_every_target(
    tmp_path: Path,
) -> None:
    """The audit evaluates acyclicity only on the nodes a Tarjan pass finds on a cycle; the
    report's results are those of the same constraint evaluated on every target (the
    oracle: the audit validator over the whole store), and the shape is still listed."""
    import itertools

    from ontoloom.audit import audit
    from ontoloom.terms import NamedNode
    from ontoloom.vocab import OL

    with Graph.open(tmp_path / "d", write=True, create=True) as g:
        task = [g.ids.iri(f"task_{i:08x}") for i in range(300)]
        blocks, depends = NamedNode(OL + "blocks"), NamedNode(OL + "depends_on")
        quads = {Quad(a, blocks, b, FACTS) for a, b in itertools.pairwise(task)}
        quads |= {Quad(task[9], blocks, task[5], FACTS), Quad(task[40], blocks, task[40], FACTS)}
        quads |= {Quad(task[1], depends, task[2], FACTS), Quad(task[2], depends, task[1], FACTS)}
        g.writes.commit(Delta(adds=quads), trusted="test: cycles smuggled in")
        result = audit(g)
        oracle = g.schema.audit_validator.validate(g.backend, hierarchy=g.schema.hierarchy)
        got = sorted(r.key() for r in result.report.results if r.constraint_name == "acyclic")
        want = sorted(r.key() for r in oracle.results if r.constraint_name == "acyclic")
        on_cycles = {r.focus for r in oracle.results if r.constraint_name == "acyclic"}
        engines = result.engines
    assert got == want
    assert on_cycles == {*task[5:10], task[40], task[1], task[2]}
    assert engines.get(OL + "blocksAcyclic") == "sparql"
