"""The write path against full validation, step by step.

A :class:`Replay` holds a store and a shapes graph. Each step is a delta: the write path
says which violations it would refuse; then the delta is applied regardless (so that later
steps start from invalid states too), and full validation of the whole store before and
after says which violations the delta really made. The two must be equal, exactly.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from ontoloom.model import IdSpace
from ontoloom.schema import Schema
from ontoloom.shacl import Result
from ontoloom.store.base import Delta
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.terms import BlankNode, NamedNode, Quad, Triple
from ontoloom.vocab import FACTS, RDFS
from ontoloom.writes import WritePath

Key = tuple[str, ...]
ACYCLIC = "https://ontoloom.dev/ns#AcyclicConstraintComponent"


def key(result: Result) -> Key:
    if result.component.value == ACYCLIC:  # one per node on a cycle, as the cycle check says
        return (str(result.focus), str(result.source_shape), ACYCLIC)
    # Messages tell apart results that differ only in the constraint or solution behind them
    # (two sh:class values of one shape; two solutions of one SPARQL constraint).
    messages = " | ".join(sorted(m.value for m in result.messages))
    return (*result.key(), str(result.source_constraint), str(result.root), messages)


@dataclass
class Replay:
    schema: Schema
    backend: EmbeddedBackend = field(default_factory=EmbeddedBackend.memory)
    steps: int = 0

    @classmethod
    def of(
        cls, shapes: Iterable[Triple], ontology: Iterable[Triple] = (), builtin: bool = False
    ) -> Replay:
        if builtin:
            return cls(Schema.load(list(shapes)))
        return cls(Schema(list(ontology), list(shapes)))

    @property
    def writes(self) -> WritePath:
        return WritePath(self.backend, self.schema, IdSpace())

    def full(self) -> set[Key]:
        validator = self.schema.audit_validator
        report = validator.validate(self.backend, hierarchy=self.schema.hierarchy)
        return {key(r) for r in report.violations}

    def step(self, delta: Delta) -> None:
        """Check the write path's refusal set for ``delta``, then apply it anyway."""
        delta = delta.normalized()
        writes = self.writes
        refused = {key(r) for r in writes.new_violations(delta)}
        for cycle in writes.new_cycles(delta):
            for shape in self._acyclic_shapes(cycle.spec.iri):
                refused |= {(str(n), str(shape), ACYCLIC) for n in cycle.new_nodes}
        before = self.full()
        _apply(self.backend, delta)
        made = self.full() - before
        self.steps += 1
        assert refused == made, _explain(delta, refused, made)

    def _acyclic_shapes(self, predicate: NamedNode) -> list:
        found = []
        for shape in self.schema.shapes.targeted():
            path = shape.path
            acyclic = any(c.short_name == "acyclic" for c in shape.constraints)
            if acyclic and path is not None and path.is_predicate and path.iri == predicate:
                found.append(shape.node)
        return found

    # -- replays ---------------------------------------------------------------------------------
    def one_by_one(self, quads: list[Quad], rng: random.Random, limit: int = 40) -> None:
        """Add quads alone, in a random order; then remove them alone, likewise. Of a large
        graph, ``limit`` quads chosen at random go alone, the rest in one batch first."""
        order = list(quads)
        rng.shuffle(order)
        alone, rest = order[:limit], order[limit:]
        if rest:
            self.step(Delta(adds=set(rest)))
        for q in alone:
            self.step(Delta(adds={q}))
        rng.shuffle(alone)
        for q in alone:
            self.step(Delta(removes={q}))

    def batches(self, quads: list[Quad], rng: random.Random, rounds: int = 6) -> None:
        """Random batches of adds and removes from ``quads``."""
        present: set[Quad] = set()
        for _ in range(rounds):
            k = rng.randint(1, max(1, len(quads) // 2))
            adds = {q for q in rng.sample(quads, min(k, len(quads))) if q not in present}
            removes = {q for q in present if rng.random() < 0.3}
            self.step(Delta(adds=adds, removes=removes))
            present = (present - removes) | adds


def _apply(backend: EmbeddedBackend, delta: Delta) -> None:
    # Straight into the store: the replay walks through invalid states on purpose, and
    # removes quads holding blank nodes, which a delta cannot.
    backend.patch(delta)


def _explain(delta: Delta, refused: set[Key], made: set[Key]) -> str:
    lines = ["the write path's refusal set differs from full validation's new violations"]
    lines += [f"  + {q}" for q in sorted(map(str, delta.adds))]
    lines += [f"  - {q}" for q in sorted(map(str, delta.removes))]
    lines += [f"  refused but not new: {k}" for k in sorted(refused - made)]
    lines += [f"  new but not refused: {k}" for k in sorted(made - refused)]
    return "\n".join(lines)


def as_quads(triples: Iterable[Triple]) -> list[Quad]:
    return [Quad(t.subject, t.predicate, t.object, FACTS) for t in dict.fromkeys(triples)]


def subclass_triples(triples: Iterable[Triple]) -> list[Triple]:
    sub = NamedNode(RDFS + "subClassOf")
    return [t for t in triples if t.predicate == sub and not isinstance(t.object, BlankNode)]
