"""Constraints ontoloom does not evaluate (SHACL-JS; node expressions of a kind
:mod:`~ontoloom.shacl.components.expression` cannot write). They are
never skipped silently: the validator refuses a shapes graph that uses them, or, when the
caller allows it, validates the rest and reports each of them by shape and feature."""

from __future__ import annotations

import functools

from ontoloom.errors import OntoloomError
from ontoloom.shacl.compiler import Compiler, Source, Violation
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.shapes import Shape, ShapeSet, sh
from ontoloom.terms import NamedNode

__all__ = ["NotEvaluated", "function_calls"]

# Parameters of constraint components that ontoloom does not evaluate, and what to call them.
_FEATURES = {
    "js": ("JSConstraintComponent", "sh:js (SHACL-JS JavaScript constraints)"),
}


def function_calls(shapes: ShapeSet, query: str) -> str | None:
    """The feature a query has that ontoloom does not evaluate: a call of a SHACL function
    (SHACL-AF sh:SPARQLFunction…; Oxigraph knows none of them), or of any other function the
    engine does not implement — SPARQL makes such a call an evaluation error, so the
    constraint could never report anything. ``query`` includes its prologue."""
    from ontoloom.shacl.sparql_syntax import SparqlSyntaxError, analyse

    try:
        called = analyse(query).functions
    except SparqlSyntaxError:
        return None  # said where the query is read
    declared = shapes.functions()
    for iri in called:
        if iri in declared:
            return f"the SHACL function <{iri}> (SHACL-AF) in a SPARQL query"
    for iri in called:
        if not _evaluated(iri):
            return (
                f"the function <{iri}> (not one the engine implements: each call would be an "
                "evaluation error) in a SPARQL query"
            )
    return None


@functools.cache
def _evaluated(iri: str) -> bool:
    """Whether the engine implements the function ``iri`` (the XSD casts): asked of an
    empty store."""
    from ontoloom.store import scratch

    try:
        list(scratch([]).select(f"SELECT (<{iri}>(1) AS ?x) WHERE {{}}"))
    except (RuntimeError, SyntaxError, ValueError, OntoloomError):
        return False
    return True


class NotEvaluated(Constraint):
    """A constraint that is reported, not evaluated; it never produces a result."""

    name = "notEvaluated"

    def __init__(self, component: str, feature: str) -> None:
        self.iri = NamedNode(component if ":" in component else sh(component).value)
        self.feature = feature

    @property
    def component_iri(self) -> NamedNode:
        return self.iri

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        g = shapes.graph
        return [
            cls(component, feature)
            for local, (component, feature) in _FEATURES.items()
            for _ in g.objects(shape.node, sh(local))
        ]

    def pattern(
        self, cx: Compiler, shape: Shape, focus: str, source: Source | None
    ) -> Violation | None:
        return None


COMPONENTS: list[type[Constraint]] = [NotEvaluated]
