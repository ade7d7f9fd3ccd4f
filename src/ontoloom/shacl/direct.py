"""The commonest core constraints of a write's few focus nodes, decided by the quads around
them instead of a planned query.

A focused run reads every quad from and to its focus nodes first (two pattern reads). For a
unit that is sh:minCount, sh:maxCount or sh:in on a predicate path, of a shape targeted by
class, node, subjects-of or objects-of, those quads are all its query would read: which focus
nodes the shape targets, and their values. Planning that query cost a write more than
evaluating it (pyoxigraph has no prepared queries), so such a unit is decided here, with its
query's semantics: values are distinct stored terms, sh:in compares terms (sameTerm), and
class targets take the subclasses the compiled query lists (blank subclasses aside).

Everything else runs its compiled SPARQL: other components and paths, nested shapes, SPARQL
targets, and every run with a focus node that is a blank node or a literal the store keeps in
another form ("01"^^xsd:integer): the query's answer names such a node as the store has it. ``tests/test_direct.py`` holds these readers to the compiled queries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ontoloom.shacl.compiler import Violation
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.components.cardinality import (
    MaxCountConstraintComponent,
    MinCountConstraintComponent,
)
from ontoloom.shacl.components.other import InConstraintComponent
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.shapes import Shape
from ontoloom.store.base import Backend, Row
from ontoloom.store.terms import BlankNode, Literal, NamedNode, Term

__all__ = ["Around", "Reader", "reader"]

RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


@dataclass
class Around:
    """The quads from and to some focus nodes, as the store keeps them."""

    focus: list[Term]
    objects: dict[tuple[Term, Term], set[Term]] = field(default_factory=dict)  # (s, p) → o
    incoming: set[tuple[Term, Term]] = field(default_factory=set)  # (o, p) of some quad
    # Whether every focus node is written as the store keeps it, so that these quads can
    # answer for a query that names the focus nodes in VALUES.
    exact: bool = True

    @classmethod
    def read(cls, data: Backend, focus: list[Term]) -> Around:
        objects: dict[tuple[Term, Term], set[Term]] = defaultdict(set)
        for quad in data.around(focus):
            objects[(quad.subject, quad.predicate)].add(quad.object)
        incoming = {(q.object, q.predicate) for q in data.around(focus, incoming=True)}
        return cls(focus, dict(objects), incoming, all(_kept_as_written(f) for f in focus))

    def values(self, node: Term, predicate: Term) -> set[Term]:
        return self.objects.get((node, predicate), _NONE)


_NONE: set[Term] = set()

#: The rows a unit's focused query would return, from the quads around the focus nodes.
Reader = Callable[[Around], Iterator[Row]]


def reader(
    top: Shape,
    shape: Shape,
    constraint: Constraint,
    violation: Violation,
    nested: bool,
    hierarchy: Hierarchy,
) -> Reader | None:
    """A reader for the unit, or None when its compiled query must run."""
    path = shape.path
    if nested or violation.distinct or violation.per_focus or violation.path:
        return None
    if path is None or not path.is_predicate or path.iri is None:
        return None
    targeted = _targets(top, hierarchy)
    if targeted is None:
        return None
    predicate = path.iri
    if isinstance(constraint, MinCountConstraintComponent | MaxCountConstraintComponent):
        n, fewer = constraint.n, isinstance(constraint, MinCountConstraintComponent)

        def counted(around: Around) -> Iterator[Row]:
            for node in targeted(around):
                count = len(around.values(node, predicate))
                if (count < n) if fewer else (count > n):
                    yield {"this": node}

        return counted
    if isinstance(constraint, InConstraintComponent) and violation.value:
        # A member the store would keep in another form matches no stored value, here as in
        # the query (which compares it by lexical form and datatype).
        allowed, name = set(constraint.allowed), violation.value.lstrip("?")

        def listed(around: Around) -> Iterator[Row]:
            for node in targeted(around):
                for value in sorted(around.values(node, predicate), key=str):
                    if value not in allowed:
                        yield {"this": node, name: value}

        return listed
    return None


def _targets(top: Shape, hierarchy: Hierarchy) -> Callable[[Around], Iterable[Term]] | None:
    """Which focus nodes the shape targets, as its focused query tests them; None when a
    target is of a kind tested only by running it."""
    nodes: set[Term] = set()
    classes: set[Term] = set()
    subjects_of: list[Term] = []
    objects_of: list[Term] = []
    for target in top.targets:
        if not isinstance(target.term, NamedNode):
            return None
        if target.kind == "targetNode":
            nodes.add(target.term)
        elif target.kind == "targetClass":
            classes.update(
                c for c in hierarchy.subclasses(target.term) if not isinstance(c, BlankNode)
            )
        elif target.kind == "targetSubjectsOf":
            subjects_of.append(target.term)
        elif target.kind == "targetObjectsOf":
            objects_of.append(target.term)
        else:
            return None

    def targeted(around: Around) -> Iterator[Term]:
        for node in around.focus:
            if (
                node in nodes
                or not classes.isdisjoint(around.values(node, RDF_TYPE))
                or any(around.values(node, p) for p in subjects_of)
                or any((node, p) in around.incoming for p in objects_of)
            ):
                yield node

    return targeted


def _kept_as_written(term: Term) -> bool:
    if isinstance(term, Literal):
        from ontoloom.store.lexical import stored_form

        return stored_form(term) == term  # (language tags are lower-cased when read)
    return isinstance(term, NamedNode)
