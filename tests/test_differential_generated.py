"""Differential, generated: hypothesis builds shapes (inverse, sequence, alternative, ``*``,
``+`` and ``?`` paths, nested sh:node / sh:qualifiedValueShape / sh:not / sh:or, property
pairs, SPARQL constraints that read edges into the focus, two hops away, along unbounded
paths, through subqueries, or beyond the focus altogether) and a data graph with a run of
deltas; every delta's write-path refusal set must equal full validation's new violations.

``ONTOLOOM_DIFFERENTIAL_EXAMPLES`` raises the number of examples (``make soak``).
"""

from __future__ import annotations

import os
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from differential import Replay
from ontoloom.store.base import Delta
from ontoloom.store.rdfio import read_triples
from ontoloom.terms import BlankNode, Literal, NamedNode, Quad
from ontoloom.vocab import FACTS, RDF_TYPE, RDFS

EX = "http://example.org/"
PREFIXES = f"""@prefix ex: <{EX}> . @prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
ex: sh:declare [ sh:prefix "ex" ; sh:namespace "{EX}"^^xsd:anyURI ] .
"""
EXAMPLES = int(os.environ.get("ONTOLOOM_DIFFERENTIAL_EXAMPLES", "40"))


def ex(local: str) -> NamedNode:
    return NamedNode(EX + local)


