"""The embedded backend: a pyoxigraph ``Store`` on disk (or in memory for scratch work)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from io import BytesIO
from itertools import chain
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pyoxigraph

from ontoloom.errors import BadInput, CommitConflict, StorageError
from ontoloom.store import write_ids
from ontoloom.store.base import Delta, Row
from ontoloom.store.journal import StoreDirs, deferred_signals, drop, step
from ontoloom.store.lexical import (
    DATATYPE,
    LEXICAL_FORM,
    record_iri,
    record_key,
    record_quads,
    split_kept,
    stored_quads,
    written_literal,
)
from ontoloom.terms import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    RdfFormat,
    Term,
    Triple,
    Variable,
    graph_name,
    node,
    serialize,
    subject,
)
from ontoloom.vocab import (
    GENERATION,
    LAST_CHANGE,
    META,
    SCHEMA_GENERATION,
    SCHEMA_GRAPH,
    STORE_NODE,
    XSD,
)

if TYPE_CHECKING:
    from ontoloom.store.lock import DataDirLock
    from ontoloom.store.reads import ReadSet

__all__ = ["FORMATS", "EmbeddedBackend", "quad_text"]

FORMATS = {
    "turtle": RdfFormat.TURTLE,
    "ttl": RdfFormat.TURTLE,
    "trig": RdfFormat.TRIG,
    "nquads": RdfFormat.N_QUADS,
    "nq": RdfFormat.N_QUADS,
    "ntriples": RdfFormat.N_TRIPLES,
    "nt": RdfFormat.N_TRIPLES,
    "jsonld": RdfFormat.JSON_LD,
    "json-ld": RdfFormat.JSON_LD,
    "rdfxml": RdfFormat.RDF_XML,
    "rdf": RdfFormat.RDF_XML,
    "n3": RdfFormat.N3,
}

_RESULT_FORMATS = {
    "json": pyoxigraph.QueryResultsFormat.JSON,
    "csv": pyoxigraph.QueryResultsFormat.CSV,
    "tsv": pyoxigraph.QueryResultsFormat.TSV,
    "xml": pyoxigraph.QueryResultsFormat.XML,
}

# A write of this many quads or more is followed by a compaction of the store's files
# (pyoxigraph's optimize): a store left as a bulk write made it answered a pattern read in
# 0.2-0.4 ms at 100k entities, 11 us once compacted (which took 1.7 s there).
BULK_WRITE = 10_000
_REPORT_EVERY = 10_000  # quads a bulk load reads between two progress reports

_BUMP_GENERATION = f"""
DELETE {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?old . {STORE_NODE} {LAST_CHANGE} ?oldTime }} }}
INSERT {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?new . {STORE_NODE} {LAST_CHANGE} ?now }} }}
WHERE {{
  OPTIONAL {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?old }} }}
  OPTIONAL {{ GRAPH {META} {{ {STORE_NODE} {LAST_CHANGE} ?oldTime }} }}
  BIND(COALESCE(?old, 0) + 1 AS ?new)
  BIND(NOW() AS ?now)
}}"""

# After _BUMP_GENERATION, in the same update: the write id, with the generation it made.
_WRITE_STAMP = """
INSERT {{ GRAPH {meta} {{ {write} {generation} ?new . {write} {last} ?now }} }}
WHERE {{ {{ SELECT (MAX(?g) AS ?new) WHERE {{ GRAPH {meta} {{ {store} {generation} ?g }} }} }}
  BIND(NOW() AS ?now) }}"""
_SCHEMA_STAMP = """
DELETE {{ GRAPH {meta} {{ {store} {schema} ?old }} }}
INSERT {{ GRAPH {meta} {{ {store} {schema} ?new }} }}
WHERE {{ {{ SELECT (MAX(?g) AS ?new) WHERE {{ GRAPH {meta} {{ {store} {generation} ?g }} }} }}
  OPTIONAL {{ GRAPH {meta} {{ {store} {schema} ?old }} }} }}"""


def quad_text(quad: Quad) -> str:
    """A quad as SPARQL data: terms are serialised by pyoxigraph, so text is always escaped."""
    triple = f"{quad.subject} {quad.predicate} {quad.object} ."
    if isinstance(quad.graph_name, DefaultGraph):
        return triple
    return f"GRAPH {quad.graph_name} {{ {triple} }}"


_BULK_FILL = 10_000  # quads from which a scratch store is filled by the bulk loader


class EmbeddedBackend:
    """pyoxigraph behind the :class:`~ontoloom.store.base.Backend` seam.

    >>> from ontoloom.terms import Literal, NamedNode, Quad
    >>> b = EmbeddedBackend.memory()
    >>> q = Quad(NamedNode("http://a"), NamedNode("http://p"), Literal("x"), NamedNode("http://g"))
    >>> b.apply(Delta(adds={q}))
    1
    >>> [row["o"].value for row in b.select("SELECT ?o WHERE { GRAPH <http://g> { ?s ?p ?o } }")]
    ['x']
    """

    # Validation runs here as on a scratch copy (which is one of these); a query cannot be
    # stopped in this process, so a caller bounds one in a child (ontoloom.store.isolated).
    validates_in_place = True
    stops_queries_at_deadline = False

    def __init__(self, store: pyoxigraph.Store, *, writable: bool, union: bool = True) -> None:
        self._store = store
        self.writable = writable
        self._dirty = False  # written since opened: flushed on close
        # Queries see every graph as the default graph; a scratch store validating a
        # standalone data graph turns that off so that a shapes graph beside it stays apart.
        self.union = union
        self.lock: DataDirLock | None = None  # the data dir's, set by open_backend
        # The store's generation and last-change quads, kept while this process has the
        # store open read-write: no other process can write it then, so only apply() moves
        # them. Reading them again each time is costly: every commit replaces them, and
        # the store's index scans over the deleted ones until it compacts.
        self._stamp: list[Quad] | None = None
        # Whether the store holds records of literals written in another form (None:
        # unknown), kept while the store is open read-write, as the stamp is: only this
        # object writes it then.
        self._holds_records: bool | None = None
        # Where the store is on disk (None in memory), and — opened read-write on a data
        # dir, under its exclusive lock — the data dir's store directories, which a bulk
        # load may switch to a checkpoint (:mod:`ontoloom.store.journal`).
        self.path: Path | None = None
        self.dirs: StoreDirs | None = None

    @classmethod
    def memory(cls) -> EmbeddedBackend:
        return cls(pyoxigraph.Store(), writable=True)

    @classmethod
    def scratch(cls, quads: Iterable[Quad] = (), *, union: bool = True) -> EmbeddedBackend:
        """An in-memory working copy (validation overlays): no generation bookkeeping.
        Quads come in as written and are kept so (:mod:`ontoloom.store.lexical`)."""
        backend = cls(pyoxigraph.Store(), writable=True, union=union)
        # Most quads are kept as written, known without asking: loaded as they are. The
        # others go through patch, which writes their records and refuses a literal whose
        # stored form is a quad already loaded (two literals the store would keep as one).
        kept, others = split_kept(quads)
        backend._fill(kept)
        if others:
            backend.patch(Delta(adds=set(others)))
        return backend

    def patch(self, delta: Delta) -> None:
        """Apply ``delta`` to a scratch store, without generation or atomicity."""
        plan = self._as_stored(delta.normalized())
        self._stamp = None
        for quad in plan.removes:
            self._store.remove(quad)
        for record in plan.drops:
            for quad in list(self._store.quads_for_pattern(record, None, None, META)):
                self._store.remove(quad)
        self._fill([*plan.adds, *plan.records])
        self._records_after(plan)

    def _fill(self, quads: list[Quad]) -> None:
        """Add to a scratch store: no reader to keep a transaction for, so a large batch takes
        the bulk loader (a quarter faster at a million quads; slower below a few thousand)."""
        if len(quads) >= _BULK_FILL:
            self._store.bulk_extend(quads)
        else:
            self._store.extend(quads)

    @classmethod
    def open(cls, path: Path, *, writable: bool) -> EmbeddedBackend:
        """Open the store at ``path``: read-write (creates it) or read-only.

        :raises OntoloomError: when the directory holds no usable store.
        """
        try:
            if writable:
                path.mkdir(parents=True, exist_ok=True)
                backend = cls(pyoxigraph.Store(str(path)), writable=True)
            else:
                backend = cls(pyoxigraph.Store.read_only(str(path)), writable=False)
        except OSError as exc:
            raise StorageError(f"cannot open the store at {path}: {exc}") from exc
        backend.path = path
        return backend

    # -- reads ---------------------------------------------------------------------------
    def _query(self, sparql: str, bindings: Mapping[str, Term] | None):
        subs: dict[Variable, Term | Triple] | None = (
            {Variable(k): v for k, v in bindings.items()} if bindings else None
        )
        try:
            return self._store.query(
                sparql, use_default_graph_as_union=self.union, substitutions=subs
            )
        except SyntaxError as exc:
            raise BadInput(f"SPARQL syntax error: {exc}") from exc

    def select(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> Iterator[Row]:
        solutions = self._query(sparql, bindings)
        names = [v.value for v in solutions.variables]
        # A solution iterates its values in the order of the variables (None where unbound):
        # zipped, not looked up by name — a third of the cost of a row.
        for solution in solutions:
            yield dict(zip(names, solution, strict=True))

    def select_raw(self, sparql: str, bindings: Mapping[str, Term] | None = None):
        """The backend's own solution object (for SPARQL results serialisation)."""
        return self._query(sparql, bindings)

    def serialize_results(
        self,
        sparql: str,
        bindings: Mapping[str, Term] | None,
        format_name: str,
        timeout: float | None = None,  # in-process: callers isolate a query to bound it
    ) -> tuple[str, bytes]:
        """Run any read query and serialise its result: SPARQL 1.1 results formats (json,
        csv, tsv, xml) for SELECT and ASK, RDF (turtle, ntriples) for CONSTRUCT/DESCRIBE.
        Returns (kind, bytes) with kind one of select, ask, graph."""
        result = self._query(sparql, bindings)
        out = BytesIO()
        if isinstance(result, pyoxigraph.QueryBoolean | pyoxigraph.QuerySolutions):
            kind = "ask" if isinstance(result, pyoxigraph.QueryBoolean) else "select"
            fmt = _RESULT_FORMATS.get(format_name, pyoxigraph.QueryResultsFormat.JSON)
            result.serialize(out, fmt)
            return kind, out.getvalue()
        serialize(result, out, FORMATS.get(format_name, RdfFormat.TURTLE))
        return "graph", out.getvalue()

    def ask(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> bool:
        return bool(self._query(sparql, bindings))

    def construct(
        self, sparql: str, bindings: Mapping[str, Term] | None = None
    ) -> Iterator[Triple]:
        return iter(self._query(sparql, bindings))

    def quads(self, graph: Term | None = None) -> Iterator[Quad]:
        """Every quad (or every quad of one graph), as written."""
        name = None if graph is None else graph_name(graph)
        return self.as_written(self._store.quads_for_pattern(None, None, None, name))

    def named_graphs(self) -> Iterator[Term]:
        return iter(self._store.named_graphs())

    def around(
        self, nodes: Iterable[Term], predicate: Term | None = None, *, incoming: bool = False
    ) -> Iterator[Quad]:
        # A pattern read costs microseconds where planning the same SPARQL costs a hundred.
        p = predicate if isinstance(predicate, NamedNode) else None
        if predicate is not None and p is None:
            return  # no predicate is a blank node or a literal
        graph = None if self.union else DefaultGraph()  # the graph that queries see
        for one in nodes:
            if incoming:
                yield from self._store.quads_for_pattern(None, p, one, graph)
            elif not isinstance(one, Literal):  # a literal is no subject
                yield from self._store.quads_for_pattern(one, p, None, graph)

    def mentioning(self, node: Term, limit: int) -> list[Quad]:
        found: dict[Quad, None] = {}  # a quad from the node to itself is met twice
        subject = [] if isinstance(node, Literal) else [(node, None)]
        for s, o in [*subject, (None, node)]:
            for quad in self._store.quads_for_pattern(s, None, o, None):
                if quad.graph_name != META:
                    found[quad] = None
                    if len(found) >= limit:
                        return list(found)
        return list(found)

    # -- writes --------------------------------------------------------------------------
    def apply(
        self,
        delta: Delta,
        expected: int | None = None,
        *,
        write_id: str | None = None,
        reads: ReadSet | None = None,
    ) -> int:
        """Commit removes then adds, and bump the generation, in one update request, with
        the write id (and the schema generation when the schema graph changes). ``reads`` is
        not needed: the data dir's writer lock orders the commits.

        An add-only delta goes in as one ``extend`` transaction (much faster than parsing an
        update, and it keeps blank nodes as they are, where INSERT DATA makes fresh ones)
        together with its new generation number; the old number is dropped afterwards, and
        :meth:`generation` reads the highest, so a crash in between leaves nothing wrong.

        :raises BadInput: two literals the store would keep as one value.
        """
        if expected is not None and expected != self.generation():
            raise CommitConflict(f"the store moved on from generation {expected}")
        delta = delta.normalized()
        plan = self._as_stored(delta)
        write = write_ids.node(write_id or write_ids.new())
        schema = any(q.graph_name == SCHEMA_GRAPH for q in (*delta.adds, *delta.removes))
        self._dirty = True
        if plan.adds and not plan.removes and not plan.drops:
            new = self.generation() + 1
            number, now = Literal(str(new), datatype=xsd("integer")), _now()
            stamp = [
                Quad(STORE_NODE, GENERATION, number, META),
                Quad(STORE_NODE, LAST_CHANGE, now, META),
            ]
            if schema:
                stamp.append(Quad(STORE_NODE, SCHEMA_GENERATION, number, META))
            replaced = {q.predicate for q in stamp}
            old = self._stamp_quads()
            kept = [q for q in old if q.predicate not in replaced]
            self._stamp = None  # until the commit below is through
            written = [Quad(write, GENERATION, number, META), Quad(write, LAST_CHANGE, now, META)]
            self._store.extend([*plan.adds, *plan.records, *stamp, *written])
            self._records_after(plan)
            for quad in old:
                if quad.predicate in replaced and quad not in stamp:
                    self._store.remove(quad)
            if self.writable and not any(q.subject == STORE_NODE for q in plan.adds):
                self._stamp = [*kept, *stamp]
            self._compact_after(plan)
            return new
        ops = []
        if plan.removes:
            if any(map(_has_blank, plan.removes)):
                raise BadInput(
                    "cannot remove quads holding blank nodes through a delta: remove them "
                    "by a SPARQL update that matches them"
                )
            ops.append("DELETE DATA {\n" + "\n".join(map(quad_text, plan.removes)) + "\n}")
        ops += [
            f"DELETE WHERE {{ GRAPH {META} {{ {r} ?p ?o }} }}" for r in sorted(plan.drops, key=str)
        ]
        if any(_has_blank(q) for q in plan.adds if record_iri(q) in plan.keys):
            # INSERT DATA gives blank nodes fresh names, which would orphan their records.
            raise BadInput(
                "cannot keep a literal as written on a blank node in a change that also "
                "removes triples: make the two changes one after the other"
            )
        if plan.adds or plan.records:
            added = [*plan.adds, *plan.records]
            ops.append("INSERT DATA {\n" + "\n".join(map(quad_text, added)) + "\n}")
        ops.append(_BUMP_GENERATION)
        names = {"meta": META, "store": STORE_NODE, "generation": GENERATION}
        ops.append(_WRITE_STAMP.format(write=write, last=LAST_CHANGE, **names))
        if schema:
            ops.append(_SCHEMA_STAMP.format(schema=SCHEMA_GENERATION, **names))
        self._stamp = None
        self._store.update(" ;\n".join(ops))
        self._records_after(plan)
        self._compact_after(plan)
        return self.generation()

    # -- journaled bulk load (ontoloom.store.journal) -------------------------------------
    def can_checkpoint(self) -> bool:
        """Whether :meth:`checkpoint` can work here: the live store of a data dir, open
        read-write under its exclusive lock."""
        return self.dirs is not None and self.path is not None and self.writable

    def checkpoint(self, delta: Delta, *, write_id: str | None = None) -> EmbeddedBackend:
        """A checkpoint of this store (``Store.backup``: hard links) with ``delta`` loaded into
        it — as the store keeps it, with the records of literals written in another form, and
        the next generation — compacted; not yet seen by anyone: :meth:`switch` makes it the
        live store, :meth:`drop` removes it.

        :raises BadInput: two literals the store would keep as one value (nothing is made).
        """
        from ontoloom import progress

        assert self.dirs is not None
        delta = delta.normalized()
        plan = self._as_stored(delta)  # judged against the live store
        write = write_ids.node(write_id or write_ids.new())
        schema_at = self.versions()[1]
        if any(q.graph_name == SCHEMA_GRAPH for q in (*delta.adds, *delta.removes)):
            schema_at = self.generation() + 1
        path = self.dirs.fresh()
        try:
            with progress.task("making a checkpoint of the store"):
                self._store.backup(str(path))
            step("checkpoint")
            copy = EmbeddedBackend(pyoxigraph.Store(str(path)), writable=True, union=self.union)
        except BaseException as exc:
            drop(path)
            if isinstance(exc, _STORE_ERRORS):
                raise _not_stored(f"cannot make a checkpoint of the store in {path}", exc) from None
            raise
        copy.path = path
        try:
            copy._load(plan, self.generation() + 1, write, schema_at)
        except BaseException as exc:
            self.drop(copy)
            if isinstance(exc, _STORE_ERRORS):
                raise _not_stored(f"cannot load the change into {path}", exc) from None
            raise
        return copy

    def _load(self, plan: _Stored, generation: int, write: NamedNode, schema_at: int) -> None:
        """Bulk-load ``plan`` into this checkpoint (no other process sees it: no atomicity
        needed), a chunk at a time for the progress bar, then compact it; stamped with the
        generation, the write id ``write`` and the schema generation."""
        from ontoloom import progress

        for quad in plan.removes:
            self._store.remove(quad)
        for record in plan.drops:
            for quad in list(self._store.quads_for_pattern(record, None, None, META)):
                self._store.remove(quad)
        for quad in list(self._store.quads_for_pattern(STORE_NODE, None, None, META)):
            self._store.remove(quad)
        number, now = Literal(str(generation), datatype=xsd("integer")), _now()
        stamp = [
            Quad(STORE_NODE, GENERATION, number, META),
            Quad(STORE_NODE, LAST_CHANGE, now, META),
        ]
        if schema_at:
            kept = Literal(str(schema_at), datatype=xsd("integer"))
            stamp.append(Quad(STORE_NODE, SCHEMA_GENERATION, kept, META))
        written = [Quad(write, GENERATION, number, META), Quad(write, LAST_CHANGE, now, META)]
        added = [*plan.adds, *plan.records, *stamp, *written]
        with progress.task("loading quads", total=len(added)) as advance:
            # One bulk_extend (several calls cost a compaction as long as the load), fed
            # from a generator that reports as the loader reads.
            self._store.bulk_extend(_reported(added, advance))
        self._dirty = True
        self._stamp = stamp
        self._holds_records = None
        with progress.task("compacting the checkpoint"):
            self._store.optimize()

    def switch(self, checkpoint: EmbeddedBackend, expected: int) -> int:
        """Make ``checkpoint`` the live store (one rename: :mod:`ontoloom.store.journal`) and
        keep working on it — this object, and whoever holds it (an owner), now reads and
        writes the new store; the old one is closed and removed. Return the generation.

        :raises CommitConflict: the store moved on from ``expected`` (nothing switched).
        """
        assert self.dirs is not None and checkpoint.path is not None
        if expected != self.generation():
            raise CommitConflict(f"the store moved on from generation {expected}")
        checkpoint._store.flush()
        old_store, old_path = self._store, self.path
        # The pointer and this object's handle change together, and the old store goes
        # with them: a signal is answered once they are done.
        with deferred_signals():
            try:
                durable = self.dirs.switch(checkpoint.path)
            except OSError as exc:  # before the rename: the live store is still the old one
                raise _not_stored("cannot switch the data dir to the loaded store", exc) from None
            self._store, self.path = checkpoint._store, checkpoint.path
            self._stamp, self._holds_records = checkpoint._stamp, checkpoint._holds_records
            self._dirty = True
            checkpoint._store, checkpoint.path = None, None  # type: ignore[assignment]
            del old_store  # the last reference: pyoxigraph closes the old store
            step("switched")
            if durable and old_path is not None:
                # (Not durable: the old store stays until the next writer's open settles it.)
                drop(old_path)
        return self.generation()

    def drop(self, checkpoint: EmbeddedBackend) -> None:
        """Close and remove a checkpoint that was not switched in (a no-op once it was)."""
        path = checkpoint.path
        checkpoint._store, checkpoint.path = None, None  # type: ignore[assignment]
        if path is not None and path != self.path:
            drop(path)

    def _compact_after(self, plan: _Stored) -> None:
        if len(plan.adds) + len(plan.removes) >= BULK_WRITE:
            from ontoloom import progress

            with progress.task("compacting the store after a bulk write"):
                self._store.optimize()

    def _as_stored(self, delta: Delta) -> _Stored:
        """``delta`` as the store keeps it: stored forms, and the records of what was written.

        :raises BadInput: two literals the store would keep as one value.
        """
        # Most quads are kept as written, known without asking the store (split_kept): only
        # the others are looked up, checked for collisions and given records — a bulk load
        # of a million quads makes no pass per quad beyond this split.
        kept, others = split_kept(delta.adds)
        forms = stored_quads([*others, *delta.removes])
        removes = {forms[q] for q in delta.removes}
        drops = {key for q in delta.removes if (key := record_key(forms[q])) is not None}
        written: dict[Quad, Quad] = {}
        for quad in others:
            stored = forms[quad]
            if written.setdefault(stored, quad) != quad:
                raise _collision(written[stored], quad)
            if stored != quad and stored in delta.adds:  # written as the store keeps it, too
                raise _collision(stored, quad)
        records: list[Quad] = []
        for stored, quad in written.items():
            if stored != quad:
                records += record_quads(quad, stored)
        # A literal already stored may have been written in another form: only a literal
        # kept by value can (record_key), and only where the store holds records or the
        # quad is stored in another form.
        any_records = self._has_records()
        checked = [*written.items(), *((q, q) for q in kept if any_records and record_key(q))]
        for stored, quad in checked:
            if stored in removes or not isinstance(quad.object, Literal):
                continue
            if stored == quad and not any_records:
                continue  # as written, and nothing in the store was written otherwise
            if stored in self._store:
                before = self._written(stored)
                if before != quad:
                    raise _collision(before, quad)
        adds = (set(kept) | written.keys()) if others else delta.adds
        return _Stored(adds, removes, records, drops)

    def _has_records(self) -> bool:
        if self._holds_records is not None:
            return self._holds_records
        held = (
            next(iter(self._store.quads_for_pattern(None, LEXICAL_FORM, None, META)), None)
            is not None
        )
        if self.writable:
            self._holds_records = held
        return held

    def _records_after(self, plan: _Stored) -> None:
        """Keep :meth:`_has_records` true to a write just made."""
        if plan.records:
            self._holds_records = True
        elif plan.drops or any(q.graph_name == META for q in (*plan.adds, *plan.removes)):
            self._holds_records = None  # some may be gone: read again when asked

    def _written(self, stored: Quad) -> Quad:
        """A stored quad as it was written."""
        record = record_iri(stored)
        lexical = next(iter(self._store.quads_for_pattern(record, LEXICAL_FORM, None, META)), None)
        datatype = next(iter(self._store.quads_for_pattern(record, DATATYPE, None, META)), None)
        if lexical is None or datatype is None:
            return stored
        literal = written_literal(lexical.object, datatype.object)
        return Quad(stored.subject, stored.predicate, literal, stored.graph_name)

    def _records(self) -> dict[Term, Literal]:
        """Record IRI → the literal as written, for every record in the store."""
        parts: dict[Term, dict[Term, object]] = defaultdict(dict)
        for quad in self._store.quads_for_pattern(None, None, None, META):
            if quad.predicate in (LEXICAL_FORM, DATATYPE):
                parts[subject(quad.subject)][quad.predicate] = quad.object
        return {
            node: written_literal(found[LEXICAL_FORM], found[DATATYPE])
            for node, found in parts.items()
            if LEXICAL_FORM in found and DATATYPE in found
        }

    def as_written(self, quads: Iterable[Quad]) -> Iterator[Quad]:
        """Stored quads as they were written (see :mod:`ontoloom.store.lexical`)."""
        if not self._has_records():
            return iter(quads)  # as they are: no step per quad
        return self._rewritten_as_written(quads, self._records())

    @staticmethod
    def _rewritten_as_written(
        quads: Iterable[Quad], records: dict[Term, Literal]
    ) -> Iterator[Quad]:
        for quad in quads:
            key = record_key(quad)
            literal = records.get(key) if key is not None else None
            if literal is not None:
                yield Quad(quad.subject, quad.predicate, literal, quad.graph_name)
            else:
                yield quad

    def keeps_literals_as_written(self) -> bool:
        return not self._has_records()

    def rewritten(self) -> list[Quad]:
        """The quads, as written, whose literal the store keeps in another form."""
        if not self._has_records():
            return []
        records = self._records()
        out = []
        for quad in self._store:
            key = record_key(quad) if quad.graph_name != META else None
            if key is not None:
                literal = records.get(key)
                if literal is not None:
                    out.append(Quad(quad.subject, quad.predicate, literal, quad.graph_name))
        return out

    def data_quads(self) -> Iterator[Quad]:
        """What queries see as the default graph, as written (the bookkeeping graph aside)."""
        quads: Iterable[Quad]
        if self.union:
            # Graph by graph, the bookkeeping graph left out: no test per quad.
            graphs = [DefaultGraph(), *(g for g in self._store.named_graphs() if g != META)]
            quads = chain.from_iterable(
                self._store.quads_for_pattern(None, None, None, g) for g in graphs
            )
        else:
            quads = self._store.quads_for_pattern(None, None, None, DefaultGraph())
        return self.as_written(quads)

    def _stamp_quads(self) -> list[Quad]:
        stamp = self._stamp
        if stamp is None:
            stamp = list(self._store.quads_for_pattern(STORE_NODE, None, None, META))
            if self.writable:
                self._stamp = stamp
        return stamp

    def generation(self) -> int:
        found = (q for q in self._stamp_quads() if q.predicate == GENERATION)
        return max((int(node(q.object).value) for q in found), default=0)

    def versions(self) -> tuple[int, int]:
        found = (q for q in self._stamp_quads() if q.predicate == SCHEMA_GENERATION)
        return self.generation(), max((int(node(q.object).value) for q in found), default=0)

    def committed(self, write_id: str) -> list[int]:
        found = self._store.quads_for_pattern(write_ids.node(write_id), GENERATION, None, META)
        return sorted(int(node(q.object).value) for q in found)

    def changes_since(self, generation: int) -> list[tuple[int, list[Term]]] | None:
        """None: one process writes an embedded store and follows its own commits."""
        return None

    def last_change(self) -> str | None:
        found = (q for q in self._stamp_quads() if q.predicate == LAST_CHANGE)
        return max((node(q.object).value for q in found), default=None)

    def dump(self, out: IO[bytes], format_name: str, graphs: list[Term] | None) -> None:
        fmt = FORMATS[format_name]
        quads: Iterable[Quad]
        if graphs is None:
            quads = (q for q in self._store if q.graph_name != META)
        else:
            quads = (
                q
                for g in graphs
                for q in self._store.quads_for_pattern(None, None, None, graph_name(g))
            )
        quads = self.as_written(quads)
        if fmt in (RdfFormat.TURTLE, RdfFormat.N_TRIPLES, RdfFormat.RDF_XML, RdfFormat.N3):
            serialize((q.triple for q in quads), out, fmt)
        else:
            serialize(quads, out, fmt)

    def flush(self) -> None:
        if self.writable:
            self._store.flush()

    def close(self) -> None:
        # A writer flushes what it wrote: otherwise it stays in RocksDB's write-ahead log,
        # which every later read-only open must replay (seconds for a large import; the
        # prompt hook opens read-only). pyoxigraph closes the handle when the Store is dropped.
        if self._dirty and self.writable and self._store is not None:
            with contextlib.suppress(OSError):  # the log still holds every write
                self._store.flush()
        self._store = None  # type: ignore[assignment]


def _now() -> Literal:
    """Now, in the canonical form the store keeps an xsd:dateTime in (no trailing zeros in
    the seconds' fraction): as written, so the stamp kept in memory is the stored one."""
    now = dt.datetime.now(dt.UTC)
    seconds = f"{now.second:02d}.{now.microsecond:06d}".rstrip("0").rstrip(".")
    return Literal(f"{now:%Y-%m-%dT%H:%M:}{seconds}Z", datatype=xsd("dateTime"))


def _reported(quads: list[Quad], advance: Callable[..., None]) -> Iterator[Quad]:
    """``quads``, reporting progress as they are read; halfway, the test seam's "loading"
    step (:mod:`ontoloom.store.journal`)."""
    half = len(quads) // 2
    for start in range(0, len(quads), _REPORT_EVERY):
        end = min(start + _REPORT_EVERY, len(quads))
        if start <= half < end:
            yield from quads[start:half]
            step("loading")
            yield from quads[half:end]
        else:
            yield from quads[start:end]
        advance(done=end)


# What pyoxigraph raises when the files under a store fail it (RocksDB's errors come as
# RuntimeError, the system's as OSError).
_STORE_ERRORS = (OSError, RuntimeError)


def _not_stored(what: str, exc: BaseException) -> StorageError:
    reason = getattr(exc, "strerror", None) or exc
    return StorageError(f"{what}: {reason}; nothing was stored (the store is as it was)")


def _has_blank(quad: Quad) -> bool:
    return isinstance(quad.subject, BlankNode) or isinstance(quad.object, BlankNode)


@dataclass
class _Stored:
    adds: set[Quad]
    removes: set[Quad]
    records: list[Quad]
    drops: set[NamedNode]  # records to delete

    @property
    def keys(self) -> set[object]:
        return {q.subject for q in self.records}


def _collision(kept: Quad, new: Quad) -> BadInput:
    return BadInput(
        f"{new.subject} {new.predicate}: cannot hold both {kept.object} and {new.object} — "
        "the store keeps literals by value and these two are one value; write one of them"
    )


def xsd(local: str) -> NamedNode:
    return NamedNode(XSD + local)
