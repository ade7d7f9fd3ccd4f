"""The store as a delta would leave it, for pattern reads only.

The write path validates a delta's focus nodes on a scratch store holding the neighbourhood
their validation reads (:mod:`ontoloom.shacl.neighbourhood`). When each shape checked is
decided by the quads around the focus nodes (:mod:`ontoloom.shacl.direct`), those few reads
can go to the store itself, with the delta laid over them: no neighbourhood is walked and
nothing is copied. This view answers exactly what the scratch store would — the same quads
around the same nodes — and nothing else: a validation that asks for more (a query, the
whole graph) gets :class:`NotReadable`, and the write path validates on a scratch store.

It is offered only where it matches the scratch store quad for quad: a store validation may
run on in place (``Backend.validates_in_place``: the engine of a scratch copy) whose queries
see every graph, holding no literal in another form than written, and a delta with
no blank node, no bookkeeping quad and no literal the store would keep in another form.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ontoloom.store.base import Backend, Delta
from ontoloom.store.lexical import stored_quads
from ontoloom.terms import BlankNode, NamedNode, Quad, Term
from ontoloom.vocab import META

__all__ = ["NotReadable", "Overlay"]


class NotReadable(Exception):
    """A validation asked an overlay for more than the quads around some nodes."""


class Overlay:
    """``backend`` with ``delta`` applied, as far as :meth:`around` reads it."""

    validates_in_place = True  # what it is for; every read but around() is NotReadable
    union = True

    def __init__(self, backend: Backend, delta: Delta) -> None:
        self._backend = backend
        self._adds = delta.adds
        self._removes = delta.removes

    @classmethod
    def of(cls, backend: Backend, delta: Delta) -> Overlay | None:
        """The view, or None where it would differ from a scratch copy (see the module)."""
        if not backend.validates_in_place or not getattr(backend, "union", False):
            return None
        quads = [*delta.adds, *delta.removes]
        if any(q.graph_name == META or _has_blank(q) for q in quads):
            return None
        if any(stored != quad for quad, stored in stored_quads(quads).items()):
            return None
        if not backend.keeps_literals_as_written():
            return None
        return cls(backend, delta)

    def around(
        self, nodes: Iterable[Term], predicate: Term | None = None, *, incoming: bool = False
    ) -> Iterator[Quad]:
        """As :meth:`Backend.around`, the bookkeeping graph aside (a scratch copy holds none
        of it)."""
        nodes = list(nodes)
        seen: set[Quad] = set()
        for quad in self._backend.around(nodes, predicate, incoming=incoming):
            if quad.graph_name != META and quad not in self._removes:
                seen.add(quad)
                yield quad
        if predicate is not None and not isinstance(predicate, NamedNode):
            return
        wanted = set(nodes)
        for quad in self._adds:
            end = quad.object if incoming else quad.subject
            matches = end in wanted and (predicate is None or quad.predicate == predicate)
            if matches and quad not in seen:
                yield quad

    def rewritten(self) -> list[Quad]:
        return []  # no literal in another form, in the store or the delta (see `of`)

    def keeps_literals_as_written(self) -> bool:
        return True  # see `of`

    def __getattr__(self, name: str) -> Any:
        # every other read (select, quads, mentioning, …) and every write
        raise NotReadable(f"an overlay answers pattern reads only, not {name}")


def _has_blank(quad: Quad) -> bool:
    return any(isinstance(t, BlankNode) for t in (quad.subject, quad.object, quad.graph_name))
