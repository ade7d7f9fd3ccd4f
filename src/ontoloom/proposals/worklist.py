"""The wikilink worklist: ``[[Target]]`` links in record bodies waiting to be typed.

A verdict — typed as relation R, or dismissed — is keyed to the candidate, and a candidate
is keyed to its source, its target and the normalised text of its sentence: editing
elsewhere in the file keeps the verdict; rewriting the sentence brings the candidate back.
Typing a candidate makes a pending proposal; it never enters the trusted graph by itself.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ontoloom.errors import NotFound, ValidationFailed
from ontoloom.findings import Finding
from ontoloom.model import shown_id, vocab_iri
from ontoloom.proposals.store import Proposal, proposal_id, proposal_quads
from ontoloom.store.base import Delta
from ontoloom.terms import Literal, NamedNode, Quad, Term
from ontoloom.vocab import OL, PROPOSALS, RDF_TYPE

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = ["dismiss", "type_candidate", "worklist"]

CANDIDATE_BASE = "https://ontoloom.dev/candidate/"
VERDICT_BASE = "https://ontoloom.dev/verdict/"


@dataclass
class Item:
    id: str
    source: str
    target_text: str
    target: str | None
    sentence: str
    path: str
    line: int
    label: str | None = None
    # the relations the schema allows from this source to this target, the specific first
    relations: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "relations": list(self.relations),
            "id": self.id,
            "source": self.source,
            "target": self.target,
            "target_text": self.target_text,
            "label": self.label,
            "sentence": self.sentence,
            "path": self.path,
            "line": self.line,
        }


def _candidates(graph: Session) -> list[Item]:
    v = vocab_iri
    query = f"""
        SELECT ?c ?s ?text ?o ?sentence ?path ?line ?label WHERE {{
            ?c {RDF_TYPE} {v("LinkCandidate")} ; {v("candidateFrom")} ?s ; {v("targetText")} ?text ;
               {v("sentence")} ?sentence ; {v("source")} ?path ; {v("line")} ?line .
            OPTIONAL {{ ?c {v("candidateTo")} ?o }}
            OPTIONAL {{ ?c {v("label")} ?label }}
        }}"""
    items = {}
    for r in graph.backend.select(query):
        cid = r["c"].value.removeprefix(CANDIDATE_BASE)
        items[cid] = Item(
            cid,
            graph.ids.id_of(r["s"]),
            r["text"].value,
            graph.ids.id_of(r["o"]) if r["o"] is not None else None,
            r["sentence"].value,
            r["path"].value,
            int(r["line"].value),
            r["label"].value if r["label"] is not None else None,
        )
    return sorted(items.values(), key=lambda i: (i.path, i.line, i.id))


def _verdicts(graph: Session) -> dict[str, str]:
    query = (
        f"SELECT ?v ?verdict WHERE {{ GRAPH {PROPOSALS} {{ ?v {vocab_iri('verdict')} ?verdict }} }}"
    )
    return {
        r["v"].value.removeprefix(VERDICT_BASE): r["verdict"].value
        for r in graph.backend.select(query)
    }


def _connected(graph: Session, a: str, b: str) -> bool:
    """Any trusted relation between the two, either direction (proposals are reified: never)."""
    query = f'ASK {{ {{ ?a ?r ?b }} UNION {{ ?b ?r ?a }} FILTER(STRSTARTS(STR(?r), "{OL}")) }}'
    return graph.backend.ask(query, {"a": graph.ids.iri(a), "b": graph.ids.iri(b)})


def worklist(graph: Session) -> list[Item]:
    """Candidates to type: unresolved targets, already-connected pairs and decided ones hidden."""
    verdicts = _verdicts(graph)
    return [
        replace(item, relations=fitting_relations(graph, item.source, item.target))
        for item in _candidates(graph)
        if item.target is not None
        and item.id not in verdicts
        and item.source != item.target
        and not _connected(graph, item.source, item.target)
    ]


_ANY = ("Object", "Record", "Entity")


def fitting_relations(graph: Session, source: str, target: str) -> tuple[str, ...]:
    """The relations whose domain and range the two objects fit — what typing this pair may
    choose (the review page offers only these) — those naming types before those open to any
    object, so that the first is the most specific."""
    # each end's types read once, not once per relation of the schema
    source_types, target_types = _types_of(graph, source), _types_of(graph, target)
    fits = [
        name
        for name, spec in graph.schema.relations.items()
        if _allows(graph, source_types, spec.from_types)
        and _allows(graph, target_types, spec.to_types)
    ]

    def generic(name: str) -> int:
        spec = graph.schema.relations[name]
        return sum(any(t in _ANY for t in ends) for ends in (spec.from_types, spec.to_types))

    return tuple(sorted(fits, key=generic))


def _find(graph: Session, cid: str) -> Item:
    for item in _candidates(graph):
        if item.id == cid:
            return item
    raise NotFound(f"no link candidate {shown_id(cid)}: `ontoloom links` lists them")


def _verdict(cid: str, verdict: str) -> set[Quad]:
    node = NamedNode(VERDICT_BASE + cid)
    return {
        Quad(node, RDF_TYPE, vocab_iri("Verdict"), PROPOSALS),
        Quad(node, vocab_iri("verdict"), Literal(verdict), PROPOSALS),
    }


def type_candidate(graph: Session, cid: str, rel: str) -> Proposal:
    """Type a candidate as ``rel``: a pending proposal (checked against the vocabulary)."""
    item = _find(graph, cid)
    if item.target is None:
        raise NotFound(f"[[{item.target_text}]] matches no object: there is nothing to type it to")
    spec = graph.schema.relations.get(rel)
    if spec is None:
        raise ValidationFailed(
            [
                Finding(
                    item.source,
                    rel,
                    "relation",
                    rel,
                    f"unknown relation {rel!r}; known: {', '.join(graph.schema.relations)}",
                )
            ]
        )
    for end, allowed, what in (
        (item.source, spec.from_types, "starts"),
        (item.target, spec.to_types, "points"),
    ):
        if not _fits(graph, end, allowed):
            raise ValidationFailed(
                [
                    Finding(
                        item.source,
                        rel,
                        "class",
                        end,
                        f"{rel} {what} at a {' or '.join(allowed)}; {end} is not one",
                    )
                ]
            )
    proposal = Proposal(
        proposal_id(item.source, rel, item.target),
        item.source,
        rel,
        item.target,
        tier="HIGH",
        origin="wikilink",
        proposer="person",
        evidence={"source": item.path, "quote": item.sentence, "line": item.line},
    )
    graph.writes.commit(Delta(adds=proposal_quads(graph, proposal) | _verdict(cid, f"typed:{rel}")))
    return proposal


def dismiss(graph: Session, cid: str) -> Item:
    item = _find(graph, cid)
    graph.writes.commit(Delta(adds=_verdict(cid, "dismissed")))
    return item


def _fits(graph: Session, entity: str, allowed: list[str]) -> bool:
    return _allows(graph, _types_of(graph, entity), allowed)


def _types_of(graph: Session, entity: str) -> set[Term]:
    """The entity's rdf:types (none: it does not exist)."""
    return {
        r["t"]
        for r in graph.backend.select(
            f"SELECT ?s ?t WHERE {{ ?s {RDF_TYPE} ?t }}", {"s": graph.ids.iri(entity)}
        )
    }


def _allows(graph: Session, types: set[Term], allowed: list[str]) -> bool:
    """Whether an object of ``types`` is one of ``allowed`` (none, or Object/Record/Entity:
    any object that exists)."""
    if not allowed or any(t in _ANY for t in allowed):
        return bool(types)
    wanted = {
        c
        for name in allowed
        if name in graph.schema.types
        for c in graph.schema.hierarchy.subclasses(graph.schema.types[name].iri)
    }
    return bool(types & wanted)
