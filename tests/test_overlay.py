"""The write path decides most writes on the store itself with the delta laid over it
(ontoloom.store.overlay), reading a few quads around each focus node, instead of copying
their neighbourhood into a scratch store. Held to full validation (``differential.Replay``:
the refusal set of every delta equals the violations it really makes) on generated shapes the
overlay can decide and shapes it cannot, over data that is now and then awkward: blank nodes,
literals the store keeps in another form, the default graph, one triple in two graphs."""

from __future__ import annotations

from collections.abc import Callable

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from differential import Replay
from ontoloom.store.base import Delta
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.store.lexical import stored_form
from ontoloom.store.overlay import NotReadable, Overlay
from ontoloom.terms import DefaultGraph, Literal, Quad, RdfFormat, Triple, parse
from ontoloom.vocab import META
from test_direct import (
    BLANK,
    CLASSES,
    EX,
    GRAPHS,
    HEAD,
    LITERALS,
    NODES,
    PREDICATES,
    RDF_TYPE,
    SUBCLASS,
)
from test_direct import shapes as direct_shapes

CANONICAL = [lit for lit in LITERALS if stored_form(lit) == lit]
REWRITTEN = [lit for lit in LITERALS if stored_form(lit) != lit]


def quads(awkward: bool) -> st.SearchStrategy[Quad]:
    """Quads the overlay takes; with ``awkward``, also blank nodes and literals the store
    keeps in another form, which make the write path copy instead."""
    subjects = st.sampled_from([*NODES, BLANK] if awkward else NODES)
    objects = st.sampled_from([*NODES, *CLASSES, *CANONICAL, *(REWRITTEN if awkward else [])])
    graphs = st.sampled_from([*GRAPHS, DefaultGraph()])
    return st.one_of(
        st.builds(Quad, subjects, st.just(RDF_TYPE), st.sampled_from(CLASSES), graphs),
        st.builds(Quad, subjects, st.sampled_from(PREDICATES), objects, graphs),
    )


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[Quad], list[Delta]]:
    """Data and the deltas that follow it, which remove quads the data holds and others;
    one history in five awkward."""
    awkward = draw(st.integers(0, 4)) == 0
    data = draw(st.lists(quads(awkward), max_size=12))
    removable = st.one_of(quads(awkward), *([st.sampled_from(data)] if data else []))
    delta = st.builds(
        lambda adds, removes: Delta(adds=set(adds), removes=set(removes)),
        st.lists(quads(awkward), max_size=4),
        st.lists(removable, max_size=3),
    )
    return data, draw(st.lists(delta, min_size=1, max_size=4))


# shapes the overlay cannot decide (sh:class, sh:datatype): the write path must copy
other_shapes = st.sampled_from(
    [
        f"{HEAD}<{EX}T> sh:targetClass {CLASSES[0]} ; sh:path {PREDICATES[0]} ; "
        f"sh:class {CLASSES[1]} .",
        f"{HEAD}<{EX}T> sh:targetSubjectsOf {PREDICATES[1]} ; sh:path {PREDICATES[1]} ; "
        "sh:datatype <http://www.w3.org/2001/XMLSchema#string> .",
    ]
)


def replay(shapes_ttl: list[str], pairs: list[tuple[object, object]]) -> Replay:
    triples = [t for text in shapes_ttl for t in parse(text.encode(), RdfFormat.TURTLE)]
    ontology = [Triple(s, SUBCLASS, o) for s, o in pairs]  # type: ignore[arg-type]
    return Replay.of(triples, ontology)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(direct_shapes(), min_size=1, max_size=2),
    st.one_of(st.just([]), st.just([]), other_shapes.map(lambda text: [text])),
    st.lists(st.tuples(st.sampled_from(CLASSES), st.sampled_from(CLASSES)), max_size=2),
    histories(),
)
def test_every_write_is_refused_exactly_as_full_validation_finds(
    direct, other, pairs, history
) -> None:
    data, steps = history
    shapes_ttl = [text.replace(f"<{EX}S>", f"<{EX}S{i}>") for i, text in enumerate(direct)]
    r = replay([*shapes_ttl, *other], pairs)
    r.backend.patch(Delta(adds=set(data)))
    for delta in steps:
        r.step(delta)


def test_a_write_the_overlay_decides_reads_no_neighbourhood() -> None:
    """The case it exists for: a new node with its type and values, shapes of counts and
    lists. Nothing is copied; a violation still goes the scratch way, which finds it."""
    shapes_ttl = (
        f"{HEAD}<{EX}S> sh:targetClass {CLASSES[0]} ; sh:property [ sh:path {PREDICATES[0]} ; "
        f'sh:minCount 1 ; sh:in ( "a" "b" ) ] .'
    )
    r = replay([shapes_ttl], [])
    writes = r.writes
    copies: list[str] = []  # each read of what a scratch copy would hold
    walker = writes.walker

    def spied(name: str) -> Callable[..., set[Quad]]:
        real = getattr(walker, name)
        return lambda *a: copies.append(name) or real(*a)

    walker.neighbourhood = spied("neighbourhood")  # type: ignore[method-assign]
    walker.everything = spied("everything")  # type: ignore[method-assign]
    node = NODES[0]
    fine = Delta(
        adds={
            Quad(node, RDF_TYPE, CLASSES[0], GRAPHS[0]),
            Quad(node, PREDICATES[0], Literal("a"), GRAPHS[0]),
        }
    )
    assert writes.new_violations(fine) == [] and copies == []
    broken = Delta(adds={Quad(node, RDF_TYPE, CLASSES[0], GRAPHS[0])})
    assert [v.constraint_name for v in writes.new_violations(broken)] == ["minCount"]
    assert copies == ["neighbourhood"]


