"""Small read-only lookups on a backend, by ``(backend, ids)``: labels of objects, the facts of
a failure class (its recurrences, the rules that cover it, the actions that resolve it), pending
proposals touching some objects, and the size of the graph.

Shared by :mod:`ontoloom.actions` (guard) and :mod:`ontoloom.hooks`. It imports only the storage
layer and the vocabulary, so a hook that uses it starts in milliseconds.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from typing import Any

from ontoloom.store.base import Backend
from ontoloom.terms import Literal, NamedNode, Term
from ontoloom.vocab import (
    OL,
    PROPOSAL_BASE,
    PROPOSALS,
    PROV,
    RDF,
    RDF_TYPE,
    ol,
    vocab_name,
)

__all__ = [
    "HIDDEN_TYPES",
    "TITLE_KEYS",
    "count_objects",
    "count_pending",
    "count_relations",
    "failure_class_facts",
    "graph_counts",
    "labels",
    "pending_proposals",
    "pick_type",
]

# Abstract superclasses every object may carry; never the type an object is shown as.
HIDDEN_TYPES = ("Entity", "Object", "Record")
# What an object is called, in order of preference (as the search index reads it).
TITLE_KEYS = ("title", "name", "description", "content", "service")
_CHUNK = 400


def pick_type(types: Sequence[str], known: Container[str] | None = None) -> str:
    """The type an object is shown as: the first ``known`` one when a schema is at hand,
    else the first that is not an abstract superclass."""
    if known is not None:
        listed = [t for t in types if t in known]
        return listed[0] if listed else (types[0] if types else "")
    shown = sorted(t for t in types if t not in HIDDEN_TYPES)
    return shown[0] if shown else (types[0] if types else "")


def _values(nodes: Sequence[Term]) -> Iterable[str]:
    for i in range(0, len(nodes), _CHUNK):
        yield " ".join(str(n) for n in nodes[i : i + _CHUNK])


def labels(
    backend: Backend,
    ids: Any,
    nodes: Iterable[Term],
    *,
    known: Container[str] | None = None,
    title_keys: Sequence[str] = ("title",),
    untyped: bool = False,
) -> dict[Term, dict[str, Any]]:
    """``{id, type, title, date, private}`` of each node that has an ``ol:`` type — and, with
    ``untyped``, of the others too (type ``""``) — one query per few hundred nodes. The title
    is the first of ``title_keys`` the node has, else its id."""
    wanted = list(dict.fromkeys(nodes))
    keys = [ol(k) for k in dict.fromkeys((*title_keys, "date", "privacy"))]
    predicates = ", ".join(str(k) for k in (RDF_TYPE, *keys))
    props: dict[Term, dict[str, str]] = {}
    types: dict[Term, list[str]] = {n: [] for n in wanted} if untyped else {}
    for listed in _values(wanted):
        query = (
            # one VALUES block: two would be joined as a cross product first (slow)
            f"SELECT ?s ?p ?o WHERE {{ VALUES ?s {{ {listed} }} ?s ?p ?o "
            f"FILTER(?p IN ({predicates})) }}"
        )
        for row in backend.select(query):
            node, p, o = row["s"], row["p"], row["o"]
            if p == RDF_TYPE:
                if isinstance(o, NamedNode) and o.value.startswith(OL):
                    types.setdefault(node, []).append(o.value[len(OL) :])
            elif isinstance(o, Literal):
                props.setdefault(node, {}).setdefault(vocab_name(p), o.value)
    found: dict[Term, dict[str, Any]] = {}
    for node, kinds in types.items():
        p = props.get(node, {})
        found[node] = {
            "id": ids.id_of(node),
            "type": pick_type(sorted(set(kinds)), known),
            "title": next((p[k] for k in title_keys if k in p), ids.id_of(node)),
            "date": p.get("date"),
            "private": p.get("privacy", "").lower() == "private",
        }
    return {n: found[n] for n in wanted if n in found}


def failure_class_facts(
    backend: Backend,
    ids: Any,
    node: Term,
    *,
    known: Container[str] | None = None,
    title_keys: Sequence[str] = ("title",),
) -> dict[str, list[dict[str, Any]]]:
    """A failure class's occurrences (latest first), the rules that cover it and the actions
    that resolve it — stated on the class or on any of its occurrences — each labelled (an
    orphan, whose object is gone, with type ``""``)."""
    found = [
        r["o"]
        for r in backend.select(
            f"SELECT DISTINCT ?o ?c WHERE {{ ?o {ol('recurs-as')} ?c }}", {"c": node}
        )
    ]
    occurrences = list(
        labels(backend, ids, found, known=known, title_keys=title_keys, untyped=True).values()
    )
    occurrences.sort(key=lambda o: (o["date"] or "", o["id"]), reverse=True)

    def remedies(rel: str) -> list[dict[str, Any]]:
        query = (
            f"SELECT DISTINCT ?c ?r WHERE {{ {{ ?c {ol(rel)} ?r }} UNION "
            f"{{ ?o {ol('recurs-as')} ?c . ?o {ol(rel)} ?r }} }}"
        )
        targets = {r["r"] for r in backend.select(query, {"c": node})}
        labelled = labels(backend, ids, targets, known=known, title_keys=title_keys, untyped=True)
        return sorted(labelled.values(), key=lambda x: x["id"])

    return {
        "occurrences": occurrences,
        "rules": remedies("covered-by"),
        "actions": remedies("resolved-by"),
    }


def pending_proposals(backend: Backend, ids: Any, nodes: Iterable[Term]) -> list[dict[str, Any]]:
    """Pending (unconfirmed) proposals whose source or target is one of ``nodes``, oldest
    first: ``{id, source, rel, target, tier, origin, proposer, created}``."""
    wanted = list(dict.fromkeys(nodes))
    subject, obj = f"<{RDF}subject>", f"<{RDF}object>"
    out: dict[str, dict[str, Any]] = {}
    for listed in _values(wanted):
        query = f"""SELECT ?p ?s ?r ?o ?tier ?origin ?who ?created ?quote ?time WHERE {{ GRAPH {PROPOSALS} {{
            {{ VALUES ?n {{ {listed} }} ?p {subject} ?n }} UNION {{ VALUES ?n {{ {listed} }} ?p {obj} ?n }}
            ?p {RDF_TYPE} {ol("Proposal")} ; {subject} ?s ; <{RDF}predicate> ?r ; {obj} ?o ;
               {ol("status")} "pending" .
            OPTIONAL {{ ?p {ol("tier")} ?tier }} OPTIONAL {{ ?p {ol("origin")} ?origin }}
            OPTIONAL {{ ?p <{PROV}wasAttributedTo> ?who }} OPTIONAL {{ ?p <{PROV}generatedAtTime> ?created }}
            OPTIONAL {{ ?p {ol("evidenceQuote")} ?quote }} OPTIONAL {{ ?p {ol("evidenceTime")} ?time }}
        }} }}"""
        for row in backend.select(query):
            pid = row["p"].value.removeprefix(PROPOSAL_BASE)
            typed = row["r"] == RDF_TYPE  # an object proposal: "<id> a <Type>"
            out.setdefault(
                pid,
                {
                    "id": pid,
                    "source": ids.id_of(row["s"]),
                    "rel": "a" if typed else vocab_name(row["r"]),
                    "target": vocab_name(row["o"]) if typed else ids.id_of(row["o"]),
                    "quote": row["quote"].value if row["quote"] is not None else "",
                    "time": row["time"].value if row["time"] is not None else "",
                    "tier": row["tier"].value if row["tier"] is not None else "",
                    "origin": row["origin"].value if row["origin"] is not None else "",
                    "proposer": row["who"].value if row["who"] is not None else "",
                    "created": row["created"].value if row["created"] is not None else "",
                },
            )
    return sorted(out.values(), key=lambda p: (p["created"], p["id"]))


def graph_counts(backend: Backend, ids: Any) -> dict[str, int]:
    """Objects (instances with an ``ol:`` type, outside the proposals, schema and bookkeeping
    graphs), relations (``ol:`` triples between instances, outside the proposals graph) and
    pending proposals. Reads every triple: seconds at 100k objects (the search index keeps
    the first two at hand, see :meth:`ontoloom.search.SearchIndex.counts`)."""
    return {
        "objects": count_objects(backend, ids),
        "relations": count_relations(backend, ids),
        "proposals": count_pending(backend),
    }


def _instance(ids: Any, var: str) -> str:
    base = Literal(ids.base)  # serialised (escaped) by pyoxigraph, never pasted raw
    return f"isIRI({var}) && STRSTARTS(STR({var}), {base})"


def _count(backend: Backend, query: str) -> int:
    rows = list(backend.select(query))
    return int(rows[0]["n"].value) if rows and rows[0]["n"] is not None else 0


def count_objects(backend: Backend, ids: Any) -> int:
    # Only instances: the proposals, schema and bookkeeping graphs type other nodes.
    return _count(
        backend,
        f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s {RDF_TYPE} ?t "
        f'FILTER(STRSTARTS(STR(?t), "{OL}") && {_instance(ids, "?s")}) }}',
    )


def count_relations(backend: Backend, ids: Any) -> int:
    # One relation, one triple: two records stating it make it no more (as Session.summary).
    return _count(
        backend,
        f"SELECT (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?s ?p ?o WHERE {{ "
        f"GRAPH ?g {{ ?s ?p ?o }} "
        f'FILTER(?g != {PROPOSALS} && ?p != {RDF_TYPE} && STRSTARTS(STR(?p), "{OL}") '
        f"&& {_instance(ids, '?o')} && {_instance(ids, '?s')}) }} }}",
    )


def count_pending(backend: Backend) -> int:
    return _count(
        backend,
        f"SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ GRAPH {PROPOSALS} {{ "
        f'?p {RDF_TYPE} {ol("Proposal")} ; {ol("status")} "pending" }} }}',
    )
