"""Shape-based constraint components: sh:node, sh:qualifiedValueShape.

sh:property is structural: the engine validates property shapes with the value nodes of
their parent as focus nodes and reports their results directly.
"""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation, is_true
from ontoloom.shacl.components import Constraint, sh_ints, sh_values
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.store.terms import Term


class NodeConstraintComponent(Constraint):
    component, name = "NodeConstraintComponent", "node"

    def __init__(self, node_shape: Term) -> None:
        self.node_shape = node_shape

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(s) for s in sh_values(shapes.graph, shape, "node")]

    def shape_refs(self) -> list[Term]:
        return [self.node_shape]

    def pattern(
        self, cx: Compiler, shape: Shape, focus: str, source: Source | None
    ) -> Violation | None:
        values, v = cx.value_nodes(shape, focus)
        fails = cx.fails(cx.shapes.shape(self.node_shape), v)
        if fails is None:
            return None
        return Violation(f"{values} FILTER({fails})", value=v)


class _Qualified(Constraint):
    parameter = ""
    op = ""

    def __init__(self, qualified: Term, n: int, siblings: list[Term]) -> None:
        self.qualified, self.n, self.siblings = qualified, n, siblings

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        if shape.path is None:
            return []
        g = shapes.graph
        out: list[Constraint] = []
        disjoint = any(is_true(t) for t in sh_values(g, shape, "qualifiedValueShapesDisjoint"))
        for qualified in sh_values(g, shape, "qualifiedValueShape"):
            siblings: list[Term] = []
            if disjoint:
                for parent in shapes.parents(shape.node):
                    for sibling_prop in shapes.shape(parent).properties:
                        if sibling_prop == shape.node:
                            continue
                        siblings.extend(
                            sh_values(g, shapes.shape(sibling_prop), "qualifiedValueShape")
                        )
            for n in sh_ints(g, shape, cls.parameter):
                out.append(cls(qualified, n, [s for s in siblings if s != qualified]))
        return out

    def shape_refs(self) -> list[Term]:
        return [self.qualified, *self.siblings]

    def pattern(
        self, cx: Compiler, shape: Shape, focus: str, source: Source | None
    ) -> Violation | None:
        if self.op == "<" and self.n <= 0:
            return None
        assert shape.path is not None
        path = shape.path.sparql()

        def pairs(f: str, v: str) -> str:
            text = f"{f} {path} {v} ."
            fails = cx.fails(cx.shapes.shape(self.qualified), v)
            if fails is not None:
                text += f" FILTER(!{fails})"
            for sibling in self.siblings:
                sibling_fails = cx.fails(cx.shapes.shape(sibling), v)
                text += f" FILTER({sibling_fails or 'false'})"
            return text

        return cx.count(focus, pairs, self.op, self.n, source)


class QualifiedMinCountConstraintComponent(_Qualified):
    component, name, parameter, op = (
        "QualifiedMinCountConstraintComponent",
        "qualifiedMinCount",
        "qualifiedMinCount",
        "<",
    )


class QualifiedMaxCountConstraintComponent(_Qualified):
    component, name, parameter, op = (
        "QualifiedMaxCountConstraintComponent",
        "qualifiedMaxCount",
        "qualifiedMaxCount",
        ">",
    )


COMPONENTS: list[type[Constraint]] = [
    NodeConstraintComponent,
    QualifiedMinCountConstraintComponent,
    QualifiedMaxCountConstraintComponent,
]
