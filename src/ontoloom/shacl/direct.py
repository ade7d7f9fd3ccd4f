"""Units decided from the quads instead of by a planned query: the quads around a write's
few focus nodes, or every quad of a graph validated whole (``ontoloom validate``).

A focused run first reads every quad from its focus nodes, and the quads into them with the
predicate of an objects-of target in play (pattern reads). Those quads are all that some units'
queries read — which focus nodes the shape targets, and their values — and planning such a
query cost a write more than evaluating it (pyoxigraph has no prepared queries). A graph
validated whole is held in memory as written (:meth:`Around.whole`); its shapes' units, one
query each, cost more to plan and to scan the targets again than to read. So these units
are decided here, with their queries' semantics:

* a constraint component that offers a check over quads
  (:meth:`~ontoloom.shacl.components.Constraint.quad_check`: sh:minCount, sh:maxCount,
  sh:in, sh:hasValue, sh:datatype, sh:nodeKind, and sh:class where every quad is at hand), on
  a node shape or a predicate path: values are distinct terms, compared as terms (sameTerm);
* a judged SPARQL constraint of a node shape (:mod:`.native`): the rows of its pattern
  ``$this ?path ?value``, each judged as the query's rows are;

for a shape targeted by class (the subclasses the compiled query lists: blank ones aside),
node, subjects-of, objects-of, or a SPARQL target whose query is known by its exact text
(:data:`EVERY_SUBJECT`, ol:NoSecrets' target).

Everything else runs its compiled SPARQL: other components and paths, nested shapes, other
SPARQL targets, and every focused run with a focus node that is a blank node or a literal the
store keeps in another form ("01"^^xsd:integer): the query's answer names such a node as the
store has it. ``tests/test_direct.py`` holds these readers to the compiled queries and to
whole-store validation; the W3C, DASH and pySHACL suites and the differential tests hold
whole validation to the spec and to pySHACL.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ontoloom.shacl.compiler import Violation
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.native import Judge, digest
from ontoloom.shacl.shapes import RDF_TYPE, Shape
from ontoloom.store.base import Backend, Row
from ontoloom.terms import BlankNode, Literal, NamedNode, Statement, Term, spo
from ontoloom.vocab import RDFS

__all__ = ["EVERY_SUBJECT", "Around", "Reader", "judged_reader", "reader"]


_T = TypeVar("_T")
_SUBCLASS_OF = RDFS + "subClassOf"
_TYPE = RDF_TYPE.value

#: A node's quads: predicate IRI (a string: its hash is kept, a term's is computed anew at
#: every lookup) → objects.
Quads = dict[str, Collection[Term]]


@dataclass
class Around:
    """The quads from and to some focus nodes, as the store keeps them; or every quad of a
    graph, as written (``focus`` None: every target is a focus node)."""

    focus: list[Term] | None
    out: dict[Term, Quads] = field(default_factory=dict)  # s → p → objects
    # (o, p) of some quad into a focus node, for the predicates of objects-of targets: the
    # only incoming quads a reader asks about (a class node has one per instance)
    incoming: set[tuple[Term, Term]] = field(default_factory=set)
    # Whether every focus node is written as the store keeps it, so that these quads can
    # answer for a query that names the focus nodes in VALUES.
    exact: bool = True
    _instances: dict[Term, list[Term]] | None = field(default=None, repr=False)
    # a whole graph's focus nodes per kind of targets, found once for all units of a shape
    _targeted: dict[object, list[tuple[Term, Quads]]] = field(default_factory=dict, repr=False)
    _memo: dict[object, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def whole(cls, statements: Iterable[Statement]) -> Around:
        """Every statement of a graph (their graph names aside), as written."""
        # (typed as Any: pyoxigraph types a subject or object as possibly an RDF-star triple,
        # which ontoloom's parsers refuse; narrowing each would cost a call per quad)
        # One value, the commonest, is a tuple: a third of a set's memory and time to make
        # and to free, for a hundred thousand of them.
        out: dict[Any, dict[str, Any]] = {}
        for t in statements:
            s, p, o = t.subject, t.predicate.value, t.object
            by_predicate = out.get(s)
            if by_predicate is None:
                out[s] = {p: (o,)}
                continue
            objects = by_predicate.get(p)
            if objects is None:
                by_predicate[p] = (o,)
            elif type(objects) is tuple:
                by_predicate[p] = {objects[0], o}  # (one, when the triple is written twice)
            else:
                objects.add(o)
        return cls(None, out)

    def subclass_pairs(self) -> list[tuple[Term, Term]]:
        """Every (subclass, class) the graph states, as ``?s rdfs:subClassOf ?o`` finds them."""
        return [(s, o) for s, by in self.out.items() for o in by.get(_SUBCLASS_OF, ())]

    def instances(self, cls: Term) -> list[Term]:
        """The subjects typed ``cls`` (of a whole graph)."""
        if self._instances is None:
            found: dict[Term, list[Term]] = {}
            for s, by in self.out.items():
                for t in by.get(_TYPE, ()):
                    found.setdefault(t, []).append(s)
            self._instances = found
        return self._instances.get(cls, [])

    def instances_of(self, classes: Collection[Term]) -> set[Term]:
        """The subjects typed with any of ``classes`` (of a whole graph)."""
        found: set[Term] = set()
        for cls in classes:
            found.update(self.instances(cls))
        return found

    def memo_set(self, key: object, find: Callable[[], set[_T]]) -> set[_T]:
        """``find()``, kept for ``key`` (a whole graph's: the same for every unit)."""
        known = self._memo.get(key)
        if known is None:
            known = self._memo[key] = find()
        return known

    def objects_kept_as_written(self, predicate: Term) -> bool:
        """Whether a store would keep every literal object of ``predicate`` (of a whole
        graph) as written: else two such focus nodes of an objects-of target may be one
        node there ("01" and "1" as xsd:integer), as they are to pySHACL, and the shape is
        left to the store's route, which hands them to pySHACL."""
        key = ("kept", predicate.value)
        known = self._memo.get(key)
        if known is None:
            known = self._memo[key] = all(
                _kept_as_written(o)
                for by in self.out.values()
                for o in by.get(predicate.value, ())
                if isinstance(o, Literal)
            )
        return bool(known)

    def memo(self, key: object, find: Callable[[], list[_T]]) -> list[_T]:
        """``find()``, kept for ``key`` where the Around holds a whole graph (the same for
        every unit that asks), found anew for a write's few nodes."""
        if self.focus is not None:
            return find()
        known = self._memo.get(key)
        if known is None:
            known = self._memo[key] = find()
        return known

    @classmethod
    def read(cls, data: Backend, focus: list[Term], objects_of: Iterable[Term] = ()) -> Around:
        """The quads from the focus nodes, and those into them with one of ``objects_of``
        (the predicates of the objects-of targets in play)."""
        out: dict[Term, Any] = {}  # (sets of objects, by predicate)
        for s, p, o in map(spo, data.around(focus)):
            out.setdefault(s, defaultdict(set))[p.value].add(o)
        incoming: set[tuple[Term, Term]] = {
            (o, p)
            for predicate in objects_of
            for _, p, o in map(spo, data.around(focus, predicate, incoming=True))
        }
        return cls(focus, out, incoming, all(_kept_as_written(f) for f in focus))

    def values(self, node: Term, predicate: Term) -> Collection[Term]:
        return self.out.get(node, _NO_VALUES).get(predicate.value, _NONE)


_NONE: Collection[Term] = ()
_NO_VALUES: Quads = {}

#: sparqlTarget queries whose meaning is known, by the SHA-256 of their text as written:
#: "every subject" (ol:NoSecrets' target).
EVERY_SUBJECT = digest("SELECT DISTINCT ?this WHERE { ?this ?p ?o }")


@dataclass(frozen=True)
class Reader:
    """The rows a unit's focused query would return, from the quads around the focus nodes
    (or, from a whole graph's, those of its query over every target)."""

    read: Callable[[Around], Iterator[Row]]
    # It reads quads of the value nodes too: only an Around holding every quad may answer.
    whole_only: bool = False

    def __call__(self, around: Around) -> Iterator[Row]:
        return self.read(around)


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
    if path is not None and (not path.is_predicate or path.iri is None):
        return None
    check = constraint.quad_check(hierarchy)
    if check is None:
        return None
    targeted = _targets(top, hierarchy)
    if targeted is None:
        return None
    predicate = None if path is None or path.iri is None else path.iri.value
    name = violation.value.lstrip("?") if violation.value else None
    per_value = constraint.per_value

    def read(around: Around) -> Iterator[Row]:
        nodes: list[tuple[Term, Collection[Term]]]
        if predicate is None:
            nodes = [(node, (node,)) for node, _ in targeted(around)]
        elif per_value:  # a focus node without values holds: only those with some are read
            nodes = _with_values(around, targeted, predicate)
        else:
            nodes = [(node, by.get(predicate, _NONE)) for node, by in targeted(around)]
        for node, value in check(nodes, around):
            yield {"this": node} if value is None or name is None else {"this": node, name: value}

    return Reader(read, whole_only=constraint.reads_value_quads)


def _with_values(
    around: Around, targeted: _Targeted, predicate: str
) -> list[tuple[Term, Collection[Term]]]:
    """The targeted focus nodes that have values for ``predicate``, with them, in the
    targets' order. Of a whole graph, every predicate's are found in one pass over the
    targets' quads, kept for all the property shapes of those targets (one pass, where a
    pass per property shape read every target once per shape); of a write's few nodes,
    looked up."""
    if around.focus is not None:
        return [(n, vs) for n, by in targeted(around) if (vs := by.get(predicate))]
    key = ("with values", targeted.key)
    buckets: dict[str, list[tuple[Term, Collection[Term]]]] | None = around._memo.get(key)
    if buckets is None:
        buckets = around._memo[key] = {}
        for node, by in targeted(around):
            for p, values in by.items():
                if values:
                    found = buckets.get(p)
                    if found is None:
                        buckets[p] = [(node, values)]
                    else:
                        found.append((node, values))
    return buckets.get(predicate, [])


def judged_reader(top: Shape, judge: Judge, hierarchy: Hierarchy) -> Reader | None:
    """A reader for a judged SPARQL constraint of a node shape (:mod:`.native`): the rows
    of its graph pattern ``$this ?path ?value``, each judged; None when its compiled query
    must run."""
    targeted = _targets(top, hierarchy)
    if targeted is None:
        return None

    def rows(around: Around) -> Iterator[Row]:
        # Judged as :func:`~ontoloom.shacl.native.judged` judges rows, a row made only for a
        # violation: a whole graph's every triple is asked (a bulk import's million).
        paths: dict[str, NamedNode] = {}
        for node, by in targeted(around):
            for path, values in by.items():
                term = paths.get(path)
                if term is None:
                    term = paths[path] = NamedNode(path)
                for value in sorted(values, key=str) if len(values) > 1 else values:
                    extra = judge(term, value)
                    if extra is not None:
                        yield {"this": node, "path": term, "value": value, **extra}

    return Reader(rows)


@dataclass(frozen=True)
class _Targeted:
    """The focus nodes a shape's targets reach in an Around, each with its quads."""

    key: object  # the targets, told apart
    find: Callable[[Around], list[tuple[Term, Quads]]]

    def __call__(self, around: Around) -> list[tuple[Term, Quads]]:
        return self.find(around)


def _targets(top: Shape, hierarchy: Hierarchy) -> _Targeted | None:
    """Which focus nodes the shape targets, as its focused query tests them, each with its
    quads; None when a target is of a kind tested only by running it."""
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

    ordered = sorted(classes, key=str)
    kinds = (tuple(sorted(nodes, key=str)), tuple(ordered), tuple(subjects_of), tuple(objects_of))
    key = (*kinds, every_subject)

    subjects_iris = [p.value for p in subjects_of]
    objects_iris = [p.value for p in objects_of]

    def targeted(around: Around) -> list[tuple[Term, Quads]]:
        if around.focus is None:
            known = around._targeted.get(key)
            if known is None:
                known = around._targeted[key] = _every(around)
            return known
        out = around.out
        return [(node, out.get(node, _NO_VALUES)) for node in _focused(around)]

    def _every(around: Around) -> list[tuple[Term, Quads]]:
        """A whole graph's focus nodes of these targets, each once, with their quads."""
        found: dict[Term, None] = dict.fromkeys(kinds[0])
        if every_subject:
            found.update(dict.fromkeys(around.out))
        for cls in ordered:
            found.update(dict.fromkeys(around.instances(cls)))
        if subjects_iris or objects_iris:
            for s, by in around.out.items():
                if any(p in by for p in subjects_iris):
                    found[s] = None
                for p in objects_iris:
                    found.update(dict.fromkeys(by.get(p, ())))
        out = around.out
        return [(node, out.get(node, _NO_VALUES)) for node in found]

    def _focused(around: Around) -> Iterator[Term]:
        assert around.focus is not None
        for node in around.focus:
            if (
                (every_subject and node in around.out)
                or node in nodes
                or not classes.isdisjoint(around.values(node, RDF_TYPE))
                or any(around.values(node, p) for p in subjects_of)
                or any((node, p) in around.incoming for p in objects_of)
            ):
                yield node

    return _Targeted(key, targeted)


def _kept_as_written(term: Term) -> bool:
    if isinstance(term, Literal):
        from ontoloom.store.lexical import stored_form

        return stored_form(term) == term  # (language tags are lower-cased when read)
    return isinstance(term, NamedNode)
