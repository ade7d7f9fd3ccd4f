"""The commonest constraints of a write's few focus nodes, decided by the quads around them
instead of a planned query.

A focused run first reads every quad from its focus nodes, and the quads into them with the
predicate of an objects-of target in play (pattern reads). Those quads are all that some units'
queries read — which focus nodes the shape targets, and their values — and planning such a query cost a write more than evaluating it (pyoxigraph has no
prepared queries). So these units are decided here, with their queries' semantics:

* sh:minCount, sh:maxCount and sh:in on a predicate path: values are distinct stored terms,
  sh:in compares terms (sameTerm);
* sh:datatype on a predicate path, for a datatype whose every lexical form is well formed
  (xsd:string, rdf:langString, a datatype no cast or pattern checks): a value is a literal
  of that datatype (a language-tagged one for rdf:langString, none other);
* a judged SPARQL constraint of a node shape (:mod:`.native`): the rows of its pattern
  ``$this ?path ?value``, each judged as the query's rows are;

for a shape targeted by class (the subclasses the compiled query lists: blank ones aside),
node, subjects-of, objects-of, or a SPARQL target whose query is known by its exact text
(:data:`EVERY_SUBJECT`, ol:NoSecrets' target).

Everything else runs its compiled SPARQL: other components and paths, nested shapes, other
SPARQL targets, and every run with a focus node that is a blank node or a literal the store
keeps in another form ("01"^^xsd:integer): the query's answer names such a node as the store
has it. ``tests/test_direct.py`` holds these readers to the compiled queries and to
whole-store validation.
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
from ontoloom.shacl.components.value_type import DatatypeConstraintComponent
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.native import Judge, digest, judged
from ontoloom.shacl.shapes import RDF_TYPE, Shape
from ontoloom.store.base import Backend, Row
from ontoloom.terms import BlankNode, Literal, NamedNode, Term, spo

__all__ = ["EVERY_SUBJECT", "Around", "Reader", "judged_reader", "reader"]


@dataclass
class Around:
    """The quads from and to some focus nodes, as the store keeps them."""

    focus: list[Term]
    out: dict[Term, dict[Term, set[Term]]] = field(default_factory=dict)  # s → p → objects
    # (o, p) of some quad into a focus node, for the predicates of objects-of targets: the
    # only incoming quads a reader asks about (a class node has one per instance)
    incoming: set[tuple[Term, Term]] = field(default_factory=set)
    # Whether every focus node is written as the store keeps it, so that these quads can
    # answer for a query that names the focus nodes in VALUES.
    exact: bool = True

    @classmethod
    def read(cls, data: Backend, focus: list[Term], objects_of: Iterable[Term] = ()) -> Around:
        """The quads from the focus nodes, and those into them with one of ``objects_of``
        (the predicates of the objects-of targets in play)."""
        out: dict[Term, dict[Term, set[Term]]] = {}
        for s, p, o in map(spo, data.around(focus)):
            out.setdefault(s, defaultdict(set))[p].add(o)
        incoming: set[tuple[Term, Term]] = {
            (o, p)
            for predicate in objects_of
            for _, p, o in map(spo, data.around(focus, predicate, incoming=True))
        }
        return cls(focus, out, incoming, all(_kept_as_written(f) for f in focus))

    def values(self, node: Term, predicate: Term) -> set[Term]:
        return self.out.get(node, _NO_VALUES).get(predicate, _NONE)


_NONE: set[Term] = set()
_NO_VALUES: dict[Term, set[Term]] = {}

#: sparqlTarget queries whose meaning is known, by the SHA-256 of their text as written:
#: "every subject" (ol:NoSecrets' target).
EVERY_SUBJECT = digest("SELECT DISTINCT ?this WHERE { ?this ?p ?o }")

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
    if isinstance(constraint, DatatypeConstraintComponent) and violation.value:
        fits = _datatype_test(constraint)
        if fits is None:
            return None
        name = violation.value.lstrip("?")

        def typed(around: Around) -> Iterator[Row]:
            for node in targeted(around):
                for value in sorted(around.values(node, predicate), key=str):
                    if not fits(value):
                        yield {"this": node, name: value}

        return typed
    return None


_LANG_STRING = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#langString")
_XSD_STRING = NamedNode("http://www.w3.org/2001/XMLSchema#string")


def _datatype_test(constraint: DatatypeConstraintComponent) -> Callable[[Term], bool] | None:
    """Whether a value fits the datatype, as the compiled test decides it, where that test
    reads the term alone: for xsd:string, rdf:langString and datatypes without a lexical
    check (:meth:`DatatypeConstraintComponent.well_formed` is ``true``); None for the rest,
    whose lexical forms a cast or pattern checks."""
    datatype = constraint.datatype
    if datatype == _LANG_STRING:
        return lambda v: isinstance(v, Literal) and bool(v.language)
    if datatype != _XSD_STRING and constraint.well_formed("?x") != "true":
        return None
    # (a language-tagged literal's datatype is rdf:langString)
    return lambda v: isinstance(v, Literal) and v.datatype == datatype


def judged_reader(top: Shape, judge: Judge, hierarchy: Hierarchy) -> Reader | None:
    """A reader for a judged SPARQL constraint of a node shape (:mod:`.native`): the rows
    of its graph pattern ``$this ?path ?value``, each judged; None when its compiled query
    must run."""
    targeted = _targets(top, hierarchy)
    if targeted is None:
        return None

    def rows(around: Around) -> Iterator[Row]:
        matched = (
            {"this": node, "path": path, "value": value}
            for node in targeted(around)
            for path, values in around.out.get(node, _NO_VALUES).items()
            for value in sorted(values, key=str)
        )
        return judged(matched, judge)

    return rows


def _targets(top: Shape, hierarchy: Hierarchy) -> Callable[[Around], Iterable[Term]] | None:
    """Which focus nodes the shape targets, as its focused query tests them; None when a
    target is of a kind tested only by running it."""
    nodes: set[Term] = set()
    classes: set[Term] = set()
    subjects_of: list[Term] = []
    objects_of: list[Term] = []
    every_subject = False
    for target in top.targets:
        if target.kind == "sparqlTarget" and digest(target.select or "") == EVERY_SUBJECT:
            every_subject = True
        elif not isinstance(target.term, NamedNode):
            return None
        elif target.kind == "targetNode":
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
                (every_subject and node in around.out)
                or node in nodes
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
