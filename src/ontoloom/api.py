"""The Python API: one method per user-facing operation. Front ends only call into this.

>>> import tempfile
>>> with Graph.open(tempfile.mkdtemp(), write=True, create=True) as g:
...     alice = g.create("Person", {"name": "Alice"})
...     task = g.create("Task", {"title": "Ship it", "status": "open"}, id="task_ship")
...     g.relate("task_ship", "assigned_to", alice.id).relation.rel
'assigned_to'
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ontoloom.config import load_config, resolve_data_dir
from ontoloom.errors import BadInput, NotFound, ValidationFailed
from ontoloom.model import (
    Entity,
    Finding,
    IdSpace,
    Relation,
    check_id,
    check_property_name,
    literal_from_json,
    new_id,
    value_to_json,
    vocab_iri,
    vocab_name,
)
from ontoloom.schema import Schema
from ontoloom.store import Delta, Row, open_backend
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.store.terms import Literal, NamedNode, Quad, Term
from ontoloom.vocab import (
    DCTERMS_MODIFIED,
    FACTS,
    OL,
    PROV_GENERATED,
    RDF_TYPE,
    SCHEMA_GRAPH,
    XSD,
)
from ontoloom.writes import WritePath

__all__ = ["MAX_DEPTH", "Graph", "RelateOutcome"]

MAX_DEPTH = 5


@dataclass
class RelateOutcome:
    relation: Relation
    created: bool = True
    replaced: list[Relation] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = self.relation.to_json()
        out["created"] = self.created
        out["replaced"] = [r.to_json() for r in self.replaced]
        return out


def _now() -> Literal:
    stamp = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return Literal(stamp, datatype=NamedNode(XSD + "dateTime"))


class Graph:
    """A typed, validated graph in one data dir."""

    def __init__(
        self, backend: EmbeddedBackend, data_dir: Path | None = None, id_base: str | None = None
    ) -> None:
        """A graph over ``backend``; ``data_dir`` is None for scratch graphs (no instance)."""
        self.backend = backend
        self.data_dir = data_dir
        config_base = load_config(data_dir).id_base if data_dir is not None else None
        self.ids = IdSpace(id_base or config_base or IdSpace().base)
        self.schema = Schema.load(extensions=[q.triple for q in backend.quads(SCHEMA_GRAPH)])
        self.writes = WritePath(backend, self.schema, self.ids)

    @classmethod
    @contextmanager
    def open(
        cls,
        data_dir: str | Path | None = None,
        *,
        write: bool = False,
        create: bool = False,
        wait: float | None = None,
    ) -> Iterator[Graph]:
        """Open the graph of a data dir (resolved as RECORDS.md says when ``None``).

        :raises NoStore: when there is none and ``create`` is false.
        :raises Busy: when another process holds the data dir.
        """
        path = resolve_data_dir(data_dir)
        with open_backend(path, write=write or create, create=create, wait=wait) as backend:
            yield cls(backend, path)

    # -- reading ---------------------------------------------------------------------------------
    def _type_of(self, types: Iterable[Term]) -> str | None:
        known = self.schema.types
        names = [
            vocab_name(t) for t in types if isinstance(t, NamedNode) and t.value.startswith(OL)
        ]
        for name in names:
            if name in known:
                return name
        return names[0] if names else None

    def _entities(self, rows: Iterable[Row]) -> list[Entity]:
        triples: dict[Term, list[tuple[Term, Term]]] = defaultdict(list)
        for row in rows:
            triples[row["e"]].append((row["p"], row["o"]))
        return [self._entity(e, pairs) for e, pairs in triples.items()]

    def _entity(self, node: Term, pairs: list[tuple[Term, Term]]) -> Entity:
        types, props = [], defaultdict(list)
        created = updated = None
        for p, o in pairs:
            if p == RDF_TYPE:
                types.append(o)
            elif p == PROV_GENERATED:
                created = o.value
            elif p == DCTERMS_MODIFIED:
                updated = o.value
            elif isinstance(o, Literal) and isinstance(p, NamedNode) and p.value.startswith(OL):
                props[vocab_name(p)].append(value_to_json(o))
        properties: dict[str, Any] = {}
        for key in sorted(props):
            values = sorted(props[key], key=lambda v: (str(type(v)), v))
            properties[key] = (
                values if key in self.schema.multi_valued or len(values) > 1 else values[0]
            )
        return Entity(
            id=self.ids.id_of(node),
            type=self._type_of(types) or "",
            properties=properties,
            created=created,
            updated=updated,
        )

    def exists(self, entity_id: str) -> bool:
        return self.backend.ask(f"ASK {{ ?e {RDF_TYPE} ?t }}", {"e": self.ids.iri(entity_id)})

    def get(self, entity_id: str) -> Entity:
        """:raises NotFound: when no entity has that id."""
        node = self.ids.iri(entity_id)
        rows = list(self.backend.select("SELECT DISTINCT ?e ?p ?o WHERE { ?e ?p ?o }", {"e": node}))
        entity = self._entities(rows)
        if not entity or not entity[0].type:
            raise NotFound(f"no entity with id {entity_id!r}: check the id with `ontoloom list`")
        return entity[0]

    def entities(
        self, type_name: str | None = None, where: dict[str, Any] | None = None
    ) -> list[Entity]:
        """Entities, optionally of one type and with given property values."""
        if type_name is not None:
            self._type_iri(type_name)
        classes = (
            self.schema.hierarchy.subclasses(vocab_iri(type_name))
            if type_name
            else self.schema.object_classes()
        )
        patterns, bindings, names = [], {}, []
        for i, (key, value) in enumerate(sorted((where or {}).items())):
            check_property_name(key)
            literals = literal_from_json(value, field_name=key)
            if len(literals) != 1:
                raise BadInput(f"--where {key}: give one value")
            var = f"w{i}"
            patterns.append(f"?e {vocab_iri(key)} ?{var} .")
            bindings[var] = literals[0]
            names.append(f"?{var}")
        values = " ".join(str(c) for c in classes)
        query = (
            f"SELECT DISTINCT ?e ?p ?o {' '.join(names)} WHERE {{ VALUES ?t {{ {values} }} "
            f"?e {RDF_TYPE} ?t . {' '.join(patterns)} ?e ?p ?o }}"
        )
        entities = self._entities(self.backend.select(query, bindings or None))
        return sorted(entities, key=lambda e: (e.type, e.id))

    def relations(
        self, entity_id: str, rel: str | None = None, direction: str = "both"
    ) -> list[Relation]:
        """Relations touching an entity. :raises NotFound: for an unknown id."""
        self.get(entity_id)
        if direction not in ("out", "in", "both"):
            raise BadInput(f"direction must be out, in or both, not {direction!r}")
        node = self.ids.iri(entity_id)
        out: list[Relation] = []
        rel_filter = f"VALUES ?p {{ {self._relation_iri(rel)} }}" if rel else ""
        if direction in ("out", "both"):
            query = f"SELECT DISTINCT ?s ?p ?o WHERE {{ {rel_filter} ?s ?p ?o . FILTER(isIRI(?o) && ?p != {RDF_TYPE}) }}"
            out.extend(self._relations(self.backend.select(query, {"s": node})))
        if direction in ("in", "both"):
            query = f"SELECT DISTINCT ?s ?p ?o WHERE {{ {rel_filter} ?s ?p ?o . FILTER(?p != {RDF_TYPE}) }}"
            out.extend(self._relations(self.backend.select(query, {"o": node})))
        return sorted(set(out), key=lambda r: (r.from_id != entity_id, r.rel, r.from_id, r.to_id))

    def _relations(self, rows: Iterable[Row]) -> list[Relation]:
        rows = [
            r
            for r in rows
            if self.ids.is_instance(r["s"])
            and self.ids.is_instance(r["o"])
            and isinstance(r["p"], NamedNode)
            and r["p"].value.startswith(OL)
        ]
        types = self._types({r["s"] for r in rows} | {r["o"] for r in rows})
        return [
            Relation(
                from_id=self.ids.id_of(r["s"]),
                rel=vocab_name(r["p"]),
                to_id=self.ids.id_of(r["o"]),
                from_type=types.get(r["s"]),
                to_type=types.get(r["o"]),
            )
            for r in rows
        ]

    def _types(self, nodes: Iterable[Term]) -> dict[Term, str]:
        nodes = list(nodes)
        if not nodes:
            return {}
        found: dict[Term, list[Term]] = defaultdict(list)
        listed = " ".join(str(n) for n in nodes)
        for row in self.backend.select(
            f"SELECT ?n ?t WHERE {{ VALUES ?n {{ {listed} }} ?n {RDF_TYPE} ?t }}"
        ):
            found[row["n"]].append(row["t"])
        return {n: self._type_of(ts) or "" for n, ts in found.items()}

    def traverse(
        self, entity_id: str, rel: str | None = None, direction: str = "out", depth: int = 1
    ) -> list[dict[str, Any]]:
        """Everything reachable within ``depth`` hops (at most 5), each with its distance and
        path; every node is reached once, at its shortest distance (cycle-safe)."""
        if direction not in ("out", "in"):
            raise BadInput(f"direction must be out or in, not {direction!r}")
        if not 1 <= depth <= MAX_DEPTH:
            raise BadInput(f"depth must be between 1 and {MAX_DEPTH}, not {depth}")
        self.get(entity_id)
        start = self.ids.iri(entity_id)
        rel_filter = f"VALUES ?p {{ {self._relation_iri(rel)} }}" if rel else ""
        symmetric = {s.iri for s in self.schema.relations.values() if s.symmetric}
        reached: dict[Term, tuple[list[Term], list[str]]] = {start: ([start], [])}
        frontier: list[Term] = [start]
        for _ in range(depth):
            if not frontier:
                break
            listed = " ".join(str(n) for n in frontier)
            fwd = "?n ?p ?m" if direction == "out" else "?m ?p ?n"
            back = "?m ?p ?n" if direction == "out" else "?n ?p ?m"
            query = (
                f"SELECT DISTINCT ?n ?p ?m WHERE {{ VALUES ?n {{ {listed} }} {rel_filter} "
                f"{{ {fwd} }} UNION {{ {back} FILTER(?p IN ({', '.join(map(str, symmetric)) or '<urn:none>'})) }} "
                f"FILTER(isIRI(?m) && ?p != {RDF_TYPE}) }}"
            )
            nxt: list[Term] = []
            for row in sorted(
                self.backend.select(query), key=lambda r: (str(r["n"]), str(r["p"]), str(r["m"]))
            ):
                m, p = row["m"], row["p"]
                if m in reached or not self.ids.is_instance(m) or not p.value.startswith(OL):
                    continue
                path, rels = reached[row["n"]]
                reached[m] = ([*path, m], [*rels, vocab_name(p)])
                nxt.append(m)
            frontier = nxt
        del reached[start]
        types = self._types(reached)
        labels = {e.id: e.label for e in self._entities_by_id(reached)}
        results = []
        for node, (path, rels) in reached.items():
            node_id = self.ids.id_of(node)
            results.append(
                {
                    "id": node_id,
                    "type": types.get(node, ""),
                    "title": labels.get(node_id, node_id),
                    "distance": len(rels),
                    "path": [self.ids.id_of(n) for n in path],
                    "rels": rels,
                }
            )
        return sorted(results, key=lambda r: (r["distance"], r["id"]))

    def _entities_by_id(self, nodes: Iterable[Term]) -> list[Entity]:
        listed = " ".join(str(n) for n in nodes)
        if not listed:
            return []
        query = (
            f"SELECT ?e ?p ?o WHERE {{ VALUES ?e {{ {listed} }} ?e ?p ?o . FILTER(isLiteral(?o)) }}"
        )
        return self._entities(self.backend.select(query))

    # -- writing ---------------------------------------------------------------------------------
    def _type_iri(self, type_name: str, focus: str = "(new)") -> NamedNode:
        spec = self.schema.types.get(type_name)
        if spec is None:
            known = ", ".join(sorted(self.schema.types))
            raise ValidationFailed(
                [
                    Finding(
                        focus=focus,
                        path=None,
                        constraint="type",
                        value=type_name,
                        message=(
                            f"unknown entity type {type_name!r}; known types: {known}. "
                            "Add a type with `ontoloom schema add-type`"
                        ),
                    )
                ]
            )
        return spec.iri

    def _relation_iri(self, rel: str | None, focus: str = "(relation)") -> NamedNode:
        spec = self.schema.relations.get(rel or "")
        if spec is None:
            known = ", ".join(self.schema.relations)
            raise ValidationFailed(
                [
                    Finding(
                        focus=focus,
                        path=rel,
                        constraint="relation",
                        value=rel,
                        message=(
                            f"unknown relation {rel!r}; known relations: {known}. "
                            "Add one with `ontoloom schema add-relation`"
                        ),
                    )
                ]
            )
        return spec.iri

    def _property_quads(self, node: NamedNode, properties: dict[str, Any]) -> set[Quad]:
        quads = set()
        for key, value in properties.items():
            check_property_name(key)
            if key in self.schema.relations:
                raise BadInput(
                    f"{key!r} is a relation, not a property: use `ontoloom relate FROM {key} TO`"
                )
            for literal in literal_from_json(value, field_name=key):
                quads.add(Quad(node, vocab_iri(key), literal, FACTS))
        return quads

    def _graphs_of(self, node: NamedNode) -> set[Term]:
        query = f"SELECT DISTINCT ?e ?g WHERE {{ GRAPH ?g {{ ?e {RDF_TYPE} ?t }} }}"
        rows = self.backend.select(query, {"e": node})
        return {r["g"] for r in rows}

    def _require_fact(self, entity_id: str) -> NamedNode:
        node = self.ids.iri(entity_id)
        graphs = self._graphs_of(node)
        if not graphs:
            raise NotFound(f"no entity with id {entity_id!r}: check the id with `ontoloom list`")
        if FACTS not in graphs:
            raise BadInput(
                f"{entity_id} comes from a record, not from a direct write: edit the record "
                "and run `ontoloom rebuild`"
            )
        return node

    def create(
        self, type_name: str, properties: dict[str, Any] | None = None, id: str | None = None
    ) -> Entity:
        """Create an entity. :raises ValidationFailed: when it breaks a rule."""
        type_iri = self._type_iri(type_name, id or f"(new {type_name})")
        entity_id = check_id(id) if id is not None else new_id(type_name)
        node = self.ids.iri(entity_id)
        if self.exists(entity_id):
            raise ValidationFailed(
                [
                    Finding(
                        focus=entity_id,
                        path=None,
                        constraint="unique",
                        value=entity_id,
                        message=f"{entity_id} already exists: pick another id, or change it with `ontoloom update`",
                    )
                ]
            )
        now = _now()
        adds = {
            Quad(node, RDF_TYPE, type_iri, FACTS),
            Quad(node, PROV_GENERATED, now, FACTS),
            Quad(node, DCTERMS_MODIFIED, now, FACTS),
        }
        adds |= self._property_quads(
            node, {k: v for k, v in (properties or {}).items() if v is not None}
        )
        self.writes.commit(Delta(adds=adds))
        return self.get(entity_id)

    def update(
        self, entity_id: str, properties: dict[str, Any] | None = None, unset: Iterable[str] = ()
    ) -> Entity:
        """Set (replacing every previous value) and unset properties; ``None`` unsets too."""
        node = self._require_fact(entity_id)
        properties = dict(properties or {})
        unset = [*unset, *(k for k, v in properties.items() if v is None)]
        properties = {k: v for k, v in properties.items() if v is not None}
        for key in unset:
            check_property_name(key)
            if key in self.schema.relations:
                raise BadInput(f"{key!r} is a relation: use `ontoloom unrelate`")
        adds = self._property_quads(node, properties)
        removes = self._current_values(node, [*properties, *unset])
        removes |= {
            Quad(node, DCTERMS_MODIFIED, o, FACTS) for o in self._values(node, DCTERMS_MODIFIED)
        }
        adds.add(Quad(node, DCTERMS_MODIFIED, _now(), FACTS))
        self.writes.commit(Delta(adds=adds, removes=removes))
        return self.get(entity_id)

    def _values(self, node: NamedNode, predicate: NamedNode) -> list[Term]:
        query = f"SELECT ?s ?o WHERE {{ GRAPH {FACTS} {{ ?s {predicate} ?o }} }}"
        rows = self.backend.select(query, {"s": node})
        return [r["o"] for r in rows]

    def _current_values(self, node: NamedNode, keys: Iterable[str]) -> set[Quad]:
        out: set[Quad] = set()
        for key in keys:
            for value in self._values(node, vocab_iri(key)):
                if isinstance(value, Literal):
                    out.add(Quad(node, vocab_iri(key), value, FACTS))
        return out

    def delete(self, entity_id: str) -> tuple[Entity, list[Relation]]:
        """Delete an entity and every relation touching it, in one atomic step."""
        node = self._require_fact(entity_id)
        entity = self.get(entity_id)
        touching = self.relations(entity_id)
        query = (
            "SELECT ?g ?s ?p ?o ?e WHERE { { GRAPH ?g { ?e ?p ?o } BIND(?e AS ?s) } "
            "UNION { GRAPH ?g { ?s ?p ?e } BIND(?e AS ?o) } }"
        )
        removes = {
            Quad(r["s"], r["p"], r["o"], r["g"]) for r in self.backend.select(query, {"e": node})
        }
        self.writes.commit(Delta(removes=removes))
        return entity, touching

    def relate(self, from_id: str, rel: str, to_id: str) -> RelateOutcome:
        """Relate two entities. A many_to_one relation replaces the source's previous one."""
        rel_iri = self._relation_iri(rel, from_id)
        spec = self.schema.relations[rel]
        missing = [i for i in (from_id, to_id) if not self.exists(check_id(i))]
        if missing:
            raise ValidationFailed(
                [
                    Finding(
                        focus=from_id,
                        path=rel,
                        constraint="exists",
                        value=m,
                        message=f"{m} does not exist: create it first, or check the id with `ontoloom list`",
                    )
                    for m in missing
                ]
            )
        s, o = self.ids.iri(from_id), self.ids.iri(to_id)
        existing = self.backend.ask(f"ASK {{ ?s {rel_iri} ?o }}", {"s": s, "o": o})
        if spec.symmetric:
            existing = existing or self.backend.ask(f"ASK {{ ?o {rel_iri} ?s }}", {"s": s, "o": o})
        types = self._types([s, o])
        relation = Relation(from_id, rel, to_id, types.get(s), types.get(o))
        if existing:
            return RelateOutcome(relation, created=False)
        removes: set[Quad] = set()
        replaced: list[Relation] = []
        if spec.cardinality in ("many_to_one", "one_to_one"):
            for old in self._values(s, rel_iri):
                removes.add(Quad(s, rel_iri, old, FACTS))
                replaced.append(
                    Relation(
                        from_id, rel, self.ids.id_of(old), types.get(s), self._types([old]).get(old)
                    )
                )
        self.writes.commit(Delta(adds={Quad(s, rel_iri, o, FACTS)}, removes=removes))
        return RelateOutcome(relation, created=True, replaced=replaced)

    def unrelate(self, from_id: str, rel: str, to_id: str) -> Relation:
        """Remove a relation. :raises NotFound: when it does not exist."""
        rel_iri = self._relation_iri(rel, from_id)
        s, o = self.ids.iri(check_id(from_id)), self.ids.iri(check_id(to_id))
        quad = Quad(s, rel_iri, o, FACTS)
        if not self.backend.ask(f"ASK {{ GRAPH {FACTS} {{ ?s {rel_iri} ?o }} }}", {"s": s, "o": o}):
            if self.backend.ask(f"ASK {{ ?s {rel_iri} ?o }}", {"s": s, "o": o}):
                raise BadInput(
                    f"{from_id} {rel} {to_id} comes from a record: edit the record and run `ontoloom rebuild`"
                )
            raise NotFound(
                f"no relation {from_id} {rel} {to_id}: see `ontoloom relations {from_id}`"
            )
        types = self._types([s, o])
        self.writes.commit(Delta(removes={quad}))
        return Relation(from_id, rel, to_id, types.get(s), types.get(o))
