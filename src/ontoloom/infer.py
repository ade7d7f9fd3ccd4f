"""OWL 2 RL inference: inverses (has_task ↔ part_of), sub-properties and sub-classes (the
alignments to dcterms and schema.org) materialised into the inferred graph. Inferred triples
live beside the store (``inferred.nq`` in the data dir), never in it, so validation,
traversal and search never see them; ``query --infer`` and ``export --infer`` add them on
request.

Two engines, one answer. owlrl (pure Python, the reference) runs the OWL 2 RL rules over the
whole graph again and again: ~130 s at 123k quads. But the schema is small and the data is
large, so when the schema uses only what :data:`RULES_OWL` lists (sub-classes and
-properties, equivalences, inverses, symmetric properties, domains, ranges, unions) and the
data uses no OWL/RDFS vocabulary, owlrl closes the *schema* alone, and each data triple is
then expanded in one pass through tables read from that closure: every property a triple
entails (up and down inverses, in either direction) and every class a type entails. That is
exactly what the OWL 2 RL rules derive there (tests compare it with owlrl); anything else
goes to owlrl, and the result names the engine and why.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from ontoloom import progress
from ontoloom.errors import BadInput
from ontoloom.store.rdfio import read_quads
from ontoloom.terms import (
    Literal,
    NamedNode,
    Quad,
    RdfFormat,
    Subject,
    Term,
    Triple,
    serialize,
    spo,
    triple,
)
from ontoloom.vocab import (
    HISTORY,
    INFERRED,
    META,
    OWL,
    PROPOSALS,
    RDF,
    RDF_TYPE,
    RDFS,
    SCHEMA_GRAPH,
    compact,
)

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = ["INFERRED", "compute", "compute_owlrl", "infer", "inferred_quads"]


def _files(graph: Session) -> tuple[Any, Any]:
    if graph.data_dir is None:
        raise BadInput("inference needs a data dir")
    return graph.data_dir / "inferred.nq", graph.data_dir / "inferred.json"


# The OWL terms the one-pass engine evaluates; a schema using any other OWL term (property
# chains, keys, restrictions, functional properties, sameAs, disjointness…) goes to owlrl.
RULES_OWL = frozenset(
    OWL + local
    for local in (
        "Class",
        "ObjectProperty",
        "DatatypeProperty",
        "AnnotationProperty",
        "Ontology",
        "Thing",
        "imports",
        "versionInfo",
        "versionIRI",
        "priorVersion",
        "deprecated",
        "SymmetricProperty",
        "inverseOf",
        "unionOf",
        "equivalentClass",
        "equivalentProperty",
    )
)
_SUBCLASS, _SUBPROPERTY = NamedNode(RDFS + "subClassOf"), NamedNode(RDFS + "subPropertyOf")
_DOMAIN, _RANGE = NamedNode(RDFS + "domain"), NamedNode(RDFS + "range")
_INVERSE, _UNION = NamedNode(OWL + "inverseOf"), NamedNode(OWL + "unionOf")
_EQ_CLASS, _EQ_PROPERTY = NamedNode(OWL + "equivalentClass"), NamedNode(OWL + "equivalentProperty")
_SYMMETRIC = NamedNode(OWL + "SymmetricProperty")
_FIRST, _REST, _NIL = NamedNode(RDF + "first"), NamedNode(RDF + "rest"), NamedNode(RDF + "nil")


def _stated(graph: Session) -> tuple[list[Triple], list[Triple]]:
    """(data, schema): the store's triples outside the bookkeeping, proposal and history graphs, the
    schema being the built-in ontology, extensions and the schema graph."""
    data: list[Triple] = []
    schema = [t if isinstance(t, Triple) else t.triple for t in graph.schema.ontology.triples]
    for q in graph.backend.quads():
        if q.graph_name in (META, PROPOSALS, HISTORY):
            continue
        (schema if q.graph_name == SCHEMA_GRAPH else data).append(q.triple)
    return data, schema


def _keep(graph: Session, derived: Any, data: list[Triple], schema: list[Triple]) -> list[Quad]:
    """The derived triples worth keeping: about the graph's objects, not stated already."""
    base = graph.ids.base
    known = set(data) | set(schema)
    # owlrl rewrites some literals in canonical form: the same value again is no inference
    with_literal = {(t.subject, t.predicate) for t in data if isinstance(t.object, Literal)}
    out = set()
    for s, p, o in derived:
        # generalised triples (literal subjects) and other subjects are not objects' facts
        if not isinstance(s, NamedNode) or not s.value.startswith(base) or s == o:
            continue
        if Triple(s, p, o) in known:
            continue
        if isinstance(o, Literal) and (s, p) in with_literal:
            continue
        out.add(Quad(s, p, o, INFERRED))
    return sorted(out, key=str)


