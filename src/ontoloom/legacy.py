"""``ontoloom check --legacy-json``: a drop-in for the sage-memory ontology skill's audit
script. Reads ``{"entities": [...], "relations": [...]}`` (or a bare list of entities),
validates it with ontoloom's shapes in a scratch store, and answers
``{"valid", "errors", "warnings", "checked"}``.

In this mode domain/range problems are warnings, relations without a spec are skipped,
and malformed input is reported as bad input, never a crash.
"""

from __future__ import annotations

from typing import Any

from ontoloom.errors import BadInput
from ontoloom.model import check_id, literal_from_json, vocab_iri
from ontoloom.store import scratch
from ontoloom.store.base import Delta
from ontoloom.terms import Quad
from ontoloom.vocab import FACTS, RDF_TYPE

__all__ = ["CHECKS", "legacy_check"]

CHECKS = (
    "required",
    "enums",
    "forbidden",
    "event_times",
    "cycles",
    "cardinality",
    "relation_types",
)


def legacy_check(data: Any, checks: set[str] | None = None) -> dict[str, Any]:
    """Validate a legacy graph. :raises BadInput: on malformed input."""
    from ontoloom.audit import audit
    from ontoloom.session import Session

    checks = set(CHECKS) if not checks or "all" in checks else checks
    entities, relations = _parse(data)
    graph = Session(scratch())
    quads: set[Quad] = set()
    warnings: list[str] = []
    known: dict[str, str] = {}
    for e in entities:
        node = graph.ids.iri(e["id"])
        known[e["id"]] = e["type"]
        if e["type"] not in graph.schema.types:
            warnings.append(
                f"{e['id']}: unknown type {e['type']!r} (its type rules were not checked)"
            )
        quads.add(Quad(node, RDF_TYPE, vocab_iri(e["type"]), FACTS))
        for key, value in e["properties"].items():
            try:
                literals = literal_from_json(value, field_name=f"{e['id']}.{key}")
            except BadInput:
                warnings.append(f"{e['id']}: property {key!r} has a nested value (not checked)")
                continue
            quads.update(Quad(node, vocab_iri(key), lit, FACTS) for lit in literals)
    for r in relations:
        spec = graph.schema.relations.get(r["rel"])
        if spec is None:
            continue  # a relation type without a spec is skipped
        for end in (r["from_id"], r["to_id"]):
            if end not in known and "relation_types" in checks:
                warnings.append(
                    f"{r['from_id']} {r['rel']} {r['to_id']}: {end} is not among the entities"
                )
        quads.add(Quad(graph.ids.iri(r["from_id"]), spec.iri, graph.ids.iri(r["to_id"]), FACTS))
    # The documented trusted path: the data is loaded as it is, to be audited below.
    graph.writes.commit(Delta(adds=quads), trusted="legacy audit: a scratch copy to be checked")

    errors: list[str] = []
    for f in audit(graph).findings:
        category = _category(graph, f)
        if category not in checks:
            continue
        line = _describe(f, known)
        if category == "relation_types" or f.severity != "Violation":
            warnings.append(line)
        else:
            errors.append(line)
    return {"valid": not errors, "errors": errors, "warnings": warnings, "checked": len(entities)}


def _describe(f: Any, known: dict[str, str]) -> str:
    if f.kind == "cycle":
        return f"cycle in {f.path}: {' → '.join(f.cycle)}"
    kind = known.get(f.focus, "")
    where = f"{kind} {f.focus}".strip()
    value = "" if f.value is None or f.value == f.focus else f" (value {f.value!r})"
    path = f" {f.path}" if f.path else ""
    return f"{where}:{path}{value}: {f.message}"


def _category(graph: Any, f: Any) -> str:
    if f.kind == "cycle":
        return "cycles"
    if f.kind == "orphan":
        return "relation_types"
    relation = f.path in graph.schema.relations
    if relation:
        return "cardinality" if f.constraint == "maxCount" else "relation_types"
    if f.constraint == "forbidden":
        return "forbidden"
    if f.path in ("start", "end") and f.constraint in ("lessThanOrEquals", "or", "maxCount"):
        return "event_times"
    if f.constraint == "minCount":
        return "required"
    return "enums"


def _parse(data: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if isinstance(data, list):
        raw_entities, raw_relations = data, []
    elif isinstance(data, dict):
        raw_entities, raw_relations = data.get("entities", []), data.get("relations", [])
    else:
        raise BadInput('expected {"entities": [...], "relations": [...]} or a list of entities')
    if not isinstance(raw_entities, list) or not isinstance(raw_relations, list):
        raise BadInput('"entities" and "relations" must be lists')
    entities = []
    for i, e in enumerate(raw_entities):
        if not isinstance(e, dict):
            raise BadInput(f"entities[{i}] is not an object")
        if not isinstance(e.get("id"), str) or not isinstance(e.get("type"), str) or not e["type"]:
            raise BadInput(f"entities[{i}] needs a string id and type")
        props = e.get("properties", {})
        if not isinstance(props, dict):
            raise BadInput(f"entities[{i}].properties must be an object")
        entities.append(
            {"id": _id(e["id"], f"entities[{i}].id"), "type": e["type"], "properties": props}
        )
    relations = []
    for i, r in enumerate(raw_relations):
        if not isinstance(r, dict):
            raise BadInput(f"relations[{i}] is not an object")
        for key in ("from_id", "rel", "to_id"):
            if not isinstance(r.get(key), str) or not r[key]:
                raise BadInput(f"relations[{i}] is missing {key}")
        relations.append(
            {
                "from_id": _id(r["from_id"], f"relations[{i}].from_id"),
                "rel": r["rel"],
                "to_id": _id(r["to_id"], f"relations[{i}].to_id"),
            }
        )
    return entities, relations


def _id(value: str, where: str) -> str:
    try:
        return check_id(value)
    except BadInput as exc:
        raise BadInput(f"{where}: {exc.message}") from None
