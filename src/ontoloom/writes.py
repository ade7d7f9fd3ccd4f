"""The one door into the store: every change goes through :meth:`WritePath.commit`.

delta → the focus nodes it can affect (walked in both directions along every step a shape
takes) → validate the store *as if* the delta were applied → commit the delta as one atomic
store operation → run the commit listeners (search index, caches). An invalid delta commits
nothing. Nothing else calls the backend's ``apply``.

Exactness: the refusal set of a delta equals what full validation after the delta finds and
before it did not (violations; warnings never refuse). Each shape is checked by one of three
routes, decided once per schema from what the shape can read
(:mod:`ontoloom.shacl.reach`):

* **bounded** — the neighbourhood its validation reads, copied from the store into a scratch
  store; its size depends on the shapes, not on the graph;
* **unbounded** (``*``/``+`` paths) — the same, walked to closure: the whole region the path
  reaches, never a truncated copy;
* **global** (SPARQL that reads beyond ``$this``'s neighbourhood, SPARQL-based targets) —
  every target, against a copy of the whole store.

Most writes copy nothing: when each shape they check is decided by the quads around the
focus nodes (:mod:`ontoloom.shacl.direct`), those are read from the store itself with the delta
laid over it (:mod:`ontoloom.store.overlay`); a write that breaks something is validated the
bounded way, which tells new violations from known ones.

Acyclic relations are checked with the store's own property paths instead; a schema change
re-audits the whole store under the schema it makes.

A large delta (:data:`BULK_LOAD` quads and more) on a store that makes checkpoints takes the
journaled bulk load instead of one store request: loaded into a checkpoint of the store,
validated the same way, and switched in whole (:meth:`WritePath._commit_by_checkpoint`,
:mod:`ontoloom.store.journal`). Still this door, and still all or nothing.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import chain
from typing import cast

from ontoloom.errors import (
    BadInput,
    Busy,
    CommitConflict,
    ReadOnly,
    Stopped,
    ValidationFailed,
)
from ontoloom.findings import Finding
from ontoloom.model import IdSpace
from ontoloom.reporting import finding_from_result
from ontoloom.schema import RelationSpec, Schema, is_acyclic
from ontoloom.secret_text import NO_SECRETS_JUDGES, holds_secret, secret_property, secret_value
from ontoloom.shacl import Result
from ontoloom.shacl.components.sparql import SPARQLConstraintComponent
from ontoloom.shacl.cycles import strong_components
from ontoloom.shacl.direct import Around
from ontoloom.shacl.native import digest
from ontoloom.shacl.neighbourhood import Changed, Walker
from ontoloom.shacl.reach import ANY, GLOBAL, UNBOUNDED, Reach, merge, reach_of
from ontoloom.shacl.redact import redacted
from ontoloom.shacl.shapes import Shape, ShapesError, UnsupportedFeatures
from ontoloom.store import lock_timeout, scratch, write_ids
from ontoloom.store.base import Backend, Checkpoints, Delta
from ontoloom.store.journal import step
from ontoloom.store.overlay import NotReadable, Overlay
from ontoloom.store.rdfio import check_literal_sizes
from ontoloom.store.reads import ReadSet, relation_key
from ontoloom.terms import BlankNode, NamedNode, Quad, Term
from ontoloom.terms import node as held
from ontoloom.vocab import (
    HISTORY,
    META,
    OL,
    RDF_STATEMENT,
    RDF_SUBJECT,
    SCHEMA_GRAPH,
    VERSION_BASE,
    VERSION_PREDICATES,
)

__all__ = ["Cycle", "WritePath", "strong_components"]


NO_SECRETS = NamedNode(OL + "NoSecrets")

_LARGE = 1000  # focus nodes beyond which the scratch store is validated whole
_COPY_ALL = 20  # a bulk delta copies the whole store when it has ≤ this many quads per node
COMMIT_ATTEMPTS = 8  # validations of one delta, at least, when other writers keep committing first
_BACKOFF_CAP = 0.32  # seconds: the longest wait apart between two attempts
# Quads from which a delta takes the journaled bulk load, where the store offers it
# (``ONTOLOOM_BULK_LOAD`` sets another size: tests take every import that way).
BULK_LOAD = 10_000
# A bulk delta into a store holding at most this many times its quads is validated whole
# (:meth:`WritePath._whole_difference`).
_WHOLE = 2


def bulk_load_size() -> int:
    try:
        return max(1, int(os.environ.get("ONTOLOOM_BULK_LOAD", BULK_LOAD)))
    except ValueError:
        return BULK_LOAD


Listener = Callable[[Delta, int], None]


@dataclass(frozen=True)
class _Group:
    """Shapes checked together: one reach, one set of focus nodes."""

    reach: Reach
    shapes: frozenset[Term]


_Plan = tuple[_Group, list[Term] | None]  # a group and its focus nodes (None: every target)


@dataclass(frozen=True)
class Cycle:
    """A cycle a delta closes in an acyclic relation, and the nodes that were on no cycle
    before it (the new violations)."""

    spec: RelationSpec
    path: tuple[Term, ...]  # [a, b, …, a]
    new_nodes: frozenset[Term]


def _secret_names(quads: Iterable[Quad], ids: IdSpace) -> list[Finding]:
    """A node or graph whose IRI holds a secret breaks the secret rule, for every
    front end alike. ol:NoSecrets judges what a triple says of its subject (each property's
    name, each value, IRIs included); the subject's and the graph's own names are judged
    here, as a write by id is (``model.check_id``): a name is shown wherever its node is.
    A finding per node (its focus, like any, redacted), so that rebuild drops the record."""
    judged: dict[NamedNode, bool] = {}
    found: dict[object, str] = {}
    quads = quads if isinstance(quads, (set, frozenset, list, tuple)) else list(quads)
    # Each graph once (an import names a few graphs in all its quads), then each subject
    # once; the subjects of a graph whose name holds a secret are found only when one does.
    for graph in {quad.graph_name for quad in quads}:
        if isinstance(graph, NamedNode):
            judged[graph] = holds_secret(graph.value)  # as for an IRI value
    bad_graphs = {graph for graph, holds in judged.items() if holds}
    for subject in {quad.subject for quad in quads}:
        if isinstance(subject, NamedNode):
            if subject not in judged:
                judged[subject] = holds_secret(subject.value)
            if judged[subject]:
                found[subject] = "its name"
    if bad_graphs:
        for quad in quads:
            if quad.graph_name in bad_graphs:
                found.setdefault(quad.subject, "its graph's name")
    return [
        Finding(
            focus=ids.id_of(node) if isinstance(node, NamedNode) else str(node),
            path=None,
            constraint="forbidden",
            value=None,
            message=(
                f"{whose} holds a token, key or password, and a name is shown wherever its node is: "
                "secrets are never stored in the graph; name it another way and keep the "
                "secret in a vault (secret_ref)"
            ),
        )
        for node, whose in found.items()
    ]


class WritePath:
    def __init__(
        self, backend: Backend, schema: Schema, ids: IdSpace, schema_at: int | None = None
    ) -> None:
        self._backend = backend
        self._walker = Walker(backend)
        # While a commit validates, its reads go through a recorder (:mod:`ontoloom.store.reads`),
        # in this thread only: the commit's precondition covers what they read.
        self._local = threading.local()
        self.schema = schema
        self.ids = ids
        self.after_commit: list[Listener] = []
        # The schema generation ``schema`` was read at (None: not known, read on first use):
        # a commit is validated under the store's current schema, whoever changed it.
        self.schema_at = schema_at
        self.on_schema: list[Callable[[Schema], None]] = []  # told of a schema read again

    @property
    def backend(self) -> Backend:
        recorder = getattr(self._local, "backend", None)
        return self._backend if recorder is None else recorder

    @backend.setter
    def backend(self, backend: Backend) -> None:
        self._backend = backend
        self._walker = Walker(backend)

    @property
    def walker(self) -> Walker:
        recorder = getattr(self._local, "walker", None)
        return self._walker if recorder is None else recorder

    @contextmanager
    def _recording(self, reads: ReadSet) -> Iterator[None]:
        """Validation in this block reads through a recorder noting into ``reads`` what it read,
        where the store offers one (a store many gateways commit to); elsewhere ``reads`` stays
        as it is (the store's writer lock orders the commits)."""
        make = getattr(self._backend, "recording", None)
        if make is None:
            yield
            return
        recorder = make(reads)
        self._local.backend, self._local.walker = recorder, Walker(recorder)
        try:
            yield
        finally:
            del self._local.backend, self._local.walker

    def _note_relation(self, predicate: Term) -> None:
        """Validation read every quad of ``predicate`` (a property path over it)."""
        recorder = getattr(self._local, "backend", None)
        if recorder is not None:
            recorder.reads.keys.add(relation_key(predicate))

    @contextmanager
    def noting_stops(self, *, stored: str, nothing: str) -> Iterator[None]:
        """A signal stopping the block (:class:`~ontoloom.errors.Stopped`: Ctrl-C) says what
        the store holds, ``stored`` or ``nothing``, which the command line prints. For work that
        commits once (an import): the generation tells, whenever in the block the signal
        came — before the commit, inside it (a bulk load's switch finishes first) or after."""
        before = self.backend.generation()
        try:
            yield
        except Stopped as exc:
            exc.note = stored if self.backend.generation() != before else nothing
            raise

    # -- the door -------------------------------------------------------------------------------
    def commit(
        self,
        delta: Delta,
        tolerate: Callable[[Finding], bool] | None = None,
        *,
        trusted: str | None = None,
        write_id: str | None = None,
        derived: Delta | None = None,
    ) -> int:
        """Validate and commit ``delta``; return the new store generation.

        ``tolerate`` accepts findings the caller reports itself (rebuild: orphaned targets).
        ``trusted`` names why a caller may skip validation (a documented trusted path); the
        delta still goes through here, so the listeners see it. ``write_id`` is stored with
        the commit (default: the next of the block in force, numbered from its second
        commit on, :func:`ontoloom.store.write_ids.take`); every attempt carries it.
        ``derived``: what ontoloom's own code made of ``delta`` — its history
        (:class:`ontoloom.history.Timeline`), versions in the history graph — committed with
        it in the same store operation, and validated only as far as a shape can read it
        (:meth:`_reads_derived`): most writes judge its values by the secret rule alone.

        :raises ValidationFailed: with the findings; nothing is stored.
        :raises OutcomeUnknown: whether it committed cannot be told now (never retried).
        """
        source = delta.normalized()  # what the caller wrote
        if derived is not None and not derived.is_empty():
            derived = derived.normalized()
            delta = Delta(
                adds=source.adds | derived.adds, removes=source.removes | derived.removes
            ).normalized()
        else:
            derived, delta = None, source
        if delta.is_empty():
            return self.backend.generation()
        if any(q.graph_name == META for q in (*delta.adds, *delta.removes)):
            raise BadInput(
                "the bookkeeping graph is written by the store alone: leave it out of the change"
            )
        check_literal_sizes(delta.adds, "the change")  # the limit a file read has, too
        if not self.backend.writable:
            raise ReadOnly(
                "this graph is open read-only: nothing was stored; open it with "
                "Graph.open(..., write=True) to write"
            )
        backend = self.backend
        if (
            len(delta) >= bulk_load_size()
            and isinstance(backend, Checkpoints)
            and backend.can_checkpoint()
        ):
            generation = self._commit_by_checkpoint(
                backend, delta, tolerate, trusted, write_id or write_ids.take()
            )
            for listener in self.after_commit:
                listener(delta, generation)
            return generation
        # A writer that keeps losing the race waits as long as it would wait for the lock
        # (ONTOLOOM_LOCK_TIMEOUT), and at least COMMIT_ATTEMPTS tries, then says "busy".
        write_id = write_id or write_ids.take()
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            # Validated against this generation, committed only while it still stands:
            # another gateway writing to the same store in between makes it check again.
            # The schema is part of that precondition: one another gateway changed since
            # it was read here is read again before validating.
            # On a store that offers it, the precondition is narrower: what the validation
            # read has not changed since this generation (writes elsewhere in the graph do
            # not count), and neither has the schema (ontoloom.store.reads).
            expected, schema_at = self.backend.versions()
            if schema_at != self.schema_at:
                self._read_schema(schema_at)
            reads = ReadSet(schema_at)
            if trusted is None:
                # the derived part is validated with the rest only where a shape reads it
                read = derived is None or self._reads_derived(derived)
                with self._recording(reads):
                    findings = self._findings(delta if read else source, tolerate)
                if findings:
                    raise ValidationFailed(findings)
            else:
                reads.whole = True  # nothing was validated: as before, the whole store
            try:
                generation = self.backend.apply(delta, expected, write_id=write_id, reads=reads)
                break
            except CommitConflict:
                waited = time.monotonic() - started
                if attempt >= COMMIT_ATTEMPTS and waited >= lock_timeout():
                    raise Busy(
                        f"other writers kept committing first ({attempt} attempts in "
                        f"{waited:.1f} s, each validated again): nothing was stored; try "
                        "again, or wait longer with ONTOLOOM_LOCK_TIMEOUT"
                    ) from None
                # Writers that collided wait apart before validating again (jittered,
                # doubling up to a cap): retrying in step would collide again.
                time.sleep(random.uniform(0, min(_BACKOFF_CAP, 0.01 * 2**attempt)))
        for listener in self.after_commit:
            listener(delta, generation)
        return generation

    def _reads_derived(self, derived: Delta) -> bool:
        """Whether validating ``derived`` with the delta it was made from could find
        anything validating that delta alone does not — then it is validated with it.

        ``derived`` is versions (:mod:`ontoloom.history`): nodes named under their own base in
        the history graph, stating a fact (already in the delta, or an existing relation's
        ends) and times ontoloom wrote. No shape reads them when the schema is blind to
        versions (:attr:`blind_to_versions`) and no quad names a version node as its object
        (no walk reaches one); then only ol:NoSecrets targets them — every node — and its
        judges are asked of each derived quad here, as its SELECTs would be, and each
        version node's name as :func:`_secret_names` asks a subject's. Exact: anything
        short of that (another graph, another node, a judge that finds a secret) is
        validated whole, as any delta."""
        if not self.blind_to_versions:
            return True
        quads = (*derived.adds, *derived.removes)
        if any(q.graph_name != HISTORY for q in quads):
            return True
        subjects = {q.subject for q in quads}
        nodes = {n for n in subjects if isinstance(n, NamedNode) and _version_node(n)}
        if len(nodes) < len(subjects):
            return True
        paths = {q.predicate for q in derived.adds}
        values = {q.object for q in derived.adds}
        if any(map(_secret_path, paths)) or any(map(_secret_value, values)):
            return True
        if any(holds_secret(n.value) for n in nodes):
            return True
        # A version stated here for the first time has a name no quad can hold yet (a digest
        # of its fact and the commit's time); one that was stored before might be named by
        # some quad (an import can name anything): a walk could then reach it.
        stored = nodes - {q.subject for q in derived.adds if q.predicate == RDF_SUBJECT}
        return any(True for _ in self.backend.around(stored, incoming=True))

    @cached_property
    def blind_to_versions(self) -> bool:
        """Whether no shape but ol:NoSecrets can read a version's quads
        (:meth:`_reads_derived`): none is global, none selects a version node (as an instance
        of rdf:Statement or a superclass the schema gives it, by its name, as the subject of
        a version's predicate, by a SPARQL-based target), none selects the objects of a
        version's predicate, no walk steps back along one (or any predicate) to a version
        node; and ol:NoSecrets is the judged secret rule, nothing more."""
        shapes = self.schema.shapes
        hierarchy = self.schema.hierarchy
        for top in shapes.targeted():
            reach = self.reaches[top.node]
            if top.node == NO_SECRETS and _judged_only(top):
                continue
            if reach.is_global or reach.focus_incoming & VERSION_PREDICATES:
                return False
            if any(
                s.backwards and (s.predicate == ANY or s.predicate in VERSION_PREDICATES)
                for s in reach.steps
            ):
                return False
            for target in top.targets:
                term = target.term
                if (
                    target.kind in ("sparqlTarget", "targetSubjectsOf", "targetObjectsOf")
                    and (target.kind == "sparqlTarget" or term in VERSION_PREDICATES)
                ) or (target.kind == "targetClass" and RDF_STATEMENT in hierarchy.subclasses(term)):
                    return False
                if target.kind == "targetNode" and _version_node(term):
                    return False
                if target.kind not in (
                    "targetClass",
                    "targetNode",
                    "targetSubjectsOf",
                    "targetObjectsOf",
                    "sparqlTarget",
                ):
                    return False
        return True

    def _read_schema(self, schema_at: int) -> None:
        """Read the store's schema again (it is at ``schema_at``), and tell the listeners."""
        if self.schema_at is not None or schema_at != 0:
            self.schema = Schema.load([q.triple for q in self.backend.quads(SCHEMA_GRAPH)])
            for name in ("reaches", "groups", "blind_to_versions"):  # made from the schema
                self.__dict__.pop(name, None)
            for listener in self.on_schema:
                listener(self.schema)
        self.schema_at = schema_at

    def _commit_by_checkpoint(
        self,
        backend: Checkpoints,
        delta: Delta,
        tolerate: Callable[[Finding], bool] | None,
        trusted: str | None,
        write_id: str,
    ) -> int:
        """The journaled bulk load (shared/DESIGN.md, "Writes"): a checkpoint of the live
        store with the delta bulk-loaded into it, validated with the same evaluator and the
        same focus nodes as any write — global shapes on the checkpoint itself
        (:meth:`new_violations` with ``applied``) — then switched in whole (:mod:`ontoloom.store.journal`: a crash at any step leaves
        the old store or the new one). A refused delta, an error or a signal drops the
        checkpoint: the live store is never touched. The data dir's writer lock is held
        throughout (the backend is open read-write), so nothing else commits meanwhile."""
        expected = self.backend.generation()
        checkpoint = backend.checkpoint(delta, write_id=write_id)
        try:
            step("loaded")
            if trusted is None:
                findings = self._findings(delta, tolerate, applied=checkpoint)
                if findings:
                    raise ValidationFailed(findings)
            step("validated")
            return backend.switch(checkpoint, expected)
        finally:
            backend.drop(checkpoint)  # a no-op once switched in

    def _findings(
        self,
        delta: Delta,
        tolerate: Callable[[Finding], bool] | None,
        applied: Backend | None = None,
    ) -> list[Finding]:
        """What ``delta`` breaks, less what the caller tolerates (``applied``: a store that
        holds the store and the delta already — see :meth:`new_violations`)."""
        findings = _secret_names(delta.adds, self.ids)
        if self._touches_schema(delta):
            findings += self._schema_findings(delta)
        else:
            findings += self.check(delta, applied)
        return [f for f in findings if tolerate is None or not tolerate(f)]

    # -- what a delta breaks ----------------------------------------------------------------------
    def check(self, delta: Delta, applied: Backend | None = None) -> list[Finding]:
        """What would break if ``delta`` (not touching the schema) were applied."""
        shapes = self.schema.shapes
        findings = {
            finding_from_result(r, self.ids, shapes)
            for r in redacted(self.new_violations(delta, applied), shapes)
        }
        findings |= {self._cycle_finding(c) for c in self.new_cycles(delta)}
        return sorted(findings, key=lambda f: (f.focus, f.path or "", f.constraint, str(f.value)))

    def new_violations(self, delta: Delta, applied: Backend | None = None) -> list[Result]:
        """The shape violations full validation would find after ``delta`` and not before
        (acyclicity aside: see :meth:`new_cycles`).

        ``applied``: a whole store holding the store and ``delta`` already (a bulk load's
        checkpoint). Where a shape is global (validated against the whole store), it is
        validated there in place, instead of a copy of the whole store in memory; otherwise
        the focus nodes are validated on a copy of what they read, as for any write — reads
        from a store in memory cost a tenth of those from one on disk (150k quads iterated:
        0.12 s against 1.2 s), which outweighs making the copy. The same focus nodes either
        way, found on the store before the delta."""
        delta = delta.normalized()
        if applied is not None and self._whole_is_cheaper(delta):
            return self._whole_difference(applied, delta)
        changed = Changed.of(delta)
        if not changed.nodes():
            return []
        plans = self._focus(changed)
        if applied is not None and all(focus is not None for _, focus in plans):
            applied = None
        if applied is None and self._decided_around(delta, plans):
            return []
        validator, hierarchy = self.schema.write_validator, self.schema.hierarchy
        copied: set[Quad] | None = None
        if applied is None:
            copied = self._copied(plans, changed)
            whole = any(focus is None for _, focus in plans)
            fresh = scratch(copied)
            fresh.patch(delta)
            after: Backend = fresh
        else:
            after, whole = applied, True
        before: Backend | None = None  # built when a violation is found: most writes have none
        new: list[Result] = []
        for group, focus in plans:
            found = self._violations(after, focus, group, hierarchy, validator)
            if found:
                if before is None:
                    # A store not validated in place is read into a local copy: one engine
                    # evaluates both.
                    local = whole and self.backend.validates_in_place
                    if local:
                        before = self.backend
                    else:
                        before = scratch(self.walker.everything() if copied is None else copied)
                # Only what the delta breaks is refused: a violation the store already had
                # (data from before a schema change) must not block unrelated writes.
                known = set(self._violations(before, focus, group, hierarchy, validator))
                new += [r for r in found if r not in known]
        return list(dict.fromkeys(new))

    def _whole_is_cheaper(self, delta: Delta) -> bool:
        """Whether a bulk delta is validated as full validation after it against full
        validation before it (:meth:`_whole_difference`) rather than by its focus nodes: when
        the store before it holds at most :data:`_WHOLE` times its quads (an import into an
        empty or small store), where finding the focus nodes, walking their neighbourhoods
        and copying them costs more, per quad, than the whole-store queries themselves."""
        changes_data = any(q.graph_name != META for q in (*delta.adds, *delta.removes))
        return changes_data and self._holds_at_most(_WHOLE * len(delta))

    def _whole_difference(self, applied: Backend, delta: Delta) -> list[Result]:
        """The violations full validation finds on ``applied`` (the store with the delta
        applied: a bulk load's checkpoint) and not on the store before it — the refusal set
        by its definition (module doc). Each shape is evaluated once over every target: from
        the quads in memory where its units have readers (the store before is at most
        :data:`_WHOLE` times the delta, which is in memory already), else as whole-store
        queries on the checkpoint; the store before is validated only when something was
        found, the same way."""
        validator, hierarchy = self.schema.write_validator, self.schema.hierarchy
        everything = self.walker.everything()  # the store before: at most _WHOLE × the delta
        # Every quad after the delta, as written, in memory: the shapes whose every unit has
        # a reader over quads (:mod:`ontoloom.shacl.direct`, ``ontoloom validate``'s route) are
        # decided there — no SPARQL row per triple — and only the others ask the checkpoint.
        removes = delta.removes
        kept = (q for q in everything if q not in removes) if removes else everything
        whole = Around.whole(chain(kept, delta.adds))
        found = validator.validate(applied, hierarchy=hierarchy, whole=whole).violations
        del whole
        if not found:
            return []
        before = self.backend if self.backend.validates_in_place else scratch(everything)
        known = set(
            validator.validate(
                before, hierarchy=hierarchy, whole=Around.whole(everything)
            ).violations
        )
        return list(dict.fromkeys(r for r in found if r not in known))

    def _decided_around(self, delta: Delta, plans: list[_Plan]) -> bool:
        """Whether validating the focus nodes on the store itself, with ``delta`` laid over
        it (:class:`~ontoloom.store.overlay.Overlay`), finds no violation. That reads a few
        quads around each focus node where a scratch copy first walks their whole
        neighbourhood, and answers the same where it answers at all. False when it finds
        one (the scratch copy then tells new from known), or when a shape asks the view for
        more than those quads, or where no view is offered: blank nodes, global shapes,
        literals kept in another form than written."""
        for _, focus in plans:
            if focus is None or len(focus) > _LARGE or any(isinstance(f, BlankNode) for f in focus):
                return False
        view = Overlay.of(self.backend, delta)
        if view is None:
            return False
        validator, hierarchy = self.schema.write_validator, self.schema.hierarchy
        data = cast(Backend, view)
        try:
            return not any(
                self._violations(data, focus, group, hierarchy, validator) for group, focus in plans
            )
        except NotReadable:
            return False

    def scope(self, changed: Changed) -> tuple[list[_Plan], set[Quad]]:
        """Each group of shapes with the focus nodes a change can affect (None: every
        target), and what validating them reads (the whole store when a group is global)."""
        plans = self._focus(changed)
        return plans, self._copied(plans, changed)

    def _focus(self, changed: Changed) -> list[_Plan]:
        return [
            (
                group,
                None if group.reach.is_global else self.walker.focus_nodes(group.reach, changed),
            )
            for group in self.groups
        ]

    def _copied(self, plans: list[_Plan], changed: Changed) -> set[Quad]:
        """What validating the plans' focus nodes reads (the whole store when a group is
        global)."""
        if any(focus is None for _, focus in plans):
            return self.walker.everything()
        nodes = len(changed.nodes())
        if nodes > _LARGE and self._holds_at_most(_COPY_ALL * nodes):
            # A bulk delta (an import) into a store not much larger than it: copying the whole
            # store (a superset of every neighbourhood, so just as exact) is one scan, where
            # walking the neighbourhoods is a query per batch of nodes.
            return self.walker.everything()
        copied: set[Quad] = set()
        for group, focus in plans:
            assert focus is not None
            copied |= self.walker.neighbourhood(
                group.reach, [*focus, *changed.nodes()], changed.removed
            )
        return copied

    def _holds_at_most(self, limit: int) -> bool:
        """Whether the store holds at most ``limit`` quads (reads at most limit + 1)."""
        query = f"SELECT (COUNT(*) AS ?n) WHERE {{ {{ SELECT * WHERE {{ ?s ?p ?o }} LIMIT {limit + 1} }} }}"
        row = next(iter(self._backend.select(query)))  # how to copy, not what: no read noted
        return int(row["n"].value) <= limit

    def _violations(self, data, focus, group, hierarchy, validator) -> list[Result]:
        if focus is not None and not focus:
            return []
        if focus is not None and (
            len(focus) > _LARGE or any(isinstance(f, BlankNode) for f in focus)
        ):
            # A bulk delta (an import), or blank nodes (which a query cannot name, and
            # Oxigraph's pre-binding of them is not exact under BIND): validate the scratch
            # store whole. Only the focus nodes' neighbourhoods are complete there, so only
            # their results count: a nested shape's result by the target it was reached from.
            wanted = set(focus)
            report = validator.validate(data, hierarchy=hierarchy, only=group.shapes)
            return [
                r for r in report.violations if (r.focus if r.root is None else r.root) in wanted
            ]
        report = validator.validate(data, focus, hierarchy=hierarchy, only=group.shapes)
        return report.violations

    # -- routes ------------------------------------------------------------------------------------
    @cached_property
    def reaches(self) -> dict[Term, Reach]:
        """What each targeted shape can read, acyclicity aside (checked by :meth:`new_cycles`)."""
        shapes = self.schema.shapes
        return {top.node: reach_of(shapes, top, is_acyclic) for top in shapes.targeted()}

    @cached_property
    def groups(self) -> list[_Group]:
        """Bounded shapes of one depth share one walk; every unbounded shape walks alone;
        global shapes are validated together against the whole store."""
        by_key: dict[object, list[Term]] = defaultdict(list)
        reach_by_key: dict[object, list[Reach]] = defaultdict(list)
        for node, reach in self.reaches.items():
            key: object
            if reach.route == GLOBAL:
                key = GLOBAL
            elif reach.route == UNBOUNDED:
                key = (UNBOUNDED, node)
            else:
                key = reach.depth
            by_key[key].append(node)
            reach_by_key[key].append(reach)
        return [
            _Group(merge(reach_by_key[key]), frozenset(nodes))
            for key, nodes in sorted(by_key.items(), key=lambda kv: str(kv[0]))
        ]

    # -- schema changes -----------------------------------------------------------------------------
    @staticmethod
    def _touches_schema(delta: Delta) -> bool:
        return any(q.graph_name == SCHEMA_GRAPH for q in (*delta.adds, *delta.removes))

    def _schema_findings(self, delta: Delta) -> list[Finding]:
        """A delta that changes the schema: its shapes must be valid SHACL, and the whole
        store after it is audited under the schema it makes, against the store before it
        under the schema before it."""
        from ontoloom.extensions import builtin_overrides, schema_problems

        removed = {q.triple for q in delta.removes if q.graph_name == SCHEMA_GRAPH}
        added = [q.triple for q in delta.adds if q.graph_name == SCHEMA_GRAPH]
        problems = builtin_overrides(added) or schema_problems(added)
        if problems:
            return problems
        extensions = [t for t in self.schema.extensions if t not in removed] + added
        try:
            after_schema = Schema.load(extensions)
            _refuse_rules(after_schema)
            everything = self.walker.everything()
            after = scratch(everything)
            after.patch(delta)
            before_store = self.backend if self.backend.validates_in_place else scratch(everything)
            before_results = _audit(before_store, self.schema)
            known = {_key(r) for r in before_results}
            broken = [r for r in _audit(after, after_schema) if _key(r) not in known]
        except UnsupportedFeatures as exc:
            names = "; ".join(exc.describe(u) for u in exc.items)
            raise BadInput(
                f"{names}: ontoloom does not evaluate that, so no write could be checked "
                "against it; remove it from the shapes (or validate such files with "
                "`ontoloom validate --allow-unsupported`)"
            ) from None
        except ShapesError as exc:
            raise BadInput(f"the shapes graph is not well-formed: {exc}") from None
        shapes = after_schema.shapes
        return [finding_from_result(r, self.ids, shapes) for r in redacted(broken, shapes)]

    # -- acyclic relations ---------------------------------------------------------------------------
    def new_cycles(self, delta: Delta) -> list[Cycle]:
        """For each acyclic relation, a cycle ``delta`` closes through nodes that were on no
        cycle before (``check`` reports those nodes' violations as one cycle finding)."""
        delta = delta.normalized()
        found: list[Cycle] = []
        acyclic = {spec.iri: spec for spec in self.schema.relations.values() if spec.acyclic}
        if not acyclic:
            return found
        # One pass over the delta for every acyclic relation (a bulk load's million quads
        # are read once, not once per relation).
        added: dict[Term, set[tuple[Term, Term]]] = defaultdict(set)
        removed: dict[Term, set[tuple[Term, Term]]] = defaultdict(set)
        for quads, into in ((delta.adds, added), (delta.removes, removed)):
            for q in quads:
                p = q.predicate
                if p in acyclic:
                    into[p].add((held(q.subject), held(q.object)))
        for iri, spec in acyclic.items():
            adds = sorted(added.get(iri, ()), key=str)
            if not adds:
                continue
            self._note_relation(spec.iri)  # property paths over the whole relation
            removes = removed.get(iri, set())
            cycle = self._new_cycle(spec, adds, removes)
            if cycle is not None:
                found.append(cycle)
        return found

    def _new_cycle(
        self, spec: RelationSpec, adds: list[tuple[Term, Term]], removes: set[tuple[Term, Term]]
    ) -> Cycle | None:
        if len(adds) == 1 and not removes and adds[0][0] != adds[0][1]:
            # One new edge a → b closes a cycle iff b already reaches a: one property-path ASK.
            a, b = adds[0]
            # (One step, then `*`: `+` from a pre-bound start or back to it fails on Virtuoso.)
            reach = f"ASK {{ ?b {spec.iri} ?next . ?next {spec.iri}* ?a }}"
            if not self._backend.ask(reach, {"a": a, "b": b}):  # noted: the relation
                return None
        successors = self._successors(spec, adds, removes)
        # A node is on a cycle through a new edge a → b iff b reaches it and it reaches a:
        # iff a, b and it are one strongly connected component (one pass over the edges,
        # where a walk per new edge was quadratic in a long chain).
        component = strong_components(successors)
        members: dict[int, set[Term]] = defaultdict(set)
        for n, c in component.items():
            members[c].add(n)
        on_new: set[Term] = set()
        for c in {component[a] for a, b in adds if component[a] == component[b]}:
            on_new |= members[c]
        if not on_new:
            return None
        ask = f"ASK {{ ?n {spec.iri} ?next . ?next {spec.iri}* ?n }}"  # ?n p+ ?n
        fresh = {n for n in on_new if not self._backend.ask(ask, {"n": n})}
        if not fresh:
            return None  # every node was on a cycle before: nothing new is broken
        node = min(fresh, key=str)
        for a, b in adds:
            if component[a] == component[b] == component[node]:  # b reaches node, node a
                there = _path(successors, b, node)
                back = _path(successors, node, a)
                if there is not None and back is not None:
                    return Cycle(spec, (a, *there, *back[1:]), frozenset(fresh))
        raise AssertionError("a node on a new cycle has no path around it")

    def _successors(
        self, spec: RelationSpec, adds: list[tuple[Term, Term]], removes: set[tuple[Term, Term]]
    ) -> dict[Term, list[Term]]:
        """The relation's edges (store + delta) reachable from the new edges, level by level."""
        successors: dict[Term, list[Term]] = defaultdict(list)
        new_edges = set(adds)
        for a, b in adds:
            successors[a].append(b)
        fetched: set[Term] = set()
        frontier = {b for _, b in adds} | {a for a, _ in adds}
        while frontier:
            batch = sorted(frontier - fetched, key=str)
            fetched.update(batch)
            found = set()
            for quad in self.backend.around(batch, spec.iri):
                edge = (held(quad.subject), held(quad.object))
                if edge not in removes and edge not in new_edges:
                    successors[edge[0]].append(edge[1])
                    found.add(edge[1])
            frontier = found - fetched
        return successors

    def _cycle_finding(self, cycle: Cycle) -> Finding:
        ids = [self.ids.id_of(n) for n in cycle.path]
        arrow = " → ".join(ids)
        name = cycle.spec.name
        return Finding(
            focus=ids[0],
            path=name,
            constraint="acyclic",
            value=ids[1] if len(ids) > 1 else None,
            message=(
                f"{name} is acyclic, and this would close the cycle {arrow}; "
                f"unrelate one of these {name} links first"
            ),
            kind="cycle",
            cycle=tuple(ids),
        )


def _version_node(term: Term) -> bool:
    return isinstance(term, NamedNode) and term.value.startswith(VERSION_BASE)


def _judged_only(shape: Shape) -> bool:
    """Whether ``shape`` is the secret rule as shapes/core.ttl writes it: SPARQL
    constraints that each have a judge (:data:`ontoloom.secret_text.NO_SECRETS_JUDGES`),
    nothing else."""
    return (
        shape.path is None
        and not shape.properties
        and bool(shape.constraints)
        and set(NO_SECRETS_JUDGES.values()) == {secret_property, secret_value}
        and all(
            isinstance(c, SPARQLConstraintComponent) and digest(c.select) in NO_SECRETS_JUDGES
            for c in shape.constraints
        )
    )


# ol:NoSecrets' two judges: one judges a triple by its predicate alone, the other by its
# object alone (so each is asked once per term, and remembered: most terms recur).
@lru_cache(maxsize=8192)
def _secret_path(path: Term) -> bool:
    return secret_property(path, path) is not None


@lru_cache(maxsize=8192)
def _secret_value(value: Term) -> bool:
    return secret_value(value, value) is not None


def _path(edges: dict[Term, list[Term]], start: Term, goal: Term) -> list[Term] | None:
    """The shortest path start → goal (breadth first, in a stable order)."""
    parent: dict[Term, Term | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = [node]
            while (up := parent[path[-1]]) is not None:
                path.append(up)
            return list(reversed(path))
        for nxt in sorted(edges.get(node, ()), key=str):
            if nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return None


def _refuse_rules(schema: Schema) -> None:
    """SHACL rules infer triples; the store never runs them, so it does not take them."""
    from ontoloom.shacl.rules import RuleSet

    with_rules = RuleSet.shapes_with_rules(schema.shapes)
    if with_rules:
        raise BadInput(
            f"shape {schema.shapes.label(with_rules[0])} has sh:rule: the store never runs "
            "SHACL rules (they would add triples no write made); remove the rules, or run "
            "them on files with `ontoloom validate -a`"
        )


def _audit(data: Backend, schema: Schema) -> list[Result]:
    return schema.audit_validator.validate(data, hierarchy=schema.hierarchy).violations


def _key(r: Result) -> tuple[str, ...]:
    return r.key()
