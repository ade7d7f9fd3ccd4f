"""Property pair constraint components: sh:equals, sh:disjoint, sh:lessThan,
sh:lessThanOrEquals. The other property is read from the focus node."""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.components.params import Params
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.terms import NamedNode, Term


class _Pair(Constraint):
    parameter = ""
    wording = ""  # how pySHACL's message relates the value to the other property
    property_shapes_only = False

    def __init__(self, other: NamedNode) -> None:
        self.other = other

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        params = Params(shapes, shape)
        if cls.property_shapes_only:
            params.property_shape_only(cls.parameter)
        return [cls(o) for o in params.iris(cls.parameter)]

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"Value of {r.term(focus)}->{r.term(self.other)} {self.wording} {r.term(value)}"


class EqualsConstraintComponent(_Pair):
    component, name, parameter = "EqualsConstraintComponent", "equals", "equals"
    wording = "!="

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
    per_value = True
    component, name, parameter = "DisjointConstraintComponent", "disjoint", "disjoint"
    wording = "=="

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        return Violation(f"{values} {focus} {self.other} {v} .", value=v)


class _Order(_Pair):
    per_value = True
    op = ""
    property_shapes_only = True

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        w = cx.fresh("w")
        text = f"{values} {focus} {self.other} {w} . FILTER(!COALESCE({v} {self.op} {w}, false))"
        return Violation(text, value=v, distinct=(w,))


class LessThanConstraintComponent(_Order):
    component, name, parameter, op = "LessThanConstraintComponent", "lessThan", "lessThan", "<"
    wording = "<="  # the violation: the other property's value <= this value


class LessThanOrEqualsConstraintComponent(_Order):
    component, name, parameter, op = (
        "LessThanOrEqualsConstraintComponent",
        "lessThanOrEquals",
        "lessThanOrEquals",
        "<=",
    )
    wording = "<"  # the violation: the other property's value < this value


COMPONENTS: list[type[Constraint]] = [
    EqualsConstraintComponent,
    DisjointConstraintComponent,
    LessThanConstraintComponent,
    LessThanOrEqualsConstraintComponent,
]
