"""Staged changes: write operations that build one delta, reading the store *as changed
so far*. A single CLI write stages one operation; a plan stages many and commits once.

Nothing here commits: :meth:`ontoloom.writes.WritePath.commit` does, after validation.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, NotFound, ValidationFailed
from ontoloom.findings import Finding
from ontoloom.model import (
    OBSERVATION_ORDER,
    OBSERVATIONS,
    Relation,
    check_id,
    check_property_name,
    in_written_order,
    literal_from_json,
    new_id,
    now_literal,
    nth_stamp,
    observation_digest,
    shown_id,
    vocab_iri,
)
from ontoloom.schema import ENTITY, RelationSpec
from ontoloom.store.base import Delta
from ontoloom.terms import Literal, NamedNode, Quad, Term, spo
from ontoloom.terms import node as held
from ontoloom.vocab import (
    DCTERMS_MODIFIED,
    FACTS,
    HISTORY,
    OPEN_RELATION_CLASS,
    PROV_GENERATED,
    RDF_TYPE,
    RDFS_LABEL,
    open_relation_iri,
)

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = ["Changes", "RelateOutcome"]


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


def refusal(
    focus: str, path: str | None, constraint: str, value: Any, message: str
) -> ValidationFailed:
    return ValidationFailed([Finding(focus, path, constraint, value, message)])


class Changes:
    """A pending delta over a graph, with reads that see it."""

    def __init__(self, graph: Session) -> None:
        self.graph = graph
        self.delta = Delta()
        self._start = dt.datetime.now(dt.UTC)
        self._now = now_literal(self._start)
        # node → its creation stamp: the n-th object created here a few µs after the first, so
        # that "oldest first" is the order of creation within one write too
        self._created: dict[NamedNode, Literal] = {}
        # Facts in time (ontoloom.history): when what this write adds holds, the facts it
        # records in history only (over before now), the versions it erases.
        self.valid_from: dt.datetime | None = None
        self.valid_to: dt.datetime | None = None
        self._past: set[Quad] = set()
        self._purged: set[NamedNode] = set()

    def timed(self, valid_from: dt.datetime | None, valid_to: dt.datetime | None) -> None:
        """When what this write adds holds in the world: from ``valid_from`` (default: now)
        to ``valid_to`` (default: open); what it removes or replaces ends then."""
        self.valid_from, self.valid_to = valid_from, valid_to

    def _over(self) -> bool:
        """Whether what this write states ends before now: history only, never current."""
        return self.valid_to is not None and self.valid_to <= self._start

    def history(self) -> Delta:
        """The history of the delta: versions opened, ended and erased
        (:class:`ontoloom.history.Timeline`), derived from the delta itself, committed with
        it in the one store operation (:meth:`ontoloom.writes.WritePath.commit`, ``derived``).

        :raises ValidationFailed: a rule broken at some instant; nothing is stored."""
        from ontoloom.history import Timeline

        g = self.graph
        timeline = Timeline(g.backend, g.schema, g.ids, self._start)
        derived = timeline.derive(
            self.delta,
            valid_from=self.valid_from,
            valid_to=self.valid_to,
            past=self._past,
            purged=self._purged,
        )
        if not self._purged:
            return derived
        erased = Delta(removes={q for v in self._purged for q in g.backend.around([v])})
        return erased.merge(derived)

    def purge(self, quads: Iterable[Quad]) -> int:
        """Erase every version of these facts from history; returns how many there were."""
        from ontoloom.history import read_versions

        wanted = {spo(q) for q in quads}
        found = {
            v.node
            for v in read_versions(self.graph.backend, {s for s, _, _ in wanted})
            if (v.subject, v.predicate, v.object) in wanted
        }
        self._purged |= found
        return len(found)

    def purge_about(self, node: NamedNode) -> int:
        """Erase every version of every fact about ``node`` (either end)."""
        from ontoloom.history import read_versions

        backend = self.graph.backend
        found = {v.node for v in read_versions(backend, [node])}
        found |= {v.node for v in read_versions(backend, [node], incoming=True)}
        self._purged |= found
        return len(found)

    # -- reading through the delta -----------------------------------------------------------
    def _add(self, quads: Iterable[Quad]) -> None:
        self.delta = self.delta.merge(Delta(adds=set(quads)))

    def _remove(self, quads: Iterable[Quad]) -> None:
        self.delta = self.delta.merge(Delta(removes=set(quads)))

    def quads_about(
        self, node: Term, predicate: Term | None = None, *, incoming: bool = False
    ) -> set[Quad]:
        """Quads with ``node`` as subject (or object), in any graph, as changed so far."""
        found = set(self.graph.backend.around([node], predicate, incoming=incoming))
        found -= self.delta.removes
        for q in self.delta.adds:
            if (q.object if incoming else q.subject) == node and (
                predicate is None or q.predicate == predicate
            ):
                found.add(q)
        return found

    def exists(self, entity_id: str) -> bool:
        return bool(self.quads_about(self.graph.ids.iri(entity_id), RDF_TYPE))

    def type_of(self, node: Term) -> str | None:
        types = [held(q.object) for q in self.quads_about(node, RDF_TYPE)]
        return self.graph._type_of(types) if types else None

    # -- schema lookups ----------------------------------------------------------------------
    def type_iri(self, type_name: str, focus: str) -> NamedNode:
        spec = self.graph.schema.types.get(type_name)
        if spec is None:
            message = self.graph.schema.unknown_type(type_name)
            raise refusal(
                focus,
                None,
                "type",
                type_name,
                f"{message}. Add a type with `ontoloom schema add-type`",
            )
        return spec.iri

    def relation(self, rel: str | None, focus: str = "(relation)") -> RelationSpec:
        spec = self.graph.schema.relations.get(rel or "")
        if spec is None:
            message = self.graph.schema.unknown_relation(rel)
            raise refusal(
                focus,
                rel,
                "relation",
                rel,
                f"{message}. Add one with `ontoloom schema add-relation`",
            )
        return spec

    def _property_quads(self, node: NamedNode, properties: dict[str, Any]) -> set[Quad]:
        quads = set()
        for key, value in properties.items():
            _settable(key)
            if key in self.graph.schema.relations:
                raise BadInput(
                    f"{key!r} is a relation, not a property: use `ontoloom relate FROM {key} TO`"
                )
            for literal in literal_from_json(value, field_name=key):
                quads.add(Quad(node, vocab_iri(key), literal, FACTS))
        return quads

    def _require_fact(self, entity_id: str) -> NamedNode:
        node = self.graph.ids.iri(check_id(entity_id))
        graphs = {q.graph_name for q in self.quads_about(node, RDF_TYPE)}
        if not graphs:
            raise NotFound(
                f"no entity with id {shown_id(entity_id)}{self.graph.id_hint(entity_id)}: "
                "check the id with `ontoloom list`"
            )
        if FACTS not in graphs:
            raise BadInput(
                f"{entity_id} comes from a record, not from a direct write: edit the record "
                "and run `ontoloom rebuild`"
            )
        return node

    # -- operations --------------------------------------------------------------------------
    def create(
        self, type_name: str, properties: dict[str, Any] | None = None, id: str | None = None
    ) -> str:
        self._current_only("create")
        type_iri = self.type_iri(type_name, id or f"(new {type_name})")
        if type_iri not in self.graph.schema.hierarchy.subclasses(ENTITY):
            raise refusal(
                id or f"(new {type_name})",
                None,
                "type",
                type_name,
                f"{type_name} objects are read from records: write the record file and run `ontoloom rebuild`",
            )
        if id is None:
            entity_id = new_id(type_name)
            while self.exists(entity_id):  # 32 random bits may meet one in use
                entity_id = new_id(type_name)
        elif self.exists(entity_id := check_id(id)):
            raise refusal(
                entity_id,
                None,
                "unique",
                entity_id,
                f"{entity_id} already exists: pick another id, or change it with `ontoloom update`",
            )
        node = self.graph.ids.iri(entity_id)
        stamp = now_literal(nth_stamp(self._start, len(self._created)))
        self._created[node] = stamp
        self._add(
            {
                Quad(node, RDF_TYPE, type_iri, FACTS),
                Quad(node, PROV_GENERATED, stamp, FACTS),
                Quad(node, DCTERMS_MODIFIED, stamp, FACTS),
            }
        )
        properties = {k: v for k, v in (properties or {}).items() if v is not None}
        self._add(self._property_quads(node, properties))
        if OBSERVATIONS in properties:
            self._keep_order(node, _listed(properties[OBSERVATIONS]))
        return entity_id

    def update(
        self, entity_id: str, properties: dict[str, Any] | None = None, unset: Iterable[str] = ()
    ) -> None:
        self._current_only("update")
        node = self._require_fact(entity_id)
        properties = dict(properties or {})
        unset = [*unset, *(k for k, v in properties.items() if v is None)]
        properties = {k: v for k, v in properties.items() if v is not None}
        for key in unset:
            _settable(key)
            if key in self.graph.schema.relations:
                raise BadInput(f"{key!r} is a relation: use `ontoloom unrelate`")
        adds = self._property_quads(node, properties)
        removes = {
            q
            for key in [*properties, *unset]
            for q in self.quads_about(node, vocab_iri(key))
            if q.graph_name == FACTS and isinstance(q.object, Literal)
        }
        if not adds and not removes:
            return  # only absent keys unset: nothing changes, not even the "updated" time
        self._remove(removes)
        self._add(adds)
        if OBSERVATIONS in properties:
            self._keep_order(node, _listed(properties[OBSERVATIONS]))
        elif OBSERVATIONS in unset:
            self._keep_order(node, [])
        self._touch(node)

    def delete(self, entity_id: str, *, purge: bool = False) -> None:
        """Delete an entity: its facts end (their versions stay, ended); with ``purge`` its
        history is erased too."""
        node = self._require_fact(entity_id)
        around = self.quads_about(node) | self.quads_about(node, incoming=True)
        self._remove(q for q in around if q.graph_name != HISTORY)
        if purge:
            self.purge_about(node)

    def _current_only(self, what: str) -> None:
        if self._over():
            raise BadInput(
                f"--valid-to is before now: {what} states what holds now; a fact that held "
                "only in the past is recorded with `ontoloom relate FROM REL TO "
                "--valid-from DATE --valid-to DATE`"
            )

    def relate(self, from_id: str, rel: str, to_id: str) -> RelateOutcome:
        spec = self.relation(rel, from_id)
        missing = [i for i in (from_id, to_id) if not self.exists(check_id(i))]
        if missing:
            raise ValidationFailed(
                [
                    Finding(
                        from_id,
                        rel,
                        "exists",
                        m,
                        f"{m} does not exist{self.graph.id_hint(m)}: create it first, or "
                        "check the id with `ontoloom list`",
                    )
                    for m in missing
                ]
            )
        ids = self.graph.ids
        s, o = ids.iri(from_id), ids.iri(to_id)
        relation = Relation(from_id, rel, to_id, self.type_of(s), self.type_of(o))
        if self._over():  # over before now: a version in history, nothing current changes
            self._past.add(Quad(s, spec.iri, o, FACTS))
            return RelateOutcome(relation, created=True)
        current = {q.object for q in self.quads_about(s, spec.iri)}
        if o in current or (
            spec.symmetric and s in {q.object for q in self.quads_about(o, spec.iri)}
        ):
            if self.valid_from is not None or self.valid_to is not None:
                # its dates are not rewritten in passing: said, never skipped in silence
                raise BadInput(
                    f"{from_id} {rel} {to_id} already holds: its dates are not changed by "
                    "relating it again; see `ontoloom history "
                    f"{from_id}`, and to correct them `ontoloom unrelate {from_id} {rel} "
                    f"{to_id} --purge` then relate it with the right dates"
                )
            return RelateOutcome(relation, created=False)
        replaced = []
        if spec.cardinality in ("many_to_one", "one_to_one"):
            for old in self.quads_about(s, spec.iri):
                if old.graph_name == FACTS:
                    self._remove([old])
                    replaced.append(
                        Relation(
                            from_id,
                            rel,
                            ids.id_of(held(old.object)),
                            relation.from_type,
                            self.type_of(held(old.object)),
                        )
                    )
        self._add([Quad(s, spec.iri, o, FACTS)])
        return RelateOutcome(relation, created=True, replaced=replaced)

    def link(self, from_id: str, label: str, to_id: str) -> bool:
        """An open relation: ``label`` in the writer's own words, kept verbatim, with no schema
        rule behind it (see :func:`ontoloom.vocab.open_relation_iri`). Both ends must exist;
        returns whether it is new."""
        if not label:
            raise BadInput('a relation needs a name: give it in words, e.g. "works at"')
        missing = [i for i in (from_id, to_id) if not self.exists(check_id(i))]
        if missing:
            hint = self.graph.id_hint(missing[0])
            raise NotFound(f"{missing[0]} does not exist{hint}: create it first")
        s, p, o = self.graph.ids.iri(from_id), open_relation_iri(label), self.graph.ids.iri(to_id)
        if any(q.object == o for q in self.quads_about(s, p)):
            return False
        # The declaration names the relation in SPARQL (rdfs:label, verbatim); stating it
        # again is a no-op in a set of quads.
        self._add(
            [
                Quad(p, RDF_TYPE, OPEN_RELATION_CLASS, FACTS),
                Quad(p, RDFS_LABEL, Literal(label), FACTS),
                Quad(s, p, o, FACTS),
            ]
        )
        return True

    def unlink(self, from_id: str, name: str, to_id: str, *, open: bool = False) -> int:
        """Remove ``from_id name to_id`` where written directly (the open relation of those
        words with ``open``); returns how many triples went (0 when there was none)."""
        s, o = self.graph.ids.iri(check_id(from_id)), self.graph.ids.iri(check_id(to_id))
        p = open_relation_iri(name) if open else vocab_iri(name)
        found = {q for q in self.quads_about(s, p) if q.object == o and q.graph_name == FACTS}
        self._remove(found)
        return len(found)

    def add_values(self, entity_id: str, key: str, values: Iterable[Any]) -> None:
        """Add values to a property, keeping those it has (multi-valued properties)."""
        node = self._require_fact(entity_id)
        values = list(values)
        if key == OBSERVATIONS:
            present = self.observations(node)
            self._keep_order(node, [*present, *(v for v in values if v not in present)])
        self._add(self._property_quads(node, {key: values}))
        self._touch(node)

    def remove_values(self, entity_id: str, key: str, values: Iterable[Any]) -> int:
        """Remove these values of a property; returns how many were there."""
        node = self._require_fact(entity_id)
        wanted = {lit for v in values for lit in literal_from_json(v, field_name=key)}
        found = {
            q
            for q in self.quads_about(node, vocab_iri(key))
            if q.graph_name == FACTS and q.object in wanted
        }
        if found:
            if key == OBSERVATIONS:
                gone = {held(q.object).value for q in found}
                self._keep_order(node, [o for o in self.observations(node) if o not in gone])
            self._remove(found)
            self._touch(node)
        return len(found)

    def observations(self, node: NamedNode) -> list[str]:
        """The observations of ``node``, as changed so far, in the order they were written."""
        present = [
            str(held(q.object).value) for q in self.quads_about(node, vocab_iri(OBSERVATIONS))
        ]
        order = [
            str(held(q.object).value) for q in self.quads_about(node, vocab_iri(OBSERVATION_ORDER))
        ]
        return in_written_order(sorted(present), order[0] if order else None)

    def _keep_order(self, node: NamedNode, observations: list[Any]) -> None:
        """Record ``observations`` as the order of the node's observations (none: no order)."""
        p = vocab_iri(OBSERVATION_ORDER)
        self._remove(q for q in self.quads_about(node, p) if q.graph_name == FACTS)
        digests = dict.fromkeys(observation_digest(o) for o in observations)
        if digests:
            self._add([Quad(node, p, Literal(" ".join(digests)), FACTS)])

    def _touch(self, node: NamedNode) -> None:
        self._remove(q for q in self.quads_about(node, DCTERMS_MODIFIED) if q.graph_name == FACTS)
        self._add([Quad(node, DCTERMS_MODIFIED, self._created.get(node, self._now), FACTS)])

    def unrelate(self, from_id: str, rel: str, to_id: str, *, purge: bool = False) -> Relation:
        """Remove a relation: its version ends (with ``purge``: every version of it is
        erased, even when it no longer holds)."""
        spec = self.relation(rel, from_id)
        ids = self.graph.ids
        s, o = ids.iri(check_id(from_id)), ids.iri(check_id(to_id))
        found = {
            q for q in self.quads_about(s, spec.iri) if q.object == o and q.graph_name != HISTORY
        }
        if purge and self.purge([Quad(s, spec.iri, o, FACTS)]) and not found:
            return Relation(from_id, rel, to_id, self.type_of(s), self.type_of(o))
        if not found:
            raise NotFound(
                f"no relation {from_id} {rel} {to_id}: see `ontoloom relations {from_id}`"
            )
        if not any(q.graph_name == FACTS for q in found):
            raise BadInput(
                f"{from_id} {rel} {to_id} comes from a record: edit the record and run `ontoloom rebuild`"
            )
        self._remove(q for q in found if q.graph_name == FACTS)
        return Relation(from_id, rel, to_id, self.type_of(s), self.type_of(o))


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _settable(key: str) -> None:
    check_property_name(key)
    if key == OBSERVATION_ORDER:
        raise BadInput(
            f"{OBSERVATION_ORDER!r} is kept by ontoloom (the order of {OBSERVATIONS!r}): "
            f"write {OBSERVATIONS!r} in the order you want them"
        )
