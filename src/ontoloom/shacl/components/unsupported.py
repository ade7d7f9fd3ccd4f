"""Constraints ontoloom does not evaluate (SHACL-AF node expressions, SHACL-JS). They are
never skipped silently: the validator refuses a shapes graph that uses them, or, when the
caller allows it, validates the rest and reports each of them by shape and feature."""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.shapes import Shape, ShapeSet, sh
from ontoloom.store.terms import NamedNode

__all__ = ["NotEvaluated", "function_calls"]

# Parameters of constraint components that ontoloom does not evaluate, and what to call them.
_FEATURES = {
    "expression": ("ExpressionConstraintComponent", "sh:expression (SHACL-AF node expressions)"),
    "js": ("JSConstraintComponent", "sh:js (SHACL-JS JavaScript constraints)"),
}


def function_calls(shapes: ShapeSet, query: str) -> str | None:
    """The feature a query has that ontoloom does not evaluate: a call of a SHACL function
    (SHACL-AF sh:SPARQLFunction…) — Oxigraph knows none of them. ``query`` includes its
    prologue, so prefixed names expand."""
    from ontoloom.shacl.prefixes import functions_called

    called = sorted(functions_called(query) & shapes.functions())
    if not called:
        return None
    return f"the SHACL function <{called[0]}> (SHACL-AF) in a SPARQL query"


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