NODES = [*(ex(f"n{i}") for i in range(6)), BlankNode("b0")]
VALUES = [
    *NODES,
    Literal("a"),
    Literal("b"),
    Literal("1", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
    Literal("2", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
    # forms the store keeps by value, each alone (their stored forms are not listed here)
    Literal("007", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
    Literal("5", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#int")),
    Literal("1.0", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#decimal")),
    # language tags as people write them: the store lower-cases the tag
    Literal("a", language="en-US"),
    Literal("b", language="en"),
]
PREDICATES = [ex("p"), ex("q"), ex("r")]
CLASSES = [ex("A"), ex("B")]

# -- shapes ------------------------------------------------------------------------------------
predicate = st.sampled_from(["ex:p", "ex:q", "ex:r"])
paths = st.recursive(
    predicate,
    lambda inner: st.one_of(
        inner.map(lambda p: f"[ sh:inversePath {p} ]"),
        st.tuples(inner, inner).map(lambda ps: f"( {ps[0]} {ps[1]} )"),
        st.tuples(inner, inner).map(lambda ps: f"[ sh:alternativePath ( {ps[0]} {ps[1]} ) ]"),
        inner.map(lambda p: f"[ sh:zeroOrMorePath {p} ]"),
        inner.map(lambda p: f"[ sh:oneOrMorePath {p} ]"),
        inner.map(lambda p: f"[ sh:zeroOrOnePath {p} ]"),
    ),
    max_leaves=3,
)
simple_constraint = st.sampled_from(
    [
        "sh:minCount 1",
        "sh:maxCount 1",
        "sh:maxCount 0",
        "sh:maxCount 3",
        "sh:minCount 4",
        "sh:class ex:A",
        "sh:class ex:B",
        "sh:hasValue ex:n1",
        'sh:in ( ex:n0 ex:n1 "a" )',
        "sh:datatype xsd:string",
        "sh:datatype xsd:int",
        'sh:in ( "1.0"^^xsd:decimal "007"^^xsd:integer ex:n0 )',
        'sh:pattern "^0"',
        "sh:nodeKind sh:IRI",
        "sh:equals ex:q",
        "sh:disjoint ex:q",
        "sh:lessThan ex:r",
        "sh:uniqueLang true",
        'sh:languageIn ( "en" )',
        'sh:in ( "a"@en-US ex:n1 )',
        "sh:minLength 3",
    ]
)


def property_shape(depth: int) -> st.SearchStrategy[str]:
    constraint = (
        simple_constraint
        if depth <= 0
        else st.one_of(
            simple_constraint,
            node_shape(depth - 1).map(lambda n: f"sh:node {n}"),
            node_shape(depth - 1).map(lambda n: f"sh:not {n}"),
            st.tuples(node_shape(depth - 1), node_shape(depth - 1)).map(
                lambda ns: f"sh:or ( {ns[0]} {ns[1]} )"
            ),
            node_shape(depth - 1).map(
                lambda n: f"sh:qualifiedValueShape {n} ; sh:qualifiedMinCount 1"
            ),
            node_shape(depth - 1).map(
                lambda n: f"sh:qualifiedValueShape {n} ; sh:qualifiedMaxCount 0"
            ),
        )
    )
    # One value per parameter: two sh:maxCount on one shape is ill-formed (refused).
    constraints = st.lists(constraint, min_size=1, max_size=2, unique_by=lambda c: c.split()[0])
    return st.tuples(paths, constraints).map(
        lambda pc: f"[ sh:path {pc[0]} ; {' ; '.join(pc[1])} ]"
    )


def node_shape(depth: int) -> st.SearchStrategy[str]:
    body = st.one_of(
        # Property-shape-only parameters are refused on node shapes.
        simple_constraint.filter(
            lambda c: not any(p in c for p in ("Count", "uniqueLang", "lessThan"))
        ),
        property_shape(depth).map(lambda p: f"sh:property {p}"),
    )
    return st.lists(body, min_size=1, max_size=2, unique_by=lambda c: c.split()[0]).map(
        lambda cs: f"[ {' ; '.join(cs)} ]"
    )


SPARQL = [
    # reads the edges pointing at the focus
    "SELECT $this WHERE { ?x ex:p $this . FILTER NOT EXISTS { ?x a ex:A } }",
    # two hops away
    "SELECT $this ?value WHERE { $this ex:p/ex:q ?value . FILTER (isLiteral(?value)) }",
    # along an unbounded path, then one more edge
    "SELECT $this WHERE { $this ex:p+ ?y . ?y ex:r ex:n2 }",
    # a subquery joined on the focus
    "SELECT $this WHERE { { SELECT $this ?x WHERE { ?x ex:q $this } } ?x a ex:B }",
    # a negated pattern back to the focus
    "SELECT $this WHERE { $this ex:q ?y . FILTER NOT EXISTS { ?y ex:p $this } }",
    # a fixed node reached from the focus
    "SELECT $this WHERE { $this ex:p ?v . ex:n0 ex:q ?v }",
    # beyond the focus altogether: global
    "SELECT $this WHERE { FILTER NOT EXISTS { ?any a ex:B } }",
    # any predicate, either way
    "SELECT $this ?value WHERE { ?value ?anything $this . FILTER (isBlank(?value)) }",
    # lexical forms and language tags, of values the store may keep in another form
    "SELECT $this ?value WHERE { $this ex:p ?value . FILTER (STRLEN(STR(?value)) > 2) }",
    "SELECT DISTINCT $this ?value WHERE { $this ex:q ?value . FILTER (LANG(?value) != '') }",
    # by value: "1.0" and "01" compare equal
    "SELECT $this ?value WHERE { $this ex:r ?value . FILTER (?value >= 1) }",
]
sparql_constraint = st.sampled_from(SPARQL).map(
    lambda q: f'sh:sparql [ sh:prefixes ex: ; sh:select """{q}""" ]'
)
targets = st.sampled_from(
    [
        "sh:targetClass ex:A",
        "sh:targetClass ex:B",
        "sh:targetSubjectsOf ex:p",
        "sh:targetObjectsOf ex:q",
        "sh:targetNode ex:n0",
        "sh:targetNode ex:n3",
    ]
)
top_body = st.one_of(
    property_shape(2).map(lambda p: f"sh:property {p}"),
    simple_constraint.filter(
        lambda c: not any(p in c for p in ("Count", "uniqueLang", "lessThan"))
    ),
    sparql_constraint,
    node_shape(1).map(lambda n: f"sh:node {n}"),
)


@st.composite
def shapes_graphs(draw) -> str:
    shapes = []
    for i in range(draw(st.integers(1, 2))):
        target = draw(targets)
        body = draw(st.lists(top_body, min_size=1, max_size=2, unique_by=lambda c: c.split()[0]))
        shapes.append(f"ex:S{i} a sh:NodeShape ; {target} ; {' ; '.join(body)} .")
    return PREFIXES + "\n".join(shapes)


# -- data and deltas -----------------------------------------------------------------------------
def quads(nodes: list) -> st.SearchStrategy[Quad]:
    values = [*nodes, *VALUES[len(NODES) :]]
    return st.one_of(
        st.tuples(st.sampled_from(nodes), st.sampled_from(PREDICATES), st.sampled_from(values)),
        st.tuples(st.sampled_from(nodes), st.just(RDF_TYPE), st.sampled_from(CLASSES)),
    ).map(lambda t: Quad(t[0], t[1], t[2], FACTS))


@st.composite
def chains(draw, nodes: list) -> list[Quad]:
    """A path through several nodes along one predicate: what * and + paths walk far along."""
    predicate = draw(st.sampled_from(PREDICATES))
    named = [n for n in nodes if isinstance(n, NamedNode)]
    order = [named[0], *draw(st.permutations(named[1:]))]  # from ex:n0, a target node
    length = draw(st.integers(2, len(order)))
    links = [Quad(a, predicate, b, FACTS) for a, b in pairwise(order[:length])]
    typed = draw(st.lists(st.booleans(), min_size=length, max_size=length))
    cls = draw(st.sampled_from(CLASSES))
    return links + [Quad(n, RDF_TYPE, cls, FACTS) for n, t in zip(order, typed, strict=False) if t]


def runs(nodes: list) -> st.SearchStrategy[list[tuple[list[Quad], int]]]:
    """Steps: quads to add, and how many of the quads present to remove."""
    return st.lists(
        st.tuples(st.lists(quads(nodes), max_size=3), st.integers(0, 3)), min_size=1, max_size=6
    )


def replay(
    shapes: str, initial: list[Quad], steps: list[tuple[list[Quad], int]], data: st.DataObject
) -> None:
    shape_triples = read_triples(data=shapes, format_name="turtle")
    subclass = read_triples(data=f"<{EX}B> <{RDFS}subClassOf> <{EX}A> .", format_name="turtle")
    run = Replay.of(shape_triples, ontology=subclass)
    run.step(Delta(adds=set(initial)))
    for adds, removing in steps:
        present = sorted((q for q in run.backend.quads() if q.graph_name == FACTS), key=str)
        removes = (
            data.draw(st.lists(st.sampled_from(present), max_size=removing)) if present else []
        )
        run.step(Delta(adds=set(adds), removes=set(removes)))


SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(
    shapes=shapes_graphs(),
    initial=st.tuples(chains(NODES), st.lists(quads(NODES), max_size=12)),
    steps=runs(NODES),
    data=st.data(),
)
def test_generated_shapes_and_deltas_refuse_exactly_the_new_violations(
    shapes: str, initial: tuple[list[Quad], list[Quad]], steps, data: st.DataObject
) -> None:
    replay(shapes, [*initial[0], *initial[1]], steps, data)


SMALL = [*NODES[:3], NODES[-1]]


@SETTINGS
@given(
    query=st.sampled_from(SPARQL),
    target=targets,
    initial=st.tuples(chains(SMALL), st.lists(quads(SMALL), max_size=10)),
    steps=runs(SMALL),
    data=st.data(),
)
def test_sparql_constraints_refuse_exactly_the_new_violations(
    query: str, target: str, initial: tuple[list[Quad], list[Quad]], steps, data: st.DataObject
) -> None:
    shapes = PREFIXES + (
        f'ex:S a sh:NodeShape ; {target} ; sh:sparql [ sh:prefixes ex: ; sh:select """{query}""" ] .'
    )
    replay(shapes, [*initial[0], *initial[1]], steps, data)


@SETTINGS
@given(
    path=paths,
    constraint=simple_constraint,
    target=targets,
    initial=st.tuples(chains(NODES), st.lists(quads(NODES), max_size=8)),
    steps=runs(NODES),
    data=st.data(),
)
def test_paths_refuse_exactly_the_new_violations(
    path: str,
    constraint: str,
    target: str,
    initial: tuple[list[Quad], list[Quad]],
    steps,
    data: st.DataObject,
) -> None:
    shapes = (
        PREFIXES
        + f"ex:S a sh:NodeShape ; {target} ; sh:property [ sh:path {path} ; {constraint} ] ."
    )
    replay(shapes, [*initial[0], *initial[1]], steps, data)


@SETTINGS
@given(
    path=st.sampled_from(
        [
            "[ sh:oneOrMorePath ex:p ]",
            "[ sh:zeroOrMorePath ex:p ]",
            "( [ sh:oneOrMorePath ex:p ] ex:q )",
            "[ sh:inversePath [ sh:oneOrMorePath ex:p ] ]",
        ]
    ),
    constraint=st.sampled_from(
        ["sh:class ex:A", "sh:maxCount 3", "sh:minCount 4", "sh:node [ sh:class ex:A ]"]
    ),
    length=st.integers(4, 6),
    data=st.data(),
)
def test_unbounded_paths_along_long_chains_refuse_exactly_the_new_violations(
    path: str, constraint: str, length: int, data: st.DataObject
) -> None:
    chain = [ex(f"n{i}") for i in range(length)]
    links = [Quad(a, ex("p"), b, FACTS) for a, b in pairwise(chain)]
    types = [Quad(n, RDF_TYPE, ex("A"), FACTS) for n in chain]
    tails = [Quad(n, ex("q"), ex("n0"), FACTS) for n in chain[1:]]
    target = data.draw(st.sampled_from(["sh:targetNode ex:n0", f"sh:targetNode ex:n{length - 1}"]))
    shapes = (
        PREFIXES
        + f"ex:S a sh:NodeShape ; {target} ; sh:property [ sh:path {path} ; {constraint} ] ."
    )
    universe = links + types + tails
    initial = links + types + data.draw(st.lists(st.sampled_from(tails), unique=True))
    steps = data.draw(
        st.lists(
            st.tuples(st.lists(st.sampled_from(universe), max_size=2), st.integers(0, 2)),
            max_size=5,
        )
    )
    replay(shapes, initial, steps, data)
