"""The rdfs:subClassOf closure that SHACL's class targets and sh:class consult."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ontoloom.terms import Term

__all__ = ["Hierarchy"]


class Hierarchy:
    """Which classes count as instances of a class (itself and its transitive subclasses).

    >>> from ontoloom.terms import NamedNode
    >>> a, b, c = NamedNode("http://a"), NamedNode("http://b"), NamedNode("http://c")
    >>> h = Hierarchy([(b, a), (c, b)])
    >>> [x.value for x in h.subclasses(a)]
    ['http://a', 'http://b', 'http://c']
    """

    def __init__(self, pairs: Iterable[tuple[Term, Term]] = ()) -> None:
        self._children: dict[Term, set[Term]] = defaultdict(set)
        self.pairs = frozenset(pairs)
        for sub, sup in self.pairs:
            self._children[sup].add(sub)
        self._cache: dict[Term, list[Term]] = {}

    def subclasses(self, cls: Term) -> list[Term]:
        cached = self._cache.get(cls)
        if cached is not None:
            return cached
        seen = {cls}
        stack = [cls]
        while stack:
            for child in self._children.get(stack.pop(), ()):
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        result = sorted(seen, key=str)
        self._cache[cls] = result
        return result

    def superclasses_of(self, classes: Iterable[Term]) -> set[Term]:
        """``classes`` and every class they are (transitively) subclasses of."""
        parents: dict[Term, set[Term]] = {}
        for sub, sup in self.pairs:
            parents.setdefault(sub, set()).add(sup)
        seen = set(classes)
        stack = list(seen)
        while stack:
            for parent in parents.get(stack.pop(), ()):
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        return seen

    def key(self) -> frozenset[tuple[Term, Term]]:
        return self.pairs
