"""The compiled fast path finds exactly what pySHACL finds, on generated graphs, and a
shape it cannot compile is handed to pySHACL visibly."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ontoloom.schema import Schema, builtin_triples
from ontoloom.shacl import Validator
from ontoloom.shacl.oracle import pyshacl_results
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.shacl.validate import validate_graphs
from ontoloom.store.base import Delta
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.store.rdfio import read_triples
from ontoloom.terms import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Triple
from ontoloom.vocab import OL, RDF, XSD
from shacl_keys import result_keys

NODES = [NamedNode(f"https://ontoloom.dev/id/n{i}") for i in range(7)]
TYPES = [
    NamedNode(OL + t) for t in ("Task", "Person", "Project", "Event", "Goal", "Document", "Note")
]
RELATIONS = [
    NamedNode(OL + r)
    for r in (
        "blocks",
        "depends_on",
        "assigned_to",
        "has_task",
        "part_of",
        "has_owner",
        "has_goal",
        "mentions",
        "follows_up",
        "member_of",
    )
]
PROPS = [
    NamedNode(OL + p)
    for p in (
        "title",
        "status",
        "name",
        "priority",
        "start",
        "end",
        "content",
        "description",
        "password",
        "tags",
    )
]
LITERALS = [
    Literal("open"),
    Literal("wip"),
    Literal("done"),
    Literal("active"),
    Literal("high"),
    Literal("2026-01-01", datatype=NamedNode(XSD + "date")),
    Literal("2026-01-03", datatype=NamedNode(XSD + "date")),
    Literal("3", datatype=NamedNode(XSD + "integer")),
    Literal("x"),
]

triples = st.lists(
    st.one_of(
        st.builds(
            lambda s, t: Triple(s, NamedNode(RDF + "type"), t),
            st.sampled_from(NODES),
            st.sampled_from(TYPES),
        ),
        st.builds(
            Triple, st.sampled_from(NODES), st.sampled_from(RELATIONS), st.sampled_from(NODES)
        ),
        st.builds(
            Triple, st.sampled_from(NODES), st.sampled_from(PROPS), st.sampled_from(LITERALS)
        ),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(triples)
def test_generated_graphs_get_the_same_findings_from_both_engines(data: list[Triple]) -> None:
    ontology, shapes = builtin_triples()
    # The secret rule is compared with pySHACL in tests/test_secrets.py: here, where pySHACL
    # re-parses its long query for every node of every example, it would cost minutes.
    shapes = shape_subset(shapes, without=NamedNode(OL + "NoSecrets"))
    schema = Schema(ontology, shapes)
    backend = EmbeddedBackend.memory()
    if data:
        backend.apply(
            Delta(adds={Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in data})
        )
    ours = Validator(shapes, extra_classes=schema.subclass_pairs).validate(backend)
    _, theirs, _ = pyshacl_results(data, shapes, ontology=ontology, advanced=True)
    index = TripleIndex(shapes)
    # As sets: pySHACL repeats a SELECT-validator result once per value node of the focus
    # (a custom component on a property shape), where the spec gives one per solution.
    assert set(result_keys(ours.results, index)) == set(result_keys(theirs, index))


def test_a_shape_the_compiler_cannot_handle_goes_to_pyshacl_visibly() -> None:
    text = """
    @prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
    ex:Outer a sh:NodeShape ; sh:targetClass ex:Box ; sh:property [ sh:path ex:part ; sh:node ex:Inner ] .
    ex:Inner a sh:NodeShape ; sh:sparql [ sh:select "SELECT $this WHERE { FILTER($this = <http://example.org/bad>) }" ] .
    ex:b1 a ex:Box ; ex:part ex:bad, ex:good .
    """
    graph = read_triples(data=text, format_name="turtle")
    report = validate_graphs(graph, graph)
    assert report.engines == {"http://example.org/Outer": "pyshacl"}
    assert [(str(r.focus), str(r.value)) for r in report.results] == [
        ("<http://example.org/b1>", "<http://example.org/bad>")
    ]


def test_a_fallen_back_shape_is_evaluated_alone_with_only_what_it_references(monkeypatch) -> None:
    """pySHACL gets that shape's description and the shapes it references, never the
    other shapes; a focus-restricted call makes the focus nodes it targets its only targets."""
    from ontoloom.shacl import oracle

    text = """
    @prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
    ex:Outer a sh:NodeShape ; sh:targetClass ex:Box ; sh:property [ sh:path ex:part ; sh:node ex:Inner ] .
    ex:Inner a sh:NodeShape ; sh:targetNode ex:good ;
      sh:sparql [ sh:select "SELECT $this WHERE { FILTER($this = <http://example.org/bad>) }" ] .
    ex:Other a sh:NodeShape ; sh:targetClass ex:Box ; sh:property [ sh:path ex:label ; sh:minCount 1 ] .
    ex:b1 a ex:Box ; ex:part ex:bad, ex:good .
    ex:b2 a ex:Box ; ex:label "b2" ; ex:part ex:bad .
    """
    graph = read_triples(data=text, format_name="turtle")
    calls: list[tuple[set[str], set[str]]] = []
    real = oracle.pyshacl_results

    def spy(data, shapes, **kwargs):
        outer = "<http://example.org/Outer>"
        targets = {f"{t.predicate} {t.object}" for t in shapes if str(t.subject) == outer}
        calls.append(({str(t.subject) for t in shapes}, targets))
        return real(data, shapes, **kwargs)

    monkeypatch.setattr(oracle, "pyshacl_results", spy)
    backend = EmbeddedBackend.memory()
    backend.apply(
        Delta(adds={Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in graph})
    )
    validator = Validator(graph)

    report = validator.validate(backend)
    assert report.engines == {
        "http://example.org/Outer": "pyshacl",
        "http://example.org/Inner": "sparql",
        "http://example.org/Other": "sparql",
    }
    assert sorted((str(r.focus), r.constraint_name) for r in report.results) == [
        ("<http://example.org/b1>", "minCount"),
        ("<http://example.org/b1>", "node"),
        ("<http://example.org/b2>", "node"),
    ]
    ((subjects, outer),) = calls
    assert (
        "<http://example.org/Other>" not in subjects and "<http://example.org/b1>" not in subjects
    )
    assert {"<http://example.org/Outer>", "<http://example.org/Inner>"} <= subjects
    target_class = "<http://www.w3.org/ns/shacl#targetClass> <http://example.org/Box>"
    assert target_class in outer

    calls.clear()
    only = validator.validate(backend, focus=[NamedNode("http://example.org/b2")])
    assert [(str(r.focus), r.constraint_name) for r in only.results] == [
        ("<http://example.org/b2>", "node")
    ]
    ((_, outer),) = calls
    assert target_class not in outer
    assert "<http://www.w3.org/ns/shacl#targetNode> <http://example.org/b2>" in outer


def shape_subset(
    shapes: list[Triple], *, without: NamedNode | None = None, only: NamedNode | None = None
) -> list[Triple]:
    """The shapes graph without (or with only) one shape and the blank nodes it owns."""
    start = without if without is not None else only
    owned, frontier = {start}, [start]
    while frontier:
        node = frontier.pop()
        for t in shapes:
            if t.subject == node and isinstance(t.object, BlankNode) and t.object not in owned:
                owned.add(t.object)
                frontier.append(t.object)
    if only is not None:
        return [t for t in shapes if t.subject in owned]
    return [t for t in shapes if t.subject not in owned]
