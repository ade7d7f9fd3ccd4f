"""Differential, in time (issue 36, item 4): generated writes with validity intervals through
the one write path, against an oracle that knows nothing of it.

Each write is a ``blocks`` (acyclic) or ``assigned_to`` (many-to-one) relation with a start
and an end (or none). The oracle keeps the versions accepted so far as plain intervals, and
for the new one builds, at every instant boundary inside its interval (its start, and each
start or end of another version that falls inside it — the graph valid at any instant of the
interval is the graph valid at one of these), the graph that was valid then: the entities as
created, with the relations whose intervals hold that instant. Full validation (the audit's
own validator, every shape with acyclicity) runs on that graph with and without the new
version; the write must be refused exactly when the new version makes a violation at some
instant, and the refusal must be of a kind that validation reported there (a cycle, a
maxCount). An end not after its start is refused as bad input, and changes nothing.

Some writes repeat a fact written before over a nearby interval, often overlapping it: two
versions of one fact valid at once are that fact holding (the graph at an instant holds it
once), so such a write is judged like any other — refused only for what it makes at some
instant, never as a second value of itself. Relating again, with dates, a fact that holds now
is refused as bad input (its dates are not rewritten in passing) and changes nothing.

After every accepted write the store's history is read back at each boundary
(:meth:`Session.then`, the as-of view) and must hold exactly the oracle's relations then.

``ONTOLOOM_DIFFERENTIAL_EXAMPLES`` raises the number of examples (``make soak``).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ontoloom.api import Graph
from ontoloom.errors import BadInput, ValidationFailed
from ontoloom.schema import Schema
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.terms import NamedNode, Quad
from ontoloom.vocab import FACTS, OL
from ontoloom.vocab import HISTORY as HISTORY_GRAPH

EXAMPLES = int(os.environ.get("ONTOLOOM_DIFFERENTIAL_EXAMPLES", "40"))
TASKS = ["task_a", "task_b", "task_c", "task_d"]
PEOPLE = ["pers_p", "pers_q"]
CYCLE = "https://ontoloom.dev/ns#AcyclicConstraintComponent"
MAX_COUNT = "http://www.w3.org/ns/shacl#MaxCountConstraintComponent"


@dataclass(frozen=True)
class Write:
    rel: str  # blocks | assigned_to
    source: str
    target: str
    start: int  # a day of January 2020
    end: int | None  # exclusive; None: open (holds now)

    def holds(self, day: float) -> bool:
        return self.start <= day and (self.end is None or day < self.end)


def overlap(a: Write, b: Write) -> bool:
    return (a.end is None or b.start < a.end) and (b.end is None or a.start < b.end)


def day(n: int) -> str:
    return f"2020-01-{n:02d}"


@st.composite
def writes(draw: st.DrawFn) -> list[Write]:
    out: list[Write] = []
    for _ in range(draw(st.integers(4, 10))):
        start = draw(st.integers(3, 18))
        if out and draw(st.integers(0, 3)) == 0:
            # another version of a fact written before, over an interval near its own (often
            # overlapping it): the same fact holding, never a second value of it
            again = draw(st.sampled_from(out))
            start = max(1, again.start + draw(st.integers(-3, 3)))
            open_ = again.rel == "blocks" and draw(st.booleans())
            end = None if open_ else start + draw(st.integers(1, 8))
            out.append(Write(again.rel, again.source, again.target, start, end))
        elif draw(st.booleans()):
            source, target = draw(st.permutations(TASKS[:3]))[:2]
            # open versions of blocks hold now too: the current graph's own check meets them
            shift = draw(st.one_of(st.none(), st.integers(-2, 10)))
            end = None if shift is None else start + shift
            out.append(Write("blocks", source, target, start, end))
        else:
            # closed only: a new open value of a many-to-one relation replaces the old one
            # (ends it) rather than being refused — the write path's rule, not the instant's
            out.append(
                Write(
                    "assigned_to",
                    draw(st.sampled_from(TASKS[:2])),
                    draw(st.sampled_from(PEOPLE)),
                    start,
                    start + draw(st.integers(-2, 10)),
                )
            )
    return out


class Oracle:
    """Full validation of the graph valid at an instant, built from the entities and the
    accepted intervals only."""

    def __init__(self, graph: Graph, base: list[Quad]) -> None:
        self.ids = graph.ids
        self.schema: Schema = graph.schema
        self.base = base
        self.accepted: list[Write] = []

    def quad(self, w: Write) -> Quad:
        return Quad(self.ids.iri(w.source), NamedNode(OL + w.rel), self.ids.iri(w.target), FACTS)

    def at(self, instant: float, extra: Write | None = None) -> set[Quad]:
        live = [w for w in self.accepted if w.holds(instant)]
        if extra is not None and extra.holds(instant):
            live.append(extra)
        return {self.quad(w) for w in live}

    def violations(self, relations: set[Quad]) -> set[tuple[str, str, str]]:
        backend = EmbeddedBackend.scratch([*self.base, *relations])
        report = self.schema.audit_validator.validate(backend, hierarchy=self.schema.hierarchy)
        return {
            (str(r.focus), str(r.component.value), str(r.source_shape)) for r in report.violations
        }

    def boundaries(self, new: Write) -> list[float]:
        edges = {new.start}
        for w in self.accepted:
            for b in (w.start, w.end):
                if b is not None and new.holds(b):
                    edges.add(b)
        return sorted(edges)

    def new_violations(self, new: Write) -> set[str]:
        """The kinds of violation the new version makes at some instant of its interval."""
        made: set[str] = set()
        for instant in self.boundaries(new):
            made |= {
                v[1]
                for v in self.violations(self.at(instant, new)) - self.violations(self.at(instant))
            }
        return made


def _kind(refusal: ValidationFailed) -> set[str]:
    kinds = set()
    for f in refusal.findings:
        kinds.add(CYCLE if f.kind == "cycle" or f.cycle else MAX_COUNT)
    return kinds


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(writes())
def test_interval_writes_are_refused_exactly_when_some_instant_is_invalid(
    steps: list[Write],
) -> None:
    with tempfile.TemporaryDirectory() as tmp, Graph.open(tmp, write=True, create=True) as g:
        for t in TASKS:
            g.create("Task", {"title": t, "status": "open"}, id=t)
        for p in PEOPLE:
            g.create("Person", {"name": p}, id=p)
        base = list(g.backend.quads(FACTS))
        oracle = Oracle(g, base)
        for w in steps:
            history = sorted(map(str, g.backend.quads(HISTORY_GRAPH)))
            if w.end is None and any(
                (a.rel, a.source, a.target, a.end) == (w.rel, w.source, w.target, None)
                for a in oracle.accepted
            ):
                # the fact holds now: relating it again with dates does not rewrite them
                try:
                    g.relate(w.source, w.rel, w.target, valid_from=day(w.start))
                except BadInput as exc:
                    assert "already holds" in exc.message
                else:
                    raise AssertionError(f"{w}: dates of a current fact rewritten in passing")
                assert sorted(map(str, g.backend.quads(HISTORY_GRAPH))) == history
                continue
            if w.end is not None and w.end <= w.start:
                try:
                    g.relate(w.source, w.rel, w.target, valid_from=day(w.start),
                             valid_to=day(w.end))  # fmt: skip
                except BadInput as exc:
                    assert "--valid-to" in exc.message
                else:
                    raise AssertionError(f"{w}: an end before its start was accepted")
                assert sorted(map(str, g.backend.quads(HISTORY_GRAPH))) == history
                continue
            made = oracle.new_violations(w)
            try:
                g.relate(
                    w.source,
                    w.rel,
                    w.target,
                    valid_from=day(w.start),
                    valid_to=day(w.end) if w.end is not None else None,
                )
            except ValidationFailed as refusal:
                assert made, f"{w} refused ({refusal.findings[0].message}); valid at every instant"
                assert _kind(refusal) <= made, (w, refusal.findings[0].message, made)
                assert sorted(map(str, g.backend.quads(HISTORY_GRAPH))) == history
                continue
            assert not made, f"{w} accepted, but makes {made} at some instant ({oracle.accepted})"
            if any(
                (a.rel, a.source, a.target) == (w.rel, w.source, w.target) and overlap(a, w)
                for a in oracle.accepted
            ):
                event("a second version of one fact, overlapping the first: accepted")
            oracle.accepted.append(w)
            # the as-of view reads back exactly the relations the oracle holds at each instant
            # (a fact with several versions valid then, once)
            for instant in sorted({a.start for a in oracle.accepted} | {27}):
                then = [
                    q
                    for q in g.then(day(instant))
                    if q.graph_name == FACTS
                    and q.predicate.value.endswith(("blocks", "assigned_to"))
                ]
                assert len(then) == len(set(then)), (instant, then)
                assert set(then) == oracle.at(instant), (instant, oracle.accepted)
