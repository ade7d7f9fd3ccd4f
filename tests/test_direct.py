"""Units decided from the quads around the focus nodes (ontoloom.shacl.direct), held to the
compiled SPARQL they stand in for and to whole-store validation, on generated data and shapes
that lean towards the awkward cases: blank nodes, blank subclasses, the same triple in two
graphs, literals the store keeps in another form, language tags, literal focus nodes."""

from __future__ import annotations

from hypothesis import example, given, reject, settings
from hypothesis import strategies as st

from ontoloom.errors import BadInput
from ontoloom.shacl import Validator
from ontoloom.store import scratch
from ontoloom.store.base import Delta
from ontoloom.store.lexical import stored_form
from ontoloom.terms import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    RdfFormat,
    Term,
    parse,
)
from reliability.plugin import scale
from test_native import names, values

EX = "https://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
SUBCLASS = NamedNode("http://www.w3.org/2000/01/rdf-schema#subClassOf")

NODES = [NamedNode(f"{EX}n{i}") for i in range(3)]
BLANK = BlankNode("b0")
CLASSES = [NamedNode(f"{EX}C{i}") for i in range(2)]
PREDICATES = [NamedNode(f"{EX}p{i}") for i in range(2)]
GRAPHS = [NamedNode(f"{EX}g1"), NamedNode(f"{EX}g2")]
LITERALS = [
    Literal("a"),
    Literal("b"),
    Literal("a", language="en"),
    Literal("1", datatype=NamedNode(XSD + "integer")),
    Literal("01", datatype=NamedNode(XSD + "integer")),  # kept by the store as "1"
    Literal("1.0", datatype=NamedNode(XSD + "decimal")),
    Literal("true", datatype=NamedNode(XSD + "boolean")),
    Literal("x", datatype=NamedNode(EX + "code")),  # a datatype no cast checks
]
INTEGER = NamedNode(XSD + "integer")
HEAD = "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
SUBJECTS = [*NODES, BLANK]
OBJECTS = [*NODES, BLANK, *CLASSES, *LITERALS]


def turtle(term: Term) -> str:
    if isinstance(term, Literal):
        if term.language:
            return f'"{term.value}"@{term.language}'
        return f'"{term.value}"^^<{term.datatype.value}>'
    return str(term)


graphs = st.sampled_from([*GRAPHS, DefaultGraph()])
quads = st.lists(
    st.one_of(
        st.builds(
            Quad,
            st.sampled_from(SUBJECTS),
            st.just(RDF_TYPE),
            st.sampled_from([*CLASSES, BLANK]),
            graphs,
        ),
        st.builds(
            Quad,
            st.sampled_from(SUBJECTS),
            st.sampled_from(PREDICATES),
            st.sampled_from(OBJECTS),
            graphs,
        ),
    ),
    min_size=4,
    max_size=30,
)
hierarchy = st.lists(
    st.tuples(st.sampled_from([*CLASSES, BLANK]), st.sampled_from(CLASSES)), max_size=3
)
targets = st.one_of(
    st.sampled_from(CLASSES).map(lambda c: f"sh:targetClass {c}"),
    st.sampled_from(NODES).map(lambda n: f"sh:targetNode {n}"),
    st.sampled_from(LITERALS).map(lambda v: f"sh:targetNode {turtle(v)}"),
    st.sampled_from(PREDICATES).map(lambda p: f"sh:targetSubjectsOf {p}"),
    st.sampled_from(PREDICATES).map(lambda p: f"sh:targetObjectsOf {p}"),
)
constraints = st.one_of(
    st.integers(0, 3).map(lambda n: f"sh:minCount {n}"),
    st.integers(0, 2).map(lambda n: f"sh:maxCount {n}"),
    st.lists(st.sampled_from([*NODES, *CLASSES, *LITERALS]), max_size=4).map(
        lambda vs: f"sh:in ( {' '.join(turtle(v) for v in vs)} )"
    ),
    st.sampled_from([*NODES, *CLASSES, *LITERALS]).map(lambda v: f"sh:hasValue {turtle(v)}"),
    # decided on the terms alone (string, langString, EX code) or by the store's casts
    st.sampled_from(
        [XSD + t for t in ("integer", "decimal", "boolean", "string")]
        + [RDF + "langString", EX + "code"]
    ).map(lambda d: f"sh:datatype <{d}>"),
    st.sampled_from(["IRI", "Literal", "BlankNodeOrIRI"]).map(lambda k: f"sh:nodeKind sh:{k}"),
    st.sampled_from(CLASSES).map(lambda c: f"sh:class {c}"),
)


