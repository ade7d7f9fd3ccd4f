"""The storage seam: every read and write of triples goes through a :class:`Backend`.

A backend is small on purpose — open, query, ask, apply a delta atomically, bulk load,
dump, close — so that the embedded Oxigraph store and a SPARQL 1.1 protocol endpoint can
stand behind the same calls. It is three roles (:class:`QuadReads`, :class:`Queries` with
deadlines, :class:`Commits`) composed into :class:`Backend`; what a backend can do beyond
them it says by name (``validates_in_place``, ``stops_queries_at_deadline``), never by what
kind of store it is. Queries see the *union* of all graphs as their default graph;
whatever must stay out of validation and traversal (proposals) is stored reified, never as
the bare triple.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Protocol, runtime_checkable

from ontoloom.terms import Quad, Term, Triple

if TYPE_CHECKING:
    from ontoloom.store.lock import DataDirLock
    from ontoloom.store.reads import ReadSet

__all__ = ["Backend", "Checkpoints", "Commits", "Delta", "QuadReads", "Queries", "Row", "Scratch"]

Row = Mapping[str, Any]  # variable name → term (None when unbound)


@dataclass
class Delta:
    """Quads to remove and to add, applied as one atomic step (removes first).

    >>> from ontoloom.terms import NamedNode, Quad
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


@runtime_checkable
class QuadReads(Protocol):
    """Reading the stored quads, as written: one step of a walk, a node's mentions, whole
    graphs, and how the store keeps literals."""

    def quads(self, graph: Term | None = None) -> Iterator[Quad]:
        """Every quad, or every quad of one named graph, as written (literals included)."""
        ...

    def around(
        self, nodes: Iterable[Term], predicate: Term | None = None, *, incoming: bool = False
    ) -> Iterator[Quad]:
        """The quads of the graph queries see (with ``union``, every graph's) with one of
        ``nodes`` as their subject (``incoming``: as their object) and ``predicate`` (any
        when None), as the store keeps them: what a walk of the graph reads, one step at a
        time."""
        ...

    def mentioning(self, node: Term, limit: int) -> list[Quad]:
        """Up to ``limit`` quads outside the bookkeeping graph with ``node`` as their subject
        or object (as the store keeps them), subjects first."""
        ...

    def as_written(self, quads: Iterable[Quad]) -> Iterator[Quad]:
        """Quads a query returned (literals as the store keeps them), as they were written."""
        ...

    def rewritten(self) -> list[Quad]:
        """The quads, as written, whose literal the store keeps in another form (by value)."""
        ...

    def keeps_literals_as_written(self) -> bool:
        """Whether the store surely holds no literal in another form than written (cheap:
        False when it would take more than a read to tell)."""
        ...

    def data_quads(self) -> Iterator[Quad]:
        """What queries see as the default graph, as written (the bookkeeping graph aside)."""
        ...

    def named_graphs(self) -> Iterator[Term]: ...

    def dump(self, out: IO[bytes], format_name: str, graphs: list[Term] | None) -> None: ...


