"""Actions over the trusted graph: ``guard`` (has this failure happened before, and what
fixes it), ``why`` (decision archaeology) and ``hints`` (unconfirmed proposals, labelled)."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ontoloom.errors import NotFound
from ontoloom.lookups import failure_class_facts, labels
from ontoloom.model import shown_id, vocab_iri, vocab_name
from ontoloom.records.identity import Resolver
from ontoloom.records.slug import slug
from ontoloom.search import STOPWORDS, query_terms
from ontoloom.terms import Term
from ontoloom.vocab import OL, RDF, RDF_TYPE

if TYPE_CHECKING:
    from ontoloom.proposals.store import Proposal
    from ontoloom.session import Session

__all__ = ["GuardHit", "guard", "guard_json", "hints", "why"]

WHY_MAX_HOPS = 3
# Hop 1: what points at the target with one of these; a decision target also what it builds on.
_POINTING = ("applies", "enforced-by", "covered-by", "resolved-by", "relates-to")


def _label(graph: Session, node: Term) -> dict[str, Any]:
    found = labels(graph.backend, graph.ids, [node], known=graph.schema.types).get(node)
    if found is None:
        return {
            "id": graph.ids.id_of(node),
            "type": "",
            "title": graph.ids.id_of(node),
            "date": None,
        }
    return {k: found[k] for k in ("id", "type", "title", "date")}


# -- guard -------------------------------------------------------------------------------------
@dataclass
class GuardHit:
    id: str
    title: str
    matched_by: str
    recurrences: int = 0
    latest: list[dict[str, Any]] = field(default_factory=list)
    rules: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    private: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "class": self.id,
            "title": self.title,
            "matched_by": self.matched_by,
            "recurrences": self.recurrences,
            "latest": self.latest,
            "rules": self.rules,
            "actions": self.actions,
            "aliases": self.aliases,
            "private": self.private,
        }


def guard_json(hits: list[GuardHit]) -> dict[str, Any]:
    """What ``guard`` reports: whether anything matched, and the matching classes."""
    return {"matched": bool(hits), "classes": [h.to_json() for h in hits]}


def _classes(graph: Session) -> list[dict[str, Any]]:
    query = (
        f"SELECT ?c ?title ?alias ?privacy WHERE {{ ?c {RDF_TYPE} {vocab_iri('FailureClass')} . "
        f"OPTIONAL {{ ?c {vocab_iri('title')} ?title }} OPTIONAL {{ ?c {vocab_iri('aliases')} ?alias }} "
        f"OPTIONAL {{ ?c {vocab_iri('privacy')} ?privacy }} }}"
    )
    found: dict[str, dict[str, Any]] = {}
    for r in graph.backend.select(query):
        cid = graph.ids.id_of(r["c"])
        entry = found.setdefault(
            cid, {"id": cid, "type": "FailureClass", "title": "", "aliases": [], "private": False}
        )
        if r["title"] is not None:
            entry["title"] = r["title"].value
        if r["alias"] is not None and r["alias"].value not in entry["aliases"]:
            entry["aliases"].append(r["alias"].value)
        if r["privacy"] is not None and r["privacy"].value == "private":
            entry["private"] = True
    return sorted(found.values(), key=lambda c: c["id"])


def guard(
    graph: Session, text: str | None = None, class_ref: str | None = None, limit: int = 3
) -> list[GuardHit]:
    """Known recurring failures matching ``text`` (or the class ``class_ref``), best first."""
    classes = _classes(graph)
    by_id = {c["id"]: c for c in classes}
    matched: dict[str, str] = {}
    if class_ref is not None:
        resolution = Resolver(classes).resolve(
            class_ref.removeprefix("failure-class:"), {"FailureClass"}
        )
        if resolution.id is None:
            resolution = Resolver(classes).resolve(class_ref, {"FailureClass"})
        if resolution.id is not None:
            matched[resolution.id] = "id"
    elif text and text.strip():
        lowered = f" {' '.join(slug(text).split('-'))} "
        for c in classes:
            local = c["id"].partition(":")[2]
            if slug(text) == local:
                matched[c["id"]] = "id"
            elif any(
                slug(a) and f" {' '.join(slug(a).split('-'))} " in lowered for a in c["aliases"]
            ):
                matched.setdefault(c["id"], "alias")
            elif slug(c["title"]) and f" {' '.join(slug(c['title']).split('-'))} " in lowered:
                matched.setdefault(c["id"], "title")
        for cid in _text_matches(graph, text, by_id):
            matched.setdefault(cid, "text")
    hits = []
    for cid, how in list(matched.items())[: max(limit, 1) * 3]:
        info = by_id.get(cid)
        if info is not None:
            hits.append(_describe_class(graph, info, how))
    order = {"id": 0, "alias": 1, "title": 2, "text": 3}
    return sorted(hits, key=lambda h: (order[h.matched_by], -h.recurrences, h.id))[:limit]


def _text_matches(graph: Session, text: str, classes: dict[str, dict[str, Any]]) -> list[str]:
    """Failure classes whose text (or whose occurrences' titles and bodies) shares most of
    the text's informative words."""
    terms = [t for t in query_terms(text) if t not in STOPWORDS and len(t) > 2]
    if not terms or graph.data_dir is None:
        return []
    out: list[str] = []
    for hit in graph.search(text, types=["FailureClass", "FailureOccurrence"], limit=10):
        cid = hit.id if hit.type == "FailureClass" else _class_of(graph, hit.id)
        if cid is None or cid not in classes or cid in out:
            continue
        words = set(re.findall(r"\w+", f"{hit.title} {hit.snippet}".lower()))
        found = sum(1 for t in terms if any(w.startswith(t[: max(4, len(t) - 2)]) for w in words))
        if found >= max(1, (len(terms) + 1) // 2):
            out.append(cid)
    return out


def _class_of(graph: Session, occurrence: str) -> str | None:
    rows = list(
        graph.backend.select(
            f"SELECT ?o ?c WHERE {{ ?o {vocab_iri('recurs-as')} ?c }}",
            {"o": graph.ids.iri(occurrence)},
        )
    )
    return graph.ids.id_of(rows[0]["c"]) if rows else None


def _describe_class(graph: Session, info: dict[str, Any], how: str) -> GuardHit:
    facts = failure_class_facts(
        graph.backend, graph.ids, graph.ids.iri(info["id"]), known=graph.schema.types
    )

    def shown(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: x[k] for k in ("id", "type", "title", "date")} for x in found]

    return GuardHit(
        id=info["id"],
        title=info["title"],
        matched_by=how,
        recurrences=len(facts["occurrences"]),
        latest=shown(facts["occurrences"][:3]),
        rules=shown(facts["rules"]),
        actions=shown(facts["actions"]),
        aliases=info["aliases"],
        private=info["private"],
    )


# -- why ---------------------------------------------------------------------------------------
def known_objects(graph: Session) -> list[dict[str, Any]]:
    """Every object of a schema type as identity resolution sees it: id, type, title (or
    name) and aliases, ordered by id."""
    query = (
        f'SELECT ?s ?t ?title ?name ?alias WHERE {{ ?s {RDF_TYPE} ?t . FILTER(STRSTARTS(STR(?t), "{OL}")) '
        f"OPTIONAL {{ ?s {vocab_iri('title')} ?title }} OPTIONAL {{ ?s {vocab_iri('name')} ?name }} "
        f"OPTIONAL {{ ?s {vocab_iri('aliases')} ?alias }} }}"
    )
    found: dict[str, dict[str, Any]] = {}
    for r in graph.backend.select(query):
        kind = vocab_name(r["t"])
        if not graph.ids.is_instance(r["s"]) or kind not in graph.schema.types:
            continue
        oid = graph.ids.id_of(r["s"])
        entry = found.setdefault(oid, {"id": oid, "type": kind, "title": None, "aliases": []})
        label = r["title"] or r["name"]
        if label is not None:
            entry["title"] = label.value
        if r["alias"] is not None and r["alias"].value not in entry["aliases"]:
            entry["aliases"].append(r["alias"].value)
    return sorted(found.values(), key=lambda o: o["id"])


def resolve_object(graph: Session, ref: str) -> str:
    """An object by id, slug, title or alias. :raises NotFound: (ambiguity says so)."""
    if graph.exists(ref):
        return ref
    resolution = Resolver(known_objects(graph)).resolve(ref)
    if resolution.id is None:
        raise NotFound(resolution.reason or f"{shown_id(ref)} matches no object")
    return resolution.id


def _evidence(graph: Session, s: Term, rel: Term, o: Term) -> dict[str, Any]:
    query = (
        f"SELECT ?s ?p ?o ?source ?line ?quote WHERE {{ ?ev {RDF_TYPE} <{RDF}Statement> ; <{RDF}subject> ?s ; "
        f"<{RDF}predicate> ?p ; <{RDF}object> ?o ; {vocab_iri('source')} ?source . "
        f"OPTIONAL {{ ?ev {vocab_iri('line')} ?line }} OPTIONAL {{ ?ev {vocab_iri('quote')} ?quote }} }}"
    )
    for r in graph.backend.select(query, {"s": s, "p": rel, "o": o}):
        return {
            "source": r["source"].value,
            "line": int(r["line"].value) if r["line"] is not None else None,
            "quote": r["quote"].value if r["quote"] is not None else None,
        }
    return {
        "source": None,
        "line": None,
        "quote": None,
        "note": "written directly, not read from a record",
    }


def why(graph: Session, target: str) -> dict[str, Any]:
    """Decisions behind ``target``: what applies to, is enforced by, covers, resolves or relates
    to it (and, for a decision, what it builds on), then further along builds-on and applies —
    at most three hops, each object visited once, every step with its evidence."""
    start_id = resolve_object(graph, target)
    start = graph.ids.iri(start_id)
    start_info = _label(graph, start)
    visited: set[Term] = {start}
    queue: deque[tuple[Term, list[dict[str, Any]]]] = deque([(start, [])])
    decisions = []
    while queue:
        node, path = queue.popleft()
        if len(path) >= WHY_MAX_HOPS:
            continue
        info = start_info if node == start else _label(graph, node)
        for s, rel, o, nxt in _next_steps(graph, node, info["type"], first=node == start):
            if nxt in visited:
                continue
            visited.add(nxt)
            step = {
                "from": graph.ids.id_of(s),
                "rel": rel,
                "to": graph.ids.id_of(o),
                "evidence": _evidence(graph, s, vocab_iri(rel), o),
            }
            reached = _label(graph, nxt)
            new_path = [*path, step]
            if reached["type"] == "Decision":
                decisions.append({**reached, "hops": len(new_path), "path": new_path})
            queue.append((nxt, new_path))
    decisions.sort(key=lambda d: (d["hops"], d["date"] or "", d["id"]))
    return {"target": start_info, "decisions": decisions}


def _next_steps(
    graph: Session, node: Term, kind: str, *, first: bool
) -> list[tuple[Term, str, Term, Term]]:
    steps: list[tuple[Term, str, Term, Term]] = []

    def incoming(rels: tuple[str, ...]) -> None:
        values = " ".join(str(vocab_iri(r)) for r in rels)
        for r in graph.backend.select(
            f"SELECT ?s ?p ?o WHERE {{ VALUES ?p {{ {values} }} ?s ?p ?o }}", {"o": node}
        ):
            if graph.ids.is_instance(r["s"]):
                steps.append((r["s"], vocab_name(r["p"]), node, r["s"]))

    def outgoing(rel: str) -> None:
        for r in graph.backend.select(
            f"SELECT ?s ?o WHERE {{ ?s {vocab_iri(rel)} ?o }}", {"s": node}
        ):
            steps.append((node, rel, r["o"], r["o"]))

    if first:
        incoming(_POINTING)
        if kind == "Decision":
            outgoing("builds-on")
    elif kind == "Decision":
        outgoing("builds-on")
    elif kind == "Rule":
        incoming(("applies",))
    return sorted(steps, key=lambda s: (s[1], str(s[3])))


# -- hints -------------------------------------------------------------------------------------
def hints(graph: Session, target: str) -> list[Proposal]:
    """Unconfirmed proposals touching ``target``, labelled as such."""
    from ontoloom.proposals.store import list_proposals

    return list_proposals(graph, status="pending", touching=resolve_object(graph, target))


def labelled_hints(graph: Session, target: str) -> list[dict[str, Any]]:
    """:func:`hints` as JSON, each mined one labelled by its confidence (None for the rest);
    mined knowledge shown counts as used (:mod:`ontoloom.proposals.confidence`)."""
    from ontoloom.proposals.confidence import confidence, load_usage, record_use

    found = hints(graph, target)
    usage = load_usage(graph.data_dir) if graph.data_dir is not None else {}
    shown = [
        {
            **p.to_json(),
            "confidence": confidence(p.status, p.tier, usage.get(p.id))
            if p.origin == "conversation"
            else None,
        }
        for p in found
    ]
    if graph.data_dir is not None:
        record_use(graph.data_dir, [p["id"] for p in shown if p["confidence"]])
    return shown
