"""Other constraint components: sh:closed, sh:hasValue, sh:in (RDF term equality)."""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation, is_true, term_sparql
from ontoloom.shacl.components import Constraint, sh_values
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.store.terms import NamedNode, Term
from ontoloom.vocab import SH


class ClosedConstraintComponent(Constraint):
    component, name = "ClosedConstraintComponent", "closed"

    def __init__(self, allowed: list[Term]) -> None:
        self.allowed = allowed

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        g = shapes.graph
        if not any(is_true(t) for t in sh_values(g, shape, "closed")):
            return []
        allowed: list[Term] = []
        for prop in shape.properties:
            path = g.value(prop, NamedNode(SH + "path"))
            if isinstance(path, NamedNode):
                allowed.append(path)
        for head in sh_values(g, shape, "ignoredProperties"):
            allowed.extend(g.items(head))
        return [cls(allowed)]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        p, o = cx.fresh("p"), cx.fresh("o")
        text = f"{values} {v} {p} {o} ."
        if self.allowed:
            text += f" FILTER({p} NOT IN ({', '.join(term_sparql(a) for a in self.allowed)}))"
        return Violation(text, value=o, path=p)


class HasValueConstraintComponent(Constraint):
    component, name = "HasValueConstraintComponent", "hasValue"

    def __init__(self, expected: Term) -> None:
        self.expected = expected

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(v) for v in sh_values(shapes.graph, shape, "hasValue")]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        expected = term_sparql(self.expected)
        if shape.path is None:
            return Violation(f"FILTER(!sameTerm({focus}, {expected}))")
        return Violation(f"FILTER NOT EXISTS {{ {focus} {shape.path.sparql()} {expected} }}")


class InConstraintComponent(Constraint):
    component, name = "InConstraintComponent", "in"

    def __init__(self, allowed: list[Term]) -> None:
        self.allowed = allowed

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        g = shapes.graph
        return [cls(g.items(head)) for head in sh_values(g, shape, "in")]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        same = " || ".join(f"sameTerm({v}, {term_sparql(a)})" for a in self.allowed) or "false"
        return Violation(f"{values} FILTER(!({same}))", value=v)


COMPONENTS: list[type[Constraint]] = [
    ClosedConstraintComponent,
    HasValueConstraintComponent,
    InConstraintComponent,
]
