"""Acyclicity decided in one pass over a predicate's edges, not by a property path per node.

A node reaches itself through a predicate path ``p`` (``$this p ?n . ?n p* $this``, the query
of ontoloom's ``ol:AcyclicValidator``) exactly when it lies on a cycle of ``p``'s edges: when
an edge leaves it for a node of its own strongly connected component (itself, for a
self-loop). One pass of Tarjan's algorithm finds them all, in time linear in the edges, where
the query walks the rest of a chain from every node of it (quadratic: a 5,000-task ``blocks``
chain took 40 s). The engine then runs the constraint's own focused query on those nodes only
(:meth:`ontoloom.shacl.engine.Validator.validate`), so the results — focus nodes, values,
messages — are the query's, and none where the predicate has no cycle.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from ontoloom.shacl.native import digest

__all__ = ["ACYCLIC", "on_cycles", "strong_components"]

_N = TypeVar("_N", bound=Hashable)

#: The sh:select of ``ol:AcyclicValidator`` (shapes/components.ttl), by the SHA-256 of its
#: text as written: a constraint with this query and a predicate path is decided here.
ACYCLIC = digest(
    """
        SELECT DISTINCT $this WHERE {
            FILTER ($acyclic)
            $this $PATH ?acyclicNext .
            ?acyclicNext $PATH* $this .
        }"""
)


def on_cycles(edges: Iterable[tuple[_N, _N]]) -> list[_N]:
    """The nodes that lie on a cycle of ``edges`` (a self-loop is one), each once, in the
    order first met.

    >>> on_cycles([("a", "b"), ("b", "c"), ("c", "b"), ("d", "d")])
    ['b', 'c', 'd']
    """
    successors: dict[_N, list[_N]] = {}
    for a, b in edges:
        successors.setdefault(a, []).append(b)
    component = strong_components(successors)
    return [
        a for a, targets in successors.items() if any(component[a] == component[b] for b in targets)
    ]


def strong_components(edges: Mapping[_N, Sequence[_N]]) -> dict[_N, int]:
    """The strongly connected component of every node (Tarjan's algorithm, iterative so that
    a long chain does not exhaust Python's stack), in time linear in the edges.

    >>> c = strong_components({"a": ["b"], "b": ["a", "c"], "c": []})
    >>> c["a"] == c["b"] != c["c"]
    True
    """
    index: dict[_N, int] = {}
    low: dict[_N, int] = {}
    component: dict[_N, int] = {}
    stack: list[_N] = []
    nodes = list(dict.fromkeys([*edges, *(b for targets in edges.values() for b in targets)]))
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        work = [(root, iter(edges.get(root, ())))]
        while work:
            node, targets = work[-1]
            for nxt in targets:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                    break
                if nxt not in component:  # on the stack: in the component being built
                    low[node] = min(low[node], index[nxt])
            else:  # every target done
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    while True:
                        member = stack.pop()
                        component[member] = index[node]
                        if member == node:
                            break
    return component
