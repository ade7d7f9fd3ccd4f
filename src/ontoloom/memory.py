"""The MCP reference memory server's model, mapped onto the typed graph.

Agents written for ``@modelcontextprotocol/server-memory`` speak in entities (``name``,
``entityType``, ``observations``) and relations (``from``, ``to``, ``relationType``) keyed by
name. Here each call becomes one validated delta, and what the reference accepts is accepted —
except relations to entities that do not exist, secrets, and blank names, types and relation
words, refused on purpose and saying so:

* ``entityType`` → the schema type of that name (in the words of :func:`schema_words`:
  ``task``, ``Task``, ``software project`` for SoftwareProject) when the name and the type's
  defaults satisfy its required properties (a Task gets ``status: open``); otherwise a
  ``Thing`` whose ``kind`` keeps the word. The word is kept as ``kind`` whenever it differs from
  the type's own name, so ``entityType`` reads back exactly as written.
* ``name`` → the ``name`` (or, for types that require a title, ``title``) property, and a
  stable id ``{type[:4]}_{sha256(name)[:8]}``. A name also finds objects written any other way:
  by id, then by exact name or title.
* ``observations`` → values of the multi-valued ``observations`` property, read back in the
  order they were added (as every write keeps it: :data:`ontoloom.model.OBSERVATION_ORDER`);
  one already there is not added twice.
* ``relationType`` → the typed relation, when the words name a declared one (case-insensitive;
  spaces and ``-`` as ``_``; camelCase split: ``assignedTo``, ``Assigned-To`` and ``assigned to``
  all name ``assigned_to``), written as ``relate`` writes it: a many-to-one relation already set
  is replaced in the same commit, and what the shapes refuse — a cycle, a domain or range the
  ends do not fit, a cardinality — refuses the whole call, as ``relate`` refuses it. Words that
  name no declared relation are an *open relation* under the agent's words verbatim
  (:func:`ontoloom.vocab.open_relation_iri`), which no schema rule constrains. Either way the
  memory tools read it back exactly as written: a typed relation named in other words
  (``"member of"`` for ``member_of``) keeps them on an ``rdf:Statement`` about its triple
  (:func:`wording_iri`); the typed tools show the declared name.

Messages name entities by the names the agent used and say how to fix the call in terms of
the tool's own arguments. Every call commits once or not at all; the data dir lock serialises
several server processes.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime as dt
import functools
import hashlib
import json
import re
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from ontoloom.errors import BadInput, NotFound, ValidationFailed
from ontoloom.findings import Finding
from ontoloom.model import (
    OBSERVATIONS,
    Entity,
    Relation,
    check_id,
    is_id,
    value_to_json,
    vocab_iri,
)
from ontoloom.schema import ENTITY, RelationSpec
from ontoloom.search import js_lower
from ontoloom.secret_text import holds_secret, redaction
from ontoloom.terms import Literal, NamedNode, Quad, subject
from ontoloom.vocab import (
    FACTS,
    OL,
    OPEN_RELATION_PREFIX,
    RDF,
    RDF_TYPE,
    RDFS_LABEL,
    WORDING_PREFIX,
    wording_iri,
)

if TYPE_CHECKING:
    from ontoloom.changes import Changes
    from ontoloom.session import Session

__all__ = [
    "FULL_READ",
    "GENERIC_TYPE",
    "MAX_PAGE",
    "Memory",
    "schema_words",
    "stable_id",
    "typed_relation",
    "without_cli_advice",
    "wording_iri",
]

FULL_READ = 1000  # read_graph without arguments returns the whole graph up to this many
MAX_PAGE = 1000
GENERIC_TYPE = "Thing"
_LABEL_KEYS = ("name", "title")
_LABEL_PREDICATES = frozenset(vocab_iri(k) for k in _LABEL_KEYS)
# CLI advice in messages (`ontoloom …`, -p key=value): an agent on MCP cannot follow it.
_CLAUSE = re.compile(r"(: |; |, or |, | \()")
_CLI_ADVICE = re.compile(r"`ontoloom|(?:^|\s)-p \S")


def without_cli_advice(text: str) -> str:
    """A message without the clauses that give CLI advice (`ontoloom …`, ``-p key=value``).

    >>> without_cli_advice("no entity with id x: check the id with `ontoloom list`")
    'no entity with id x'
    >>> without_cli_advice("An Event needs a start: set -p start=2026-11-02 (or a time)")
    'An Event needs a start'
    """
    tokens = _CLAUSE.split(text)
    out, dropping = tokens[0], False
    for sep, clause in zip(tokens[1::2], tokens[2::2], strict=True):
        if _CLI_ADVICE.search(clause) or (dropping and sep == " ("):
            dropping = True
            continue
        dropping = False
        out += sep + clause
    return out


def _name(props: dict[str, Any], default: str) -> str:
    """An object's name in the memory model: its one name, else its one title, else its id."""
    return next((props[k] for k in _LABEL_KEYS if isinstance(props.get(k), str)), default)