@st.composite
def shapes(draw: st.DrawFn) -> str:
    """A node shape with a property shape, or a targeted property shape, each with one or
    two targets and one or two constraints."""
    chosen = draw(st.lists(targets, min_size=1, max_size=2))
    path = draw(st.sampled_from(PREDICATES))
    chosen_constraints = st.lists(
        constraints, min_size=1, max_size=2, unique_by=lambda c: c.split()[0]
    )
    body = " ; ".join(draw(chosen_constraints))
    head = f"{HEAD}<{EX}S> {' ; '.join(chosen)}"
    form = draw(st.sampled_from(["node", "property", "nested"]))
    if form == "node":
        return f"{head} ; sh:property [ sh:path {path} ; {body} ] ."
    if form == "nested":  # the values of the focus nodes' values are checked
        outer = draw(st.sampled_from(PREDICATES))
        return f"{head} ; sh:path {outer} ; sh:property [ sh:path {path} ; {body} ] ."
    return f"{head} ; sh:path {path} ; {body} ."


def keys(report) -> set[tuple[str, ...]]:
    return {r.key() for r in report.results}


def without_readers(validator: Validator, backend) -> Validator:
    for unit in validator.plan(validator.hierarchy(backend))[0]:
        unit.direct = None
    return validator


def kept_as_written(term: Term) -> bool:
    if isinstance(term, Literal):
        return stored_form(term) == term
    return isinstance(term, NamedNode)


