"""A small read-only triple index for shapes graphs (lists, objects, subjects)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator

from ontoloom.terms import BlankNode, NamedNode, Statement, Term, Triple, spo
from ontoloom.vocab import RDF

__all__ = ["TripleIndex"]

RDF_FIRST = NamedNode(RDF + "first")
RDF_REST = NamedNode(RDF + "rest")
RDF_NIL = NamedNode(RDF + "nil")


class TripleIndex:
    def __init__(self, triples: Iterable[Statement]) -> None:
        self.triples: list[Statement] = []
        self._sp: dict[tuple[Term, Term], list[Term]] = defaultdict(list)
        self._po: dict[tuple[Term, Term], list[Term]] = defaultdict(list)
        self._p: dict[Term, list[tuple[Term, Term]]] = defaultdict(list)
        self._s: dict[Term, list[Statement]] = defaultdict(list)
        seen: set[Statement] = set()
        for t in triples:
            if t in seen:
                continue
            seen.add(t)
            self.triples.append(t)
            s, p, o = spo(t)
            self._sp[(s, p)].append(o)
            self._po[(p, o)].append(s)
            self._p[p].append((s, o))
            self._s[s].append(t)

    def objects(self, s: Term, p: Term) -> list[Term]:
        return self._sp.get((s, p), [])

    def value(self, s: Term, p: Term) -> Term | None:
        values = self._sp.get((s, p))
        return values[0] if values else None

    def subjects(self, p: Term, o: Term) -> list[Term]:
        return self._po.get((p, o), [])

    def pairs(self, p: Term) -> list[tuple[Term, Term]]:
        return self._p.get(p, [])

    def triples_of(self, s: Term) -> list[Statement]:
        """Every triple with subject ``s``."""
        return self._s.get(s, [])

    def items(self, head: Term) -> list[Term]:
        """The members of an RDF list, in order."""
        out: list[Term] = []
        seen: set[Term] = set()
        node: Term | None = head
        while node is not None and node != RDF_NIL and node not in seen:
            seen.add(node)
            first = self.value(node, RDF_FIRST)
            if first is None:
                break
            out.append(first)
            node = self.value(node, RDF_REST)
        return out

    def describe(self, node: Term) -> Iterator[Triple]:
        """``node``'s triples and, recursively, those of the blank nodes it reaches."""
        stack, seen = [node], set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            for t in self.triples_of(current):
                yield t if isinstance(t, Triple) else t.triple
                if isinstance(t.object, BlankNode):
                    stack.append(t.object)
