"""Validate standalone RDF graphs against a shapes graph, with no store: what
``ontoloom validate`` and the W3C test suite run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ontoloom.shacl.engine import Report, Validator
from ontoloom.shacl.shapes import ShapesError
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.store.terms import DefaultGraph, Literal, NamedNode, Quad, Term, Triple

__all__ = ["SHAPES_GRAPH", "ShapesGraphError", "validate_graphs"]

# Where the shapes graph sits beside the data, for SPARQL constraints that use $shapesGraph.
SHAPES_GRAPH = NamedNode("urn:ontoloom:shapes-graph")

ShapesGraphError = ShapesError


def validate_graphs(
    data: Iterable[Triple],
    shapes: Iterable[Triple],
    *,
    extra_classes: Iterable[tuple[Term, Term]] = (),
) -> Report:
    """Validate ``data`` against ``shapes``.

    :raises ShapesGraphError: when the shapes graph is not well-formed (e.g. a SPARQL
        constraint that pre-binding forbids).
    """
    shapes = list(shapes)
    quads = [Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in data]
    quads += [Quad(t.subject, t.predicate, t.object, SHAPES_GRAPH) for t in shapes]
    backend = EmbeddedBackend.scratch(quads, union=False)
    validator = Validator(shapes, extra_classes=extra_classes, shapes_graph=SHAPES_GRAPH)
    report = validator.validate(backend)
    originals = _original_literals(t.object for t in (*quads,) if isinstance(t.object, Literal))
    report.results = [
        replace(r, focus=originals.get(r.focus, r.focus), value=originals.get(r.value, r.value))
        for r in report.results
    ]
    return report


def _original_literals(literals: Iterable[Literal]) -> dict[Term | None, Term]:
    """The store keeps literals by value ("4.0"^^xsd:decimal as "4"); map each stored form
    back to the literal the input wrote, so reports quote the input."""
    from ontoloom.store.lexical import stored_forms

    out: dict[Term | None, Term] = {}
    for written, stored in stored_forms(dict.fromkeys(literals)).items():
        if stored != written:
            out.setdefault(stored, written)
    return out