def _contains(node: _Node, needle: str) -> bool:
    """The reference's test: ``needle`` (lower-cased) in the name, entityType or an
    observation, lower-cased."""
    return any(needle in js_lower(v) for v in (node.name, node.entity_type, *node.observations))


def stable_id(type_name: str, name: str) -> str:
    """The id a memory-server entity gets: the same for the same type and name, everywhere.

    >>> stable_id("Person", "Alice")
    'pers_3bc51062'
    """
    return f"{type_name.lower()[:4]}_{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


_STATEMENT = NamedNode(RDF + "Statement")
_RDF_SUBJECT, _RDF_PREDICATE, _RDF_OBJECT = (
    NamedNode(RDF + k) for k in ("subject", "predicate", "object")
)


def schema_words(words: str) -> str:
    """The key under which words name a schema type or relation: camelCase split, spaces,
    ``-`` and ``_`` as one ``_``, lower case. The schema's names get the same key, so
    ``builds on`` names ``builds-on`` and ``failureClass`` names ``FailureClass``.

    >>> [schema_words(w) for w in ("assignedTo", "Assigned-To", " assigned  to ", "ASSIGNED_TO")]
    ['assigned_to', 'assigned_to', 'assigned_to', 'assigned_to']
    >>> schema_words("memberOf"), schema_words("FailureClass"), schema_words("builds-on")
    ('member_of', 'failure_class', 'builds_on')
    """
    return _schema_words(words) if len(words) <= _WORDS_KEPT else _key_of(words)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[\s_-]+")
_WORDS_KEPT = 200  # longer words are keyed afresh each time, not kept


def _key_of(words: str) -> str:
    return _SEPARATORS.sub("_", _CAMEL.sub("_", words.strip())).lower()


# Every drop-in create and relation keys its type against each of the schema's names: the
# keys of those few names, and of the words agents use, are kept (bounded).
_schema_words = functools.lru_cache(maxsize=4096)(_key_of)


def typed_relation(graph: Session, words: str) -> RelationSpec | None:
    """The declared relation the words name (:func:`schema_words`); a name spelt exactly as
    declared wins over another that only shares its key."""
    relations = graph.schema.relations
    if words in relations:
        return relations[words]
    wanted = schema_words(words)
    return next((s for n, s in relations.items() if schema_words(n) == wanted), None)


@dataclass(frozen=True)
class _Node:
    """An object as the memory model sees it."""

    id: str
    name: str
    entity_type: str
    observations: tuple[str, ...]
    created: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entityType": self.entity_type,
            "observations": list(self.observations),
        }


