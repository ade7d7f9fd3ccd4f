"""What around a focus node its validation can see: how many edges out, which predicates
walked backwards. The write path copies exactly that neighbourhood to validate a change."""

from __future__ import annotations

from dataclasses import dataclass, field

from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.store.terms import NamedNode, Term

__all__ = ["Footprint", "footprint"]

UNBOUNDED_RADIUS = 3  # a path with * or + is followed this far on writes; `check` sees all


@dataclass
class Footprint:
    # Levels of outgoing (and listed incoming) edges to copy. At least 1: SPARQL-based
    # constraints are assumed to read the focus node's own triples and its values' types.
    radius: int = 1
    inverse: set[NamedNode] = field(default_factory=set)  # predicates also copied backwards
    bounded: bool = True


def footprint(shapes: ShapeSet) -> Footprint:
    fp = Footprint()
    memo: dict[Term, int | None] = {}

    def reach(shape: Shape, stack: tuple[Term, ...]) -> int | None:
        if shape.node in memo:
            return memo[shape.node]
        if shape.node in stack:
            return None
        depth = 0
        if shape.path is not None:
            depth = shape.path.depth()  # type: ignore[assignment]
            for predicate, backwards in shape.path.predicates():
                if backwards:
                    fp.inverse.add(predicate)
            if depth is None:
                memo[shape.node] = None
                return None
        nested = [ref for c in shape.constraints for ref in c.shape_refs()]
        inner = 0
        for ref in nested:
            r = reach(shapes.shape(ref), (*stack, shape.node))
            if r is None:
                memo[shape.node] = None
                return None
            inner = max(inner, r)
        for prop in shape.properties:
            r = reach(shapes.shape(prop), (*stack, shape.node))
            if r is None:
                memo[shape.node] = None
                return None
            inner = max(inner, r)
        memo[shape.node] = depth + inner
        return depth + inner

    for shape in shapes.targeted():
        for target in shape.targets:
            if target.kind == "targetObjectsOf" and isinstance(target.term, NamedNode):
                fp.inverse.add(target.term)
        r = reach(shape, ())
        if r is None:
            fp.bounded = False
            fp.radius = max(fp.radius, UNBOUNDED_RADIUS)
        else:
            fp.radius = max(fp.radius, r)
    return fp
