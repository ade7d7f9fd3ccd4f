"""Cardinality constraint components: sh:minCount, sh:maxCount."""

from __future__ import annotations

from collections.abc import Collection, Iterator

from ontoloom.shacl.compiler import Compiler, Source, Violation
from ontoloom.shacl.components import Constraint, QuadCheck
from ontoloom.shacl.components.params import Params
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.terms import Term


class _Count(Constraint):
    reads_terms = False
    op = ""
    parameter = ""
    wording = ""

    def __init__(self, n: int) -> None:
        self.n = n

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        params = Params(shapes, shape)
        n = params.count(cls.parameter)
        params.property_shape_only(cls.parameter)
        return [] if n is None else [cls(n)]

    def pattern(
        self, cx: Compiler, shape: Shape, focus: str, source: Source | None
    ) -> Violation | None:
        if self.op == "<" and self.n <= 0:
            return None
        assert shape.path is not None
        path = shape.path.sparql()
        return cx.count(focus, lambda f, v: f"{f} {path} {v} .", self.op, self.n, source)

    def quad_check(self, hierarchy: Hierarchy) -> QuadCheck:
        # distinct stored terms, as the query counts them (two written forms of one
        # stored term are refused at the door)
        n, fewer = self.n, self.op == "<"

        def counted(
            nodes: list[tuple[Term, Collection[Term]]], around: object
        ) -> Iterator[tuple[Term, Term | None]]:
            for node, values in nodes:
                if (len(values) < n) if fewer else (len(values) > n):
                    yield node, None

        return counted

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"{self.wording} {self.n} values on {r.term(focus)}->{r.term(path)}"


class MinCountConstraintComponent(_Count):
    component = "MinCountConstraintComponent"
    name = "minCount"
    parameter = "minCount"
    op = "<"
    wording = "Less than"


class MaxCountConstraintComponent(_Count):
    component = "MaxCountConstraintComponent"
    per_value = True
    name = "maxCount"
    parameter = "maxCount"
    op = ">"
    wording = "More than"


COMPONENTS: list[type[Constraint]] = [MinCountConstraintComponent, MaxCountConstraintComponent]
