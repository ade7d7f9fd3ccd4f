"""Round trips are lossless (issue 32): export → import into a fresh store gives the same
quads in the same graphs in every format that names graphs (TriG, N-Quads, JSON-LD), and the
same triples, as facts, in those that do not (Turtle, N-Triples)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Cli, quads_of
from ontoloom import ops
from ontoloom.api import Graph
from ontoloom.demo import run_demo
from ontoloom.store.base import Delta
from ontoloom.terms import Literal, NamedNode, Quad
from ontoloom.vocab import (
    CLASS_GRAPH_PREFIX,
    CONFIRMED,
    DEFAULT_ID_BASE,
    FACTS,
    OL,
    RDF_TYPE,
    RECORD_GRAPH_PREFIX,
    XSD,
)

XSD_INTEGER = NamedNode(XSD + "integer")
XSD_STRING = NamedNode(XSD + "string")
GRAPH_FORMATS = {"trig": "trig", "nquads": "nq", "jsonld": "jsonld"}
TRIPLE_FORMATS = {"turtle": "ttl", "ntriples": "nt"}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example instance as `make demo` builds it (records, entities, proposals)."""
    target = tmp_path_factory.mktemp("demo") / "team"
    run_demo(keep=target)
    return target / ".ontoloom"


def _round_trip(source: Path, target: Path, fmt: str, ext: str) -> dict:
    exported = ops.call(source, "export", {"format": fmt, "graph": "all"}).value["text"]
    text = {"text": exported, "format": fmt, "name": f"all.{ext}"}
    return ops.call(target, "import_rdf", text).value


@pytest.mark.parametrize("fmt", sorted(GRAPH_FORMATS))
def test_the_example_instance_comes_back_in_the_same_graphs(
    example: Path, tmp_path: Path, fmt: str
) -> None:
    """The failure-class graphs (record-class/…) that rebuild keeps were merged into facts."""
    fresh = tmp_path / "fresh" / ".ontoloom"
    _round_trip(example, fresh, fmt, GRAPH_FORMATS[fmt])
    before, after = quads_of(example), quads_of(fresh)
    assert {q.graph_name for q in before} == {q.graph_name for q in after}
    assert after == before


@pytest.mark.parametrize("fmt", sorted(TRIPLE_FORMATS))
def test_the_example_instance_comes_back_as_the_same_triples_and_relations(
    example: Path, tmp_path: Path, fmt: str
) -> None:
    """47 relations became 46 through Turtle: one relation (a failure class resolved by an
    action) is stated by two records, and the summary counted it once per graph."""
    fresh = tmp_path / "fresh" / ".ontoloom"
    _round_trip(example, fresh, fmt, TRIPLE_FORMATS[fmt])
    assert {q.triple for q in quads_of(fresh)} == {q.triple for q in quads_of(example)}
    assert {q.graph_name for q in quads_of(fresh)} == {FACTS}
    before = ops.call(example, "summary", {}).value
    after = ops.call(fresh, "summary", {}).value
    for key in ("objects", "relations", "types", "relations_by_type", "properties"):
        assert after[key] == before[key], key


def test_a_relation_two_records_state_is_one_relation(example: Path) -> None:
    stated = [
        q
        for q in quads_of(example)
        if q.predicate == NamedNode(OL + "resolved-by")
        and q.subject.value.endswith("failure-class%3Aliteral-control-bytes")
    ]
    assert len(stated) == 2 and len({q.triple for q in stated}) == 1  # the case itself
    summary = ops.call(example, "summary", {}).value
    distinct = {
        q.triple
        for q in quads_of(example)
        if q.subject.value.startswith(DEFAULT_ID_BASE)
        and isinstance(q.object, NamedNode)
        and q.predicate != RDF_TYPE
        and q.predicate.value.startswith(OL)
    }
    assert summary["relations"] == len(distinct)


def test_a_graph_ontoloom_does_not_keep_is_refused_by_name(cli: Cli, tmp_path: Path) -> None:
    """Merged into facts, a foreign graph's triples lost their graph; kept, they would be
    triples no write could edit (not facts) and no rebuild replace (not a record's). Refused,
    with the way to merge them on purpose."""
    path = tmp_path / "in.trig"
    path.write_text(
        "<http://a/s> <http://a/p> <http://a/o> .\n"
        "<http://a/g> { <http://a/s> <http://a/p> <http://a/o> . }\n"
        "_:b { <http://a/s> <http://a/p> <http://a/x> . }\n"
    )
    refused = cli("import", str(path))
    assert refused.exit_code == 2, refused.output
    assert "<http://a/g>" in refused.output and "_:b" in refused.output
    assert "--graph facts" in refused.output and "nothing was imported" in refused.output
    assert not (cli.data_dir / "store").exists() or not quads_of(cli.data_dir)
    merged = json.loads(cli("--json", "import", str(path), "--graph", "facts").stdout)
    assert merged["graphs"] == {FACTS.value: 2}


