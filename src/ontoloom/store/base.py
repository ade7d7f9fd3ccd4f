"""The storage seam: every read and write of triples goes through a :class:`Backend`.

A backend is small on purpose — open, query, ask, apply a delta atomically, bulk load,
dump, close — so that the embedded Oxigraph store and a SPARQL 1.1 protocol endpoint can
stand behind the same calls. Queries see the *union* of all graphs as their default graph;
whatever must stay out of validation and traversal (proposals) is stored reified, never as
the bare triple.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from ontoloom.store.terms import Quad, Term, Triple

__all__ = ["Backend", "Delta", "Row"]

Row = Mapping[str, Any]  # variable name → term (None when unbound)


@dataclass
class Delta:
    """Quads to remove and to add, applied as one atomic step (removes first).

    >>> from ontoloom.store.terms import NamedNode, Quad
    >>> q = Quad(NamedNode("http://a"), NamedNode("http://p"), NamedNode("http://b"))
    >>> d = Delta(adds={q}, removes={q}).normalized()
    >>> d.is_empty()
    True
    """

    adds: set[Quad] = field(default_factory=set)
    removes: set[Quad] = field(default_factory=set)

    def normalized(self) -> Delta:
        both = self.adds & self.removes
        return Delta(adds=self.adds - both, removes=self.removes - both)

    def is_empty(self) -> bool:
        return not self.adds and not self.removes

    def merge(self, other: Delta) -> Delta:
        """This delta followed by ``other``."""
        adds = (self.adds - other.removes) | other.adds
        removes = (self.removes - other.adds) | other.removes
        return Delta(adds=adds, removes=removes)

    def __len__(self) -> int:
        return len(self.adds) + len(self.removes)


class Backend(Protocol):
    """What ontoloom needs from a triple store."""

    writable: bool

    def select(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> Iterator[Row]:
        """Run a SELECT; ``bindings`` pre-bind variables to typed terms (never pasted).

        Bound variables must be projected (SEP-0007 substitution, as Oxigraph implements it).
        """
        ...

    def ask(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> bool: ...

    def construct(
        self, sparql: str, bindings: Mapping[str, Term] | None = None
    ) -> Iterator[Triple]: ...

    def quads(self, graph: Term | None = None) -> Iterator[Quad]:
        """Every quad, or every quad of one named graph, as written (literals included)."""
        ...

    def as_written(self, quads: Iterable[Quad]) -> Iterator[Quad]:
        """Quads a query returned (literals as the store keeps them), as they were written."""
        ...

    def rewritten(self) -> list[Quad]:
        """The quads, as written, whose literal the store keeps in another form (by value)."""
        ...

    def data_quads(self) -> Iterator[Quad]:
        """What queries see as the default graph, as written (the bookkeeping graph aside)."""
        ...

    def apply(self, delta: Delta) -> int:
        """Commit ``delta`` atomically and bump the change generation; return it."""
        ...

    def generation(self) -> int:
        """The change generation: how many deltas were ever committed."""
        ...

    def dump(self, out: IO[bytes], format_name: str, graphs: list[Term] | None) -> None: ...

    def close(self) -> None: ...
