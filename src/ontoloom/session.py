"""A session on one data dir's graph: the ground floor every feature stands on — reads,
staged changes committed through the one write path, the search index kept in step.

The public Python API (:class:`ontoloom.api.Graph`) is this with the features on top. Who
owns a data dir (:mod:`ontoloom.owner`, a floor above) is told to this module through
:func:`lend_sessions`, never imported.

>>> import tempfile
>>> with Session.open(tempfile.mkdtemp(), write=True, create=True) as g:
...     alice = g.create("Person", {"name": "Alice"})
...     task = g.create("Task", {"title": "Ship it", "status": "open"}, id="task_ship")
...     g.relate("task_ship", "assigned_to", alice.id).relation.rel
'assigned_to'
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ontoloom.changes import Changes, RelateOutcome
from ontoloom.config import load_config, resolve_data_dir
from ontoloom.errors import BadInput, Busy, NotFound, OwnerTookOver
from ontoloom.history import (
    TIME_FORMS,
    Version,
    fact_of_row,
    facts_at,
    format_time,
    microseconds,
    parse_time,
    read_versions,
    valid_at,
    versions_about,
    when,
)
from ontoloom.locate import owner_alive
from ontoloom.model import (
    OBSERVATION_ORDER,
    OBSERVATIONS,
    Entity,
    IdSpace,
    Relation,
    check_id,
    check_property_name,
    in_written_order,
    literal_from_json,
    shown_id,
    value_to_json,
    vocab_iri,
    vocab_name,
)
from ontoloom.schema import RelationSpec, Schema
from ontoloom.search import Hits, SearchIndex, touched_by
from ontoloom.store import Backend, Delta, Row, open_backend
from ontoloom.store.lock import kept_by_owner
from ontoloom.suggest import did_you_mean
from ontoloom.terms import Literal, NamedNode, Quad, Term, Triple, spo
from ontoloom.vocab import (
    DCTERMS_MODIFIED,
    FACTS,
    OL,
    PROV_GENERATED,
    RDF_TYPE,
    SCHEMA_GRAPH,
    is_open_relation,
)
from ontoloom.writes import WritePath

__all__ = ["MAX_DEPTH", "Lender", "RelateOutcome", "Session", "When", "lend_sessions"]

When = str | dt.datetime | None  # a point in time: ISO 8601 text or a date-time

MAX_DEPTH = 5
# How many ids sharing a misspelt id's prefix are read to find the closest: one bounded
# page of the search index, on the error path only.
ID_HINT_CANDIDATES = 1000


class Lender(Protocol):
    """What the hosting floor tells this one: the session this process keeps open for a
    data dir it owns (held for the block), and whether it owns one."""

    def borrowed(self, data_dir: Path) -> AbstractContextManager[Session | None]: ...

    def owns(self, data_dir: Path) -> bool: ...


class _Nobody:
    """No owner in this process (until :mod:`ontoloom.owner` lends its sessions)."""

    @contextmanager
    def borrowed(self, data_dir: Path) -> Iterator[Session | None]:
        yield None

    def owns(self, data_dir: Path) -> bool:
        return False


_lender: Lender = _Nobody()
_S = TypeVar("_S", bound="Session")


def _as(cls: type[_S], owned: Session) -> _S:
    """The owner's session, as the kind the caller opened: the owner opens the fullest kind
    (:class:`ontoloom.api.Graph`), which every caller's kind is a base of."""
    if not isinstance(owned, cls):
        raise TypeError(f"the owner keeps a {type(owned).__name__}, not a {cls.__name__}")
    return owned


def lend_sessions(lender: Lender) -> None:
    """Called once by the hosting floor: from then on :meth:`Session.open` of an owned data
    dir yields the owner's open session."""
    global _lender
    _lender = lender


