"""The proposal store: reified proposals with PROV-O provenance in the proposals graph.

A proposal is never the bare triple ``s rel o``: it is a node with ``rdf:subject``,
``rdf:predicate`` and ``rdf:object``, so no traversal, search of facts, check or guard ever
takes it for a fact.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ontoloom.model import now_literal, vocab_iri, vocab_name
from ontoloom.store.base import Delta
from ontoloom.terms import Literal, NamedNode, Quad
from ontoloom.vocab import PROPOSAL_BASE, PROPOSALS, PROV, RDF, RDF_TYPE, XSD

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = [
    "OBJECT_REL",
    "PROPOSAL_BASE",
    "Proposal",
    "corroboration_text",
    "list_proposals",
    "proposal_id",
    "proposal_quads",
    "set_status",
]

STATUSES = ("pending", "confirmed", "rejected")
_FIELDS = (
    "status",
    "tier",
    "origin",
    "proposer",
    "evidenceSource",
    "evidenceQuote",
    "evidenceLine",
    "evidenceMessage",
    "evidenceTime",
    "reason",
    "sentenceKey",
    "kind",
    "proposedProperties",
)
OBJECT_REL = "a"  # the ``rel`` of an object (or merge) proposal: "<id> a <Type>"


def proposal_id(source: str, rel: str, target: str) -> str:
    return hashlib.sha256(f"{source}\n{rel}\n{target}".encode()).hexdigest()[:12]


@dataclass
class Proposal:
    id: str
    source: str
    rel: str
    target: str
    status: str = "pending"
    tier: str = "LOW"
    origin: str = "wikilink"  # wikilink | enrich | conversation
    proposer: str = "person"
    evidence: dict[str, Any] = field(default_factory=dict)  # source path, quote, line, message…
    created: str | None = None
    reason: str | None = None
    kind: str = "relation"  # relation | object (a new object) | merge (an existing one, again)
    properties: dict[str, Any] = field(default_factory=dict)  # an object proposal's values
    corroboration: list[dict[str, Any]] = field(default_factory=list)  # further evidence

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "source": self.source,
            "rel": self.rel,
            "target": self.target,
            "status": self.status,
            "tier": self.tier,
            "origin": self.origin,
            "proposer": self.proposer,
            "evidence": self.evidence,
            "created": self.created,
            "reason": self.reason,
            "label": "unconfirmed" if self.status == "pending" else self.status,
            **(
                {"properties": self.properties, "corroboration": self.corroboration}
                if self.kind != "relation" or self.corroboration
                else {}
            ),
        }


def node_of(pid: str) -> NamedNode:
    return NamedNode(PROPOSAL_BASE + pid)


def proposal_quads(graph: Session, p: Proposal) -> set[Quad]:
    node, g = node_of(p.id), PROPOSALS
    typed = p.rel == OBJECT_REL
    quads = {
        Quad(node, RDF_TYPE, vocab_iri("Proposal"), g),
        Quad(node, NamedNode(RDF + "subject"), graph.ids.iri(p.source), g),
        Quad(node, NamedNode(RDF + "predicate"), RDF_TYPE if typed else vocab_iri(p.rel), g),
        Quad(
            node,
            NamedNode(RDF + "object"),
            vocab_iri(p.target) if typed else graph.ids.iri(p.target),
            g,
        ),
        Quad(node, vocab_iri("status"), Literal(p.status), g),
        Quad(node, vocab_iri("tier"), Literal(p.tier), g),
        Quad(node, vocab_iri("origin"), Literal(p.origin), g),
        Quad(node, NamedNode(PROV + "wasAttributedTo"), Literal(p.proposer), g),
        Quad(node, NamedNode(PROV + "generatedAtTime"), now_literal(), g),
    }
    if p.kind != "relation":
        quads.add(Quad(node, vocab_iri("kind"), Literal(p.kind), g))
    if p.properties:
        text = json.dumps(p.properties, sort_keys=True, ensure_ascii=False)
        quads.add(Quad(node, vocab_iri("proposedProperties"), Literal(text), g))
    for extra in p.corroboration:
        quads.add(Quad(node, vocab_iri("corroboration"), Literal(corroboration_text(extra)), g))
    for key, value in p.evidence.items():
        if value is None:
            continue
        literal = (
            Literal(str(value), datatype=NamedNode(XSD + "integer"))
            if isinstance(value, int)
            else Literal(str(value))
        )
        quads.add(Quad(node, vocab_iri("evidence" + key[:1].upper() + key[1:]), literal, g))
    return quads


def corroboration_text(evidence: dict[str, Any]) -> str:
    return json.dumps(evidence, sort_keys=True, ensure_ascii=False)


def list_proposals(
    graph: Session,
    *,
    status: str | None = None,
    tier: str | None = None,
    touching: str | None = None,
) -> list[Proposal]:
    query = f"""
        SELECT ?p ?s ?r ?o ?field ?value ?created WHERE {{
            GRAPH {PROPOSALS} {{
                ?p {RDF_TYPE} {vocab_iri("Proposal")} ; <{RDF}subject> ?s ; <{RDF}predicate> ?r ; <{RDF}object> ?o .
                OPTIONAL {{ ?p <{PROV}generatedAtTime> ?created }}
                OPTIONAL {{ ?p ?field ?value FILTER(isLiteral(?value)) }}
            }}
        }}"""
    found: dict[str, Proposal] = {}
    for row in graph.backend.select(query):
        pid = row["p"].value.removeprefix(PROPOSAL_BASE)
        p = found.get(pid)
        if p is None:
            typed = row["r"] == RDF_TYPE
            p = found[pid] = Proposal(
                pid,
                graph.ids.id_of(row["s"]),
                OBJECT_REL if typed else vocab_name(row["r"]),
                vocab_name(row["o"]) if typed else graph.ids.id_of(row["o"]),
                created=row["created"].value if row["created"] is not None else None,
            )
        name = vocab_name(row["field"]) if row["field"] is not None else ""
        value = row["value"].value if row["value"] is not None else None
        if name in ("status", "tier", "origin", "reason", "kind"):
            setattr(p, name, value)
        elif name == "proposedProperties" and value:
            p.properties = json.loads(value)
        elif name == "corroboration" and value:
            p.corroboration.append(json.loads(value))
        elif row["field"] is not None and row["field"].value == PROV + "wasAttributedTo":
            p.proposer = value or p.proposer
        elif name.startswith("evidence"):
            key = name.removeprefix("evidence")
            key = key[:1].lower() + key[1:]
            p.evidence[key] = int(value) if key == "line" and value and value.isdigit() else value
    out = [
        p
        for p in found.values()
        if (status is None or p.status == status)
        and (tier is None or p.tier == tier)
        and (touching is None or touching in (p.source, p.target))
    ]
    for p in out:
        p.corroboration.sort(key=lambda e: json.dumps(e, sort_keys=True))
    return sorted(out, key=lambda p: (p.created or "", p.id))


def set_status(graph: Session, pid: str, status: str, reason: str | None = None) -> Delta:
    """The delta that moves a proposal to ``status`` (pending, confirmed or rejected)."""
    node = node_of(pid)
    query = f"SELECT ?p ?f ?v WHERE {{ GRAPH {PROPOSALS} {{ ?p ?f ?v }} }}"
    removes = {
        Quad(node, r["f"], r["v"], PROPOSALS)
        for r in graph.backend.select(query, {"p": node})
        if vocab_name(r["f"]) in ("status", "reason")
    }
    adds = {Quad(node, vocab_iri("status"), Literal(status), PROPOSALS)}
    if reason:
        adds.add(Quad(node, vocab_iri("reason"), Literal(reason), PROPOSALS))
    return Delta(adds=adds, removes=removes)