def compute_owlrl(graph: Session) -> list[Quad]:
    """The reference: owlrl's OWL 2 RL closure of the whole graph."""
    import owlrl

    from ontoloom.shacl.oracle import from_rdflib_term, to_rdflib

    data, schema = _stated(graph)
    g = to_rdflib([*data, *schema])
    with progress.task("inferring (owlrl)"):
        owlrl.DeductiveClosure(
            owlrl.OWLRL_Semantics, axiomatic_triples=False, datatype_axioms=False
        ).expand(g)
    derived = ((from_rdflib_term(s), from_rdflib_term(p), from_rdflib_term(o)) for s, p, o in g)
    return _keep(graph, derived, data, schema)


def rules_refusal(data: list[Triple], schema: list[Triple], base: str) -> str | None:
    """Why the one-pass engine cannot be exact here (None: it can)."""
    for t in schema:
        for term in (t.predicate, t.object if t.predicate == RDF_TYPE else None):
            if (
                isinstance(term, NamedNode)
                and term.value.startswith(OWL)
                and term.value not in RULES_OWL
            ):
                return f"the schema uses {compact(term.value)}"
        if RDF_TYPE in (t.subject, t.object) and t.predicate != RDF_TYPE:
            return "the schema says something about rdf:type"
        if isinstance(t.subject, NamedNode) and t.subject.value.startswith(base):
            return f"the schema states facts about {t.subject.value}"
    for t in data:
        # RDF's own terms (rdf:type, reification) mean nothing to the OWL 2 RL rules, but a
        # list could be one the schema's unions point into
        if t.predicate.value.startswith((OWL, RDFS)) or t.predicate in (_FIRST, _REST):
            return f"the data uses {compact(t.predicate.value)}"
        if (
            t.predicate == RDF_TYPE
            and isinstance(t.object, NamedNode)
            and t.object.value.startswith((OWL, RDFS))
        ):
            return f"the data types something as {compact(t.object.value)}"
    return None


def _closed_schema(schema: list[Triple]) -> list[Triple]:
    """owlrl's closure of the schema alone (hundreds of triples, not the data)."""
    import owlrl
    import rdflib

    from ontoloom.shacl.oracle import from_rdflib_term, to_rdflib

    g = to_rdflib(schema)
    owlrl.DeductiveClosure(
        owlrl.OWLRL_Semantics, axiomatic_triples=False, datatype_axioms=False
    ).expand(g)
    return [
        triple(from_rdflib_term(s), from_rdflib_term(p), from_rdflib_term(o))
        for s, p, o in g
        if not isinstance(s, rdflib.Literal)  # generalised triples say nothing here
    ]


def _tables(closed: list[Triple]) -> tuple[Any, Any, Any, Any]:
    """From the closed schema: each property's entailed (property, flipped) pairs, each
    class's entailed classes, and the domain and range classes of each property."""
    by_p: dict[Term, list[tuple[Subject, Term]]] = defaultdict(list)  # p → [(s, o)]
    for t in closed:
        s, p, o = spo(t)
        by_p[p].append((s, o))
    steps: dict[Term, set[tuple[Term, bool]]] = defaultdict(set)  # prp-spo1, -inv, -symp, -eqp
    for s, o in by_p[_SUBPROPERTY]:
        steps[s].add((o, False))
    for s, o in by_p[_EQ_PROPERTY]:
        steps[s].add((o, False))
        steps[o].add((s, False))
    for s, o in by_p[_INVERSE]:
        steps[s].add((o, True))
        steps[o].add((s, True))
    for s, o in by_p[RDF_TYPE]:
        if o == _SYMMETRIC:
            steps[s].add((s, True))
    rest: dict[Term, Term] = dict(by_p[_REST])
    first: dict[Term, Term] = dict(by_p[_FIRST])
    supers: dict[Term, set[Term]] = defaultdict(set)  # cax-sco, cax-eqc, cls-uni
    for s, o in by_p[_SUBCLASS]:
        supers[s].add(o)
    for s, o in by_p[_EQ_CLASS]:
        supers[s].add(o)
        supers[o].add(s)
    for s, o in by_p[_UNION]:
        node, seen = o, set()
        while node in first and node not in seen:
            seen.add(node)
            supers[first[node]].add(s)
            node = rest.get(node, _NIL)
    domains: dict[Term, set[Term]] = defaultdict(set)
    ranges: dict[Term, set[Term]] = defaultdict(set)
    for s, o in by_p[_DOMAIN]:
        domains[s].add(o)
    for s, o in by_p[_RANGE]:
        ranges[s].add(o)
    return (
        _closure(steps),
        _closure({k: {(c, False) for c in v} for k, v in supers.items()}),
        domains,
        ranges,
    )


