"""pySHACL on in-memory rdflib graphs: the reference the compiled fast path is tested
against, and the engine for shapes the compiler cannot handle.

Imported lazily: rdflib and pySHACL cost ~260 ms to import.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ontoloom.shacl.paths import PathError, parse_path
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.terms import (
    BlankNode,
    Literal,
    NamedNode,
    Statement,
    Term,
    Triple,
    named,
    node,
    spo,
    subject,
    triple,
)
from ontoloom.vocab import OWL, RDF, RDFS, SH

if TYPE_CHECKING:
    import rdflib

    from ontoloom.shacl.engine import Result
    from ontoloom.shacl.render import Renderer
    from ontoloom.shacl.shapes import Shape, ShapeSet
    from ontoloom.store.base import Backend

__all__ = [
    "from_rdflib",
    "isolated_shapes_graph",
    "pyshacl_results",
    "to_rdflib",
    "validate_shapes_with_pyshacl",
]

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDFS_CLASS = NamedNode(RDFS + "Class")
RDFS_SUBCLASS = NamedNode(RDFS + "subClassOf")


def to_rdflib_term(term: Term) -> Any:
    import rdflib

    if isinstance(term, NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, BlankNode):
        return rdflib.BNode(term.value)
    if term.language:
        return rdflib.Literal(term.value, lang=term.language)
    if term.datatype.value == XSD_STRING:
        # RDF 1.1's one term, as rdflib reads "x" from a file: rdflib tells "x"^^xsd:string
        # apart from it, so that written out, `?p = "x"` and a triple pattern on "x" in a
        # SPARQL constraint would match nothing.
        return rdflib.Literal(term.value)
    # As written: rdflib would otherwise rewrite "007"^^xsd:integer as "7", as the store does.
    return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value), normalize=False)


def from_rdflib_term(term: Any) -> Term:
    import rdflib

    if isinstance(term, rdflib.URIRef):
        return NamedNode(str(term))
    if isinstance(term, rdflib.BNode):
        return BlankNode(str(term))
    if term.language:
        return Literal(str(term), language=term.language)
    datatype = term.datatype or rdflib.URIRef("http://www.w3.org/2001/XMLSchema#string")
    return Literal(str(term), datatype=NamedNode(str(datatype)))


def to_rdflib(triples: Iterable[Statement]) -> rdflib.Graph:
    import rdflib

    g = rdflib.Graph()
    for t in triples:
        s, p, o = spo(t)
        g.add((to_rdflib_term(s), to_rdflib_term(p), to_rdflib_term(o)))
    return g


def from_rdflib(graph: rdflib.Graph) -> list[Triple]:
    return [
        triple(from_rdflib_term(s), from_rdflib_term(p), from_rdflib_term(o)) for s, p, o in graph
    ]


def pyshacl_results(
    data: Iterable[Triple],
    shapes: Iterable[Triple],
    *,
    ontology: Iterable[Triple] = (),
    use_shapes: list[Term] | None = None,
    focus: list[Term] | None = None,
    advanced: bool = False,
) -> tuple[bool, list[Result], list[Triple]]:
    """Run pySHACL (``advanced``: with SHACL-AF); return (conforms, results, report triples)."""
    import pyshacl

    ont = to_rdflib(ontology)
    kwargs: dict[str, Any] = {}
    if use_shapes is not None:
        kwargs["use_shapes"] = [to_rdflib_term(s) for s in use_shapes]
    if focus is not None:
        kwargs["focus_nodes"] = [to_rdflib_term(f) for f in focus]
    conforms, report_graph, _ = pyshacl.validate(
        to_rdflib(data),
        shacl_graph=to_rdflib(shapes),
        ont_graph=ont if len(ont) else None,
        inference="none",
        allow_warnings=True,
        advanced=advanced,
        **kwargs,
    )
    triples = from_rdflib(report_graph)
    return bool(conforms), results_from_report(triples), triples


def results_from_report(triples: list[Triple]) -> list[Result]:
    """Read sh:ValidationResult nodes of a W3C report back into results."""
    from ontoloom.shacl.engine import Result

    g = TripleIndex(triples)

    def one(result: Term, local: str) -> Term | None:
        return g.value(result, NamedNode(SH + local))

    out = []
    reports = g.subjects(NamedNode(RDF + "type"), NamedNode(SH + "ValidationReport"))
    # Only the report's own results: nested sh:detail results explain them, they are not theirs.
    for found in [r for report in reports for r in g.objects(report, NamedNode(SH + "result"))]:
        path_node = one(found, "resultPath")
        path: Any = None
        if path_node is not None:
            try:
                path = parse_path(g, path_node)
            except PathError:
                path = path_node
        # A W3C validation result always has a focus node, a source shape, a component and a
        # severity (SHACL 3.6.2).
        component = named(one(found, "sourceConstraintComponent"))
        out.append(
            Result(
                focus=node(one(found, "focusNode")),
                path=path,
                value=one(found, "value"),
                source_shape=node(one(found, "sourceShape")),
                component=component,
                severity=named(one(found, "resultSeverity")),
                messages=tuple(
                    m
                    for m in g.objects(found, NamedNode(SH + "resultMessage"))
                    if isinstance(m, Literal)
                ),
                source_constraint=one(found, "sourceConstraint"),
                constraint_name=_short(component),
            )
        )
    return out


def _short(component: Term | None) -> str:
    if component is None:
        return ""
    local = component.value.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    name = local.removesuffix("ConstraintComponent")
    return name[:1].lower() + name[1:]


def validate_shapes_with_pyshacl(
    data: Backend,
    shapes: ShapeSet,
    fallback: list[Shape],
    focus: list[Term] | None,
    extra_classes: Iterable[tuple[Term, Term]],
    targeted: Mapping[Term, list[Term]] | None = None,
) -> list[Result]:
    """Run pySHACL on each shape the compiler left to it, alone: a shapes graph holding only
    that shape and what it references (:func:`isolated_shapes_graph`), over the whole data.

    With ``focus``, only results on those nodes count; ``targeted`` may give, per shape, the
    focus nodes it targets, which then replace its targets, so pySHACL validates just them.
    (pySHACL's own focus_nodes option also filters the value nodes that nested shapes see,
    and its use_shapes skips the shapes a shape references: neither is exact.)
    """
    triples = [q.triple for q in data.data_quads()]  # as written: pySHACL judges the terms
    ontology = [Triple(subject(s), NamedNode(RDFS + "subClassOf"), o) for s, o in extra_classes]
    wanted = None if focus is None else set(focus)
    out: list[Result] = []
    for shape in fallback:
        nodes = None if targeted is None else targeted.get(shape.node)
        if nodes is not None and not nodes:
            continue  # it targets none of the focus nodes
        isolated = isolated_shapes_graph(shapes, shape.node, targets=nodes)
        try:
            _, results, _ = pyshacl_results(triples, isolated, ontology=ontology)
        except Exception as exc:  # pySHACL refuses some inputs the spec defines
            from ontoloom.shacl.shapes import ValidationFailure

            raise ValidationFailure(
                f"shape {shapes.label(shape.node)} could not be evaluated: the compiler cannot "
                f"express it, and pySHACL, which evaluates such shapes, failed: {exc}"
            ) from None
        # Only the shape's own results and its property shapes': the shapes it references
        # (sh:node, sh:not…) explain them, they are not validated on their own here.
        tree: set[Term] = set()
        stack = [shape.node]
        while stack:
            node = stack.pop()
            if node not in tree:
                tree.add(node)
                stack.extend(shapes.shape(node).properties)
        out += [
            r for r in results if r.source_shape in tree and (wanted is None or r.focus in wanted)
        ]
    return out


def in_our_words(results: Iterable[Result], shapes: ShapeSet, renderer: Renderer) -> list[Result]:
    """pySHACL's results as the fast path would give them: the constraint named by the
    shapes graph's own term, and a default message ours (pySHACL's wording, rendered the
    same way every time) — so that one result reads alike from either engine. A shape's own
    sh:message stays."""
    from dataclasses import replace

    out = []
    for r in results:
        shape = shapes.shape(r.source_shape)
        matching = [c for c in shape.constraints if c.component_iri == r.component]
        if len(matching) != 1:
            out.append(r)
            continue
        constraint = matching[0]
        r = replace(
            r,
            source_constraint=constraint.source_constraint,
            constraint_name=constraint.short_name,
        )
        if not shape.messages and not constraint.default_messages:
            text = constraint.message(renderer, r.focus, r.value, r.path)
            r = replace(r, messages=(Literal(text),) if text else ())
        out.append(r)
    return out


# Predicates along which a shape's evaluation needs another node's description.
_FOLLOW = {
    SH + p
    for p in (
        "node",
        "not",
        "property",
        "qualifiedValueShape",
        "sparql",
        "prefixes",
        "declare",
        "validator",
        "nodeValidator",
        "propertyValidator",
    )
} | {OWL + "imports"}
_LISTS = {SH + "and", SH + "or", SH + "xone"}
_TARGETS = {
    SH + p for p in ("targetClass", "targetNode", "targetSubjectsOf", "targetObjectsOf", "target")
}


def isolated_shapes_graph(
    shapes: ShapeSet, top: Term, targets: list[Term] | None = None
) -> list[Triple]:
    """The shapes graph pySHACL needs to evaluate ``top`` alone: its description, the
    descriptions of the shapes it references, of the custom components it uses and of the
    prefix declarations their queries need; every other shape's targets left out, so pySHACL
    validates nothing else; and the shapes graph's rdfs:subClassOf triples. ``targets``
    replaces ``top``'s own targets with these nodes."""
    g = shapes.graph
    rdf_type, class_like = NamedNode(RDF + "type"), set(shapes.classes.subclasses(RDFS_CLASS))
    out: list[Triple] = [*(Triple(subject(s), RDFS_SUBCLASS, o) for s, o in g.pairs(RDFS_SUBCLASS))]
    seen: set[Term] = set()
    stack = [top]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        described = [spo(t) for t in g.describe(current)]
        for owner in {current, *(s for s, _, _ in described)}:
            for component in shapes.custom:  # components whose parameters a shape uses
                if any(g.objects(owner, path) for path, _ in component.parameters):
                    stack.append(component.node)
        for s, p, o in described:
            if (s != top or targets is not None) and (
                p.value in _TARGETS or (p == rdf_type and o in class_like)
            ):
                continue  # another shape's targets (or top's, replaced): not validated here
            out.append(Triple(s, p, o))
            if p.value in _FOLLOW:
                stack.append(o)
            elif p.value in _LISTS:
                stack.extend(g.items(o))
    out += [Triple(subject(top), NamedNode(SH + "targetNode"), n) for n in targets or ()]
    return list(dict.fromkeys(out))