def test_no_overlay_where_it_would_differ_from_a_scratch_copy() -> None:
    raw = pyoxigraph.Store()
    store = EmbeddedBackend(raw, writable=True)
    plain = Delta(adds={Quad(NODES[0], PREDICATES[0], Literal("a"), GRAPHS[0])})
    assert Overlay.of(store, plain) is not None
    for awkward in (
        Quad(BLANK, PREDICATES[0], Literal("a"), GRAPHS[0]),
        Quad(NODES[0], PREDICATES[0], REWRITTEN[0], GRAPHS[0]),
        Quad(NODES[0], PREDICATES[0], Literal("a"), META),
    ):
        assert Overlay.of(store, Delta(adds={awkward})) is None
    store.patch(Delta(adds={Quad(NODES[1], PREDICATES[0], REWRITTEN[0], GRAPHS[0])}))
    assert Overlay.of(store, plain) is None  # the store keeps a literal in another form
    assert Overlay.of(EmbeddedBackend(raw, writable=True, union=False), plain) is None
    elsewhere = EmbeddedBackend.memory()  # what the store can do decides, not what it is
    elsewhere.validates_in_place = False
    assert Overlay.of(elsewhere, plain) is None


def test_the_overlay_reads_the_store_with_the_delta_applied_and_answers_nothing_else() -> None:
    store = EmbeddedBackend.memory()
    a, b, c = NODES
    p, q = PREDICATES
    kept, gone = Quad(a, p, b, GRAPHS[0]), Quad(a, q, c, GRAPHS[0])
    bookkeeping = Quad(a, p, c, META)  # a scratch copy holds none of the bookkeeping graph
    store.patch(Delta(adds={kept, gone, bookkeeping, Quad(c, p, a, DefaultGraph())}))
    new = Quad(a, p, Literal("a"), GRAPHS[1])
    view = Overlay.of(store, Delta(adds={new, kept}, removes={gone}))
    assert view is not None
    assert set(view.around([a])) == {kept, new}
    assert set(view.around([a], q)) == set()
    assert set(view.around([a], incoming=True)) == {Quad(c, p, a, DefaultGraph())}
    assert set(view.around([Literal("a")], p, incoming=True)) == {new}
    with pytest.raises(NotReadable):
        view.select("SELECT * WHERE { ?s ?p ?o }")


def test_a_value_a_delta_removes_is_gone_from_the_overlay() -> None:
    shapes_ttl = (
        f"{HEAD}<{EX}S> sh:targetNode {NODES[0]} ; sh:path {PREDICATES[0]} ; sh:minCount 1 ."
    )
    r = replay([shapes_ttl], [])
    value = Quad(NODES[0], PREDICATES[0], Literal("a"), GRAPHS[0])
    r.step(Delta(adds={value}))
    r.step(Delta(removes={value}))


def test_a_node_a_delta_makes_an_object_of_is_checked_by_objects_of_shapes() -> None:
    shapes_ttl = (
        f"{HEAD}<{EX}S> sh:targetObjectsOf {PREDICATES[0]} ; sh:path {PREDICATES[1]} ; "
        "sh:minCount 1 ."
    )
    r = replay([shapes_ttl], [])
    r.step(Delta(adds={Quad(NODES[1], PREDICATES[0], NODES[0], GRAPHS[0])}))
    r.step(Delta(adds={Quad(NODES[0], PREDICATES[1], NODES[2], GRAPHS[0])}))
    r.step(Delta(adds={Quad(NODES[2], PREDICATES[0], NODES[0], GRAPHS[1])}))
    r.step(Delta(removes={Quad(NODES[0], PREDICATES[1], NODES[2], GRAPHS[0])}))


def test_a_literal_the_store_keeps_in_another_form_is_judged_as_written() -> None:
    """ "01"^^xsd:integer is kept as "1": sh:in ( "1" ) holds for the stored form and not for
    the written one, which is what validation judges. The overlay offers no such store."""
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    shapes_ttl = f'{HEAD}<{EX}S> sh:targetClass {CLASSES[0]} ; sh:path {PREDICATES[0]} ; sh:in ( "1"^^{integer} ) .'
    r = replay([shapes_ttl], [])
    r.step(Delta(adds={Quad(NODES[0], PREDICATES[0], REWRITTEN[0], GRAPHS[0])}))
    r.step(Delta(adds={Quad(NODES[0], RDF_TYPE, CLASSES[0], GRAPHS[0])}))


def test_the_store_knows_after_every_write_whether_it_keeps_a_literal_in_another_form() -> None:
    """Asked of the store on every write the overlay might take, and kept between writes by
    the store object that makes them; here each answer is checked against a fresh look."""
    raw = pyoxigraph.Store()
    store = EmbeddedBackend(raw, writable=True)

    def fresh() -> bool:
        return EmbeddedBackend(raw, writable=False).keeps_literals_as_written()

    rewritten = Quad(NODES[0], PREDICATES[0], REWRITTEN[0], GRAPHS[0])
    plain = Quad(NODES[1], PREDICATES[0], Literal("a"), GRAPHS[0])
    steps = [
        Delta(adds={plain}),
        Delta(adds={rewritten}),
        Delta(adds={plain}, removes={rewritten}),
        Delta(adds={rewritten}, removes={plain}),
    ]
    assert store.keeps_literals_as_written() is fresh() is True
    for delta in steps:
        store.apply(delta)
        assert store.keeps_literals_as_written() is fresh(), delta
    store.patch(Delta(removes={rewritten}))
    assert store.keeps_literals_as_written() is fresh() is True
