"""OWL RL inference with owlrl: inverses (has_task ↔ part_of), sub-properties and
sub-classes (the alignments to dcterms and schema.org) materialised into the inferred
graph. Inferred triples live beside the store (``inferred.nq`` in the data dir), never in
it, so validation, traversal and search never see them; ``query --infer`` and
``export --infer`` add them on request.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput
from ontoloom.store.rdfio import read_quads
from ontoloom.store.terms import Literal, NamedNode, Quad, RdfFormat, serialize
from ontoloom.vocab import GRAPH_BASE, META, PROPOSALS, compact

if TYPE_CHECKING:
    from ontoloom.api import Graph

__all__ = ["INFERRED", "infer", "inferred_quads"]

INFERRED = NamedNode(GRAPH_BASE + "inferred")


def _files(graph: Graph) -> tuple[Any, Any]:
    if graph.data_dir is None:
        raise BadInput("inference needs a data dir")
    return graph.data_dir / "inferred.nq", graph.data_dir / "inferred.json"


def compute(graph: Graph) -> list[Quad]:
    """The entailments about the graph's objects that are not already stated."""
    import owlrl
    import rdflib

    from ontoloom.shacl.oracle import from_rdflib_term, to_rdflib

    stated = {q.triple for q in graph.backend.quads() if q.graph_name not in (META, PROPOSALS)}
    ontology = list(graph.schema.ontology.triples)
    g = to_rdflib([*stated, *ontology])
    owlrl.DeductiveClosure(
        owlrl.OWLRL_Semantics, axiomatic_triples=False, datatype_axioms=False
    ).expand(g)
    base = graph.ids.base
    known = stated | set(ontology)
    # owlrl rewrites some literals in canonical form: the same value again is no inference
    with_literal = {(t.subject, t.predicate) for t in stated if isinstance(t.object, Literal)}
    out = set()
    for s, p, o in g:
        # owlrl also yields generalised triples (literal subjects); only objects' facts count
        if not isinstance(s, rdflib.URIRef) or not str(s).startswith(base) or s == o:
            continue
        quad = Quad(from_rdflib_term(s), from_rdflib_term(p), from_rdflib_term(o), INFERRED)
        if quad.triple in known:
            continue
        if isinstance(quad.object, Literal) and (quad.subject, quad.predicate) in with_literal:
            continue
        out.add(quad)
    return sorted(out, key=str)


def infer(graph: Graph) -> dict[str, Any]:
    """Materialise the inferred graph; returns counts per predicate."""
    quads = compute(graph)
    data, meta = _files(graph)
    with data.open("wb") as out:
        serialize(quads, out, RdfFormat.N_QUADS)
    meta.write_text(json.dumps({"generation": graph.backend.generation(), "triples": len(quads)}))
    counts = Counter(compact(q.predicate.value) for q in quads)
    return {"inferred": len(quads), "by_predicate": dict(sorted(counts.items()))}


def inferred_quads(graph: Graph) -> list[Quad]:
    """The materialised inferred graph; recomputed in memory when missing or stale."""
    data, meta = _files(graph)
    if data.exists() and meta.exists():
        stamp = json.loads(meta.read_text())
        if stamp.get("generation") == graph.backend.generation():
            return read_quads(path=data, format_name="nquads", bounded=False)  # our own file
    return compute(graph)
