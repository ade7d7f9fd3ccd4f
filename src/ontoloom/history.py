"""Facts in time: every version of a fact, with when it held and when the store knew it.

The current graph stays the plain triples it always was — queries, traversal, search and the
hook read it unchanged. Beside it, in its own named graph (:data:`ontoloom.vocab.HISTORY`),
each version of a fact written through :class:`ontoloom.changes.Changes` is one node: the
statement reified in standard RDF (``rdf:Statement`` with ``rdf:subject``, ``rdf:predicate``,
``rdf:object``) with two times::

    <https://ontoloom.dev/version/…> a rdf:Statement ;
        rdf:subject id:task_x ; rdf:predicate ol:assigned_to ; rdf:object id:pers_a ;
        schema:validFrom "2026-10-01T00:00:00Z"^^xsd:dateTime ;        # held in the world from
        schema:validThrough "2026-11-01T00:00:00Z"^^xsd:dateTime ;     # … until (exclusive)
        prov:generatedAtTime "2026-10-01T09:12:03Z"^^xsd:dateTime ;    # recorded (the commit)
        prov:invalidatedAtTime "2026-11-01T08:00:00Z"^^xsd:dateTime .  # retired: its end known

Valid time is ``[validFrom, validThrough)``; no ``validThrough`` is open. Transaction time:
the version was recorded by the commit at ``generatedAtTime``; ``invalidatedAtTime`` is the
commit that recorded its end (a version written with its end already known is retired when
recorded). So "what did the store know at T" reads a version when recorded ≤ T, and its end
only when retired ≤ T.

Why reification and not RDF 1.2 triple terms (``rdf:reifies <<( s p o )>>``), measured on
pyoxigraph 0.5.13 with 20,000 versions (``/tmp`` script, kept in the README): triple terms are
a third smaller (1,081 against 1,570 bytes of N-Quads per version), but finding the versions of
one subject takes 423 ms (no index reaches inside a triple term: a scan) against 0.48 ms with
``rdf:subject``; pyoxigraph cannot write them as JSON-LD, and rdflib cannot read them at all —
exports would stop being readable by other RDF tools. Reified statements are RDF 1.1, indexed
by subject like any triple, and the proposals graph already uses them.

Why these terms: ``schema:validFrom``/``schema:validThrough`` say when an item is valid;
``prov:generatedAtTime``/``prov:invalidatedAtTime`` are PROV-O's times at which an entity (the
version, as a record) began and ceased to be available. ``prov:startedAtTime`` and
``prov:endedAtTime`` were not taken: their domain is ``prov:Activity``, which a reasoner would
then infer the statement to be.

The version nodes live under their own base (never an instance IRI) and state nothing with an
``ol:`` predicate, so no shape targets them but the every-node secret rule (a secret never
enters history either); search, inference and the hook leave the history graph out by name.

Rules per point in time are checked here, over the versions, before the one commit
(:meth:`Timeline.check`): a many-to-one relation has one version valid at any instant, and an
acyclic relation has no cycle of versions valid at a common instant. They live in this floor,
called by the write, rather than as SHACL-SPARQL shapes over the history graph: a shape over
the history graph would be a global shape (its reach is every version of a relation), which the
write path validates against a copy of the whole store on every write, and interval overlap
along a path is beyond a property path; here the check reads only the versions of the
subjects and the relation the write touches.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, ValidationFailed
from ontoloom.findings import Finding
from ontoloom.model import now_literal, value_to_json
from ontoloom.store.base import Delta
from ontoloom.terms import BlankNode, Literal, NamedNode, Quad, Term, spo, subject
from ontoloom.terms import node as held
from ontoloom.vocab import (
    FACTS,
    HISTORY,
    OL,
    PROV_GENERATED,
    RDF_OBJECT,
    RDF_PREDICATE,
    RDF_STATEMENT,
    RDF_SUBJECT,
    RDF_TYPE,
    RETIRED,
    VALID_FROM,
    VALID_THROUGH,
    VERSION_BASE,
    XSD,
    is_open_relation,
    vocab_name,
)

if TYPE_CHECKING:
    from ontoloom.model import IdSpace
    from ontoloom.schema import Schema
    from ontoloom.store.base import Backend

__all__ = [
    "TIME_FORMS",
    "Timeline",
    "Version",
    "VersionRow",
    "fact_of_row",
    "facts_at",
    "format_time",
    "microseconds",
    "parse_time",
    "read_versions",
    "valid_at",
    "version_rows",
    "versions_about",
    "versions_of",
    "when",
]

RECORDED = PROV_GENERATED
_DATETIME = NamedNode(XSD + "dateTime")
_OBSERVATION_ORDER = NamedNode(OL + "observation_order")

TIME_FORMS = "an ISO 8601 date (2026-10-01) or date-time (2026-10-01T09:00:00Z)"


def parse_time(value: str | dt.datetime | None, option: str) -> dt.datetime | None:
    """``value`` as an aware UTC date-time: a date is its midnight UTC, a date-time without
    an offset is UTC.

    >>> parse_time("2026-10-01", "--valid-from").isoformat()
    '2026-10-01T00:00:00+00:00'
    >>> parse_time("2026-10-01T11:00:00+02:00", "--as-of").isoformat()
    '2026-10-01T09:00:00+00:00'

    :raises BadInput: a value that is not one, naming ``option`` and the accepted forms.
    """
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        at = value
    else:
        text = str(value).strip()
        try:
            if len(text) < 10 or text[4] != "-" or text[7] != "-":
                raise ValueError(text)
            at = dt.datetime.fromisoformat(text)
        except ValueError:
            raise BadInput(f"{option} {value!r} is not a date: give {TIME_FORMS}") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=dt.UTC)
    return at.astimezone(dt.UTC)


def _literal(at: dt.datetime) -> Literal:
    return now_literal(at) if at.microsecond else Literal(_iso(at), datatype=_DATETIME)


@lru_cache(maxsize=256)
def _iso(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def format_time(at: dt.datetime | None) -> str | None:
    """A time as the history prints it: ISO 8601 in UTC (``Z``)."""
    return _iso(at) if at is not None else None


def _time(term: Term | None) -> dt.datetime | None:
    if not isinstance(term, Literal):
        return None
    try:
        return parse_time(term.value, "a stored time")
    except BadInput:
        return None  # not a time (an import's): no version is read with it


@dataclass
class Version:
    """One version of a fact: ``subject predicate object`` and its two times."""

    node: NamedNode
    subject: Term
    predicate: NamedNode
    object: Term
    valid_from: dt.datetime
    valid_to: dt.datetime | None
    recorded: dt.datetime
    retired: dt.datetime | None
    quads: set[Quad] = field(default_factory=set, compare=False)

    def end_known_at(self, known: dt.datetime | None) -> dt.datetime | None:
        """Its end as the store knew it at ``known`` (None: now, all it knows)."""
        # no retirement recorded (a file written elsewhere): the end was known all along
        if self.retired is None or known is None or self.retired <= known:
            return self.valid_to
        return None

    def holds(self, at: dt.datetime, known: dt.datetime | None = None) -> bool:
        """Valid at ``at``, as the store knew it at ``known``."""
        if known is not None and self.recorded > known:
            return False
        end = self.end_known_at(known)
        return self.valid_from <= at and (end is None or at < end)

    def overlaps(self, other: Version) -> bool:
        return (self.valid_to is None or other.valid_from < self.valid_to) and (
            other.valid_to is None or self.valid_from < other.valid_to
        )

    def kind(self) -> str:
        if self.predicate == RDF_TYPE:
            return "type"
        return "property" if isinstance(self.object, Literal) else "relation"

    def to_json(self, ids: IdSpace) -> dict[str, Any]:
        kind = self.kind()
        obj: Any
        if kind == "type":
            obj = vocab_name(self.object)
        elif kind == "property":
            obj = value_to_json(self.object)
        else:
            obj = ids.id_of(self.object)
        return {
            "version": self.node.value.removeprefix(VERSION_BASE),
            "kind": kind,
            "subject": ids.id_of(self.subject),
            "predicate": "type" if kind == "type" else vocab_name(self.predicate),
            "object": obj,
            "valid_from": _iso(self.valid_from),
            "valid_to": _iso(self.valid_to) if self.valid_to else None,
            "recorded": _iso(self.recorded),
            "retired": _iso(self.retired) if self.retired else None,
        }


def version_quads(v: Version, times: dict[dt.datetime, Literal] | None = None) -> set[Quad]:
    """The quads that state ``v`` (``times``: its times as literals, made once a write)."""
    g = HISTORY
    term = (times or {}).get
    quads = {
        Quad(v.node, RDF_TYPE, RDF_STATEMENT, g),
        Quad(v.node, RDF_SUBJECT, v.subject, g),
        Quad(v.node, RDF_PREDICATE, v.predicate, g),
        Quad(v.node, RDF_OBJECT, v.object, g),
        Quad(v.node, VALID_FROM, term(v.valid_from) or _literal(v.valid_from), g),
        Quad(v.node, RECORDED, term(v.recorded) or _literal(v.recorded), g),
    }
    if v.valid_to is not None:
        quads.add(Quad(v.node, VALID_THROUGH, term(v.valid_to) or _literal(v.valid_to), g))
    if v.retired is not None:
        quads.add(Quad(v.node, RETIRED, term(v.retired) or _literal(v.retired), g))
    return quads


def versioned(quad: Quad, ids: IdSpace) -> bool:
    """Whether a quad is a fact with a history: a type, property or relation of an object,
    written directly (the facts graph). Bookkeeping (creation and change stamps, the order
    of observations) and the declarations of open relations are not."""
    p = quad.predicate
    return (
        quad.graph_name == FACTS
        and ids.is_instance(held(quad.subject))
        and isinstance(p, NamedNode)
        and (p == RDF_TYPE or (p.value.startswith(OL) and p != _OBSERVATION_ORDER))
    )


def read_versions(
    backend: Backend,
    nodes: Iterable[Term],
    *,
    incoming: bool = False,
    predicate: Term | None = None,
) -> list[Version]:
    """The versions with one of ``nodes`` as their subject (``incoming``: their object),
    of ``predicate`` when given, read as written."""
    nodes = list(dict.fromkeys(nodes))
    if not nodes:
        return []
    end = RDF_OBJECT if incoming else RDF_SUBJECT
    found: set[Term] = set()
    for i in range(0, len(nodes), 400):
        listed = " ".join(str(n) for n in nodes[i : i + 400])
        pin = f"?v {RDF_PREDICATE} {predicate} ." if predicate is not None else ""
        rows = backend.select(
            f"SELECT DISTINCT ?v WHERE {{ GRAPH {HISTORY} {{ VALUES ?n {{ {listed} }} "
            f"?v {end} ?n . {pin} }} }}"
        )
        found.update(r["v"] for r in rows)
    return versions_of(backend.around(sorted(found, key=str)))


def versions_about(
    backend: Backend,
    nodes: Iterable[Term],
    predicates: set[Term] | None = None,
    *,
    incoming: bool = False,
) -> list[Version]:
    """The versions with one of ``nodes`` as their subject (``incoming``: their object; of
    one of ``predicates`` when given), read by the store's own indexes: the version nodes by
    ``rdf:subject`` (``rdf:object``) from the object side, their predicates, then the quads
    of those that match — pattern reads of microseconds each, where planning a SPARQL query
    costs a hundred. What a write reads of history (:class:`Timeline`), and ``get`` and
    ``relations`` in time; its cost grows with the versions of ``nodes``, not of the store."""
    end = RDF_OBJECT if incoming else RDF_SUBJECT
    found: list[Term] = [
        subject(q.subject)
        for q in backend.around(nodes, end, incoming=True)
        if q.graph_name == HISTORY
    ]
    if found and predicates is not None:
        found = [
            subject(q.subject)
            for q in backend.around(found, RDF_PREDICATE)
            if q.graph_name == HISTORY and q.object in predicates
        ]
    return versions_of(backend.around(sorted(set(found), key=str))) if found else []


def versions_of(quads: Iterable[Quad]) -> list[Version]:
    """The versions stated by ``quads`` (those of the history graph)."""
    by_node: dict[Term, dict[Term, Term]] = defaultdict(dict)
    stated: dict[Term, set[Quad]] = defaultdict(set)
    for q in quads:
        if q.graph_name == HISTORY:
            s, p, o = spo(q)
            by_node[s][p] = o
            stated[s].add(q)
    out = []
    for node, props in by_node.items():
        start, recorded = _time(props.get(VALID_FROM)), _time(props.get(RECORDED))
        pred, subj, obj = (props.get(k) for k in (RDF_PREDICATE, RDF_SUBJECT, RDF_OBJECT))
        if start is None or recorded is None or not isinstance(pred, NamedNode):
            continue  # not a version (or a malformed one an import brought): not read as one
        if subj is None or obj is None or not isinstance(node, NamedNode):
            continue
        out.append(
            Version(
                node,
                subj,
                pred,
                obj,
                start,
                _time(props.get(VALID_THROUGH)),
                recorded,
                _time(props.get(RETIRED)),
                stated[node],
            )
        )
    return sorted(out, key=lambda v: (v.valid_from, v.recorded, str(v.predicate), str(v.object)))


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROSECOND = dt.timedelta(microseconds=1)
VersionRow = tuple[str, str, str, str, str, str, int, int | None, int, int | None]


def microseconds(at: dt.datetime) -> int:
    """``at`` as whole microseconds since the epoch: the time index's key, exact.

    >>> microseconds(dt.datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=dt.UTC))
    1000005
    """
    return (at - _EPOCH) // _MICROSECOND


@lru_cache(maxsize=4096)
def _stamp(value: str) -> int | None:
    """A stored time's lexical form as :func:`microseconds` (None: not a time). Cached: a
    history repeats its times (a write's instants, the starts it was given)."""
    try:
        at = parse_time(value, "a stored time")
    except BadInput:
        return None
    return microseconds(at) if at is not None else None


def version_rows(quads: Iterable[Quad]) -> list[VersionRow]:
    """The versions ``quads`` state (those of the history graph, as written), as rows of the
    time index (see :func:`fact_of_row`): what :func:`versions_of` reads, less what no graph
    as it was holds (a version whose subject is a blank node). Read in one lean pass: the
    index of a whole history is built from it."""
    by_node: dict[Any, dict[Any, Any]] = defaultdict(dict)
    for q in quads:
        if q.graph_name == HISTORY:
            by_node[q.subject][q.predicate] = q.object
    rows: list[VersionRow] = []
    for node, props in by_node.items():
        subj, pred, o = props.get(RDF_SUBJECT), props.get(RDF_PREDICATE), props.get(RDF_OBJECT)
        start, recorded = props.get(VALID_FROM), props.get(RECORDED)
        if not (isinstance(node, NamedNode) and isinstance(subj, NamedNode)):
            continue
        if not isinstance(pred, NamedNode) or not isinstance(o, NamedNode | BlankNode | Literal):
            continue
        if not (isinstance(start, Literal) and isinstance(recorded, Literal)):
            continue
        begun, written = _stamp(start.value), _stamp(recorded.value)
        if begun is None or written is None:
            continue  # not a version (a malformed one an import brought): as versions_of
        end, retired = (props.get(k) for k in (VALID_THROUGH, RETIRED))
        if isinstance(o, Literal):
            kind, value = "l", o.value
            datatype = "@" + o.language if o.language else o.datatype.value
        else:
            kind, value, datatype = ("i" if isinstance(o, NamedNode) else "b"), o.value, ""
        rows.append((node.value, subj.value, pred.value, kind, value, datatype, begun,
                     _stamp(end.value) if isinstance(end, Literal) else None, written,
                     _stamp(retired.value) if isinstance(retired, Literal) else None))  # fmt: skip
    return rows


def fact_of_row(s: str, p: str, kind: str, o: str, datatype: str) -> Quad:
    """The fact of the facts graph a row of the time index states."""
    obj: Term
    if kind == "i":
        obj = NamedNode(o)
    elif kind == "b":
        obj = BlankNode(o)
    elif datatype.startswith("@"):
        obj = Literal(o, language=datatype[1:])
    else:
        obj = Literal(o, datatype=NamedNode(datatype))
    return Quad(NamedNode(s), NamedNode(p), obj, FACTS)


def valid_at(
    versions: Iterable[Version], at: dt.datetime, known: dt.datetime | None = None
) -> list[Version]:
    return [v for v in versions if v.holds(at, known)]


def when(
    as_of: str | dt.datetime | None, recorded_as_of: str | dt.datetime | None
) -> tuple[dt.datetime, dt.datetime | None]:
    """The instant a question in time asks about and what the store knew (None: all it
    knows now): ``as_of`` defaults to ``recorded_as_of``.

    :raises BadInput: a date that does not parse (naming its option and the accepted forms),
        neither given, or an ``--as-of`` later than ``--recorded-as-of``."""
    known = parse_time(recorded_as_of, "--recorded-as-of")
    at = parse_time(as_of, "--as-of") or known
    if at is None:
        raise BadInput(f"give --as-of DATE or --recorded-as-of DATE: {TIME_FORMS}")
    if known is not None and at > known:
        raise BadInput(
            f"--as-of is after --recorded-as-of: the store cannot have known then what "
            f"held later; give {TIME_FORMS} with --as-of no later than --recorded-as-of"
        )
    return at, known


def facts_at(backend: Backend, at: dt.datetime, known: dt.datetime | None = None) -> list[Quad]:
    """The graph as it was: every fact with a version valid at ``at`` as the store knew it
    at ``known`` (None: now), as the plain triple of the facts graph it was then.

    One query over the whole history graph, the instant compared in the engine
    (:meth:`Version.holds`, as SPARQL): its cost grows with the number of versions, which is
    why ``get`` and ``relations`` in time read only the versions of one entity
    (:func:`read_versions`)."""
    then = str(_literal(at))
    recorded = f"&& ?r <= {_literal(known)}" if known is not None else ""
    # the end as the store knew it: unknown then when it was retired after ``known``
    unknown_end = f"|| (BOUND(?x) && ?x > {_literal(known)})" if known is not None else ""
    rows = backend.select(
        f"SELECT ?v ?s ?p ?o WHERE {{ GRAPH {HISTORY} {{ "
        f"?v {RDF_SUBJECT} ?s ; {RDF_PREDICATE} ?p ; {RDF_OBJECT} ?o ; "
        f"{VALID_FROM} ?f ; {RECORDED} ?r . "
        f"OPTIONAL {{ ?v {VALID_THROUGH} ?t }} OPTIONAL {{ ?v {RETIRED} ?x }} "
        f"FILTER(?f <= {then} {recorded} && (!BOUND(?t) || {then} < ?t {unknown_end})) }} }}"
    )
    held = [
        (r["v"], r["s"], r["p"], r["o"])
        for r in rows
        if isinstance(r["s"], NamedNode) and isinstance(r["p"], NamedNode)
    ]
    # literals as they were written (:mod:`ontoloom.store.lexical`), read off the versions
    stated = backend.as_written(Quad(v, RDF_OBJECT, o, HISTORY) for v, _, _, o in held)
    return sorted(
        {
            Quad(s, p, q.object, FACTS)
            for (_, s, p, _), q in zip(held, stated, strict=True)
            if isinstance(s, NamedNode) and isinstance(p, NamedNode)
        },
        key=str,
    )


def _node(s: Term, p: Term, o: Term, start: dt.datetime, recorded: dt.datetime) -> NamedNode:
    key = f"{s} {p} {o} {_iso(start)} {_iso(recorded)}"
    return NamedNode(VERSION_BASE + hashlib.sha256(key.encode()).hexdigest()[:24])


def _refused(
    focus: str,
    path: str | None,
    constraint: str,
    value: Any,
    message: str,
    cycle: tuple[str, ...] | None = None,
) -> None:
    kind = "cycle" if cycle else "shape"
    raise ValidationFailed(
        [Finding(focus, path, constraint, value, message, kind=kind, cycle=cycle)]
    )


class Timeline:
    """The history a staged delta makes: its new versions, the versions it ends, and the
    rules each instant must keep.

    Derived from the delta itself: a version is opened for each fact the delta adds, with no
    read; the versions a delta ends are those of the facts it removes (a replaced many-to-one
    value, an updated property, an unrelate), found by pattern reads of their subjects'
    versions. The rules per instant read only the versions they judge, by pattern, each
    subject once per write: a create reads nothing, a relate of a many-to-one relation its
    subject's versions of it, a relate of an acyclic one the versions along the path back.
    The version quads are made here from a delta the write path validates; what a shape
    could still find in them is judged by :meth:`ontoloom.writes.WritePath.commit`
    (``derived``)."""

    def __init__(self, backend: Backend, schema: Schema, ids: IdSpace, now: dt.datetime) -> None:
        self.backend = backend
        self.schema = schema
        self.ids = ids
        self.now = now
        # (node, predicate) → the stored versions of that node's facts of that predicate
        self._read: dict[tuple[Term, Term], list[Version]] = {}

    def _versions(self, nodes: Iterable[Term], predicates: Iterable[Term]) -> list[Version]:
        """The stored versions with one of ``nodes`` as subject and one of ``predicates``,
        each (node, predicate) read once per write."""
        pairs = [(n, p) for n in dict.fromkeys(nodes) for p in set(predicates)]
        wanted = {pair for pair in pairs if pair not in self._read}
        if wanted:
            for pair in wanted:
                self._read[pair] = []
            read = versions_about(self.backend, {n for n, _ in wanted}, {p for _, p in wanted})
            for v in read:
                if (v.subject, v.predicate) in wanted:
                    self._read[v.subject, v.predicate].append(v)
        return [v for pair in pairs for v in self._read[pair]]

    def derive(
        self,
        delta: Delta,
        *,
        valid_from: dt.datetime | None,
        valid_to: dt.datetime | None,
        past: Iterable[Quad] = (),
        purged: Iterable[NamedNode] = (),
    ) -> Delta:
        """The history delta of ``delta``: a version opened for every fact it adds (and for
        each of ``past``: facts recorded in history only, their end already gone by), the
        open versions of every fact it removes ended, the versions ``purged`` erased.

        :raises ValidationFailed: an end before a start, or a rule broken at some instant.
        """
        delta = delta.normalized()
        ids = self.ids
        adds = [q for q in delta.adds if versioned(q, ids)]
        removes = [q for q in delta.removes if versioned(q, ids)]
        past = list(past)
        if not adds and not removes and not past:
            return Delta()
        start = valid_from or self.now
        if (adds or past) and valid_to is not None and valid_to <= start:
            raise BadInput(
                f"--valid-to {_iso(valid_to)} is not after the start {_iso(start)} "
                "(--valid-from, by default now): a fact's validity ends after it starts"
            )
        purged = set(purged)
        now_term = _literal(self.now)
        new: set[Quad] = set()
        gone: set[Quad] = set()
        touched: list[Version] = []
        if removes:
            replaced = {(q.subject, q.predicate) for q in [*adds, *past]}
            removed = {(q.subject, q.predicate, q.object) for q in removes}
            subjects = (subject(q.subject) for q in removes)
            for v in self._versions(subjects, {q.predicate for q in removes}):
                if v.node in purged or (v.subject, v.predicate, v.object) not in removed:
                    continue
                if (v.subject, v.predicate) in replaced:
                    end = start
                else:
                    end = valid_from or valid_to or self.now
                if v.valid_to is not None and v.valid_to <= end:
                    continue  # already over by then
                if end < v.valid_from:
                    _refused(
                        self.ids.id_of(v.subject),
                        vocab_name(v.predicate),
                        "history",
                        _iso(end),
                        f"this would end the version valid from {_iso(v.valid_from)} at "
                        f"{_iso(end)}, before it began: give a later date (or `--purge` to "
                        "erase a mistaken fact)",
                    )
                # its end and when that was recorded: the quads that say otherwise go
                gone |= {q for q in v.quads if q.predicate in (VALID_THROUGH, RETIRED)}
                new.add(Quad(v.node, VALID_THROUGH, _literal(end), HISTORY))
                new.add(Quad(v.node, RETIRED, now_term, HISTORY))
                touched.append(replace(v, valid_to=end, retired=self.now))
        retired = self.now if valid_to is not None else None
        opened = [
            Version(_node(s, p, o, start, self.now), s, p, o, start, valid_to, self.now, retired)
            for s, p, o in (spo(q) for q in [*adds, *past])
        ]
        times = {start: _literal(start), self.now: now_term}
        if valid_to is not None:
            times[valid_to] = _literal(valid_to)
        for v in opened:
            new |= version_quads(v, times)
        self.check(opened, touched, purged)
        return Delta(adds=new - gone, removes=gone - new)

    # -- rules per point in time ---------------------------------------------------------------
    def check(self, opened: list[Version], ended: list[Version], purged: set[NamedNode]) -> None:
        """A many-to-one relation has one version valid at any instant; an acyclic relation
        has no cycle whose versions are all valid at a common instant. Only versions of a
        relation with either rule read anything.

        :raises ValidationFailed: naming the relation, the versions and the instant."""
        if all(v.predicate == RDF_TYPE or isinstance(v.object, Literal) for v in opened):
            return  # types and property values: no rule per instant judges them
        relations = {spec.iri: spec for spec in self.schema.relations.values()}
        changed = {v.node: v for v in ended}
        for v in opened:
            spec = relations.get(v.predicate)
            if spec is None or is_open_relation(v.predicate):
                continue
            if spec.cardinality in ("many_to_one", "one_to_one"):
                others = [
                    changed.get(o.node, o)
                    for o in self._versions([v.subject], [v.predicate])
                    if o.node not in purged
                ]
                others += [o for o in opened if o is not v and o.predicate == v.predicate]
                for o in others:
                    # Another version of the same fact is that fact holding, not a second
                    # value: at any instant the graph holds it once (the as-of view reads
                    # the union of its versions), so only another object is a second value.
                    if o.subject == v.subject and o.object != v.object and o.overlaps(v):
                        _refused(
                            self.ids.id_of(v.subject),
                            spec.name,
                            "maxCount",
                            self.ids.id_of(v.object),
                            f"{spec.name} is {spec.cardinality.replace('_', '-')}: "
                            f"{self.ids.id_of(v.subject)} {spec.name} "
                            f"{self.ids.id_of(o.object)} holds from {_iso(o.valid_from)}"
                            f"{' to ' + _iso(o.valid_to) if o.valid_to else ''}, which "
                            f"overlaps from {_span(v)}: one value at any instant; give "
                            "dates that do not overlap",
                        )
            if spec.acyclic:
                cycle = self._cycle(v, changed, purged, opened)
                if cycle is not None:
                    path, lo, hi = cycle
                    names = " → ".join(self.ids.id_of(n) for n in path)
                    _refused(
                        self.ids.id_of(v.subject),
                        spec.name,
                        "acyclic",
                        self.ids.id_of(v.object),
                        f"{spec.name} must not form a cycle at any instant: {names} all "
                        f"hold from {_iso(lo)}{' to ' + _iso(hi) if hi else ''}; end one of "
                        "them before the others start",
                        cycle=tuple(self.ids.id_of(n) for n in path),
                    )

    def _cycle(
        self,
        new: Version,
        changed: dict[NamedNode, Version],
        purged: set[NamedNode],
        opened: list[Version],
    ) -> tuple[list[Term], dt.datetime, dt.datetime | None] | None:
        """A path of versions from ``new``'s object back to its subject whose intervals
        share an instant with ``new``'s and with each other (depth-first; the interval
        narrows along the path, and a branch whose interval is empty is left)."""
        target = new.subject
        stack: list[tuple[Term, list[Term], dt.datetime, dt.datetime | None]] = [
            (new.object, [new.subject, new.object], new.valid_from, new.valid_to)
        ]
        seen: set[tuple[Term, dt.datetime, dt.datetime | None]] = set()
        while stack:
            node, path, lo, hi = stack.pop()
            if node == target:
                # A cycle at this instant is one of current triples: the write path's own
                # check of the current graph refuses it, and says how to break it.
                if not (lo <= self.now and _before(self.now, hi)):
                    return path, lo, hi
                continue
            if (node, lo, hi) in seen:
                continue
            seen.add((node, lo, hi))
            edges = [
                changed.get(o.node, o)
                for o in self._versions([node], [new.predicate])
                if o.node not in purged
            ]
            edges += [o for o in opened if o.subject == node and o.predicate == new.predicate]
            for e in edges:
                start = max(lo, e.valid_from)
                ends = [t for t in (hi, e.valid_to) if t is not None]
                end = min(ends) if ends else None
                if end is not None and end <= start:
                    continue  # never valid at the same instant
                if e.object in path[1:]:
                    continue  # a cycle not through the new version: not this write's
                stack.append((e.object, [*path, e.object], start, end))
        return None


def _before(at: dt.datetime, end: dt.datetime | None) -> bool:
    return end is None or at < end


def _span(v: Version) -> str:
    return _iso(v.valid_from) + (f" to {_iso(v.valid_to)}" if v.valid_to else " on")