class Session:
    """A typed, validated graph in one data dir."""

    def __init__(
        self, backend: Backend, data_dir: Path | None = None, id_base: str | None = None
    ) -> None:
        """A graph over ``backend``; ``data_dir`` is None for scratch graphs (no instance)."""
        self.backend = backend
        self.data_dir = data_dir
        self._search: SearchIndex | None = None
        # Write-behind (an owner process): commits leave the search index behind, to be
        # caught up before anything reads it, when idle, and at close (see _after_commit).
        self.index_behind = False
        self.on_index_behind: Callable[[], None] | None = None
        self._behind: tuple[int, int, set[Term]] | None = None  # (since, until, nodes)
        config_base = load_config(data_dir).id_base if data_dir is not None else None
        self.ids = IdSpace(id_base or config_base or IdSpace().base)
        self.reload_schema()

    def reload_schema(self, schema_at: int | None = None) -> None:
        """Read the shipped schema and the store's extensions (after a schema change: the
        generation of that change is ``schema_at``)."""
        self.schema = Schema.load(extensions=[q.triple for q in self.backend.quads(SCHEMA_GRAPH)])
        self.writes = WritePath(self.backend, self.schema, self.ids, schema_at)
        self.writes.after_commit.append(self._after_commit)
        self.writes.on_schema.append(self._schema_read)

    def _schema_read(self, schema: Schema) -> None:
        """The write path found the store's schema changed by another gateway, and read it."""
        self.schema = schema

    # -- search ------------------------------------------------------------------------------
    def _index(self) -> SearchIndex:
        if self.data_dir is None:
            raise BadInput("search needs a data dir: open the graph with one")
        if self._search is None:
            self._search = SearchIndex.of(self.data_dir)
        return self._search

    def search_index(self) -> SearchIndex:
        """The search index, caught up with the store (for the features that add to it what
        the store does not hold: :mod:`ontoloom.recall`)."""
        return self._current_index()

    def catch_up_index(self) -> None:
        """Index what commits left behind (see :meth:`_after_commit`)."""
        if self._behind is None:
            return
        since, until, nodes = self._behind
        self._behind = None
        self._index().catch_up(self.backend, self.ids, nodes, since, until)

    def _current_index(self) -> SearchIndex:
        """The search index, caught up with the store."""
        self.catch_up_index()
        index = self._index()
        index.sync(self.backend, self.ids)
        return index

    def _after_commit(self, delta: Delta, generation: int) -> None:
        """Keep the search index in step with each commit, and the schema with the store.

        With ``index_behind`` the index is not touched here: the nodes the commit touched
        are noted and indexed later, all at once (one index transaction for many writes —
        one each was a quarter of a validated create). Every read of the index catches up
        first (:meth:`_current_index`), so no search ever misses a write."""
        if self.data_dir is not None and self.backend.writable:
            if self.index_behind:
                since, _, nodes = self._behind or (generation - 1, generation, set())
                self._behind = (since, generation, nodes | touched_by(delta))
                if self.on_index_behind is not None:
                    self.on_index_behind()
            else:
                self._index().follow(self.backend, self.ids, delta, generation)
        if any(q.graph_name == SCHEMA_GRAPH for q in (*delta.adds, *delta.removes)):
            self.reload_schema(generation)

    def search(
        self,
        query: str,
        *,
        types: Iterable[str] = (),
        tags: Iterable[str] = (),
        rel: str | None = None,
        limit: int = 10,
    ) -> Hits:
        """BM25 search; any text is a safe query. Catches the index up with the store first."""
        if not 1 <= limit <= 1000:
            raise BadInput(f"--limit must be between 1 and 1000, not {limit}")
        types = [self.known_type(t) for t in types]
        index = self._current_index()
        return index.search(query, types=types, tags=tags, rel=rel, limit=limit)

    def objects_containing(self, query: str) -> list[tuple[str, bool]]:
        """(id, private) of the objects whose name, entityType or an observation contains
        ``query`` case-insensitively, best first (:meth:`SearchIndex.containing`); read off
        the search index, caught up with the store first."""
        return self._current_index().containing(query)

    def memory_view(self, entity_ids: Iterable[str]) -> dict[str, tuple[str, str, list[str]]]:
        """Each of ``entity_ids`` as the drop-in memory server shows it — (name, entityType,
        observations in the order added) — read off the search index, caught up first
        (:meth:`SearchIndex.memory_view`); ids it does not hold are left out."""
        return self._current_index().memory_view(entity_ids)

    def relations_shown(
        self, entity_ids: Iterable[str], *, outgoing_only: bool = False
    ) -> list[tuple[str, str, str]]:
        """(from, to, relationType) of the relations with at least one end among
        ``entity_ids`` (leaving them, with ``outgoing_only``), as the drop-in memory server
        shows them (:meth:`SearchIndex.relations_shown`); read off the search index, caught
        up first."""
        return self._current_index().relations_shown(entity_ids, outgoing_only=outgoing_only)

    def object_ids(self, after: str | None = None, limit: int = 100) -> list[str]:
        """Up to ``limit`` object ids greater than ``after``, in id order (a keyset page: its
        cost does not grow with the graph). Read off the search index, caught up with the
        store first, and checked against the store; a scratch graph (no data dir) reads
        the store whole."""
        object_classes = set(self.schema.object_classes())
        classes = " ".join(str(c) for c in object_classes)
        if self.data_dir is None:
            rows = self.backend.select(
                f"SELECT DISTINCT ?e WHERE {{ VALUES ?t {{ {classes} }} ?e {RDF_TYPE} ?t }}"
            )
            found = sorted(self.ids.id_of(r["e"]) for r in rows)
            return [i for i in found if after is None or i > after][:limit]
        index = self._current_index()
        out: list[str] = []
        while len(out) < limit:
            want = limit - len(out)
            candidates = index.object_ids(after, want)
            if not candidates:
                break
            listed = " ".join(str(self.ids.iri(i)) for i in candidates)
            # the page's types only (a VALUES of classes too would read every instance)
            rows = self.backend.select(
                f"SELECT ?e ?t WHERE {{ VALUES ?e {{ {listed} }} ?e {RDF_TYPE} ?t }}"
            )
            typed = {self.ids.id_of(r["e"]) for r in rows if r["t"] in object_classes}
            out += [i for i in candidates if i in typed]
            if len(candidates) < want:
                break
            after = candidates[-1]
        return out

    def reindex(self) -> int:
        """Rebuild the search index from the store; returns the number of objects."""
        self._behind = None  # the rebuild reads everything
        return self._index().rebuild(self.backend, self.ids)

    @classmethod
    @contextmanager
    def open(
        cls: type[_S],
        data_dir: str | Path | None = None,
        *,
        write: bool = False,
        create: bool = False,
        wait: float | None = None,
    ) -> Iterator[_S]:
        """Open the graph of a data dir (resolved as RECORDS.md says when ``None``).

        :raises NoStore: when there is none and ``create`` is false.
        :raises Busy: when another process holds the data dir.
        """
        path = resolve_data_dir(data_dir)
        with _lender.borrowed(path) as owned:
            if owned is not None:  # this process owns the data dir: its graph is open
                yield _as(cls, owned)
                return
        with ExitStack() as stack:
            try:
                backend = stack.enter_context(
                    open_backend(path, write=write or create, create=create, wait=wait)
                )
            except OwnerTookOver:
                if not _lender.owns(path):
                    raise
                # this process became the owner (a server's claimer) while this waited
                with _lender.borrowed(path) as mine:
                    if mine is None:  # and has already let go again
                        raise
                    yield _as(cls, mine)
                return
            except Busy as exc:
                if owner_alive(path):
                    raise Busy(kept_by_owner(path)) from exc
                raise
            graph = cls(backend, path)
            try:
                yield graph
            finally:
                graph.close()

    def close(self) -> None:
        try:
            self.catch_up_index()
        finally:
            self._close_index()

    def _close_index(self) -> None:
        if self._search is not None:
            self._search.close()
            self._search = None

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
        order = props.pop(OBSERVATION_ORDER, [None])[0]  # a string of digests, as written
        for key in sorted(props):
            values = sorted(props[key], key=lambda v: (str(type(v)), v))
            if key == OBSERVATIONS:
                values = in_written_order(values, order if isinstance(order, str) else None)
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
        return self._entity_of(entity_id, node, self.backend.around([node]))

    def _entity_of(self, entity_id: str, node: Term, quads: Iterable[Quad]) -> Entity:
        """The entity ``quads`` (those with ``node`` as subject) state.

        :raises NotFound: when they state no entity."""
        triples = dict.fromkeys(q.triple for q in quads)
        entity = self._entities({"e": t.subject, "p": t.predicate, "o": t.object} for t in triples)
        if not entity or not entity[0].type:
            raise NotFound(
                f"no entity with id {shown_id(entity_id)}{self.id_hint(entity_id)}: "
                "check the id with `ontoloom list`"
            )
        return entity[0]

    def id_hint(self, entity_id: str) -> str:
        """A "did you mean" for an id no object has: the closest ids among those that share
        its prefix (``task_``, ``failure:``…), read as one page of the index — its cost does
        not grow with the graph; ``""`` when none is close."""
        cut = [i for i in (entity_id.find("_"), entity_id.find(":")) if i >= 0]
        prefix = entity_id[: min(cut) + 1] if cut else ""
        near = self.object_ids(prefix or None, ID_HINT_CANDIDATES)
        # random hex suffixes share a character here and there: only a near-copy is offered
        return did_you_mean(entity_id, [i for i in near if i.startswith(prefix)], cutoff=0.8)

    def describe(self, entity_id: str) -> dict[str, Any]:
        """An entity's JSON with its outgoing and incoming relations (``get``): three pattern
        reads of the store's indexes (its quads, the quads naming it, the types of the ends),
        where planning one SPARQL query costs more than all three."""
        node = self.ids.iri(entity_id)
        own = list(self.backend.around([node]))
        data = self._entity_of(entity_id, node, own).to_json()
        relations = self._touching(entity_id, node, own)
        data["relations"] = {
            "outgoing": [r.to_json() for r in relations if r.from_id == entity_id],
            "incoming": [r.to_json() for r in relations if r.from_id != entity_id],
        }
        return data

    def entities(
        self, type_name: str | None = None, where: dict[str, Any] | None = None
    ) -> list[Entity]:
        """Entities, optionally of one type and with given property values, by type and id."""
        classes, query, bindings = self._listing(type_name, where)
        values = " ".join(str(c) for c in classes)
        query = query.replace("#NODES#", f"VALUES ?t {{ {values} }} ?e {RDF_TYPE} ?t .")
        entities = self._entities(self.backend.select(query, bindings or None))
        return sorted(entities, key=lambda e: (e.type, e.id))

    def entity_page(
        self,
        type_name: str | None = None,
        where: dict[str, Any] | None = None,
        *,
        after: str | None = None,
        limit: int = 100,
    ) -> tuple[list[Entity], str | None]:
        """One page of :meth:`entities` in id order, after the id ``after``, and the cursor of
        the next page (None on the last). A keyset page read off the search index: its cost
        does not grow with the graph (with ``where``, with the entities it passes over)."""
        if not 1 <= limit <= 1000:
            raise BadInput(f"--limit must be between 1 and 1000, not {limit}")
        classes, query, bindings = self._listing(type_name, where)
        if self.data_dir is None:
            everything = sorted(self.entities(type_name, where), key=lambda e: e.id)
            rest = [e for e in everything if after is None or e.id > after]
            return rest[:limit], rest[limit - 1].id if len(rest) > limit else None
        index = self._current_index()
        names = [vocab_name(c) for c in classes]
        found: list[Entity] = []
        cursor = after
        while len(found) <= limit:
            candidates = index.object_ids(cursor, limit + 1, names)
            if not candidates:
                break
            listed = " ".join(str(self.ids.iri(i)) for i in candidates)
            typed = query.replace(
                "#NODES#",
                f"VALUES ?e {{ {listed} }} ?e {RDF_TYPE} ?t . FILTER(?t IN ({', '.join(str(c) for c in classes)}))",
            )
            page = self._entities(self.backend.select(typed, bindings or None))
            found += sorted(page, key=lambda e: e.id)
            cursor = candidates[-1]
        return found[:limit], found[limit - 1].id if len(found) > limit else None

    def _listing(
        self, type_name: str | None, where: dict[str, Any] | None
    ) -> tuple[list[Term], str, dict[str, Term]]:
        """The classes a listing covers, its query (``#NODES#`` stands for the pattern that
        binds ?e) and the query's bindings."""
        if type_name is not None:
            self.known_type(type_name)
        classes = list(
            self.schema.hierarchy.subclasses(vocab_iri(type_name))
            if type_name
            else self.schema.object_classes()
        )
        patterns: list[str] = []
        bindings: dict[str, Term] = {}
        names: list[str] = []
        for i, (key, value) in enumerate(sorted((where or {}).items())):
            check_property_name(key)
            literals = literal_from_json(value, field_name=key)
            if len(literals) != 1:
                raise BadInput(f"--where {key}: give one value")
            var = f"w{i}"
            patterns.append(f"?e {vocab_iri(key)} ?{var} .")
            bindings[var] = literals[0]
            names.append(f"?{var}")
        query = (
            f"SELECT DISTINCT ?e ?p ?o {' '.join(names)} WHERE {{ #NODES# "
            f"{' '.join(patterns)} ?e ?p ?o }}"
        )
        return classes, query, bindings

    # A read with a wrong name in it is bad input (exit 2), never a refused write (1).
    def known_type(self, type_name: str) -> str:
        """``type_name``, a type of the schema.

        :raises BadInput: a type the schema does not know (with the closest it does)."""
        if type_name not in self.schema.types:
            raise BadInput(
                f"{self.schema.unknown_type(type_name)} (`ontoloom schema list` shows them)"
            )
        return type_name

    def known_relation(self, rel: str) -> RelationSpec:
        """The schema's relation ``rel``, for a read that filters on it.

        :raises BadInput: a relation the schema does not know (with the closest it does)."""
        spec = self.schema.relations.get(rel)
        if spec is None:
            raise BadInput(
                f"{self.schema.unknown_relation(rel)} (`ontoloom schema list` shows them)"
            )
        return spec

    def relations(
        self, entity_id: str, rel: str | None = None, direction: str = "both"
    ) -> list[Relation]:
        """Relations touching an entity. :raises NotFound: for an unknown id."""
        node = self.ids.iri(entity_id)
        own = list(self.backend.around([node]))
        self._entity_of(entity_id, node, own)
        if direction not in ("out", "in", "both"):
            raise BadInput(f"direction must be out, in or both, not {direction!r}")
        wanted = self.known_relation(rel).iri if rel else None
        return self._touching(entity_id, node, own, wanted, direction)

    def _touching(
        self,
        entity_id: str,
        node: Term,
        own: list[Quad],
        wanted: NamedNode | None = None,
        direction: str = "both",
    ) -> list[Relation]:
        """The relations between objects with ``node`` at one end (of ``wanted`` only, when
        given), read by pattern: ``own`` (its quads, already read) and the quads naming it."""
        triples: set[Triple] = set()
        if direction in ("out", "both"):
            triples |= {q.triple for q in own if isinstance(q.object, NamedNode)}
        if direction in ("in", "both"):
            triples |= {q.triple for q in self.backend.around([node], wanted, incoming=True)}
        rows = [
            {"s": t.subject, "p": t.predicate, "o": t.object}
            for t in triples
            if t.predicate != RDF_TYPE and (wanted is None or t.predicate == wanted)
        ]
        found = set(self._relations(rows))
        return sorted(found, key=lambda r: (r.from_id != entity_id, r.rel, r.from_id, r.to_id))

    def _relations(self, rows: Iterable[Row], *, types: bool = True) -> list[Relation]:
        rows = [
            r
            for r in rows
            if self.ids.is_instance(r["s"])
            and self.ids.is_instance(r["o"])
            and isinstance(r["p"], NamedNode)
            and r["p"].value.startswith(OL)
        ]
        ends = self._types({r["s"] for r in rows} | {r["o"] for r in rows}) if types else {}
        return [
            Relation(
                from_id=self.ids.id_of(r["s"]),
                rel=vocab_name(r["p"]),
                to_id=self.ids.id_of(r["o"]),
                from_type=ends.get(r["s"]),
                to_type=ends.get(r["o"]),
                open=is_open_relation(r["p"]),
            )
            for r in rows
        ]

    def _types(self, nodes: Iterable[Term]) -> dict[Term, str]:
        nodes = list(nodes)
        if not nodes:
            return {}
        found: dict[Term, list[Term]] = defaultdict(list)
        # by pattern, one read per node: what the SPARQL join would do, less its planning
        for q in self.backend.around(nodes, RDF_TYPE):
            s, _, t = spo(q)
            found[s].append(t)
        return {n: self._type_of(ts) or "" for n, ts in found.items()}

    def traverse(
        self, entity_id: str, rel: str | None = None, direction: str = "out", depth: int = 1
    ) -> list[dict[str, Any]]:
        """Everything reachable within ``depth`` hops (at most 5), each with its distance and
        path; every node is reached once, at its shortest distance (cycle-safe). ``edges``
        gives each hop as stored, ``from`` → ``to`` (with ``direction="in"`` every hop runs
        against the walk; a symmetric relation may run either way)."""
        if direction not in ("out", "in"):
            raise BadInput(f"direction must be out or in, not {direction!r}")
        if not 1 <= depth <= MAX_DEPTH:
            raise BadInput(f"depth must be between 1 and {MAX_DEPTH}, not {depth}")
        self.get(entity_id)
        start = self.ids.iri(entity_id)
        rel_filter = f"VALUES ?p {{ {self.known_relation(rel).iri} }}" if rel else ""
        symmetric = {s.iri for s in self.schema.relations.values() if s.symmetric}
        # node → (path, relation names, each edge as stored: (from, rel, to))
        reached: dict[Term, tuple[list[Term], list[str], list[tuple[Term, str, Term]]]] = {
            start: ([start], [], [])
        }
        frontier: list[Term] = [start]
        for _ in range(depth):
            if not frontier:
                break
            listed = " ".join(str(n) for n in frontier)
            fwd = "?n ?p ?m" if direction == "out" else "?m ?p ?n"
            back = "?m ?p ?n" if direction == "out" else "?n ?p ?m"
            hops = f"VALUES ?n {{ {listed} }} {rel_filter} FILTER(isIRI(?m) && ?p != {RDF_TYPE})"
            # Each hop tagged with the way its edge is stored ("nm": from ?n to ?m) in Python:
            # a BIND inside a UNION is beyond Virtuoso's SPARQL compiler.
            forward = "nm" if direction == "out" else "mn"
            rows = [
                (row, forward)
                for row in self.backend.select(
                    f"SELECT DISTINCT ?n ?p ?m WHERE {{ {fwd} . {hops} }}"
                )
            ]
            if symmetric:
                either = ", ".join(map(str, symmetric))
                query = (
                    f"SELECT DISTINCT ?n ?p ?m WHERE {{ {back} . {hops} FILTER(?p IN ({either})) }}"
                )
                rows += [
                    (row, "mn" if forward == "nm" else "nm") for row in self.backend.select(query)
                ]
            nxt: list[Term] = []
            for row, stored in sorted(
                rows,
                # the way the traversal goes first: a symmetric edge stored both ways
                # is shown as the one that follows --direction
                key=lambda r: (str(r[0]["n"]), str(r[0]["p"]), str(r[0]["m"]), r[1] != forward),
            ):
                m, p, n = row["m"], row["p"], row["n"]
                if m in reached or not self.ids.is_instance(m) or not p.value.startswith(OL):
                    continue
                path, rels, edges = reached[n]
                name = vocab_name(p)
                edge = (n, name, m) if stored == "nm" else (m, name, n)
                reached[m] = ([*path, m], [*rels, name], [*edges, edge])
                nxt.append(m)
            frontier = nxt
        del reached[start]
        types = self._types(reached)
        labels = {e.id: e.label for e in self._entities_by_id(reached)}
        results = []
        for node, (path, rels, edges) in reached.items():
            node_id = self.ids.id_of(node)
            results.append(
                {
                    "id": node_id,
                    "type": types.get(node, ""),
                    "title": labels.get(node_id, node_id),
                    "distance": len(rels),
                    "path": [self.ids.id_of(n) for n in path],
                    "rels": rels,
                    "edges": [
                        {"from": self.ids.id_of(a), "rel": r, "to": self.ids.id_of(b)}
                        for a, r, b in edges
                    ],
                }
            )
        return sorted(results, key=lambda r: (r["distance"], r["id"]))

    def entities_by_id(self, entity_ids: Iterable[str]) -> list[Entity]:
        """The entities with these ids (unknown ids are left out), in no particular order."""
        nodes = [self.ids.iri(i) for i in entity_ids]
        found: list[Entity] = []
        for i in range(0, len(nodes), 400):
            listed = " ".join(str(n) for n in nodes[i : i + 400])
            query = (
                f"SELECT ?e ?p ?o WHERE {{ VALUES ?e {{ {listed} }} ?e ?p ?o . "
                f"FILTER(isLiteral(?o) || ?p = {RDF_TYPE}) }}"
            )
            found.extend(e for e in self._entities(self.backend.select(query)) if e.type)
        return found

    def relations_among(
        self, entity_ids: Iterable[str], *, outgoing_only: bool = False, types: bool = True
    ) -> list[Relation]:
        """Relations with at least one end among ``entity_ids`` (only those leaving them with
        ``outgoing_only``), declared or not, ordered by source, relation and target; without
        their ends' types when ``types`` is false (a query over every end the fewer: the
        drop-in names the ends, it never types them)."""
        nodes = [self.ids.iri(i) for i in entity_ids]
        found: set[Relation] = set()
        for i in range(0, len(nodes), 400):
            listed = " ".join(str(n) for n in nodes[i : i + 400])
            fwd = f"{{ VALUES ?s {{ {listed} }} ?s ?p ?o }}"
            where = fwd if outgoing_only else f"{fwd} UNION {{ VALUES ?o {{ {listed} }} ?s ?p ?o }}"
            query = f"SELECT DISTINCT ?s ?p ?o WHERE {{ {where} FILTER(isIRI(?o) && ?p != {RDF_TYPE}) }}"
            found.update(self._relations(self.backend.select(query), types=types))
        return sorted(found, key=lambda r: (r.from_id, r.rel, r.to_id))

    def _entities_by_id(self, nodes: Iterable[Term]) -> list[Entity]:
        listed = " ".join(str(n) for n in nodes)
        if not listed:
            return []
        query = (
            f"SELECT ?e ?p ?o WHERE {{ VALUES ?e {{ {listed} }} ?e ?p ?o . FILTER(isLiteral(?o)) }}"
        )
        return self._entities(self.backend.select(query))

    def summary(self) -> dict[str, Any]:
        """Counts per type, relation and property (the vocabulary in use), and last change."""
        ol = f"STRSTARTS(STR(?p), {json.dumps(OL)})"
        types = {
            vocab_name(r["t"]): int(r["n"].value)
            for r in self.backend.select(
                f"SELECT ?t (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s {RDF_TYPE} ?t "
                f"FILTER(STRSTARTS(STR(?t), {json.dumps(OL)})) }} GROUP BY ?t"
            )
            if vocab_name(r["t"]) in self.schema.types
        }
        # A relation is one triple, whichever graphs state it (two records may state the
        # same one): count distinct triples, not their copies in the union of the graphs.
        rows = self.backend.select(
            f"SELECT ?p ?literal (COUNT(*) AS ?n) WHERE {{ {{ SELECT DISTINCT ?s ?p ?o "
            f"WHERE {{ ?s ?p ?o "
            f"FILTER({ol} && ?p != {RDF_TYPE} && STRSTARTS(STR(?s), {json.dumps(self.ids.base)})) "
            f"}} }} BIND(isLiteral(?o) AS ?literal) }} GROUP BY ?p ?literal"
        )
        relations: dict[str, int] = {}
        properties: dict[str, int] = {}
        for r in rows:
            target = properties if r["literal"].value == "true" else relations
            target[vocab_name(r["p"])] = int(r["n"].value)
        return {
            "objects": sum(types.values()),
            "relations": sum(relations.values()),
            "types": dict(sorted(types.items())),
            "relations_by_type": dict(sorted(relations.items())),
            "properties": dict(sorted(properties.items())),
            "generation": self.backend.generation(),
            "last_change": self.backend.last_change(),
        }

    # -- writing ---------------------------------------------------------------------------------
    def changes(self) -> Changes:
        """Stage several operations; commit them at once with :meth:`commit`."""
        return Changes(self)

    def commit(self, changes: Changes) -> int:
        """Validate and commit staged changes, with their history (one delta, one commit).

        :raises ValidationFailed: nothing stored."""
        return self.writes.commit(changes.delta, derived=changes.history())

    def _timed(self, valid_from: When, valid_to: When) -> Changes:
        start, end = parse_time(valid_from, "--valid-from"), parse_time(valid_to, "--valid-to")
        if start is not None and end is not None and end <= start:
            raise BadInput(
                f"--valid-to {format_time(end)} is not after --valid-from {format_time(start)}: "
                f"give {TIME_FORMS}, the end after the start"
            )
        changes = self.changes()
        changes.timed(start, end)
        return changes

    def create(
        self,
        type_name: str,
        properties: dict[str, Any] | None = None,
        id: str | None = None,
        *,
        valid_from: When = None,
        valid_to: When = None,
    ) -> Entity:
        """Create an entity, its facts valid from ``valid_from`` (default now) to
        ``valid_to`` (default open). :raises ValidationFailed: when it breaks a rule."""
        changes = self._timed(valid_from, valid_to)
        entity_id = changes.create(type_name, properties, id)
        self.commit(changes)
        return self.get(entity_id)

    def update(
        self,
        entity_id: str,
        properties: dict[str, Any] | None = None,
        unset: Iterable[str] = (),
        *,
        valid_from: When = None,
        valid_to: When = None,
    ) -> Entity:
        """Set (replacing every previous value) and unset properties; ``None`` unsets too.
        The values replaced stop holding when the new ones start (``valid_from``)."""
        changes = self._timed(valid_from, valid_to)
        changes.update(entity_id, properties, unset)
        self.commit(changes)
        return self.get(entity_id)

    def delete(
        self, entity_id: str, *, valid_to: When = None, purge: bool = False
    ) -> tuple[Entity, list[Relation]]:
        """Delete an entity and every relation touching it, in one atomic step: their
        versions end at ``valid_to`` (default now); ``purge`` erases them."""
        changes = self._timed(None, valid_to)
        changes.delete(entity_id, purge=purge)
        entity, touching = self.get(entity_id), self.relations(entity_id)
        self.commit(changes)
        return entity, touching

    def relate(
        self,
        from_id: str,
        rel: str,
        to_id: str,
        *,
        valid_from: When = None,
        valid_to: When = None,
    ) -> RelateOutcome:
        """Relate two entities. A many_to_one relation replaces the source's previous one,
        whose version ends when the new one starts. A ``valid_to`` before now records a
        fact that held only then (history only)."""
        changes = self._timed(valid_from, valid_to)
        outcome = changes.relate(from_id, rel, to_id)
        self.commit(changes)
        return outcome

    def unrelate(
        self, from_id: str, rel: str, to_id: str, *, valid_to: When = None, purge: bool = False
    ) -> Relation:
        """Remove a relation; its version ends at ``valid_to`` (default now), or with
        ``purge`` every version of it is erased. :raises NotFound: when there is none."""
        changes = self._timed(None, valid_to)
        relation = changes.unrelate(from_id, rel, to_id, purge=purge)
        self.commit(changes)
        return relation

    # -- facts in time ---------------------------------------------------------------------------
    def history(self, entity_id: str) -> list[dict[str, Any]]:
        """Every version of every fact about an entity, either end, with both times.

        :raises NotFound: no entity has that id now, and no version names it."""
        node = self.ids.iri(check_id(entity_id))
        versions = versions_about(self.backend, [node])
        versions += versions_about(self.backend, [node], incoming=True)
        if not versions:
            self.get(entity_id)  # NotFound for an unknown id; [] for a fact-less history
        ordered = sorted(
            {v.node: v for v in versions}.values(),
            key=lambda v: (v.valid_from, v.recorded, v.kind(), str(v.predicate), str(v.object)),
        )
        return [v.to_json(self.ids) for v in ordered]

    def _as_of(
        self, entity_id: str, as_of: When, recorded_as_of: When
    ) -> tuple[NamedNode, list[Version], dict[Term, str]]:
        """The versions about an entity valid at ``as_of`` as the store knew them at
        ``recorded_as_of``, and the types of the objects they name (then)."""
        at, known = when(as_of, recorded_as_of)
        node = self.ids.iri(check_id(entity_id))
        # by pattern, the entity's versions only: the cost grows with its history, not the store's
        versions = {
            v.node: v
            for v in [
                *versions_about(self.backend, [node]),
                *versions_about(self.backend, [node], incoming=True),
            ]
        }
        found = valid_at(versions.values(), at, known)
        own_types = [v for v in versions.values() if v.subject == node and v.predicate == RDF_TYPE]
        if not found and not own_types:
            self.get(entity_id)  # no such entity, now or ever: NotFound
        return node, found, self._types_then(found, at, known, {node: own_types})

    @contextmanager
    def at_time(self: _S, as_of: When = None, recorded_as_of: When = None) -> Iterator[_S]:
        """The graph as it was at ``as_of`` (default: ``recorded_as_of``), as the store knew
        it at ``recorded_as_of`` (default: now): a read-only session over a temporary
        in-memory store holding the schema and every fact valid then (:func:`facts_at`),
        with its own search index — so that ``traverse``, ``list`` and ``search`` read it
        exactly as they read the current graph. Records are current facts (their history
        is the git history of their files) and are not in it; nor are creation and change
        stamps, which have no history.

        :raises BadInput: a bad date, or ``as_of`` after ``recorded_as_of``."""
        import tempfile

        from ontoloom.store import scratch

        then = self.then(as_of, recorded_as_of)
        with tempfile.TemporaryDirectory(prefix="ontoloom-as-of-") as tmp:
            past = type(self)(scratch(then), Path(tmp), self.ids.base)
            try:
                yield past
            finally:
                past._close_index()

    def facts_then(self, at: dt.datetime, known: dt.datetime | None = None) -> list[Quad]:
        """Every fact with a version valid at ``at`` as the store knew it at ``known`` (None:
        now), as the plain triple of the facts graph, in order — what
        :func:`ontoloom.history.facts_at` finds by joining every version, read off the time
        index (the search index's table of versions, caught up with the store first): the
        versions begun by ``at``, not all of them. A graph with no data dir joins them."""
        if self.data_dir is None:
            return facts_at(self.backend, at, known)
        rows = self._current_index().facts_valid(
            microseconds(at), microseconds(known) if known is not None else None
        )
        return sorted({fact_of_row(*row) for row in rows}, key=str)

    def then(self, as_of: When = None, recorded_as_of: When = None) -> list[Quad]:
        """The quads of the graph as it was (see :meth:`at_time`): the schema graph as it is
        now, and the facts valid at ``as_of`` as known at ``recorded_as_of``."""
        at, known = when(as_of, recorded_as_of)
        facts = self.facts_then(at, known)
        # A fact may be dated before an end of it was written (a task recorded today, assigned
        # since October): an end with no type then keeps the type it has had (as `get` names
        # it), so that it is still an entity to list, traverse and search — with only the
        # facts that held then.
        typed = {q.subject for q in facts if q.predicate == RDF_TYPE}
        ends: set[Term] = {q.subject for q in facts if isinstance(q.subject, NamedNode)}
        ends |= {
            q.object
            for q in facts
            if isinstance(q.object, NamedNode) and self.ids.is_instance(q.object)
        }
        untyped = ends - typed
        named = {
            Quad(v.subject, RDF_TYPE, v.object, FACTS)
            for v in read_versions(self.backend, untyped, predicate=RDF_TYPE)
            if isinstance(v.subject, NamedNode) and isinstance(v.object, NamedNode)
        }
        untyped -= {q.subject for q in named}
        for i in range(0, len(untyped), 400):
            listed = " ".join(str(n) for n in sorted(untyped, key=str)[i : i + 400])
            for row in self.backend.select(
                f"SELECT ?n ?t WHERE {{ VALUES ?n {{ {listed} }} ?n {RDF_TYPE} ?t }}"
            ):
                if isinstance(row["n"], NamedNode) and isinstance(row["t"], NamedNode):
                    named.add(Quad(row["n"], RDF_TYPE, row["t"], FACTS))
        return [*self.backend.quads(SCHEMA_GRAPH), *facts, *sorted(named, key=str)]

    def _types_then(
        self,
        found: list[Version],
        at: dt.datetime,
        known: dt.datetime | None,
        read: dict[Term, list[Version]],
    ) -> dict[Term, str]:
        """The types of the objects ``found`` names, as of ``at`` (known at ``known``);
        ``read``: the type versions of some of them, already read."""
        ends = {v.object for v in found if v.kind() == "relation"} | {v.subject for v in found}
        rest = ends - set(read)
        typed = [v for n in ends & set(read) for v in read[n]]
        typed += versions_about(self.backend, rest, {RDF_TYPE}) if rest else []
        types = {v.subject: self._type_of([v.object]) or "" for v in valid_at(typed, at, known)}
        # A fact may be dated before its object was written (a task recorded today, assigned
        # since October): an end with no type then is named by its type now, or ever.
        untyped = ends - set(types)
        ever = {v.subject: self._type_of([v.object]) or "" for v in typed if v.subject in untyped}
        return {**ever, **self._types(untyped), **types}

    def _unknown_then(
        self, entity_id: str, at: dt.datetime | None, known: dt.datetime | None
    ) -> NotFound:
        return NotFound(
            f"no entity {shown_id(entity_id)} as of {format_time(at)}"
            + (f" as recorded by {format_time(known)}" if known else "")
            + f": see `ontoloom history {shown_id(entity_id)}`"
        )

    def describe_as_of(
        self, entity_id: str, as_of: When = None, recorded_as_of: When = None
    ) -> dict[str, Any]:
        """``get`` at a point in time: the entity's properties and relations valid at
        ``as_of`` (default: ``recorded_as_of``), as the store knew them at
        ``recorded_as_of`` (default: now)."""
        node, found, types = self._as_of(entity_id, as_of, recorded_as_of)
        if not any(v.subject == node for v in found):  # nothing of its own held then
            known = parse_time(recorded_as_of, "--recorded-as-of")
            raise self._unknown_then(entity_id, parse_time(as_of, "--as-of") or known, known)
        pairs: list[tuple[Term, Term]] = [
            (v.predicate, v.object) for v in found if v.subject == node
        ]
        entity = self._entity(node, pairs).to_json()
        entity.update(
            {"type": entity["type"] or types.get(node, ""), "created": None, "updated": None}
        )
        relations = self._relations_of(found, types)
        entity["relations"] = {
            "outgoing": [r.to_json() for r in relations if r.from_id == entity_id],
            "incoming": [r.to_json() for r in relations if r.from_id != entity_id],
        }
        entity["as_of"] = format_time(
            parse_time(as_of, "--as-of") or parse_time(recorded_as_of, "--recorded-as-of")
        )
        entity["recorded_as_of"] = format_time(parse_time(recorded_as_of, "--recorded-as-of"))
        return entity

    def relations_as_of(
        self,
        entity_id: str,
        rel: str | None = None,
        direction: str = "both",
        *,
        as_of: When = None,
        recorded_as_of: When = None,
    ) -> list[Relation]:
        """:meth:`relations` at a point in time (see :meth:`describe_as_of`)."""
        if direction not in ("out", "in", "both"):
            raise BadInput(f"direction must be out, in or both, not {direction!r}")
        wanted = self.known_relation(rel).iri if rel else None
        node, found, types = self._as_of(entity_id, as_of, recorded_as_of)
        found = [
            v
            for v in found
            if (wanted is None or v.predicate == wanted)
            and (direction != "out" or v.subject == node)
            and (direction != "in" or v.object == node)
        ]
        return self._relations_of(found, types)

    def _relations_of(self, found: list[Version], types: dict[Term, str]) -> list[Relation]:
        out = {
            Relation(
                from_id=self.ids.id_of(v.subject),
                rel=vocab_name(v.predicate),
                to_id=self.ids.id_of(v.object),
                from_type=types.get(v.subject),
                to_type=types.get(v.object),
                open=is_open_relation(v.predicate),
            )
            for v in found
            if v.kind() == "relation" and self.ids.is_instance(v.object)
        }
        return sorted(out, key=lambda r: (r.rel, r.from_id, r.to_id))
