"""Cardinality constraint components: sh:minCount, sh:maxCount."""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation
from ontoloom.shacl.components import Constraint, sh_ints
from ontoloom.shacl.shapes import Shape, ShapeSet


class _Count(Constraint):
    op = ""
    parameter = ""

    def __init__(self, n: int) -> None:
        self.n = n

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        if shape.path is None:
            return []
        return [cls(n) for n in sh_ints(shapes.graph, shape, cls.parameter)]

    def pattern(
        self, cx: Compiler, shape: Shape, focus: str, source: Source | None
    ) -> Violation | None:
        if self.op == "<" and self.n <= 0:
            return None
        assert shape.path is not None
        path = shape.path.sparql()
        return cx.count(focus, lambda f, v: f"{f} {path} {v} .", self.op, self.n, source)


class MinCountConstraintComponent(_Count):
    component = "MinCountConstraintComponent"
    name = "minCount"
    parameter = "minCount"
    op = "<"


class MaxCountConstraintComponent(_Count):
    component = "MaxCountConstraintComponent"
    name = "maxCount"
    parameter = "maxCount"
    op = ">"


COMPONENTS: list[type[Constraint]] = [MinCountConstraintComponent, MaxCountConstraintComponent]
