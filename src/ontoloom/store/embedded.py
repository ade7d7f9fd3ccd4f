"""The embedded backend: a pyoxigraph ``Store`` on disk (or in memory for scratch work)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from io import BytesIO
from pathlib import Path
from typing import IO

import pyoxigraph

from ontoloom.errors import BadInput, OntoloomError
from ontoloom.store.base import Delta, Row
from ontoloom.store.terms import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    RdfFormat,
    Term,
    Triple,
    Variable,
    serialize,
)
from ontoloom.vocab import GENERATION, LAST_CHANGE, META, STORE_NODE, XSD

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

_BUMP_GENERATION = f"""
DELETE {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?old . {STORE_NODE} {LAST_CHANGE} ?oldTime }} }}
INSERT {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?new . {STORE_NODE} {LAST_CHANGE} ?now }} }}
WHERE {{
  OPTIONAL {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?old }} }}
  OPTIONAL {{ GRAPH {META} {{ {STORE_NODE} {LAST_CHANGE} ?oldTime }} }}
  BIND(COALESCE(?old, 0) + 1 AS ?new)
  BIND(NOW() AS ?now)
}}"""


def quad_text(quad: Quad) -> str:
    """A quad as SPARQL data: terms are serialised by pyoxigraph, so text is always escaped."""
    triple = f"{quad.subject} {quad.predicate} {quad.object} ."
    if isinstance(quad.graph_name, DefaultGraph):
        return triple
    return f"GRAPH {quad.graph_name} {{ {triple} }}"


class EmbeddedBackend:
    """pyoxigraph behind the :class:`~ontoloom.store.base.Backend` seam.

    >>> from ontoloom.store.terms import Literal, NamedNode, Quad
    >>> b = EmbeddedBackend.memory()
    >>> q = Quad(NamedNode("http://a"), NamedNode("http://p"), Literal("x"), NamedNode("http://g"))
    >>> b.apply(Delta(adds={q}))
    1
    >>> [row["o"].value for row in b.select("SELECT ?o WHERE { GRAPH <http://g> { ?s ?p ?o } }")]
    ['x']
    """

    def __init__(self, store: pyoxigraph.Store, *, writable: bool, union: bool = True) -> None:
        self._store = store
        self.writable = writable
        self._dirty = False  # written since opened: flushed on close
        # Queries see every graph as the default graph; a scratch store validating a
        # standalone data graph turns that off so that a shapes graph beside it stays apart.
        self.union = union

    @classmethod
    def memory(cls) -> EmbeddedBackend:
        return cls(pyoxigraph.Store(), writable=True)

    @classmethod
    def scratch(cls, quads: Iterable[Quad] = (), *, union: bool = True) -> EmbeddedBackend:
        """An in-memory working copy (validation overlays): no generation bookkeeping."""
        store = pyoxigraph.Store()
        store.extend(quads)
        return cls(store, writable=True, union=union)

    def patch(self, delta: Delta) -> None:
        """Apply ``delta`` to a scratch store, without bookkeeping or atomicity."""
        for quad in delta.removes:
            self._store.remove(quad)
        self._store.extend(delta.adds)

    @classmethod
    def open(cls, path: Path, *, writable: bool) -> EmbeddedBackend:
        """Open the store at ``path``: read-write (creates it) or read-only.

        :raises OntoloomError: when the directory holds no usable store.
        """
        try:
            if writable:
                path.mkdir(parents=True, exist_ok=True)
                return cls(pyoxigraph.Store(str(path)), writable=True)
            return cls(pyoxigraph.Store.read_only(str(path)), writable=False)
        except OSError as exc:
            raise OntoloomError(f"cannot open the store at {path}: {exc}") from exc

    # -- reads ---------------------------------------------------------------------------
    def _query(self, sparql: str, bindings: Mapping[str, Term] | None):
        subs = {Variable(k): v for k, v in bindings.items()} if bindings else None
        try:
            return self._store.query(
                sparql, use_default_graph_as_union=self.union, substitutions=subs
            )
        except SyntaxError as exc:
            raise BadInput(f"SPARQL syntax error: {exc}") from exc

    def select(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> Iterator[Row]:
        solutions = self._query(sparql, bindings)
        names = [v.value for v in solutions.variables]
        for solution in solutions:
            yield {name: solution[name] for name in names}

    def select_raw(self, sparql: str, bindings: Mapping[str, Term] | None = None):
        """The backend's own solution object (for SPARQL results serialisation)."""
        return self._query(sparql, bindings)

    def serialize_results(
        self, sparql: str, bindings: Mapping[str, Term] | None, format_name: str
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
        return iter(self._store.quads_for_pattern(None, None, None, graph))

    def named_graphs(self) -> Iterator[Term]:
        return iter(self._store.named_graphs())

    # -- writes --------------------------------------------------------------------------
    def apply(self, delta: Delta) -> int:
        """Commit removes then adds, and bump the generation, in one update request.

        An add-only delta without blank nodes goes in as one ``extend`` transaction (much
        faster than parsing an update) together with its new generation number; the old
        number is dropped afterwards, and :meth:`generation` reads the highest, so a crash
        in between leaves nothing wrong.
        """
        delta = delta.normalized()
        self._dirty = True
        if delta.adds and not delta.removes and not any(_has_blank(q) for q in delta.adds):
            new = self.generation() + 1
            stamp = [
                Quad(STORE_NODE, GENERATION, Literal(str(new), datatype=xsd("integer")), META),
                Quad(STORE_NODE, LAST_CHANGE, _now(), META),
            ]
            old = list(self._store.quads_for_pattern(STORE_NODE, None, None, META))
            self._store.extend([*delta.adds, *stamp])
            for quad in old:
                if quad not in stamp:
                    self._store.remove(quad)
            return new
        ops = []
        if delta.removes:
            if any(_has_blank(q) for q in delta.removes):
                raise OntoloomError("cannot remove quads holding blank nodes through a delta")
            ops.append("DELETE DATA {\n" + "\n".join(map(quad_text, delta.removes)) + "\n}")
        if delta.adds:
            ops.append("INSERT DATA {\n" + "\n".join(map(quad_text, delta.adds)) + "\n}")
        ops.append(_BUMP_GENERATION)
        self._store.update(" ;\n".join(ops))
        return self.generation()

    def generation(self) -> int:
        found = self._store.quads_for_pattern(STORE_NODE, GENERATION, None, META)
        return max((int(q.object.value) for q in found), default=0)

    def last_change(self) -> str | None:
        found = self._store.quads_for_pattern(STORE_NODE, LAST_CHANGE, None, META)
        return max((q.object.value for q in found), default=None)

    def dump(self, out: IO[bytes], format_name: str, graphs: list[Term] | None) -> None:
        fmt = FORMATS[format_name]
        quads: Iterable[Quad]
        if graphs is None:
            quads = (q for q in self._store if q.graph_name != META)
        else:
            quads = (q for g in graphs for q in self._store.quads_for_pattern(None, None, None, g))
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
    stamp = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
    return Literal(stamp, datatype=xsd("dateTime"))


def _has_blank(quad: Quad) -> bool:
    return isinstance(quad.subject, BlankNode) or isinstance(quad.object, BlankNode)


def xsd(local: str) -> NamedNode:
    return NamedNode(XSD + local)
