"""The MCP reference memory server's model, mapped onto the typed graph.

Agents written for ``@modelcontextprotocol/server-memory`` speak in entities (``name``,
``entityType``, ``observations``) and relations (``from``, ``to``, ``relationType``) keyed by
name. Here each call becomes one validated delta:

* ``entityType`` → the schema type of that name (case-insensitive) when the name and the
  type's defaults satisfy its required properties (a Task gets ``status: open``); otherwise a
  ``Thing`` whose ``kind`` keeps the word. The word is kept as ``kind`` whenever it differs from
  the type's own name, so ``entityType`` reads back exactly as written.
* ``name`` → the ``name`` (or, for types that require a title, ``title``) property, and a
  stable id ``{type[:4]}_{sha256(name)[:8]}``. A name also finds objects written any other way:
  by id, then by exact name or title.
* ``observations`` → values of the multi-valued ``observations`` property (a set: they come
  back sorted, and an observation already there is not added twice).
* ``relationType`` → the schema relation of that name (case-insensitive, spaces as ``_``),
  validated like any ``relate``; a name the schema does not know becomes an open ``ol:`` relation
  of that name (checked for endpoints, not for types).

Every call commits once or not at all; the data dir lock serialises several server processes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, NotFound, ValidationFailed
from ontoloom.model import Entity, Finding, Relation, check_id, vocab_iri
from ontoloom.schema import ENTITY
from ontoloom.store.terms import Literal
from ontoloom.vocab import RDF_TYPE

if TYPE_CHECKING:
    from ontoloom.api import Graph
    from ontoloom.changes import Changes

__all__ = ["DEFAULT_PAGE", "GENERIC_TYPE", "MAX_PAGE", "Memory", "stable_id"]

DEFAULT_PAGE = 100
MAX_PAGE = 1000
GENERIC_TYPE = "Thing"
_LABEL_KEYS = ("name", "title")
_RELATION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_OBSERVATIONS = vocab_iri("observations")
_LABEL_PREDICATES = frozenset(vocab_iri(k) for k in _LABEL_KEYS)
_BY_LABEL = (
    f"SELECT DISTINCT ?e ?n WHERE {{ VALUES ?p {{ {' '.join(map(str, _LABEL_PREDICATES))} }} "
    f"?e ?p ?n . ?e {RDF_TYPE} ?t }}"
)


def stable_id(type_name: str, name: str) -> str:
    """The id a memory-server entity gets: the same for the same type and name, everywhere.

    >>> stable_id("Person", "Alice")
    'pers_3bc51062'
    """
    return f"{type_name.lower()[:4]}_{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


@dataclass(frozen=True)
class _Node:
    """An object as the memory model sees it."""

    id: str
    name: str
    entity_type: str
    observations: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entityType": self.entity_type,
            "observations": list(self.observations),
        }


class Memory:
    """The memory-server operations over one open :class:`~ontoloom.api.Graph`."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    # -- names -------------------------------------------------------------------------------
    def _find(self, name: str, changes: Changes | None = None) -> list[str]:
        """Ids of the objects ``name`` denotes: an id, else exact name or title matches."""
        if not isinstance(name, str) or not name.strip():
            raise BadInput("a name is a non-empty string")
        exists = changes.exists if changes is not None else self.graph.exists
        try:
            if exists(check_id(name)):
                return [name]
        except BadInput:
            pass
        label = Literal(name)
        found = {
            self.graph.ids.id_of(row["e"])
            for row in self.graph.backend.select(_BY_LABEL, {"n": label})
        }
        if changes is not None:
            found |= {
                self.graph.ids.id_of(q.subject)
                for q in changes.delta.adds
                if q.predicate in _LABEL_PREDICATES and q.object == label
            }
            found = {i for i in found if changes.exists(i)}
        return sorted(found)

    def _one(self, name: str, changes: Changes | None = None) -> str | None:
        """The one object ``name`` denotes, None when there is none.

        :raises BadInput: when several objects carry that name.
        """
        found = self._find(name, changes)
        if len(found) > 1:
            raise BadInput(
                f"{len(found)} objects are named {name!r} ({', '.join(found[:5])}): "
                "use one of these ids as the name"
            )
        return found[0] if found else None

    def _require(self, name: str, changes: Changes | None = None) -> str:
        found = self._one(name, changes)
        if found is None:
            raise NotFound(
                f"Entity with name {name} not found: create it with create_entities, "
                "or find its name with search_nodes"
            )
        return found

    # -- reading -----------------------------------------------------------------------------
    def _node(self, entity: Entity) -> _Node:
        props = entity.properties
        name = next((props[k] for k in _LABEL_KEYS if isinstance(props.get(k), str)), entity.id)
        kind = props.get("kind")
        observations = props.get("observations", [])
        return _Node(
            id=entity.id,
            name=name,
            entity_type=kind if isinstance(kind, str) else entity.type,
            observations=tuple(str(o) for o in observations),
        )

    def _nodes(self, ids: list[str]) -> list[_Node]:
        entities = {e.id: e for e in self.graph.entities_by_id(ids)}
        return [self._node(entities[i]) for i in ids if i in entities]

    def _graph_json(self, nodes: list[_Node], relations: list[Relation]) -> dict[str, Any]:
        names = {n.id: n.name for n in nodes}
        missing = {i for r in relations for i in (r.from_id, r.to_id)} - names.keys()
        names.update({n.id: n.name for n in self._nodes(sorted(missing))})
        return {
            "entities": [n.to_json() for n in nodes],
            "relations": [
                {
                    "from": names.get(r.from_id, r.from_id),
                    "to": names.get(r.to_id, r.to_id),
                    "relationType": r.rel,
                }
                for r in relations
            ],
        }

    def _all_ids(self) -> list[str]:
        classes = " ".join(str(c) for c in self.graph.schema.object_classes())
        rows = self.graph.backend.select(
            f"SELECT DISTINCT ?e WHERE {{ VALUES ?t {{ {classes} }} ?e {RDF_TYPE} ?t }}"
        )
        return sorted(self.graph.ids.id_of(r["e"]) for r in rows)

    def read_graph(
        self, cursor: str | None = None, limit: int | None = None, summary: bool = False
    ) -> dict[str, Any]:
        """One page of objects (ordered by id) with their outgoing relations — each relation
        appears once, on its source's page — and ``nextCursor`` while more follow. In summary
        mode, counts by type and relation instead of observations."""
        limit = DEFAULT_PAGE if limit is None else limit
        if not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise BadInput(f"limit is a number from 1 to {MAX_PAGE}, not {limit!r}")
        after = _decode_cursor(cursor) if cursor else None
        # A keyset page: ids after the cursor, one more than the page to tell whether more
        # follow. Its cost does not grow with the graph (only summary counts read it whole).
        ids = self.graph.object_ids(after, limit + 1)
        page_ids, more = ids[:limit], len(ids) > limit
        nodes = self._nodes(page_ids)
        relations = self.graph.relations_among(page_ids, outgoing_only=True)
        out = self._graph_json(nodes, relations)
        if summary:
            all_ids = self._all_ids()
            types = Counter(n.entity_type for n in self._nodes(all_ids))
            rels = Counter(r.rel for r in self.graph.relations_among(all_ids, outgoing_only=True))
            out = {
                "entities": [
                    {
                        "name": n.name,
                        "entityType": n.entity_type,
                        "observationCount": len(n.observations),
                    }
                    for n in nodes
                ],
                "summary": {
                    "entities": len(all_ids),
                    "relations": sum(rels.values()),
                    "entityTypes": dict(sorted(types.items())),
                    "relationTypes": dict(sorted(rels.items())),
                },
            }
        if more:
            out["nextCursor"] = _encode_cursor(page_ids[-1])
        return out

    def search_nodes(self, query: str, limit: int = 20) -> dict[str, Any]:
        """Objects ranked by BM25 over names, types and observations (and every other
        property), with the relations that have at least one end among them."""
        if not isinstance(query, str):
            raise BadInput("query is a string")
        if not query.strip():
            return {"entities": [], "relations": []}
        hits = self.graph.search(query, limit=min(max(limit, 1), MAX_PAGE))
        ids = list(dict.fromkeys(h.id for h in hits if h.kind == "object" and not h.private))
        return self._graph_json(self._nodes(ids), self.graph.relations_among(ids))

    def open_nodes(self, names: list[str]) -> dict[str, Any]:
        """The named objects (unknown names are skipped) with the relations that have at
        least one end among them."""
        ids: list[str] = []
        for name in names:
            for found in self._find(name):
                if found not in ids:
                    ids.append(found)
        return self._graph_json(self._nodes(ids), self.graph.relations_among(ids))

    # -- writing -----------------------------------------------------------------------------
    def _type_for(self, entity_type: str) -> tuple[str, dict[str, Any]]:
        """The schema type for a memory ``entityType`` and the defaults it needs, or the
        generic type when the schema has none that a name alone can satisfy."""
        if not isinstance(entity_type, str) or not entity_type.strip():
            raise BadInput('entityType is a non-empty string, e.g. "person"')
        schema = self.graph.schema
        creatable = schema.hierarchy.subclasses(ENTITY)
        for name, spec in schema.types.items():
            if name.lower() != entity_type.strip().lower() or spec.iri not in creatable:
                continue
            label = "title" if "title" in spec.required else "name"
            defaults: dict[str, Any] = {}
            for prop in spec.required:
                if prop == label:
                    continue
                if prop not in spec.enums:
                    break  # a required value a name cannot give: not this type
                defaults[prop] = spec.enums[prop][0]
            else:
                return name, {"label": label, **defaults}
        return GENERIC_TYPE, {"label": "name", "kind": entity_type}

    def create_entities(self, entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Create the entities whose names are new; returns those (as given)."""
        changes = self.graph.changes()
        created = []
        for i, item in enumerate(entities):
            name, entity_type, observations = _entity_fields(item, i)
            if self._one(name, changes) is not None:
                continue
            type_name, extra = self._type_for(entity_type)
            label = extra.pop("label")
            props: dict[str, Any] = {label: name, **extra}
            if entity_type != type_name:
                props["kind"] = entity_type
            if observations:
                props["observations"] = list(dict.fromkeys(observations))
            entity_id = stable_id(type_name, name)
            if changes.exists(entity_id):  # a hash collision with another name
                entity_id = f"{entity_id}{hashlib.sha256(name.encode()).hexdigest()[8:12]}"
            changes.create(type_name, props, id=entity_id)
            created.append({"name": name, "entityType": entity_type, "observations": observations})
        if created:
            self.graph.commit(changes)
        return created

    def _relation_name(self, relation_type: str) -> tuple[str, bool]:
        """The stored relation name and whether the schema declares it."""
        if not isinstance(relation_type, str) or not relation_type.strip():
            raise BadInput('relationType is a non-empty string, e.g. "works_at"')
        wanted = re.sub(r"\s+", "_", relation_type.strip())
        for name in self.graph.schema.relations:
            if name.lower() == wanted.lower():
                return name, True
        if not _RELATION_NAME.match(wanted):
            raise BadInput(
                f'relationType {relation_type!r}: use letters, digits, _ and -, e.g. "works_at"'
            )
        if wanted in self.graph.schema.datatype_properties:
            raise BadInput(
                f'relationType {relation_type!r} is a property name: choose another, e.g. "has_{wanted}"'
            )
        return wanted, False

    def create_relations(self, relations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Create the relations not there yet; returns those. Both ends must exist."""
        changes = self.graph.changes()
        created = []
        missing: list[Finding] = []
        for i, item in enumerate(relations):
            source, target, relation_type = _relation_fields(item, i)
            rel, declared = self._relation_name(relation_type)
            from_id, to_id = self._one(source, changes), self._one(target, changes)
            for name, found in ((source, from_id), (target, to_id)):
                if found is None:
                    missing.append(
                        Finding(
                            f"relations[{i}]",
                            "from" if name == source else "to",
                            "exists",
                            name,
                            f"no entity named {name!r}: create it with create_entities first",
                        )
                    )
            if from_id is None or to_id is None:
                continue
            if declared:
                outcome = changes.relate(from_id, rel, to_id)
                is_new = outcome.created
            else:
                is_new = changes.link(from_id, rel, to_id)
            if is_new:
                created.append({"from": source, "to": target, "relationType": rel})
        if missing:
            raise ValidationFailed(missing, "refused: relations need both ends; nothing was stored")
        if created:
            self.graph.commit(changes)
        return created

    def add_observations(self, observations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Add observations to existing entities; returns what was new for each."""
        changes = self.graph.changes()
        results = []
        for i, item in enumerate(observations):
            name, contents = _observation_fields(item, f"observations[{i}]", "contents")
            entity_id = self._require(name, changes)
            node = self.graph.ids.iri(entity_id)
            present = {q.object.value for q in changes.quads_about(node, _OBSERVATIONS)}
            added = [c for c in dict.fromkeys(contents) if c not in present]
            if added:
                changes.add_values(entity_id, "observations", added)
            results.append({"entityName": name, "addedObservations": added})
        if any(r["addedObservations"] for r in results):
            self.graph.commit(changes)
        return results

    def delete_entities(self, names: list[str]) -> list[str]:
        """Delete the named entities and their relations (unknown names are skipped);
        returns the ids deleted."""
        if not _strings(names):
            raise BadInput("entityNames is a list of strings")
        changes = self.graph.changes()
        deleted = []
        for name in dict.fromkeys(names):
            for entity_id in self._find(name, changes):
                changes.delete(entity_id)
                deleted.append(entity_id)
        if deleted:
            self.graph.commit(changes)
        return deleted

    def delete_observations(self, deletions: list[dict[str, Any]]) -> int:
        """Remove observations (unknown entities and observations are skipped); returns how
        many were removed."""
        changes = self.graph.changes()
        removed = 0
        for i, item in enumerate(deletions):
            name, values = _observation_fields(item, f"deletions[{i}]", "observations")
            entity_id = self._one(name, changes)
            if entity_id is None:
                continue
            removed += changes.remove_values(entity_id, "observations", values)
        if removed:
            self.graph.commit(changes)
        return removed

    def delete_relations(self, relations: list[dict[str, Any]]) -> int:
        """Remove the relations given (those not there are skipped); returns how many."""
        changes = self.graph.changes()
        removed = 0
        for i, item in enumerate(relations):
            source, target, relation_type = _relation_fields(item, i)
            rel, _ = self._relation_name(relation_type)
            from_id, to_id = self._one(source, changes), self._one(target, changes)
            if from_id is None or to_id is None:
                continue
            removed += changes.unlink(from_id, rel, to_id)
        if removed:
            self.graph.commit(changes)
        return removed


# -- argument checks and cursors -------------------------------------------------------------
def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _entity_fields(item: Any, i: int) -> tuple[str, str, list[str]]:
    if not isinstance(item, dict):
        raise BadInput(f"entities[{i}] is an object with name, entityType and observations")
    name, entity_type = item.get("name"), item.get("entityType")
    observations = item.get("observations", [])
    if not isinstance(name, str) or not name.strip():
        raise BadInput(f"entities[{i}].name is a non-empty string")
    if not isinstance(entity_type, str) or not entity_type.strip():
        raise BadInput(f'entities[{i}].entityType is a non-empty string, e.g. "person"')
    if not _strings(observations):
        raise BadInput(f"entities[{i}].observations is a list of strings")
    return name, entity_type, observations


def _observation_fields(item: Any, where: str, key: str) -> tuple[str, list[str]]:
    name, values = (item.get("entityName"), item.get(key)) if isinstance(item, dict) else (0, 0)
    if not isinstance(name, str) or not isinstance(values, list) or not _strings(values):
        raise BadInput(f"{where}: entityName is a string and {key} a list of strings")
    return name, values


def _relation_fields(item: Any, i: int) -> tuple[str, str, str]:
    if not isinstance(item, dict):
        raise BadInput(f"relations[{i}] is an object with from, to and relationType")
    source, target, relation_type = (item.get(k) for k in ("from", "to", "relationType"))
    if not all(isinstance(v, str) and v.strip() for v in (source, target, relation_type)):
        raise BadInput(f"relations[{i}]: from, to and relationType are non-empty strings")
    return str(source), str(target), str(relation_type)


def _encode_cursor(last_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": last_id}).encode()).decode()


def _decode_cursor(cursor: str) -> str:
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        after = data["after"]
        if not isinstance(after, str):
            raise TypeError
        return after
    except (ValueError, KeyError, TypeError):
        raise BadInput(
            f"invalid cursor {cursor!r}: pass the nextCursor of the previous page, or none to start"
        ) from None