# `make test` runs 100 drawn examples (the same each run: the ci profile) and every @example
# below; `make soak` 400 fresh ones.
@settings(max_examples=scale(100, 400), deadline=None)
# a focus node the store keeps in another form: the query names it as stored ("1")
@example(
    [Quad(NODES[0], PREDICATES[0], Literal("1", datatype=INTEGER), GRAPHS[0])],
    [],
    f"{HEAD}<{EX}S> sh:targetObjectsOf {PREDICATES[0]} ; sh:path {PREDICATES[1]} ; sh:minCount 1 .",
    [Literal("01", datatype=INTEGER)],
    True,
)
# an instance of a blank subclass: the compiled class target does not list it
@example(
    [Quad(NODES[0], RDF_TYPE, BLANK, GRAPHS[0])],
    [(BLANK, CLASSES[0])],
    f"{HEAD}<{EX}S> sh:targetClass {CLASSES[0]} ; sh:path {PREDICATES[0]} ; sh:minCount 1 .",
    [NODES[0]],
    True,
)
# each kind of target, with a violation to find
@example(
    [Quad(NODES[1], PREDICATES[0], NODES[0], GRAPHS[0])],
    [],
    f"{HEAD}<{EX}S> sh:targetObjectsOf {PREDICATES[0]} ; sh:path {PREDICATES[1]} ; sh:minCount 1 .",
    [NODES[0]],
    True,
)
@example(
    [Quad(NODES[0], PREDICATES[0], NODES[1], g) for g in GRAPHS],
    [],
    f"{HEAD}<{EX}S> sh:targetSubjectsOf {PREDICATES[0]} ; sh:path {PREDICATES[0]} ; "
    f"sh:in ( {NODES[0]} ) ; sh:maxCount 0 .",
    [NODES[0]],
    True,
)
@example(
    [],
    [],
    f"{HEAD}<{EX}S> sh:targetNode {NODES[0]} ; sh:property [ sh:path {PREDICATES[0]} ; "
    "sh:minCount 1 ] .",
    [NODES[0], NODES[1]],
    True,
)
# sh:datatype read: a plain string is no rdf:langString, a tagged one no xsd:string, and a
# datatype no cast checks takes its own literals only
@example(
    [Quad(NODES[0], RDF_TYPE, CLASSES[0], GRAPHS[0]), Quad(NODES[0], PREDICATES[0], Literal("a"))],
    [],
    f"{HEAD}<{EX}S> sh:targetClass {CLASSES[0]} ; sh:path {PREDICATES[0]} ; "
    f"sh:datatype <{RDF}langString> .",
    [NODES[0]],
    True,
)
@example(
    [Quad(NODES[0], PREDICATES[0], LITERALS[2], GRAPHS[0])],
    [],
    f"{HEAD}<{EX}S> sh:targetSubjectsOf {PREDICATES[0]} ; sh:path {PREDICATES[0]} ; "
    f"sh:datatype <{XSD}string> .",
    [NODES[0]],
    True,
)
@example(
    [Quad(NODES[0], PREDICATES[0], v, GRAPHS[1]) for v in (LITERALS[0], LITERALS[-1], NODES[1])],
    [],
    f"{HEAD}<{EX}S> sh:targetNode {NODES[0]} ; sh:property [ sh:path {PREDICATES[0]} ; "
    f"sh:datatype <{EX}code> ] .",
    [NODES[0]],
    True,
)
# the default graph: seen alone by `validate` (no union), and within the union
@example(
    [Quad(NODES[0], RDF_TYPE, CLASSES[0], DefaultGraph())],
    [],
    f"{HEAD}<{EX}S> sh:targetClass {CLASSES[0]} ; sh:path {PREDICATES[0]} ; sh:minCount 1 .",
    [NODES[0]],
    False,
)
@given(
    quads,
    hierarchy,
    shapes(),
    st.one_of(
        st.lists(st.sampled_from(NODES), min_size=1, max_size=3),
        st.lists(st.sampled_from([*NODES, BLANK, *CLASSES, *LITERALS]), min_size=1, max_size=5),
    ),
    st.booleans(),
)
def test_read_units_find_what_their_queries_find(data, pairs, shapes_ttl, focus, union) -> None:
    """With ``union`` queries see every graph, else the default graph only (``validate``)."""
    subclass = [Quad(s, SUBCLASS, o, GRAPHS[0]) for s, o in pairs]
    try:
        backend = scratch([*data, *subclass], union=union)
    except BadInput:  # "1" and "01" in one place: the store refuses them (tested elsewhere)
        reject()
    triples = list(parse(shapes_ttl.encode(), RdfFormat.TURTLE))
    validator = Validator(triples)
    read = validator.validate(backend, focus)
    queried = without_readers(Validator(triples), backend).validate(backend, focus)
    assert keys(read) == keys(queried)
    rewritten = any(
        isinstance(q.object, Literal) and stored_form(q.object) != q.object for q in data
    )
    if all(kept_as_written(f) for f in focus) and not rewritten:
        # (whole-store validation reports a literal the store rewrote as it was written)
        whole = keys(Validator(triples).validate(backend, None))
        assert keys(read) <= whole
        nested = any(u.focused.parents for u in validator.plan(validator.hierarchy(backend))[0])
        if not nested:  # (a nested result's focus is a value node: reached from which?)
            assert {k for k in whole if k[0] in {str(f) for f in focus}} <= keys(read)


def test_a_create_of_the_shipped_schema_plans_no_query_for_its_counts_and_lists() -> None:
    """The readers serve the case they exist for: a new task's minCount, maxCount and sh:in
    units, its observations' datatype, and ol:NoSecrets' judged pattern, are read, not
    queried."""
    from ontoloom.schema import Schema

    ol = "https://ontoloom.dev/ns#"
    task = NamedNode("https://ontoloom.dev/id/task_1")
    backend = scratch(
        [
            Quad(task, RDF_TYPE, NamedNode(ol + "Task"), GRAPHS[0]),
            Quad(task, NamedNode(ol + "title"), Literal("t"), GRAPHS[0]),
            Quad(task, NamedNode(ol + "status"), Literal("nope"), GRAPHS[0]),
            Quad(task, NamedNode(ol + "observations"), Literal("seen"), GRAPHS[0]),
        ]
    )
    asked: list[str] = []
    select = backend.select
    backend.select = lambda q, b=None: asked.append(q) or select(q, b)  # type: ignore[method-assign]
    validator = Schema.load().write_validator  # ol:NoSecrets' SELECTs judged
    hierarchy = validator.hierarchy(backend)
    asked.clear()
    report = validator.validate(backend, [task], hierarchy=hierarchy)
    assert [r.constraint_name for r in report.results] == ["in"]
    assert asked == []
    task_class = NamedNode(ol + "Task")
    units = [
        u
        for u in validator.plan(hierarchy)[0]
        if any(t.term == task_class for t in u.top.targets)
        and u.constraint.name in ("minCount", "maxCount", "in")
    ]
    assert units and all(u.direct is not None for u in units)
    # the drop-in's observations (ol:ObservationsAreStrings, sh:datatype xsd:string)
    observations = [
        u
        for u in validator.plan(hierarchy)[0]
        if u.top.node == NamedNode(ol + "ObservationsAreStrings")
    ]
    assert [u.constraint.name for u in observations] == ["datatype"]
    assert observations[0].direct is not None


