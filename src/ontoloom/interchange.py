"""Export and import: Turtle, TriG, N-Quads, N-Triples, JSON-LD in and out.

An import is validated together with the store before anything is committed, and is
all-or-nothing; a refused import stores nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ontoloom import progress
from ontoloom.errors import BadInput
from ontoloom.store.base import Delta
from ontoloom.store.rdfio import guess_format, holds_nothing, read_quads
from ontoloom.terms import (
    BlankNode,
    DefaultGraph,
    GraphName,
    Literal,
    NamedNode,
    Quad,
    RdfFormat,
    Term,
    graph_name,
    serialize,
)
from ontoloom.vocab import (
    CLASS_GRAPH_PREFIX,
    CONFIRMED,
    FACTS,
    GRAPH_BASE,
    HISTORY,
    INFERRED,
    META,
    PREFIXES,
    PROPOSALS,
    RECORD_GRAPH_PREFIX,
    SCHEMA_GRAPH,
)

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = [
    "EXPORT_FORMATS",
    "GRAPHS",
    "IMPORT_FORMATS",
    "ImportResult",
    "export_graph",
    "import_file",
    "kept_graph",
]

GRAPHS = ("facts", "records", "confirmed", "proposals", "history", "schema", "inferred", "all")
EXPORT_FORMATS = ("turtle", "trig", "nquads", "ntriples", "jsonld")
IMPORT_FORMATS = ("turtle", "trig", "nquads", "ntriples", "jsonld", "rdfxml")
_FIXED = {
    "facts": FACTS,
    "confirmed": CONFIRMED,
    "proposals": PROPOSALS,
    "history": HISTORY,
    "schema": SCHEMA_GRAPH,
}


def graph_names(graph: Session, which: str) -> list[Term]:
    """The named graphs a ``--graph`` choice stands for."""
    if which in _FIXED:
        return [_FIXED[which]]
    names = [g for g in graph.backend.named_graphs() if g != META]
    if which == "records":
        return sorted((g for g in names if g.value.startswith(RECORD_GRAPH_PREFIX)), key=str)
    if which == "all":
        return sorted(names, key=str)
    raise BadInput(f"--graph {which}: choose one of {', '.join(GRAPHS)}")


def export_graph(
    graph: Session, out: IO[bytes], format_name: str, which: str = "all", infer: bool = False
) -> None:
    """Write the chosen graphs. Turtle and TriG declare the prefixes they use (the schema's,
    the instance's ids and graphs); JSON-LD is compacted with them as its ``@context``."""
    if format_name not in EXPORT_FORMATS:
        raise BadInput(f"--format {format_name}: choose one of {', '.join(EXPORT_FORMATS)}")
    backend: Any = graph.backend
    graphs: list[Term] | None = None
    if which == "inferred" or infer:
        from ontoloom.infer import inferred_quads
        from ontoloom.store import scratch

        extra = inferred_quads(graph)
        chosen = [] if which == "inferred" else graph_names(graph, which)
        backend = scratch([*(q for g in chosen for q in graph.backend.quads(g)), *extra])
    else:
        graphs = graph_names(graph, which)
    with progress.task("exporting"):
        _write(graph, backend, graphs, out, format_name)


def _write(
    graph: Session, backend: Any, graphs: list[Term] | None, out: IO[bytes], format_name: str
) -> None:
    if format_name in ("nquads", "ntriples"):  # no prefixes: streamed as they are
        backend.dump(out, format_name, graphs)
        return
    if graphs is None:
        quads = [q for q in backend.quads() if q.graph_name != META]
    else:
        quads = [q for g in graphs for q in backend.quads(g)]
    # Turtle writes no graph names: their namespace is not in use there.
    prefixes = prefixes_in_use(quads, known_prefixes(graph), graphs=format_name != "turtle")
    if format_name == "jsonld":
        out.write(compact_jsonld(quads, prefixes))
    elif format_name == "turtle":
        serialize((q.triple for q in quads), out, RdfFormat.TURTLE, prefixes=prefixes)
    else:
        serialize(quads, out, RdfFormat.TRIG, prefixes=prefixes)


def known_prefixes(graph: Session) -> dict[str, str]:
    """The prefixes an export may declare: the schema's, ``id:`` for this instance's
    entities and ``graph:`` for ontoloom's named graphs."""
    return {**PREFIXES, "id": graph.ids.base, "graph": GRAPH_BASE}


def prefixes_in_use(
    quads: Iterable[Quad], known: dict[str, str], *, graphs: bool = True
) -> dict[str, str]:
    """The prefixes of ``known`` whose namespace some IRI of ``quads`` starts with (graph
    names counted only with ``graphs``)."""
    namespaces: set[str] = set()
    for q in quads:
        for term in (q.subject, q.predicate, q.object, *((q.graph_name,) if graphs else ())):
            if isinstance(term, NamedNode):
                iri = term.value
            elif isinstance(term, Literal):
                iri = term.datatype.value
            else:
                continue
            namespaces.add(iri[: max(iri.rfind("#"), iri.rfind("/")) + 1])
    return {
        name: ns
        for name, ns in known.items()
        if ns and any(used.startswith(ns) for used in namespaces)
    }


def compact_jsonld(quads: list[Quad], prefixes: dict[str, str]) -> bytes:
    """JSON-LD compacted with ``prefixes`` as its ``@context``: pyoxigraph writes expanded
    JSON-LD, exact to every literal's lexical form; pyld (the JSON-LD reference processor)
    compacts it. rdflib's writer is not used: with a context it turns numbers and booleans
    into JSON ones, losing how they were written ("007" would come back as "7")."""
    import json

    from pyld import jsonld

    expanded = json.loads(serialize(quads, format=RdfFormat.JSON_LD) or b"[]")
    for top in expanded:  # rdf:type of IRIs as @type, as JSON-LD's own fromRdf writes it
        for node in [top, *top.get("@graph", [])]:
            _type_as_keyword(node)
    compacted = jsonld.compact(expanded, {"@context": prefixes})
    return json.dumps(compacted, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"


def _type_as_keyword(node: dict[str, Any]) -> None:
    values = node.get(_RDF_TYPE)
    if values and all(set(v) == {"@id"} for v in values):
        node["@type"] = [*node.get("@type", []), *(v["@id"] for v in values)]
        del node[_RDF_TYPE]


_RDF_TYPE = PREFIXES["rdf"] + "type"


@dataclass
class ImportResult:
    quads: int
    graphs: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"imported": self.quads, "graphs": self.graphs}


def kept_graph(name: GraphName) -> bool:
    """Whether ``name`` is a graph ontoloom keeps in the store and an import may name: the
    fixed graphs, a record's, a failure class's (the bookkeeping graph is written only by
    the store itself; inferred triples are derived, kept beside the store)."""
    return isinstance(name, NamedNode) and (
        name in _FIXED.values()
        or name.value.startswith(RECORD_GRAPH_PREFIX)
        or name.value.startswith(CLASS_GRAPH_PREFIX)
    )


def _placed(quads: list[Quad], forced: Term | None, label: str) -> set[Quad]:
    """The quads in the graphs they go to: ``forced`` for all of them, else the graph each
    names (the default graph holds facts).

    :raises BadInput: a graph the store does not keep, named by the file (without
        ``forced``), or ontoloom's bookkeeping graph (always) — nothing is imported.
    """
    if any(q.graph_name == META for q in quads):
        raise BadInput(f"{label} writes ontoloom's bookkeeping graph <{META.value}>; leave it out")
    if forced is not None:
        target = graph_name(forced)
        return {Quad(q.subject, q.predicate, q.object, target) for q in quads}
    if any(q.graph_name == INFERRED for q in quads):
        raise BadInput(
            f"{label} names the inferred graph <{INFERRED.value}>: inferred triples are "
            "derived, not stored — export without --infer and run `ontoloom infer` after the "
            "import (or pass --graph facts to store them as facts); nothing was imported"
        )
    foreign = sorted(
        {
            f"_:{g.value}" if isinstance(g, BlankNode) else f"<{g.value}>"
            for g in (q.graph_name for q in quads)
            if not isinstance(g, DefaultGraph) and not kept_graph(g)
        }
    )
    if foreign:
        shown = ", ".join(foreign[:5]) + (
            f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        )
        raise BadInput(
            f"{label} names graphs ontoloom does not keep: {shown} (it keeps facts, confirmed, "
            "proposals, history, schema, the record/… and record-class/… graphs); pass --graph facts "
            "(or another graph) to put every triple there, one copy of a triple found in "
            "several; nothing was imported"
        )
    return {
        q if kept_graph(q.graph_name) else Quad(q.subject, q.predicate, q.object, FACTS)
        for q in quads
    }


def import_file(
    graph: Session,
    path: Path | None,
    format_name: str | None = None,
    which: str | None = None,
    *,
    data: bytes | None = None,
    label: str | None = None,
    base_iri: str | None = None,
) -> ImportResult:
    """Validate the file (or ``data``: the content of the file its caller read and calls
    ``label``, resolving relative IRIs against ``base_iri``; by default standard input)
    together with the store
    (under the schema in effect and the shapes the file adds to it), then commit it all, or
    nothing.

    :raises ParseError: with file:line:column. :raises ValidationFailed: nothing stored.
    :raises BadInput: a format that cannot be told from the name, or input that holds no
        statement (``.json`` that is plain JSON, an empty file).
    """
    with graph.writes.noting_stops(
        stored="the import was stored whole",
        nothing="nothing was imported: the store is as it was",
    ):
        return _import(graph, path, format_name, which, data, label, base_iri)


def _import(
    graph: Session,
    path: Path | None,
    format_name: str | None,
    which: str | None,
    data: bytes | None,
    label: str | None,
    base_iri: str | None,
) -> ImportResult:
    if which in ("inferred", "all", "records"):
        raise BadInput(
            f"--graph {which} cannot be an import target: inferred triples are derived "
            "(`ontoloom infer`); give facts, confirmed, proposals or schema, or leave it out "
            "to keep the graphs a TriG/N-Quads file names"
        )
    forced = _FIXED[which] if which else None
    named = label if data is not None and label not in (None, "-") else None
    if data is not None or path is None:
        label = named or "standard input"
    else:
        named = label = str(path)
    if data is None and path is not None and not path.exists():
        raise BadInput(f"{path}: no such file")
    name = format_name or (guess_format(named) if named else None)
    if name is None:
        raise BadInput(
            f"cannot tell the RDF format of {label}: pass --format ({', '.join(IMPORT_FORMATS)})"
        )
    with progress.task(f"reading {label}"):
        if data is not None:
            quads = read_quads(
                data=data, format_name=name, label=named or "<stdin>", base_iri=base_iri
            )
        else:
            assert path is not None
            quads = read_quads(path=path, format_name=name, base_iri=path.resolve().as_uri())
    if not quads:
        raise holds_nothing(label, name, "nothing was imported")
    placed = _placed(quads, forced, label)
    # One delta, schema and data together: validated against the schema in effect plus the
    # schema the file brings, and committed whole or not at all.
    with progress.task(f"validating and storing {len(placed)} quads"):
        graph.writes.commit(Delta(adds=placed))
    counts = Counter(str(getattr(q.graph_name, "value", "default")) for q in placed)
    return ImportResult(len(placed), dict(sorted(counts.items())))
