"""``ontoloom gc``: after renames and deletes, relations and proposals whose endpoints
vanished — listed, and with ``apply`` removed through the write path."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ontoloom.model import vocab_name
from ontoloom.store.base import Delta
from ontoloom.terms import Quad
from ontoloom.vocab import OL, PROPOSALS, RDF, RDF_TYPE

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = ["Garbage", "collect_garbage"]


@dataclass
class Garbage:
    relations: list[dict[str, Any]] = field(default_factory=list)
    proposals: list[dict[str, Any]] = field(default_factory=list)
    removes: set[Quad] = field(default_factory=set)
    removed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "relations": self.relations,
            "proposals": self.proposals,
            "removed": self.removed,
            "quads": len(self.removes),
        }


def collect_garbage(graph: Session, *, apply: bool = False) -> Garbage:
    base = graph.ids.base
    garbage = Garbage()
    vanished = f"(NOT EXISTS {{ ?s {RDF_TYPE} ?t1 }} || NOT EXISTS {{ ?o {RDF_TYPE} ?t2 }})"
    relations = f"""
        SELECT ?g ?s ?p ?o WHERE {{
            GRAPH ?g {{ ?s ?p ?o }}
            FILTER(?g != {PROPOSALS} && isIRI(?o) && ?p != {RDF_TYPE} && STRSTARTS(STR(?p), "{OL}")
                   && STRSTARTS(STR(?s), "{base}") && STRSTARTS(STR(?o), "{base}"))
            FILTER {vanished}
        }}"""
    for r in graph.backend.select(relations):
        garbage.removes.add(Quad(r["s"], r["p"], r["o"], r["g"]))
        garbage.relations.append(
            {
                "from_id": graph.ids.id_of(r["s"]),
                "rel": vocab_name(r["p"]),
                "to_id": graph.ids.id_of(r["o"]),
                "graph": r["g"].value,
            }
        )
    # Reified statements (evidence, proposals) about vanished objects go with them.
    reified = f"""
        SELECT ?g ?n ?kind ?s ?p ?o WHERE {{
            GRAPH ?g {{ ?n <{RDF}subject> ?s ; <{RDF}predicate> ?p ; <{RDF}object> ?o ; {RDF_TYPE} ?kind }}
            FILTER {vanished}
        }}"""
    nodes: dict[Any, Any] = {}
    for r in graph.backend.select(reified):
        nodes[r["n"]] = r["g"]
        if r["g"] == PROPOSALS:
            garbage.proposals.append(
                {
                    "id": r["n"].value.rsplit("/", 1)[-1],
                    "source": graph.ids.id_of(r["s"]),
                    "rel": vocab_name(r["p"]),
                    "target": graph.ids.id_of(r["o"]),
                }
            )
    for node, g in nodes.items():
        garbage.removes |= {
            Quad(q.subject, q.predicate, q.object, g)
            for q in graph.backend.quads(g)
            if q.subject == node
        }
    garbage.relations.sort(key=lambda x: (x["from_id"], x["rel"], x["to_id"]))
    garbage.proposals.sort(key=lambda x: x["id"])
    if apply and garbage.removes:
        graph.writes.commit(Delta(removes=garbage.removes))
        garbage.removed = True
    return garbage