# Four validations over the whole shipped schema an example (~1 s on a loaded machine):
# `make test` runs 60 drawn examples (the same each run) and the @example below; `make soak`
# 300 fresh ones.
@settings(max_examples=scale(60, 300), deadline=None)
@example(  # two values under one secret-like name: a result each
    [Quad(NODES[0], NamedNode(EX + "password"), Literal(v), GRAPHS[0]) for v in "ab"],
    [NODES[0]],
)
@given(
    st.lists(
        st.builds(
            Quad,
            st.sampled_from(SUBJECTS),
            st.one_of(names(), st.sampled_from(PREDICATES)),
            st.one_of(values, st.sampled_from(OBJECTS)),
            st.sampled_from([*GRAPHS, DefaultGraph()]),
        ),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.sampled_from([*NODES, BLANK, *LITERALS]), min_size=1, max_size=4),
)
def test_a_judged_pattern_read_finds_what_its_query_finds(data, focus) -> None:
    """ol:NoSecrets (every subject; two judged SELECTs): the rows read around the focus
    nodes are the rows its pattern query matches, and the results whole-store validation
    finds on them."""
    from ontoloom.schema import Schema
    from ontoloom.secret_text import NO_SECRETS_JUDGES

    try:
        backend = scratch(data)
    except BadInput:
        reject()
    shapes, only = Schema.load().shapes, [NamedNode("https://ontoloom.dev/ns#NoSecrets")]
    validator = Validator(shapes, judges=NO_SECRETS_JUDGES)
    read = validator.validate(backend, focus, only=only)
    queried = without_readers(Validator(shapes, judges=NO_SECRETS_JUDGES), backend)
    assert keys(read) == keys(queried.validate(backend, focus, only=only))
    rewritten = any(
        isinstance(q.object, Literal) and stored_form(q.object) != q.object for q in data
    )
    if all(kept_as_written(f) for f in focus) and not rewritten:
        whole = keys(Validator(shapes).validate(backend, None, only=only))
        assert keys(read) == {k for k in whole if k[0] in {str(f) for f in focus}}


def test_a_judged_pattern_is_read_only_under_the_target_it_was_read_for() -> None:
    """The judged constraint of ol:NoSecrets under another SPARQL target (instances of a
    class): its focus nodes are what that target's query says, so it runs."""
    from ontoloom.schema import Schema
    from ontoloom.secret_text import NO_SECRETS_JUDGES
    from ontoloom.shacl.components.sparql import SPARQLConstraintComponent

    shipped = Schema.load().shapes
    select = next(
        c.select
        for n in shipped.all_shape_nodes()
        for c in shipped.shape(n).constraints
        if isinstance(c, SPARQLConstraintComponent)
    )
    quoted = select.replace("\\", "\\\\").replace('"""', '\\"""')
    shapes_ttl = (
        f"{HEAD}<{EX}S> sh:target [ a sh:SPARQLTarget ; "
        f'sh:select "SELECT ?this WHERE {{ ?this a {CLASSES[0]} }}" ] ; '
        f'sh:sparql [ a sh:SPARQLConstraint ; sh:select """{quoted}""" ] .'
    )
    triples = list(parse(shapes_ttl.encode(), RdfFormat.TURTLE))
    secret = NamedNode(EX + "password")
    backend = scratch([Quad(n, secret, Literal("x"), GRAPHS[0]) for n in NODES[:2]])
    backend.patch(Delta(adds={Quad(NODES[0], RDF_TYPE, CLASSES[0], GRAPHS[0])}))
    validator = Validator(triples, judges=NO_SECRETS_JUDGES)
    read = validator.validate(backend, NODES[:2])
    queried = without_readers(Validator(triples, judges=NO_SECRETS_JUDGES), backend)
    assert keys(read) == keys(queried.validate(backend, NODES[:2]))
    assert {r.focus for r in read.results} == {NODES[0]}
