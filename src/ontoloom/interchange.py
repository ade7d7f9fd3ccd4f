"""Export and import: Turtle, TriG, N-Quads, N-Triples, JSON-LD in and out.

An import is validated together with the store before anything is committed, and is
all-or-nothing; a refused import stores nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ontoloom import progress
from ontoloom.errors import BadInput
from ontoloom.store.base import Delta
from ontoloom.store.rdfio import read_quads
from ontoloom.store.terms import BlankNode, DefaultGraph, NamedNode, Quad, Term
from ontoloom.vocab import CONFIRMED, FACTS, META, PROPOSALS, RECORD_GRAPH_PREFIX, SCHEMA_GRAPH

if TYPE_CHECKING:
    from ontoloom.api import Graph

__all__ = ["EXPORT_FORMATS", "GRAPHS", "ImportResult", "export_graph", "import_file"]

GRAPHS = ("facts", "records", "confirmed", "proposals", "schema", "inferred", "all")
EXPORT_FORMATS = ("turtle", "trig", "nquads", "ntriples", "jsonld")
_FIXED = {"facts": FACTS, "confirmed": CONFIRMED, "proposals": PROPOSALS, "schema": SCHEMA_GRAPH}


def graph_names(graph: Graph, which: str) -> list[Term]:
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
    graph: Graph, out: IO[bytes], format_name: str, which: str = "all", infer: bool = False
) -> None:
    if format_name not in EXPORT_FORMATS:
        raise BadInput(f"--format {format_name}: choose one of {', '.join(EXPORT_FORMATS)}")
    if which == "inferred" or infer:
        from ontoloom.infer import inferred_quads

        extra = inferred_quads(graph)
        graphs = [] if which == "inferred" else graph_names(graph, which)
        from ontoloom.store.embedded import EmbeddedBackend

        scratch = EmbeddedBackend.scratch(
            [*(q for g in graphs for q in graph.backend.quads(g)), *extra]
        )
        with progress.task("exporting"):
            scratch.dump(out, format_name, None)
        return
    with progress.task("exporting"):
        graph.backend.dump(out, format_name, graph_names(graph, which))


@dataclass
class ImportResult:
    quads: int
    graphs: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"imported": self.quads, "graphs": self.graphs}


def _target(name: Term, forced: Term | None) -> Term:
    if forced is not None:
        return forced
    if isinstance(name, NamedNode) and (
        name in _FIXED.values() or name.value.startswith(RECORD_GRAPH_PREFIX)
    ):
        return name
    return FACTS  # the default graph, and graphs ontoloom does not know, hold facts


def import_file(
    graph: Graph, path: Path, format_name: str | None = None, which: str | None = None
) -> ImportResult:
    """Validate the file together with the store (under the schema in effect and the shapes
    the file adds to it), then commit it all, or nothing.

    :raises ParseError: with file:line:column. :raises ValidationFailed: nothing stored.
    """
    if which in ("inferred", "all", "records"):
        raise BadInput(
            f"--graph {which} cannot be an import target: inferred triples are derived "
            "(`ontoloom infer`); give facts, confirmed, proposals or schema, or leave it out "
            "to keep the graphs a TriG/N-Quads file names"
        )
    forced = _FIXED[which] if which else None
    with progress.task(f"reading {path.name}"):
        quads = read_quads(path=path, format_name=format_name, base_iri=path.resolve().as_uri())
    placed = {Quad(q.subject, q.predicate, q.object, _target(q.graph_name, forced)) for q in quads}
    if any(q.graph_name == META for q in placed):
        raise BadInput("the file writes ontoloom's bookkeeping graph; leave it out")
    # One delta, schema and data together: validated against the schema in effect plus the
    # schema the file brings, and committed whole or not at all.
    with progress.task(f"validating and storing {len(placed)} quads"):
        graph.writes.commit(Delta(adds=placed))
    counts: dict[str, int] = {}
    for q in placed:
        key = (
            q.graph_name.value
            if not isinstance(q.graph_name, DefaultGraph | BlankNode)
            else "default"
        )
        counts[key] = counts.get(key, 0) + 1
    return ImportResult(len(placed), dict(sorted(counts.items())))
