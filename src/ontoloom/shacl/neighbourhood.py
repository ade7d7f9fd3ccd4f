"""The part of the store a delta's validation reads, found by walking the store.

Backwards, from what a delta changes, to every focus node whose validation may read it;
forwards, from those focus nodes (and the delta's own nodes, which the delta may connect to
them), to copy everything their validation reads. Both walks follow the steps of a shape's
:class:`~ontoloom.shacl.reach.Reach`, as many levels as it says, or to closure when it has no
bound — never cut short: what they return is exact, and its size depends on the region the
shapes can see, not on the size of the graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ontoloom.shacl.reach import ANY, Reach, Step
from ontoloom.store.base import Backend, Delta
from ontoloom.store.lexical import stored_quads
from ontoloom.terms import NamedNode, Quad, Term, spo
from ontoloom.terms import node as held
from ontoloom.vocab import META, RDF_TYPE

__all__ = ["Changed", "Walker"]


@dataclass
class Changed:
    """The nodes a delta touches: subjects of changed triples, their non-literal objects,
    and the nodes whose types changed."""

    subjects: set[Term]
    objects: dict[Term, set[NamedNode]]  # object → predicates of the changed triples into it
    retyped: set[Term]
    removed: frozenset[Quad] = frozenset()
    # Literals count: they are focus nodes too (sh:targetObjectsOf, sh:targetNode), and a
    # backward step can walk from one (a path such as ex:p/^ex:p).

    @classmethod
    def of(cls, delta: Delta) -> Changed:
        subjects: set[Term] = set()
        objects: dict[Term, set[NamedNode]] = {}
        retyped: set[Term] = set()
        for quad in (*delta.adds, *delta.removes):
            if quad.graph_name == META:
                continue
            s, p, o = spo(quad)
            subjects.add(s)
            objects.setdefault(o, set()).add(p)
            if p == RDF_TYPE:
                retyped.add(s)
        return cls(subjects, objects, retyped, frozenset(delta.removes))

    def nodes(self) -> set[Term]:
        return self.subjects | set(self.objects)


class Walker:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    # -- backwards: which focus nodes may see a change --------------------------------------
    def focus_nodes(self, reach: Reach, changed: Changed) -> list[Term]:
        """Every node whose validation under ``reach`` may read a changed triple."""
        backwards = {s.predicate for s in reach.steps if s.backwards}
        read_in = backwards | reach.focus_incoming
        # A node's outgoing triples are read up to level depth-1; the incoming triples of a
        # backward step likewise; its type up to level depth.
        seeds = set(changed.subjects)
        seeds |= {
            o
            for o, predicates in changed.objects.items()
            if ANY in backwards or predicates & read_in
        }
        # Every node a changed triple touches is a focus node: a node's mere presence in the
        # graph decides what a zero-length path (ex:p*) gives it.
        found: dict[Term, None] = dict.fromkeys(sorted(changed.nodes(), key=str))
        deeper = None if reach.depth is None else reach.depth - 1
        found.update(dict.fromkeys(self._back(reach, sorted(seeds, key=str), deeper)))
        if changed.retyped and reach.depth is not None:
            retyped = sorted(changed.retyped, key=str)
            found.update(dict.fromkeys(self._back(reach, retyped, reach.depth)))
        return list(found)

    def _back(self, reach: Reach, start: list[Term], levels: int | None) -> list[Term]:
        """Nodes from which ``reach``'s steps lead to ``start`` within ``levels`` steps
        (to closure when None)."""
        seen: set[Term] = set(start)
        out: list[Term] = []
        frontier = list(start)
        level = 0
        while frontier and (levels is None or level < levels):
            level += 1
            nxt: list[Term] = []
            for node in self._neighbours(reach.steps, frontier, reverse=True):
                if node not in seen:
                    seen.add(node)
                    nxt.append(node)
            out += nxt
            frontier = nxt
        return out

    def _neighbours(
        self, steps: Iterable[Step], nodes: list[Term], *, reverse: bool
    ) -> Iterator[Term]:
        """Where one step leads from ``nodes`` (``reverse``: where it comes from)."""
        forward = sorted({s.predicate for s in steps if s.backwards == reverse}, key=str)
        backward = sorted({s.predicate for s in steps if s.backwards != reverse}, key=str)
        # Walking a forward step from ``n`` reads ``n p ?o``; walking it in reverse, ``?s p n``.
        yield from self._ends(forward, nodes, out=True)
        yield from self._ends(backward, nodes, out=False)

    def _ends(self, predicates: list[NamedNode], nodes: list[Term], *, out: bool) -> Iterator[Term]:
        if not predicates or not nodes:
            return
        for predicate in [None] if ANY in predicates else predicates:
            for quad in self.backend.around(nodes, predicate, incoming=not out):
                yield held(quad.object if out else quad.subject)

    # -- forwards: what their validation reads ------------------------------------------------
    def neighbourhood(
        self, reach: Reach, start: Iterable[Term], removed: frozenset[Quad] = frozenset()
    ) -> set[Quad]:
        """Every quad validating ``start`` under ``reach`` reads (the bookkeeping graph aside),
        before and after a delta removing ``removed``."""
        quads: set[Quad] = set()
        seen: set[Term] = set()
        frontier: list[Term] = list(dict.fromkeys(start))
        first = list(frontier)
        forward = {s.predicate for s in reach.steps if not s.backwards}
        backward = sorted({s.predicate for s in reach.steps if s.backwards}, key=str)
        level = 0
        while frontier and (reach.depth is None or level < reach.depth):
            seen.update(frontier)
            reached: set[Term] = set()
            for quad in self.backend.around(frontier):
                quads.add(quad)
                if ANY in forward or quad.predicate in forward:
                    reached.add(held(quad.object))
            incoming = backward if level else sorted({*backward, *reach.focus_incoming}, key=str)
            for quad in self._incoming(incoming, frontier):
                quads.add(quad)
                if quad.predicate in backward or ANY in backward:
                    reached.add(held(quad.subject))
            frontier = [n for n in reached if n not in seen]
            level += 1
        # The last level: only types are read there (sh:class, class targets).
        quads.update(self.backend.around(frontier, RDF_TYPE))
        quads |= self._witnesses(first, quads, removed)
        return set(self.backend.as_written(q for q in quads if q.graph_name != META))

    def _witnesses(
        self, nodes: list[Term], quads: set[Quad], removed: frozenset[Quad]
    ) -> set[Quad]:
        """One triple for each start node that nothing copied (and kept by the delta)
        mentions, when the store has one: whether a node is in the graph at all decides what
        a zero-length path (``ex:p*``) gives it, before the delta and after it."""
        removed = frozenset(stored_quads(removed).values())  # compared with quads as stored
        mentioned = {t for q in quads if q not in removed for t in (q.subject, q.object)}
        found: set[Quad] = set()
        for node in nodes:
            if node in mentioned:
                continue
            # one more than the delta removes: one of them, if any, is kept by the delta
            kept = [q for q in self.backend.mentioning(node, len(removed) + 1) if q not in removed]
            if kept:
                found.add(kept[0])
        return found

    def _incoming(self, predicates: list[NamedNode], nodes: list[Term]) -> Iterator[Quad]:
        for predicate in [None] if ANY in predicates else predicates:
            yield from self.backend.around(nodes, predicate, incoming=True)

    def everything(self) -> set[Quad]:
        """The whole store (the bookkeeping graph aside): what a global shape reads."""
        return {q for q in self.backend.quads() if q.graph_name != META}
