"""Logical constraint components: sh:not, sh:and, sh:or, sh:xone — inlined as EXISTS tests."""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.components.params import Params
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.terms import Term


class NotConstraintComponent(Constraint):
    per_value = True
    component, name = "NotConstraintComponent", "not"

    def __init__(self, negated: Term) -> None:
        self.negated = negated

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(s) for s in Params(shapes, shape).shapes_referenced("not")]

    def shape_refs(self) -> list[Term]:
        return [self.negated]

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"Node {r.term(value)} must not conform to shape {r.term(self.negated)}"

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        fails = cx.fails(cx.shapes.shape(self.negated), v)
        if fails is None:  # the negated shape always conforms: every value violates
            return Violation(values or "FILTER(true)", value=v)
        return Violation(f"{values} FILTER(!{fails})", value=v)


class _ShapeList(Constraint):
    per_value = True
    parameter = ""
    wording = ""

    def __init__(self, members: list[Term]) -> None:
        self.members = members

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(members) for members in Params(shapes, shape).lists(cls.parameter)]

    def shape_refs(self) -> list[Term]:
        return list(self.members)

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        listed = " , ".join(r.term(m) for m in self.members)
        return f"Node {r.term(value)} must conform to {self.wording} {listed}"

    def member_fails(self, cx: Compiler, v: str) -> list[str | None]:
        return [cx.fails(cx.shapes.shape(m), v) for m in self.members]


class AndConstraintComponent(_ShapeList):
    component, name, parameter = "AndConstraintComponent", "and", "and"
    wording = "all shapes in"

    def pattern(
        self, cx: Compiler, shape: Shape, focus: str, source: Source | None
    ) -> Violation | None:
        values, v = cx.value_nodes(shape, focus)
        fails = [f for f in self.member_fails(cx, v) if f is not None]
        if not fails:
            return None
        return Violation(f"{values} FILTER({' || '.join(fails)})", value=v)


class OrConstraintComponent(_ShapeList):
    component, name, parameter = "OrConstraintComponent", "or", "or"
    wording = "one or more shapes in"

    def pattern(
        self, cx: Compiler, shape: Shape, focus: str, source: Source | None
    ) -> Violation | None:
        values, v = cx.value_nodes(shape, focus)
        fails = self.member_fails(cx, v)
        if any(f is None for f in fails):  # one member always conforms
            return None
        test = " && ".join(f for f in fails if f is not None) or "true"
        return Violation(f"{values} FILTER({test})", value=v)


class XoneConstraintComponent(_ShapeList):
    component, name, parameter = "XoneConstraintComponent", "xone", "xone"
    wording = "exactly one shape in"

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        terms = ["1" if f is None else f"IF({f}, 0, 1)" for f in self.member_fails(cx, v)]
        total = " + ".join(terms) or "0"
        return Violation(f"{values} FILTER(({total}) != 1)", value=v)


COMPONENTS: list[type[Constraint]] = [
    NotConstraintComponent,
    AndConstraintComponent,
    OrConstraintComponent,
    XoneConstraintComponent,
]