@runtime_checkable
class Queries(Protocol):
    """SPARQL read queries, bindings pre-bound as typed terms (never pasted)."""

    # Whether serialize_results stops a query at its ``timeout`` itself (the store runs it
    # in a process of its own, under its own time limits). When False (Oxigraph in this
    # process cannot cancel a query), a caller bounds a query by running it in a child
    # process over the data dir's store (:mod:`ontoloom.store.isolated`).
    stops_queries_at_deadline: bool

    def select(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> Iterator[Row]:
        """Run a SELECT; ``bindings`` pre-bind variables to typed terms (never pasted).

        Bound variables must be projected (SEP-0007 substitution, as Oxigraph implements it).
        """
        ...

    def ask(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> bool: ...

    def construct(
        self, sparql: str, bindings: Mapping[str, Term] | None = None
    ) -> Iterator[Triple]: ...

    def serialize_results(
        self,
        sparql: str,
        bindings: Mapping[str, Term] | None,
        format_name: str,
        timeout: float | None = None,
    ) -> tuple[str, bytes]:
        """Run any read query and serialise its result: SPARQL 1.1 results formats (json,
        csv, tsv, xml) for SELECT and ASK, RDF (turtle, ntriples) for CONSTRUCT/DESCRIBE.
        Returns (kind, bytes), kind one of select, ask, graph.

        :raises QueryTimeout: ``timeout`` seconds passed first (where the store can stop:
            see ``stops_queries_at_deadline``).
        """
        ...


@runtime_checkable
class Commits(Protocol):
    """Committing deltas, and the change generation that orders them."""

    writable: bool

    def apply(
        self,
        delta: Delta,
        expected: int | None = None,
        *,
        write_id: str | None = None,
        reads: ReadSet | None = None,
    ) -> int:
        """Commit ``delta`` atomically and bump the change generation; return it.

        ``expected``: commit only while the generation is still this one (the one the delta
        was validated against). ``reads`` (:mod:`ontoloom.store.reads`): what that validation
        read; a store that orders its writers by a lock may ignore it, one that many gateways
        commit to at once commits while none of it changed since ``expected`` (and the
        schema generation is still ``reads.schema_at``), whatever else did. ``write_id`` (:mod:`ontoloom.store.write_ids`; a fresh one
        when None) is stored in the same atomic step, with the generation and the store's
        time, so that :meth:`committed` can tell later whether it happened. A commit that
        changes the schema graph also moves the schema generation (:meth:`versions`).

        :raises CommitConflict: it is not (another writer committed first); nothing was
            committed.
        :raises OutcomeUnknown: the request went out and whether it committed cannot be told
            now; never retried here.
        """
        ...

    def committed(self, write_id: str) -> list[int]:
        """The generations the commits carrying ``write_id`` made (empty: none committed).

        :raises OntoloomError: the store cannot be asked now.
        """
        ...

    def generation(self) -> int:
        """The change generation: how many deltas were ever committed."""
        ...

    def versions(self) -> tuple[int, int]:
        """The generation and the schema generation (that of the last commit that changed
        the schema graph; 0 when none did), read together: a delta validated under the
        schema of one schema generation is committed only on top of that one."""
        ...

    def changes_since(self, generation: int) -> list[tuple[int, list[Term]]] | None:
        """The nodes each commit after ``generation`` touched, oldest first, from the
        store's change log; None when there is none reaching back that far."""
        ...

    def last_change(self) -> str | None:
        """When the last delta was committed (xsd:dateTime text), if ever."""
        ...

    def flush(self) -> None: ...


@runtime_checkable
class Backend(QuadReads, Queries, Commits, Protocol):
    """What ontoloom needs from a triple store: everything above ``ontoloom.store`` reads
    and writes through these methods only (the roles above, and what spans them)."""

    # Whether queries see every graph as the default graph (a scratch copy validating a
    # standalone data graph turns it off); a store's own backends always do.
    union: bool
    lock: DataDirLock | None  # the data dir's, held while the backend is open
    # Whether validation may run on this store itself, as it would on a scratch copy
    # (:func:`ontoloom.store.scratch`): the same engine answers its reads and queries, in
    # this process, so results found here and on a copy compare, and a query costs no round
    # trip. When False (another engine, over the network), validation reads what it needs
    # into a scratch copy and runs there.
    validates_in_place: bool

    def close(self) -> None: ...


@runtime_checkable
class Checkpoints(Protocol):
    """A journaled bulk load (:mod:`ontoloom.store.journal`): a large delta is loaded into a
    checkpoint of the store, validated there, and switched in whole. Only the commit function
    calls these."""

    def can_checkpoint(self) -> bool:
        """Whether this store can make checkpoints now (the live store of a data dir, open
        read-write under its exclusive lock)."""
        ...

    def checkpoint(self, delta: Delta, *, write_id: str | None = None) -> Backend:
        """A copy of the store with ``delta`` applied, stamped with the next generation and
        ``write_id`` (as :meth:`Commits.apply` stamps a commit), seen by nobody until
        :meth:`switch`.

        :raises BadInput: the delta cannot be stored as written (nothing is made).
        """
        ...

    def switch(self, checkpoint: Any, expected: int) -> int:
        """Make ``checkpoint`` the live store atomically; return the new generation.

        :raises CommitConflict: the generation is no longer ``expected`` (nothing switched).
        """
        ...

    def drop(self, checkpoint: Any) -> None:
        """Remove a checkpoint that was not switched in (a no-op once it was)."""
        ...


class Scratch(Backend, Protocol):
    """A local working copy (validation overlays, inference): a backend that a delta can be
    laid over without generation or atomicity."""

    def patch(self, delta: Delta) -> None: ...
