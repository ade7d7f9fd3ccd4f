"""Property pair constraint components: sh:equals, sh:disjoint, sh:lessThan,
sh:lessThanOrEquals. The other property is read from the focus node."""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation, iri
from ontoloom.shacl.components import Constraint, sh_values
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.store.terms import Term


class _Pair(Constraint):
    parameter = ""

    def __init__(self, other: Term) -> None:
        self.other = iri(other)

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(o) for o in sh_values(shapes.graph, shape, cls.parameter)]


class EqualsConstraintComponent(_Pair):
    component, name, parameter = "EqualsConstraintComponent", "equals", "equals"

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        w, x = cx.fresh("w"), cx.fresh("x")
        missing_here = (
            f"{focus} {self.other} {w} . FILTER NOT EXISTS {{ {cx.has_value(shape, focus, w)} }} "
            f"BIND({w} AS {x})"
        )
        if values:
            missing_other = (
                f"{values} FILTER NOT EXISTS {{ {focus} {self.other} {v} }} BIND({v} AS {x})"
            )
        else:  # node shape: the value node is the focus itself
            missing_other = (
                f"FILTER NOT EXISTS {{ {focus} {self.other} {focus} }} BIND({focus} AS {x})"
            )
        text, sourced = cx.union([missing_other, missing_here], focus, source)
        return Violation(text, value=x, sourced=sourced)


class DisjointConstraintComponent(_Pair):
    component, name, parameter = "DisjointConstraintComponent", "disjoint", "disjoint"

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        return Violation(f"{values} {focus} {self.other} {v} .", value=v)


class _Order(_Pair):
    op = ""

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        w = cx.fresh("w")
        text = f"{values} {focus} {self.other} {w} . FILTER(!COALESCE({v} {self.op} {w}, false))"
        return Violation(text, value=v, distinct=(w,))


class LessThanConstraintComponent(_Order):
    component, name, parameter, op = "LessThanConstraintComponent", "lessThan", "lessThan", "<"


class LessThanOrEqualsConstraintComponent(_Order):
    component, name, parameter, op = (
        "LessThanOrEqualsConstraintComponent",
        "lessThanOrEquals",
        "lessThanOrEquals",
        "<=",
    )


COMPONENTS: list[type[Constraint]] = [
    EqualsConstraintComponent,
    DisjointConstraintComponent,
    LessThanConstraintComponent,
    LessThanOrEqualsConstraintComponent,
]