class Memory:
    """The memory-server operations over one open :class:`~ontoloom.session.Session`."""

    def __init__(self, graph: Session) -> None:
        self.graph = graph
        self._names: dict[str, str] = {}  # id → the name the agent used, for messages
        # name → ids of the entities staged on each pending Changes
        self._staged: weakref.WeakKeyDictionary[Changes, dict[str, set[str]]] = (
            weakref.WeakKeyDictionary()
        )

    # -- names -------------------------------------------------------------------------------
    def _find(self, name: str, changes: Changes | None = None) -> list[str]:
        """Ids of the objects ``name`` denotes: an id, else exact name or title matches."""
        if not isinstance(name, str) or not name.strip():
            raise BadInput("a name is a non-empty string")
        exists = changes.exists if changes is not None else self.graph.exists
        if is_id(name):
            with contextlib.suppress(BadInput):  # an id no IRI can hold: a name
                if exists(name):
                    self._names.setdefault(name, name)
                    return [name]
        found = self._labelled(name)
        if changes is not None:
            # staged here (an index, not a scan of the delta: a batch stays linear)
            found |= self._staged.get(changes, {}).get(name, set())
            found = {i for i in found if changes.exists(i)}
        for i in found:
            self._names.setdefault(i, name)
        return sorted(found)

    def _labelled(self, name: str) -> set[str]:
        """Ids of the typed objects whose name or title is ``name``: pattern reads (a query
        planned for one name cost more than reading its few quads)."""
        backend, label = self.graph.backend, Literal(name)
        named = {
            subject(q.subject)
            for p in _LABEL_PREDICATES
            for q in backend.around([label], p, incoming=True)
        }
        return {self.graph.ids.id_of(e) for e in named if any(backend.around([e], RDF_TYPE))}

    def _one(self, name: str, changes: Changes | None = None) -> str | None:
        """The one object ``name`` denotes, None when there is none.

        :raises BadInput: when several objects carry that name.
        """
        found = self._find(name, changes)
        if len(found) > 1:
            raise BadInput(
                f"{len(found)} objects are named {name!r} (ids {', '.join(found[:5])}): "
                "pass one of these ids instead of the name"
            )
        return found[0] if found else None

    def _require(self, name: str, changes: Changes | None = None) -> str:
        found = self._one(name, changes)
        if found is None:
            raise NotFound(
                f"Entity with name {name} not found: create it first with create_entities, "
                "or find its exact name with search_nodes"
            )
        return found

    # -- reading -----------------------------------------------------------------------------
    def _node(self, entity: Entity) -> _Node:
        props = entity.properties
        name = _name(props, entity.id)
        kind = props.get("kind")
        observations = [str(o) for o in props.get(OBSERVATIONS, [])]  # in the order written
        return _Node(
            id=entity.id,
            name=name,
            entity_type=kind if isinstance(kind, str) else entity.type,
            observations=tuple(observations),
            created=entity.created or "",
        )

    def _nodes(self, ids: list[str]) -> list[_Node]:
        entities = {e.id: e for e in self.graph.entities_by_id(ids)}
        return [self._node(entities[i]) for i in ids if i in entities]

    def _shown_nodes(self, ids: list[str]) -> list[_Node]:
        """:meth:`_nodes` (without their creation time) read off the search index, which
        holds each object as the drop-in shows it (kept in step with every commit, caught up
        before it is read): a row each, where the store's are a query's dozens of rows. A
        scratch graph (no index) reads the store."""
        if self.graph.data_dir is None:
            return self._nodes(ids)
        view = self.graph.memory_view(ids)
        return [_Node(i, *view[i][:2], tuple(view[i][2]), "") for i in ids if i in view]

    def _names_of(self, ids: list[str]) -> dict[str, str]:
        """The name of each of ``ids`` that exists, as :meth:`_node` gives it — reading only
        the name and title (a relation's far end needs no more)."""
        props: dict[str, dict[str, list[Any]]] = {}
        nodes = [self.graph.ids.iri(i) for i in ids]
        for i in range(0, len(nodes), 400):
            listed = " ".join(str(n) for n in nodes[i : i + 400])
            rows = self.graph.backend.select(
                f"SELECT ?e ?p ?n WHERE {{ VALUES ?e {{ {listed} }} ?e {RDF_TYPE} [] "
                f"OPTIONAL {{ VALUES ?p {{ {' '.join(map(str, _LABEL_PREDICATES))} }} "
                f"?e ?p ?n FILTER(isLiteral(?n)) }} }}"
            )
            for r in rows:
                values = props.setdefault(self.graph.ids.id_of(r["e"]), {})
                if r["p"] is not None:
                    key = r["p"].value[len(OL) :]
                    values.setdefault(key, []).append(value_to_json(r["n"]))
        return {
            i: _name({k: v[0] if len(v) == 1 else v for k, v in found.items()}, i)
            for i, found in props.items()
        }

    def _wordings(self, relations: list[Relation]) -> dict[NamedNode, str]:
        """The agent's words for those typed relations it named otherwise."""
        ids, schema = self.graph.ids, self.graph.schema
        nodes = [
            wording_iri(ids.iri(r.from_id), schema.relations[r.rel].iri, ids.iri(r.to_id))
            for r in relations
            if not r.open and r.rel in schema.relations
        ]
        found: dict[NamedNode, str] = {}
        for i in range(0, len(nodes), 400):
            listed = " ".join(str(n) for n in nodes[i : i + 400])
            query = f"SELECT ?w ?l WHERE {{ VALUES ?w {{ {listed} }} ?w {RDFS_LABEL} ?l }}"
            found.update({r["w"]: r["l"].value for r in self.graph.backend.select(query)})
        return found

    def _words(self, r: Relation, wordings: dict[NamedNode, str]) -> str:
        spec = None if r.open else self.graph.schema.relations.get(r.rel)
        if spec is None:
            return r.rel
        ids = self.graph.ids
        return wordings.get(wording_iri(ids.iri(r.from_id), spec.iri, ids.iri(r.to_id)), r.rel)

    def _graph_json(self, nodes: list[_Node], relations: list[Relation]) -> dict[str, Any]:
        names = {n.id: n.name for n in nodes}
        missing = {i for r in relations for i in (r.from_id, r.to_id)} - names.keys()
        names.update(self._names_of(sorted(missing)))
        wordings = self._wordings(relations)
        return {
            "entities": [n.to_json() for n in nodes],
            "relations": [
                {
                    "from": names.get(r.from_id, r.from_id),
                    "to": names.get(r.to_id, r.to_id),
                    "relationType": self._words(r, wordings),
                }
                for r in relations
            ],
        }

    def _shown(
        self, nodes: list[_Node], ids: list[str], *, outgoing_only: bool = False
    ) -> dict[str, Any]:
        """``nodes`` with the relations that have an end among ``ids`` (that leave them, with
        ``outgoing_only``): read off the search index — a SQLite row per relation, its ends
        named and a typed relation's words kept there — where the store's are tens of
        microseconds each; a scratch graph (no index) reads them from the store."""
        if self.graph.data_dir is None:
            relations = self.graph.relations_among(ids, outgoing_only=outgoing_only, types=False)
            return self._graph_json(nodes, relations)
        shown = self.graph.relations_shown(ids, outgoing_only=outgoing_only)
        return {
            "entities": [n.to_json() for n in nodes],
            "relations": [{"from": a, "to": b, "relationType": w} for a, b, w in shown],
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
        """The reference's answer — every entity (oldest first) and every relation — when
        called without arguments on a graph of at most :data:`FULL_READ` entities.

        Beyond that, or with ``cursor``/``limit``, one page of entities (ordered by id) with
        the relations leaving them — each relation appears once, on its source's page —
        ``nextCursor`` while more follow, and a ``note`` saying how many of how many were
        returned and how to get the rest. In summary mode, counts by type and relation
        instead of observations."""
        if limit is not None and (not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE):
            raise BadInput(f"limit is a number from 1 to {MAX_PAGE}, not {limit!r}")
        whole = cursor is None and limit is None
        if whole:
            ids = self.graph.object_ids(None, FULL_READ + 1)
            if len(ids) <= FULL_READ:
                nodes = sorted(self._nodes(ids), key=_oldest_first)
                if summary:
                    return self._summary(nodes, ids)
                return self._shown(nodes, ids, outgoing_only=True)
        size = limit if limit is not None else FULL_READ
        after = _decode_cursor(cursor) if cursor else None
        # A keyset page: ids after the cursor, one more than the page to tell whether more
        # follow. Its cost does not grow with the graph (only counts read it whole).
        ids = self.graph.object_ids(after, size + 1)
        page_ids, more = ids[:size], len(ids) > size
        nodes = self._shown_nodes(page_ids)
        out = (
            self._summary(nodes, self._all_ids())
            if summary
            else self._shown(nodes, page_ids, outgoing_only=True)
        )
        if more:
            out["nextCursor"] = _encode_cursor(page_ids[-1])
            rest = f"call read_graph again with cursor {out['nextCursor']!r} to get the next page"
            if whole:  # an agent that asked for everything is told exactly what it did not get
                total = len(self._all_ids())
                out["note"] = (
                    f"Returned entities 1-{len(page_ids)} of {total} (with the relations "
                    f"leaving them); {total - len(page_ids)} more: {rest}."
                )
            else:
                out["note"] = (
                    f"Returned {_entities(len(page_ids))}{' after the cursor' if after else ''} "
                    f"(with the relations leaving them); more follow: {rest}."
                )
        elif after is not None:  # the last of several pages (one page whole needs no note)
            out["note"] = (
                f"Returned {_entities(len(page_ids))} after the cursor (with the relations "
                "leaving them); this is the last page."
            )
        return out

    def _summary(self, nodes: list[_Node], all_ids: list[str]) -> dict[str, Any]:
        types = Counter(n.entity_type for n in self._nodes(all_ids))
        rels = Counter(
            r.rel for r in self.graph.relations_among(all_ids, outgoing_only=True, types=False)
        )
        return {
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

    def search_nodes(self, query: str, limit: int | None = None) -> dict[str, Any]:
        """What the reference finds — every object whose name, entityType or an observation
        contains the query, case-insensitively (JavaScript's ``toLowerCase().includes``) —
        and nothing else: the name equal to the query first, then names containing it, then
        the others; with the relations that have at least one end among them, as the
        reference returns them. Private objects are found as any other (the reference has no
        privacy; a private object is only kept out of word search). ``limit`` caps it."""
        if not isinstance(query, str):
            raise BadInput("query is a string")
        if query == "":
            # the reference's substring test: "" is in every string
            return self.read_graph() if limit is None else self.read_graph(limit=limit)
        cap = MAX_PAGE if limit is None else min(max(limit, 1), MAX_PAGE)
        ids = [i for i, _private in self.graph.objects_containing(query)]
        needle = js_lower(query)
        # the index holds the drop-in's view, tested there exactly (objects_containing)
        nodes = [n for n in self._shown_nodes(ids[:cap]) if _contains(n, needle)]
        # the relations off the search index: a SQLite row each, where the store's are tens
        # of microseconds (their ends' names, a typed relation's words)
        relations = self.graph.relations_shown([n.id for n in nodes])
        out: dict[str, Any] = {
            "entities": [n.to_json() for n in nodes],
            "relations": [{"from": a, "to": b, "relationType": w} for a, b, w in relations],
        }
        if len(ids) > cap:
            out["note"] = (
                f"Returned {cap} of {len(ids)} matching entities (best first); "
                "narrow the query to see the others."
            )
        return out

    def open_nodes(self, names: list[str]) -> dict[str, Any]:
        """The named objects (unknown names are skipped) with the relations that have at
        least one end among them."""
        if not _strings(names):
            raise BadInput("names is a list of strings")
        ids: list[str] = []
        for found in self._find_all(names):
            if found not in ids:
                ids.append(found)
        return self._shown(self._shown_nodes(ids), ids)

    def _find_all(self, names: list[str]) -> list[str]:
        """:meth:`_find` of each name, in order, asked of the store in two queries whatever
        their number (ids that exist; objects by exact name or title) — an agent opens a
        hundred nodes in one call."""
        for name in names:
            if not isinstance(name, str) or not name.strip():
                raise BadInput("a name is a non-empty string")
        as_ids = {name: name for name in names if is_id(name)}  # the others are names only
        existing: set[str] = set()
        for chunk in _chunks(sorted(set(as_ids.values())), 400):
            listed = " ".join(str(self.graph.ids.iri(i)) for i in chunk)
            rows = self.graph.backend.select(
                f"SELECT DISTINCT ?e WHERE {{ VALUES ?e {{ {listed} }} ?e {RDF_TYPE} ?t }}"
            )
            existing |= {self.graph.ids.id_of(r["e"]) for r in rows}
        by_label: dict[str, set[str]] = {}
        labels = sorted({n for n in names if as_ids.get(n) not in existing})
        for chunk in _chunks(labels, 200):
            # (predicate, name) pairs in one VALUES: the store looks each pair up, where two
            # VALUES it joins with every name and title (2.5 ms against 87 ms for 100 names)
            pairs = " ".join(
                f"({p} {Literal(n)})"  # typed terms, never pasted text
                for p in _LABEL_PREDICATES
                for n in chunk
            )
            query = (
                f"SELECT DISTINCT ?e ?n WHERE {{ VALUES (?p ?n) {{ {pairs} }} ?e ?p ?n . "
                f"?e {RDF_TYPE} ?t }}"
            )
            for row in self.graph.backend.select(query):
                by_label.setdefault(row["n"].value, set()).add(self.graph.ids.id_of(row["e"]))
        out: list[str] = []
        for name in names:
            if as_ids.get(name) in existing:
                self._names.setdefault(name, name)
                out.append(name)
                continue
            for i in sorted(by_label.get(name, ())):
                self._names.setdefault(i, name)
                out.append(i)
        return out

    # -- writing -----------------------------------------------------------------------------
    def _commit(self, changes: Changes) -> None:
        """Commit, or refuse in the agent's terms: its names, its tools' arguments."""
        try:
            self.graph.commit(changes)
        except ValidationFailed as exc:
            raise self.for_agent(exc) from None

    def for_agent(self, exc: ValidationFailed) -> ValidationFailed:
        """The refusal with ids replaced by the names the agent used and CLI advice dropped."""
        # A name that is itself the secret is named as reports show a secret: redacted.
        names = {
            entity_id: redaction(name) if holds_secret(name) else name
            for entity_id, name in self._names.items()
        }

        def named(text: str) -> str:
            for entity_id, name in sorted(names.items(), key=lambda kv: -len(kv[0])):
                if entity_id != name:
                    text = text.replace(entity_id, repr(name))
            # the typed tools' advice, as the memory tools give it
            text = re.sub(
                r"unrelate one of these (\S+) links",
                r"delete one of these \1 relations with delete_relations",
                text,
            )
            return without_cli_advice(text)

        def shown(value: Any) -> Any:
            return names.get(value, value) if isinstance(value, str) else value

        def about(f: Finding) -> tuple[str, str | None]:
            # a relation's words (an open relation's predicate, a typed one's wording) are
            # named as the argument they came from, never echoed: they may hold the secret
            if f.focus.startswith((OPEN_RELATION_PREFIX, WORDING_PREFIX)):
                return "a relation", "relationType"
            return names.get(f.focus, f.focus), f.path

        # the rule as the typed tools report it (kind, cycle, component, shape), in names
        findings = [
            dataclasses.replace(
                f,
                focus=about(f)[0],
                path=about(f)[1],
                value=shown(f.value),
                message=named(f.message) + self._end_types(f),
                cycle=None if f.cycle is None else tuple(shown(i) for i in f.cycle),
            )
            for f in exc.findings
        ]
        secret = any("secret" in f.message.lower() for f in findings)
        summary = (
            "refused on purpose: secrets are never stored in the graph; remove the secret "
            "from the arguments (keep a pointer to where it is kept instead) and call again. "
            "Nothing was stored"
            if secret
            else "refused: nothing was stored; fix the arguments named below and call again"
        )
        return ValidationFailed(findings, summary)

    def _end_types(self, f: Finding) -> str:
        """For a schema relation whose ends do not fit its domain or range: what the end
        the finding names is, in the agent's entityType (an ``event`` with no start is a
        Thing, which no Event relation reaches)."""
        if f.constraint != "class" or f.path not in self.graph.schema.relations:
            return ""
        if not isinstance(f.value, str):
            return ""
        try:
            [entity] = self.graph.entities_by_id([check_id(f.value)])
        except (BadInput, ValueError):
            return ""
        node = self._node(entity)
        name = self._names.get(entity.id, node.name)
        shown = redaction(name) if holds_secret(name) else name
        words = (
            ""
            if node.entity_type.lower() == entity.type.lower()
            else f" (entityType {node.entity_type!r})"
        )
        article = "an" if entity.type[:1].lower() in "aeiou" else "a"
        return f"; {shown!r} is {article} {entity.type}{words}"

    def _type_for(
        self, entity_type: str, given: frozenset[str] = frozenset()
    ) -> tuple[str, dict[str, Any]]:
        """The schema type for a memory ``entityType`` and the defaults it needs, or the
        generic type when the schema has none that a name alone (and the properties
        ``given``, for importers) can satisfy."""
        if not isinstance(entity_type, str) or not entity_type.strip():
            raise BadInput('entityType is a non-empty string, e.g. "person"')
        schema = self.graph.schema
        creatable = schema.hierarchy.subclasses(ENTITY)
        wanted = schema_words(entity_type)
        for name, spec in schema.types.items():
            if schema_words(name) != wanted or spec.iri not in creatable:
                continue
            label = "title" if "title" in spec.required else "name"
            defaults: dict[str, Any] = {}
            for prop in spec.required:
                if prop == label or prop in given:
                    continue
                if prop not in spec.enums:
                    break  # a required value a name cannot give: not this type
                defaults[prop] = spec.enums[prop][0]
            else:
                return name, {"label": label, **defaults}
        return GENERIC_TYPE, {"label": "name", "kind": entity_type}

    def stage_entity(
        self,
        changes: Changes,
        name: str,
        entity_type: str,
        observations: list[str],
        properties: dict[str, Any] | None = None,
    ) -> tuple[str, str] | None:
        """Stage one new entity as the drop-in maps it; returns (id, schema type), or None
        when the name is taken. ``properties`` (importers) override the type's defaults."""
        if self._one(name, changes) is not None:
            return None
        type_name, extra = self._type_for(entity_type, frozenset(properties or ()))
        label = extra.pop("label")
        props: dict[str, Any] = {label: name, **extra, **(properties or {})}
        if entity_type != type_name:
            props["kind"] = entity_type
        observations = list(dict.fromkeys(observations))
        if observations:
            props[OBSERVATIONS] = observations
        entity_id = stable_id(type_name, name)
        if changes.exists(entity_id):  # a hash collision with another name
            entity_id = f"{entity_id}{hashlib.sha256(name.encode()).hexdigest()[8:12]}"
        changes.create(type_name, props, id=entity_id)
        self._names[entity_id] = name
        self._staged.setdefault(changes, {}).setdefault(name, set()).add(entity_id)
        return entity_id, type_name

    def create_entities(self, entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Create the entities whose names are new; returns those (as given)."""
        changes = self.graph.changes()
        created = []
        for i, item in enumerate(_listed(entities, "entities", "{name, entityType, observations}")):
            name, entity_type, observations = _entity_fields(item, i)
            if self.stage_entity(changes, name, entity_type, observations) is not None:
                created.append(
                    {"name": name, "entityType": entity_type, "observations": observations}
                )
        if created:
            self._commit(changes)
        return created

    def stage_relations(
        self, changes: Changes, relations: list[tuple[str, str, str]]
    ) -> list[tuple[int, bool, bool]]:
        """Stage relations (ids and the agent's words): typed through
        :meth:`~ontoloom.changes.Changes.relate` when the words name a schema relation (so a
        many-to-one value already set is replaced, as ``relate`` replaces it), open
        otherwise. Returns, per relation, (index, typed, new). Nothing is judged here: the
        commit validates what is staged, typed relations under every rule of the schema —
        a cycle, a domain or range the ends do not fit — and refuses the delta whole.
        """
        # Words that name a schema relation are taken to mean it (issue 33): ends outside
        # its domain or range are refused as `relate` refuses them, never kept as an open
        # relation beside the rules, which `check` would then call conforming. Only words
        # the schema does not know are open.
        outcome: list[tuple[int, bool, bool]] = []
        for i, (from_id, words, to_id) in enumerate(relations):
            spec = typed_relation(self.graph, words)
            if spec is None:
                outcome.append((i, False, changes.link(from_id, words, to_id)))
                continue
            done = changes.relate(from_id, spec.name, to_id)
            for old in done.replaced:  # its words go with it
                _drop_wording(changes, old.from_id, spec, old.to_id)
            if done.created and words != spec.name:
                _stage_wording(changes, from_id, spec, to_id, words)
            outcome.append((i, True, done.created))
        return outcome

    def create_relations(self, relations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Create the relations not there yet; returns those. Both ends must exist."""
        probe = self.graph.changes()
        resolved: list[tuple[str, str, str]] = []
        given: list[dict[str, str]] = []
        missing: list[Finding] = []
        for i, item in enumerate(_listed(relations, "relations", "{from, to, relationType}")):
            source, target, words = _relation_fields(item, i)
            from_id, to_id = self._one(source, probe), self._one(target, probe)
            for key, name, found in (("from", source, from_id), ("to", target, to_id)):
                if found is None:
                    missing.append(
                        Finding(
                            f"relations[{i}]",
                            key,
                            "exists",
                            name,
                            f"no entity named {name!r}: create it with create_entities "
                            "first (relations to entities that do not exist are refused on "
                            f"purpose), or fix relations[{i}].{key}",
                        )
                    )
            if from_id is not None and to_id is not None:
                resolved.append((from_id, words, to_id))
                given.append({"from": source, "to": target, "relationType": words})
        if missing:
            raise ValidationFailed(
                missing,
                "refused on purpose: a relation needs both its ends to exist; nothing was stored",
            )
        changes = self.graph.changes()
        outcome = self.stage_relations(changes, resolved)
        created = [given[i] for i, _, is_new in outcome if is_new]
        if created:
            self._commit(changes)
        return created

    def add_observations(self, observations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Add observations to existing entities, after those they have; returns what was
        new for each."""
        changes = self.graph.changes()
        results = []
        for i, item in enumerate(_listed(observations, "observations", "{entityName, contents}")):
            name, contents = _observation_fields(item, f"observations[{i}]", "contents")
            entity_id = self._require(name, changes)
            added = self.stage_observations(changes, entity_id, contents)
            results.append({"entityName": name, "addedObservations": added})
        if any(r["addedObservations"] for r in results):
            self._commit(changes)
        return results

    def stage_observations(
        self, changes: Changes, entity_id: str, contents: list[str]
    ) -> list[str]:
        """Stage observations not there yet at the end of the entity's order; returns them."""
        present = changes.observations(self.graph.ids.iri(entity_id))
        added = [c for c in dict.fromkeys(contents) if c not in set(present)]
        if added:
            changes.add_values(entity_id, OBSERVATIONS, added)
        return added

    def delete_entities(self, names: list[str]) -> list[str]:
        """Delete the named entities and their relations (unknown names are skipped);
        returns the ids deleted."""
        if not _strings(names):
            raise BadInput("entityNames is a list of strings")
        changes = self.graph.changes()
        deleted = []
        for name in dict.fromkeys(names):
            for entity_id in self._find(name, changes):
                for r in self.graph.relations_among([entity_id], types=False):
                    spec = None if r.open else self.graph.schema.relations.get(r.rel)
                    if spec is not None:
                        _drop_wording(changes, r.from_id, spec, r.to_id)
                try:
                    changes.delete(entity_id)
                except BadInput:
                    raise BadInput(
                        f"{name!r} was read from a record file, not written with these "
                        "tools: leave it out of entityNames (change the record file instead)"
                    ) from None
                deleted.append(entity_id)
        if deleted:
            self._commit(changes)
        return deleted

    def delete_observations(self, deletions: list[dict[str, Any]]) -> int:
        """Remove observations (unknown entities and observations are skipped); returns how
        many were removed."""
        changes = self.graph.changes()
        removed = 0
        for i, item in enumerate(_listed(deletions, "deletions", "{entityName, observations}")):
            name, values = _observation_fields(item, f"deletions[{i}]", "observations")
            entity_id = self._one(name, changes)
            if entity_id is None:
                continue
            removed += changes.remove_values(entity_id, OBSERVATIONS, values)
        if removed:
            self._commit(changes)
        return removed

    def delete_relations(self, relations: list[dict[str, Any]]) -> int:
        """Remove the relations given — the open relation of those words and the typed
        relation they name — (those not there are skipped); returns how many."""
        changes = self.graph.changes()
        removed = 0
        for i, item in enumerate(_listed(relations, "relations", "{from, to, relationType}")):
            source, target, words = _relation_fields(item, i)
            from_id, to_id = self._one(source, changes), self._one(target, changes)
            if from_id is None or to_id is None:
                continue
            removed += changes.unlink(from_id, words, to_id, open=True)
            spec = typed_relation(self.graph, words)
            if spec is not None:
                gone = changes.unlink(from_id, spec.name, to_id)
                if gone:
                    _drop_wording(changes, from_id, spec, to_id)
                removed += gone
        if removed:
            self._commit(changes)
        return removed


# -- the words of typed relations ------------------------------------------------------------
def _stage_wording(
    changes: Changes, from_id: str, spec: RelationSpec, to_id: str, words: str
) -> None:
    ids = changes.graph.ids
    s, o = ids.iri(from_id), ids.iri(to_id)
    w = wording_iri(s, spec.iri, o)
    changes._add(
        {
            Quad(w, RDF_TYPE, _STATEMENT, FACTS),
            Quad(w, _RDF_SUBJECT, s, FACTS),
            Quad(w, _RDF_PREDICATE, spec.iri, FACTS),
            Quad(w, _RDF_OBJECT, o, FACTS),
            Quad(w, RDFS_LABEL, Literal(words), FACTS),
        }
    )


def _drop_wording(changes: Changes, from_id: str, spec: RelationSpec, to_id: str) -> None:
    ids = changes.graph.ids
    w = wording_iri(ids.iri(from_id), spec.iri, ids.iri(to_id))
    changes._remove({q for q in changes.quads_about(w) if q.graph_name == FACTS})


# -- argument checks and cursors -------------------------------------------------------------
def _oldest_first(node: _Node) -> tuple[dt.datetime, str]:
    """By creation time as a time (stamps to the second and to the microsecond mix in stores
    written before either), then by id."""
    try:
        created = dt.datetime.fromisoformat(node.created)
    except ValueError:
        created = dt.datetime.min
    if created.tzinfo is None:
        created = created.replace(tzinfo=dt.UTC)
    return created, node.id


# The reference server stores blank names and words; this one refuses them on purpose.
_BLANK = (
    "refused on purpose (the reference server would store it, but nothing could find it again):"
)


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _strings(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _entity_fields(item: Any, i: int) -> tuple[str, str, list[str]]:
    if not isinstance(item, dict):
        raise BadInput(f"entities[{i}] is an object with name, entityType and observations")
    name, entity_type = item.get("name"), item.get("entityType")
    observations = item.get("observations", [])
    if not isinstance(name, str):
        raise BadInput(f"entities[{i}].name is a string")
    if not name.strip():
        raise BadInput(f"entities[{i}].name is blank: {_BLANK} give the entity a name")
    if not isinstance(entity_type, str):
        raise BadInput(f'entities[{i}].entityType is a string, e.g. "person"')
    if not entity_type.strip():
        raise BadInput(f'entities[{i}].entityType is blank: {_BLANK} say what it is, e.g. "person"')
    if not _strings(observations):
        raise BadInput(f"entities[{i}].observations is a list of strings")
    return name, entity_type, observations


def _observation_fields(item: Any, where: str, key: str) -> tuple[str, list[str]]:
    if not isinstance(item, dict):
        raise BadInput(f"{where} is an object with entityName and {key}")
    name, values = item.get("entityName"), item.get(key)
    if not isinstance(name, str):
        raise BadInput(f"{where}.entityName is a string, not {_json_type(name)}")
    if not _strings(values):
        raise BadInput(f"{where}.{key} is a list of strings")
    return name, values


def _listed(value: Any, key: str, what: str) -> list[Any]:
    """The tool's one argument, a list (of ``what``): the reference's shape, checked here
    for callers of the Python API, which no argument schema stands in front of."""
    if not isinstance(value, list):
        raise BadInput(f"{key} is a list of {what}, not {_json_type(value)}")
    return value


def _json_type(value: Any) -> str:
    """The JSON type of a value, to say what was given without quoting it."""
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (str, "a string"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, int | float) else "a list"


def _relation_fields(item: Any, i: int) -> tuple[str, str, str]:
    if not isinstance(item, dict):
        raise BadInput(f"relations[{i}] is an object with from, to and relationType")
    fields: dict[str, str] = {}
    for k in ("from", "to", "relationType"):
        v = item.get(k)
        if k not in item:
            raise BadInput(f"relations[{i}].{k} is missing: from, to and relationType are strings")
        if not isinstance(v, str):
            raise BadInput(f"relations[{i}].{k} is a string, not {_json_type(v)}")
        fields[k] = v
    blank = next((k for k, v in fields.items() if not v.strip()), None)
    if blank is not None:
        raise BadInput(f"relations[{i}].{blank} is blank: {_BLANK} name it in words")
    source, target, relation_type = fields.values()
    return str(source), str(target), str(relation_type)


def _entities(n: int) -> str:
    return f"{n} entit{'y' if n == 1 else 'ies'}"


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
