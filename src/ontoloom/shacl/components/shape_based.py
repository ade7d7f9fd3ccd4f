"""Shape-based constraint components: sh:node, sh:qualifiedValueShape.

sh:property is structural: the engine validates property shapes with the value nodes of
their parent as focus nodes and reports their results directly.
"""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation
from ontoloom.shacl.components import Constraint, sh_values
from ontoloom.shacl.components.params import Params
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import Shape, ShapeSet, sh
from ontoloom.terms import Term


class NodeConstraintComponent(Constraint):
    component, name = "NodeConstraintComponent", "node"
    per_value = True

    def __init__(self, node_shape: Term) -> None:
        self.node_shape = node_shape

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        params = Params(shapes, shape)
        out: list[Constraint] = []
        for ref in params.shapes_referenced("node"):
            if shapes.graph.value(ref, sh("path")) is not None:
                raise params.error(
                    "node",
                    f"refers to {shapes.label(ref)}, a property shape",
                    "use sh:property for property shapes",
                )
            out.append(cls(ref))
        return out

    def shape_refs(self) -> list[Term]:
        return [self.node_shape]

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        # pySHACL adds "See details for more information." and reports the nested results
        # as sh:detail; this report has no sh:detail, so it does not point at any.
        return f"Value does not conform to Shape {r.term(self.node_shape)}"

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

    def __init__(
        self, qualified: Term, n: int, siblings: list[Term], counts: dict[str, int | None]
    ) -> None:
        self.qualified, self.n, self.siblings = qualified, n, siblings
        self.counts = counts  # both bounds of the shape, for the message

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        g = shapes.graph
        params = Params(shapes, shape)
        params.property_shape_only("qualifiedValueShape")
        counts = {
            "MinCount": params.count("qualifiedMinCount"),
            "MaxCount": params.count("qualifiedMaxCount"),
        }
        qualified_shapes = params.shapes_referenced("qualifiedValueShape")
        if qualified_shapes and counts == {"MinCount": None, "MaxCount": None}:
            raise params.error(
                "qualifiedValueShape",
                "has no sh:qualifiedMinCount nor sh:qualifiedMaxCount",
                "add one of them",
            )
        n = counts[cls.parameter.removeprefix("qualified")]
        if n is None:
            return []
        out: list[Constraint] = []
        disjoint = bool(params.boolean("qualifiedValueShapesDisjoint"))
        for qualified in qualified_shapes:
            siblings: list[Term] = []
            if disjoint:
                for parent in shapes.parents(shape.node):
                    for sibling_prop in shapes.shape(parent).properties:
                        if sibling_prop == shape.node:
                            continue
                        siblings.extend(
                            sh_values(g, shapes.shape(sibling_prop), "qualifiedValueShape")
                        )
            out.append(cls(qualified, n, [s for s in siblings if s != qualified], counts))
        return out

    def shape_refs(self) -> list[Term]:
        return [self.qualified, *self.siblings]

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        bounds = "".join(f" {k} {v}" for k, v in self.counts.items() if v is not None)
        return f"Focus node does not conform to shape{bounds}: {r.term(self.qualified)}"

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