def _closure(steps: dict[Term, set[tuple[Term, bool]]]) -> dict[Term, set[tuple[Term, bool]]]:
    """Every (node, flipped) reachable from each node, itself unflipped included."""
    out: dict[Term, set[tuple[Term, bool]]] = {}
    for start in steps:
        seen = {(start, False)}
        stack = [(start, False)]
        while stack:
            node, flipped = stack.pop()
            for nxt, flip in steps.get(node, ()):
                item = (nxt, flipped != flip)
                if item not in seen:
                    seen.add(item)
                    stack.append(item)
        out[start] = seen
    return out


def compute_rules(graph: Session, data: list[Triple], schema: list[Triple]) -> list[Quad]:
    """The one-pass engine (see the module doc); call only when :func:`rules_refusal` is
    None."""
    properties, classes, domains, ranges = _tables(_closed_schema(schema))
    base = graph.ids.base
    instance: dict[Term, bool] = {}  # only objects' facts are kept: nothing else is derived

    def is_object(term: Term) -> bool:
        found = instance.get(term)
        if found is None:
            found = instance[term] = isinstance(term, NamedNode) and term.value.startswith(base)
        return found

    derived: set[tuple[Term, Term, Term]] = set()
    types: dict[Term, set[Term]] = defaultdict(set)  # node → classes, before their closure
    chunk = 10000
    with progress.task("inferring", total=len(data)) as advance:
        for i, t in enumerate(data):
            if i % chunk == 0:
                advance(i)
            s, p, o = spo(t)
            if p == RDF_TYPE:
                if is_object(s):
                    types[s].add(o)
                continue
            for q, flipped in properties.get(p, ((p, False),)):
                x, y = (o, s) if flipped else (s, o)
                if is_object(x):
                    if q != p or flipped:  # (p, unflipped) is the stated triple itself
                        derived.add((x, q, y))
                    for c in domains.get(q, ()):
                        types[x].add(c)
                if is_object(y):
                    for c in ranges.get(q, ()):
                        types[y].add(c)
    for node, stated in types.items():
        entailed: set[Term] = set()
        for cls in stated:
            entailed.update(sup for sup, _ in classes.get(cls, ((cls, False),)))
        derived.update((node, RDF_TYPE, sup) for sup in entailed)
    return _keep(graph, derived, data, schema)


def compute(graph: Session) -> list[Quad]:
    """The entailments about the graph's objects that are not already stated."""
    return _compute(graph)[0]


def _compute(graph: Session) -> tuple[list[Quad], str, str | None]:
    with progress.task("reading the graph"):
        data, schema = _stated(graph)
    why = rules_refusal(data, schema, graph.ids.base)
    if why is None:
        return compute_rules(graph, data, schema), "rules", None
    return compute_owlrl(graph), "owlrl", why


def infer(graph: Session) -> dict[str, Any]:
    """Materialise the inferred graph; returns counts per predicate and the engine used."""
    quads, engine, why = _compute(graph)
    data, meta = _files(graph)
    with progress.task("writing the inferred graph"), data.open("wb") as out:
        serialize(quads, out, RdfFormat.N_QUADS)
    meta.write_text(json.dumps({"generation": graph.backend.generation(), "triples": len(quads)}))
    counts = Counter(compact(q.predicate.value) for q in quads)
    result: dict[str, Any] = {
        "inferred": len(quads),
        "by_predicate": dict(sorted(counts.items())),
        "engine": engine,
    }
    if why is not None:
        result["engine_reason"] = f"{why}: owlrl evaluates it (slower)"
    return result


def inferred_quads(graph: Session) -> list[Quad]:
    """The materialised inferred graph; recomputed in memory when missing or stale."""
    data, meta = _files(graph)
    if data.exists() and meta.exists():
        stamp = json.loads(meta.read_text())
        if stamp.get("generation") == graph.backend.generation():
            return read_quads(path=data, format_name="nquads", bounded=False)  # our own file
    return compute(graph)
