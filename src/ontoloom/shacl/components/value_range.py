"""Value range constraint components: sh:min/maxExclusive, sh:min/maxInclusive.

A value that cannot be compared with the bound (another datatype, an IRI) violates.
"""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation, term_sparql
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.components.params import Params
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.terms import Term


class _Range(Constraint):
    per_value = True
    op = ""
    parameter = ""

    def __init__(self, bound: Term) -> None:
        self.bound = bound

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(b) for b in Params(shapes, shape).literals(cls.parameter)]

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"Value is not {self.op} {r.term(self.bound)}"

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
