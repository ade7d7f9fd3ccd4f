"""The one write path every front end uses.

delta → focus nodes → validate the store *as if* the delta were applied → commit the delta
as one atomic store operation. An invalid delta commits nothing.

Validation never touches the whole graph: the focus nodes' neighbourhood (as far as the
shapes can see, see :mod:`ontoloom.shacl.footprint`) is copied into a scratch store, the
delta is applied there, and the compiled shapes run on the focus nodes only. Acyclic
relations are checked against the real store with property-path queries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from functools import cached_property
from itertools import pairwise

from ontoloom.errors import ValidationFailed
from ontoloom.findings import finding_from_result
from ontoloom.model import Finding, IdSpace, vocab_name
from ontoloom.schema import RelationSpec, Schema
from ontoloom.shacl.footprint import footprint
from ontoloom.store.base import Backend, Delta
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.store.terms import BlankNode, Literal, NamedNode, Quad, Term
from ontoloom.vocab import META, RDF_TYPE

__all__ = ["WritePath"]

_BATCH = 400  # terms per VALUES block
_LARGE = 1000  # focus nodes beyond which the scratch store is validated whole


class WritePath:
    def __init__(self, backend: Backend, schema: Schema, ids: IdSpace) -> None:
        self.backend = backend
        self.schema = schema
        self.ids = ids
        self.after_commit: list[Callable[[Delta, int], None]] = []

    @cached_property
    def _footprint(self):
        return footprint(self.schema.shapes)

    # -- the path ----------------------------------------------------------------------------
    def commit(self, delta: Delta, tolerate: Callable[[Finding], bool] | None = None) -> int:
        """Validate and commit ``delta``; return the new store generation. ``tolerate``
        lets a caller accept findings it reports itself (rebuild: orphaned targets).

        :raises ValidationFailed: with the findings; nothing is stored.
        """
        delta = delta.normalized()
        if delta.is_empty():
            return self.backend.generation()
        findings = [f for f in self.check(delta) if tolerate is None or not tolerate(f)]
        if findings:
            raise ValidationFailed(findings)
        generation = self.backend.apply(delta)
        for listener in self.after_commit:
            listener(delta, generation)
        return generation

    def check(self, delta: Delta) -> list[Finding]:
        """What would break if ``delta`` were applied (shapes, then acyclicity)."""
        delta = delta.normalized()
        focus = self.focus_nodes(delta)
        neighbourhood = self._neighbourhood(focus)
        overlay = EmbeddedBackend.scratch(neighbourhood)
        overlay.patch(delta)
        findings = self._violations(overlay, focus)
        if findings:
            # Only what the delta breaks is refused: a violation the store already had
            # (data from before a schema change) must not block unrelated writes or repairs.
            findings -= self._violations(EmbeddedBackend.scratch(neighbourhood), focus)
        findings |= set(self._cycles(delta))
        return sorted(
            set(findings), key=lambda f: (f.focus, f.path or "", f.constraint, str(f.value))
        )

    def _violations(self, overlay: EmbeddedBackend, focus: list[Term]) -> set[Finding]:
        validator, hierarchy = self.schema.write_validator, self.schema.hierarchy
        if len(focus) > _LARGE:
            # A bulk delta (an import): validating the whole scratch store is cheaper than
            # listing every focus node; only the focus nodes' neighbourhoods are complete
            # there, so only their results count.
            wanted = set(focus)
            report = validator.validate(overlay, hierarchy=hierarchy)
            results = [r for r in report.violations if r.focus in wanted]
        else:
            results = validator.validate(overlay, focus, hierarchy=hierarchy).violations
        return {finding_from_result(r, self.ids, self.schema.shapes) for r in results}

    # -- focus nodes and their neighbourhood -----------------------------------------------------
    def focus_nodes(self, delta: Delta) -> list[Term]:
        """Subjects and objects of changed triples, and the nodes whose checks reach them."""
        nodes: dict[Term, None] = {}
        retyped: dict[Term, None] = {}
        for quad in (*delta.adds, *delta.removes):
            nodes[quad.subject] = None
            if not isinstance(quad.object, Literal):
                nodes[quad.object] = None
            if quad.predicate == RDF_TYPE:
                retyped[quad.subject] = None
        # A node whose type changed can break sh:class on the nodes pointing at it.
        nodes.update(dict.fromkeys(self._predecessors(list(retyped))))
        # Shapes that see further than one edge make predecessors focus nodes too.
        frontier = list(nodes)
        for _ in range(self._footprint.radius - 1):
            frontier = [p for p in self._predecessors(frontier) if p not in nodes]
            nodes.update(dict.fromkeys(frontier))
        return list(nodes)

    def _predecessors(self, nodes: list[Term]) -> list[Term]:
        query = "SELECT DISTINCT ?s ?o WHERE { VALUES ?o { %s } ?s ?p ?o }"
        return list(dict.fromkeys(row["s"] for row in self._rows(query, nodes, "o")))

    def _neighbourhood(self, focus: list[Term]) -> list[Quad]:
        fp = self._footprint
        quads: set[Quad] = set()
        seen: set[Term] = set()
        frontier = [n for n in focus if not isinstance(n, Literal)]
        inverse = sorted(fp.inverse, key=str)
        for _level in range(fp.radius):
            frontier = [n for n in frontier if n not in seen]
            if not frontier:
                break
            seen.update(frontier)
            reached: set[Term] = set()
            for row in self._rows(
                "SELECT ?s ?p ?o ?g WHERE { VALUES ?s { %s } GRAPH ?g { ?s ?p ?o } }", frontier, "s"
            ):
                quads.add(Quad(row["s"], row["p"], row["o"], row["g"]))
                if not isinstance(row["o"], Literal):
                    reached.add(row["o"])
            for predicate in inverse:  # one query each: Oxigraph plans two VALUES blocks badly
                query = (
                    "SELECT ?s ?o ?g WHERE { VALUES ?o { %s } GRAPH ?g { ?s "
                    + str(predicate)
                    + " ?o } }"
                )
                for row in self._rows(query, frontier, "o"):
                    quads.add(Quad(row["s"], predicate, row["o"], row["g"]))
                    reached.add(row["s"])
            frontier = list(reached)
        # The types of everything reached, for sh:class and class targets.
        edge = [n for n in frontier if n not in seen]
        query = (
            "SELECT ?s ?o ?g WHERE { VALUES ?s { %s } GRAPH ?g { ?s " + str(RDF_TYPE) + " ?o } }"
        )
        for row in self._rows(query, edge, "s"):
            quads.add(Quad(row["s"], RDF_TYPE, row["o"], row["g"]))
        return [q for q in quads if q.graph_name != META]

    def _rows(self, template: str, nodes: Iterable[Term], var: str):
        """Run ``template`` (with ``%s`` for a VALUES list) over ``nodes`` in batches;
        blank nodes are bound one at a time (VALUES cannot hold them)."""
        nodes = list(nodes)
        named = [n for n in nodes if not isinstance(n, BlankNode)]
        for i in range(0, len(named), _BATCH):
            yield from self.backend.select(template % " ".join(map(str, named[i : i + _BATCH])))
        for blank in (n for n in nodes if isinstance(n, BlankNode)):
            yield from self.backend.select(template % "UNDEF", {var: blank})

    # -- acyclic relations -------------------------------------------------------------------
    def _cycles(self, delta: Delta) -> list[Finding]:
        findings = []
        for spec in self.schema.relations.values():
            if not spec.acyclic:
                continue
            adds = sorted(
                {(q.subject, q.object) for q in delta.adds if q.predicate == spec.iri}, key=str
            )
            if not adds:
                continue
            removes = {(q.subject, q.object) for q in delta.removes if q.predicate == spec.iri}
            cycle = self.find_cycle(spec, adds, removes)
            if cycle:
                findings.append(self._cycle_finding(spec, cycle))
        return findings

    def find_cycle(
        self, spec: RelationSpec, adds: list[tuple[Term, Term]], removes: set[tuple[Term, Term]]
    ) -> list[Term] | None:
        """The first cycle the added edges close, as [a, b, …, a]; ``None`` when acyclic."""
        for a, b in adds:
            if a == b:
                return [a, a]
        if len(adds) == 1 and not removes:
            # One new edge a → b closes a cycle iff b already reaches a: one property-path ASK.
            a, b = adds[0]
            if not self.backend.ask(f"ASK {{ ?b {spec.iri}+ ?a }}", {"a": a, "b": b}):
                return None
        return self._cycle_through(spec, adds, removes)

    def _cycle_through(
        self, spec: RelationSpec, adds: list[tuple[Term, Term]], removes: set[tuple[Term, Term]]
    ) -> list[Term] | None:
        """Depth-first search over the edges reachable from the new ones (store + delta),
        fetched level by level; a back edge that uses a new edge closes a new cycle."""
        new_edges = set(adds)
        successors: dict[Term, list[Term]] = defaultdict(list)
        for a, b in adds:
            successors[a].append(b)
        query = "SELECT ?s ?o WHERE { VALUES ?s { %s } ?s " + str(spec.iri) + " ?o }"
        fetched: set[Term] = set()
        frontier = {b for _, b in adds} | {a for a, _ in adds}
        while frontier:
            batch = sorted(frontier - fetched, key=str)
            fetched.update(batch)
            found = set()
            for row in self._rows(query, batch, "s"):
                edge = (row["s"], row["o"])
                if edge not in removes and edge not in new_edges:
                    successors[row["s"]].append(row["o"])
                    found.add(row["o"])
            frontier = found - fetched  # every new edge's ends were in the first frontier
        state: dict[Term, int] = {}  # 1 on the current path, 2 finished
        for start, _ in sorted(adds, key=str):
            if state.get(start):
                continue
            path: list[Term] = [start]
            stack = [iter(sorted(successors.get(start, []), key=str))]
            state[start] = 1
            while stack:
                nxt = next(stack[-1], None)
                if nxt is None:
                    state[path.pop()] = 2
                    stack.pop()
                    continue
                if state.get(nxt) == 1:
                    cycle = [*path[path.index(nxt) :], nxt]
                    if any(edge in new_edges for edge in pairwise(cycle)):
                        return cycle
                    continue  # a cycle the store already had: not this delta's doing
                if state.get(nxt) is None:
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append(iter(sorted(successors.get(nxt, []), key=str)))
        return None

    def _cycle_finding(self, spec: RelationSpec, cycle: list[Term]) -> Finding:
        ids = [self.ids.id_of(n) for n in cycle]
        arrow = " → ".join(ids)
        return Finding(
            focus=ids[0],
            path=spec.name,
            constraint="acyclic",
            value=ids[1] if len(ids) > 1 else None,
            message=(
                f"{spec.name} is acyclic, and this would close the cycle {arrow}; "
                f"unrelate one of these {spec.name} links first"
            ),
            kind="cycle",
            cycle=tuple(ids),
        )


def relation_name(term: Term) -> str:
    return vocab_name(term) if isinstance(term, NamedNode) else str(term)
