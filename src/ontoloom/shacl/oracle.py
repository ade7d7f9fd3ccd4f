"""pySHACL on in-memory rdflib graphs: the reference the compiled fast path is tested
against, and the engine for shapes the compiler cannot handle.

Imported lazily: rdflib and pySHACL cost ~260 ms to import.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ontoloom.shacl.paths import PathError, parse_path
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.store.terms import BlankNode, Literal, NamedNode, Term, Triple
from ontoloom.vocab import RDF, RDFS, SH

if TYPE_CHECKING:
    import rdflib

    from ontoloom.shacl.engine import Result
    from ontoloom.shacl.shapes import Shape, ShapeSet
    from ontoloom.store.base import Backend

__all__ = ["from_rdflib", "pyshacl_results", "to_rdflib", "validate_shapes_with_pyshacl"]


def to_rdflib_term(term: Term) -> Any:
    import rdflib

    if isinstance(term, NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, BlankNode):
        return rdflib.BNode(term.value)
    if term.language:
        return rdflib.Literal(term.value, lang=term.language)
    return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))


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


def to_rdflib(triples: Iterable[Triple]) -> rdflib.Graph:
    import rdflib

    g = rdflib.Graph()
    for t in triples:
        g.add((to_rdflib_term(t.subject), to_rdflib_term(t.predicate), to_rdflib_term(t.object)))
    return g


def from_rdflib(graph: rdflib.Graph) -> list[Triple]:
    return [
        Triple(from_rdflib_term(s), from_rdflib_term(p), from_rdflib_term(o)) for s, p, o in graph
    ]


def pyshacl_results(
    data: Iterable[Triple],
    shapes: Iterable[Triple],
    *,
    ontology: Iterable[Triple] = (),
    use_shapes: list[Term] | None = None,
    focus: list[Term] | None = None,
) -> tuple[bool, list[Result], list[Triple]]:
    """Run pySHACL; return (conforms, results, report triples)."""
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
        **kwargs,
    )
    triples = from_rdflib(report_graph)
    return bool(conforms), results_from_report(triples), triples


def results_from_report(triples: list[Triple]) -> list[Result]:
    """Read sh:ValidationResult nodes of a W3C report back into results."""
    from ontoloom.shacl.engine import Result

    g = TripleIndex(triples)

    def one(node: Term, local: str) -> Term | None:
        return g.value(node, NamedNode(SH + local))

    out = []
    reports = g.subjects(NamedNode(RDF + "type"), NamedNode(SH + "ValidationReport"))
    # Only the report's own results: nested sh:detail results explain them, they are not theirs.
    for node in [r for report in reports for r in g.objects(report, NamedNode(SH + "result"))]:
        path_node = one(node, "resultPath")
        path: Any = None
        if path_node is not None:
            try:
                path = parse_path(g, path_node)
            except PathError:
                path = path_node
        severity, component = one(node, "resultSeverity"), one(node, "sourceConstraintComponent")
        out.append(
            Result(
                focus=one(node, "focusNode"),
                path=path,
                value=one(node, "value"),
                source_shape=one(node, "sourceShape"),
                component=component,
                severity=severity,
                messages=tuple(
                    m
                    for m in g.objects(node, NamedNode(SH + "resultMessage"))
                    if isinstance(m, Literal)
                ),
                source_constraint=one(node, "sourceConstraint"),
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
) -> list[Result]:
    triples = list(data.construct("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"))
    ontology = [Triple(s, NamedNode(RDFS + "subClassOf"), o) for s, o in extra_classes]
    # pySHACL's use_shapes leaves out the property shapes of the shapes it names, so run
    # them all and keep what the fallen-back shapes (and their property shapes) report.
    _, results, _ = pyshacl_results(triples, shapes.graph.triples, ontology=ontology, focus=focus)
    tree: set[Term] = set()
    stack = [s.node for s in fallback]
    while stack:
        node = stack.pop()
        if node not in tree:
            tree.add(node)
            stack.extend(shapes.shape(node).properties)
    return [r for r in results if r.source_shape in tree]
