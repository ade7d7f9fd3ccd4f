"""Other constraint components: sh:closed, sh:hasValue, sh:in (RDF term equality)."""

from __future__ import annotations

from collections.abc import Collection, Iterator

from ontoloom.shacl.compiler import Compiler, Source, Violation, same_term, term_sparql
from ontoloom.shacl.components import Constraint, QuadCheck
from ontoloom.shacl.components.params import Params
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.terms import NamedNode, Term
from ontoloom.vocab import RDF, RDFS, SH


class ClosedConstraintComponent(Constraint):
    component, name = "ClosedConstraintComponent", "closed"

    def __init__(self, allowed: list[Term], resource_type_allowed: bool = False) -> None:
        self.allowed = allowed
        self.resource_type_allowed = resource_type_allowed

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        g = shapes.graph
        params = Params(shapes, shape)
        closed = params.boolean("closed")
        ignored = params.lists("ignoredProperties")
        if ignored and closed is None:
            raise params.error(
                "ignoredProperties",
                "is used on a shape that is not closed",
                "add sh:closed true, or remove sh:ignoredProperties",
            )
        if not closed:
            return []
        allowed: list[Term] = []
        for prop in shape.properties:
            path = g.value(prop, NamedNode(SH + "path"))
            if isinstance(path, NamedNode):
                allowed.append(path)
        for members in ignored:
            allowed.extend(members)
        return [cls(allowed, resource_type_allowed=shapes.inferred)]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        p, o = cx.fresh("p"), cx.fresh("o")
        text = f"{values} {v} {p} {o} ."
        if cx.written:  # the result names the value as written (its record's triple)
            cx.lexical[o] = (v, p)
        if self.allowed:
            text += f" FILTER({p} NOT IN ({', '.join(term_sparql(a) for a in self.allowed)}))"
        if self.resource_type_allowed:
            text += f" FILTER(!({p} = <{RDF}type> && {o} = <{RDFS}Resource>))"
        return Violation(text, value=o, path=p)

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"Node {r.term(focus)} is closed. It cannot have value: {r.term(value)}"


class HasValueConstraintComponent(Constraint):
    component, name = "HasValueConstraintComponent", "hasValue"

    def __init__(self, expected: Term) -> None:
        self.expected = expected

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(v) for v in Params(shapes, shape).values("hasValue")]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        if shape.path is None:
            return Violation(f"FILTER(!{same_term(focus, self.expected)})")
        values, v = cx.value_nodes(shape, focus)
        return Violation(
            f"FILTER NOT EXISTS {{ {values} FILTER({cx.same_term(v, self.expected)}) }}"
        )

    def quad_check(self, hierarchy: Hierarchy) -> QuadCheck:
        expected = self.expected  # RDF term equality, on the terms as written

        def missing(
            nodes: list[tuple[Term, Collection[Term]]], around: object
        ) -> Iterator[tuple[Term, Term | None]]:
            for node, values in nodes:
                if expected not in values:
                    yield node, None

        return missing

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        # pySHACL's words, to the letter (its "not a in", its list of one)
        expected = [r.term(self.expected)] if r.pyshacl_style else r.term(self.expected)
        if path is None:
            if r.pyshacl_style:
                return f"Node {r.term(focus)} value is not a in the set of values: {expected}"
            return f"Node {r.term(focus)} value is not in the set of values: {expected}"
        return (
            f"Node {r.term(focus)}->{r.term(path)} does not contain a value in the set: {expected}"
        )


class InConstraintComponent(Constraint):
    component, name = "InConstraintComponent", "in"
    per_value = True

    def __init__(self, allowed: list[Term]) -> None:
        self.allowed = allowed

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        params = Params(shapes, shape)
        params.at_most_one("in")
        return [cls(members) for members in params.lists("in")]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        same = " || ".join(cx.same_term(v, a) for a in self.allowed) or "false"
        return Violation(f"{values} FILTER(!({same}))", value=v)

    def quad_check(self, hierarchy: Hierarchy) -> QuadCheck:
        # RDF term equality (sameTerm), on the terms as written: a member the store would
        # keep in another form matches the value written so, as the query's record join does
        allowed = set(self.allowed)

        def listed(
            nodes: list[tuple[Term, Collection[Term]]], around: object
        ) -> Iterator[tuple[Term, Term | None]]:
            for node, values in nodes:
                found = [v for v in values if v not in allowed]
                if found:
                    yield from ((node, value) for value in sorted(found, key=str))

        return listed

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        if r.pyshacl_style:  # pySHACL's words: a Python list of the members as it writes them
            return f"Value {r.term(value)} not in list {[r.term(a) for a in self.allowed]}"
        return f"Value {r.term(value)} not in list {r.list(self.allowed)}"


COMPONENTS: list[type[Constraint]] = [
    ClosedConstraintComponent,
    HasValueConstraintComponent,
    InConstraintComponent,
]
