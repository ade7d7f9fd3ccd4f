"""Value range constraint components: sh:min/maxExclusive, sh:min/maxInclusive.

A value that cannot be compared with the bound (another datatype, an IRI) violates.
"""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation, term_sparql
from ontoloom.shacl.components import Constraint, sh_values
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.store.terms import Term


class _Range(Constraint):
    op = ""
    parameter = ""

    def __init__(self, bound: Term) -> None:
        self.bound = bound

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(b) for b in sh_values(shapes.graph, shape, cls.parameter)]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        test = f"COALESCE({v} {self.op} {term_sparql(self.bound)}, false)"
        return Violation(f"{values} FILTER(!{test})", value=v)


class MinExclusiveConstraintComponent(_Range):
    component, name, parameter, op = (
        "MinExclusiveConstraintComponent",
        "minExclusive",
        "minExclusive",
        ">",
    )


class MinInclusiveConstraintComponent(_Range):
    component, name, parameter, op = (
        "MinInclusiveConstraintComponent",
        "minInclusive",
        "minInclusive",
        ">=",
    )


class MaxExclusiveConstraintComponent(_Range):
    component, name, parameter, op = (
        "MaxExclusiveConstraintComponent",
        "maxExclusive",
        "maxExclusive",
        "<",
    )


class MaxInclusiveConstraintComponent(_Range):
    component, name, parameter, op = (
        "MaxInclusiveConstraintComponent",
        "maxInclusive",
        "maxInclusive",
        "<=",
    )


COMPONENTS: list[type[Constraint]] = [
    MinExclusiveConstraintComponent,
    MinInclusiveConstraintComponent,
    MaxExclusiveConstraintComponent,
    MaxInclusiveConstraintComponent,
]