def test_the_inferred_graph_is_refused_in_a_file_too(cli: Cli, tmp_path: Path) -> None:
    """`export --infer` writes graph:inferred; imported, derived triples became facts."""
    path = tmp_path / "inferred.nq"
    path.write_text(
        "<https://ontoloom.dev/id/task_a> <https://ontoloom.dev/ns#x> <https://ontoloom.dev/id/b> "
        "<https://ontoloom.dev/graph/inferred> .\n"
    )
    refused = cli("import", str(path))
    assert refused.exit_code == 2, refused.output
    assert "inferred" in refused.output and "ontoloom infer" in refused.output


# -- generated stores ------------------------------------------------------------------------
TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Co", "Cn"), exclude_characters="\x00"),
    min_size=1,
    max_size=12,
)
LITERALS = st.one_of(
    st.sampled_from(["007", "+1", "-0", "10"]).map(lambda v: Literal(v, datatype=XSD_INTEGER)),
    st.sampled_from(["1.50", "2026-01-01"]).map(lambda v: Literal(v, datatype=XSD_STRING)),
    st.builds(Literal, TEXT, language=st.sampled_from(["en", "en-gb", "de"])),
)
GRAPHS = st.sampled_from(
    [
        FACTS,
        CONFIRMED,
        NamedNode(RECORD_GRAPH_PREFIX + "records/failures/a.md"),
        NamedNode(RECORD_GRAPH_PREFIX + "docs/b%20c.md"),
        NamedNode(CLASS_GRAPH_PREFIX + "some-class"),
    ]
)


def _iri(name: str) -> NamedNode:
    return NamedNode(DEFAULT_ID_BASE + name)


@st.composite
def stores(draw: st.DrawFn) -> set[Quad]:
    """Tasks and people, each in a graph of its own choosing (facts, confirmed, a record's,
    a failure class's), tasks assigned to people, and relations stated in one graph or in
    several (as two records stating the same relation)."""
    quads: set[Quad] = set()
    people = [f"pers_{i:08x}" for i in range(draw(st.integers(0, 3)))]
    tasks = [f"task_{i:08x}" for i in range(draw(st.integers(1, 4)))]
    for pid in people:
        g = draw(GRAPHS)
        quads |= {
            Quad(_iri(pid), RDF_TYPE, NamedNode(OL + "Person"), g),
            Quad(_iri(pid), NamedNode(OL + "name"), Literal(draw(TEXT)), g),
        }
    for tid in tasks:
        g = draw(GRAPHS)
        node = _iri(tid)
        quads |= {
            Quad(node, RDF_TYPE, NamedNode(OL + "Task"), g),
            Quad(node, NamedNode(OL + "title"), Literal(draw(TEXT)), g),
            Quad(
                node, NamedNode(OL + "status"), Literal(draw(st.sampled_from(["open", "done"]))), g
            ),
        }
        for tag in draw(st.lists(TEXT, max_size=2)):
            quads.add(Quad(node, NamedNode(OL + "tags"), Literal(tag), draw(GRAPHS)))
        for value in draw(st.lists(LITERALS, max_size=2)):  # stored as written
            quads.add(Quad(node, NamedNode(OL + "note"), value, g))
        if people and draw(st.booleans()):
            to = _iri(draw(st.sampled_from(people)))
            for rg in draw(st.sets(GRAPHS, min_size=1, max_size=2)):
                quads.add(Quad(node, NamedNode(OL + "assigned_to"), to, rg))
    return quads


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(stores())
def test_every_format_round_trips_a_generated_store(quads: set[Quad]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        with Graph.open(source, write=True, create=True) as g:
            g.writes.commit(Delta(adds=quads))
        stored = quads_of(source)
        assert stored == quads
        for fmt, ext in {**GRAPH_FORMATS, **TRIPLE_FORMATS}.items():
            fresh = Path(tmp) / fmt
            _round_trip(source, fresh, fmt, ext)
            back = quads_of(fresh)
            if fmt in GRAPH_FORMATS:
                assert back == stored, fmt
            else:
                assert back == {Quad(q.subject, q.predicate, q.object, FACTS) for q in stored}, fmt
