"""``ontoloom check``: audit the whole graph — every shape, cycles in every acyclic
relation (each cycle once, with its path), orphaned relations — and plan repairs."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, ValidationFailed
from ontoloom.findings import Finding, report_json
from ontoloom.model import vocab_name
from ontoloom.reporting import finding_from_result
from ontoloom.schema import RelationSpec
from ontoloom.shacl import Report, ShapeSet
from ontoloom.shacl.redact import redacted
from ontoloom.store import scratch
from ontoloom.store.base import Delta
from ontoloom.terms import BlankNode, NamedNode, Quad, Term, subject
from ontoloom.vocab import FACTS, OL, RDF_TYPE
from ontoloom.writes import strong_components

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = [
    "Audit",
    "Repair",
    "apply_repairs",
    "audit",
    "audit_warnings",
    "plan_repairs",
    "strong_components",
]

MAX_CYCLES = 100


@dataclass
class Audit:
    report: Report  # the shape-based results, as a W3C report
    findings: list[Finding]  # what people read: shapes, each cycle once, orphans
    engines: dict[str, str] = field(default_factory=dict)
    as_written: dict[str, int] = field(default_factory=dict)  # see shacl.Report.as_written
    explanation: dict[str, dict[str, object]] = field(default_factory=dict)  # and .explanation

    @property
    def violations(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "Violation"]

    @property
    def conforms(self) -> bool:
        return not self.violations

    def to_json(self) -> dict[str, Any]:
        return report_json(
            self.findings,
            conforms=self.conforms,
            unsupported=[
                {"shape": str(u.shape), "feature": u.feature} for u in self.report.unsupported
            ],
        )


def audit(graph: Session, *, allow_unsupported: bool = False) -> Audit:
    """Audit every shape, cycle and orphan of the graph.

    :raises BadInput: when the schema's shapes use a feature ontoloom does not evaluate,
        unless ``allow_unsupported`` (the audit's warnings then name them).
    """
    from ontoloom import progress
    from ontoloom.shacl.rules import RuleSet
    from ontoloom.shacl.shapes import UnsupportedFeatures

    validator = graph.schema.audit_validator
    # Over a SPARQL endpoint the shapes run on a local copy of the store (read in checked
    # pages), as the write path's validation does: the compiled shape queries then mean the
    # same on every engine (Virtuoso cannot compile some of them, e.g. EXISTS over FILTER
    # NOT EXISTS), and one download costs less than a query per shape over the network.
    data = graph.backend if graph.backend.validates_in_place else scratch(graph.backend.quads())
    try:
        with progress.task("auditing every shape"):
            acyclic = _acyclic_predicates(graph.schema.shapes)
            if acyclic is None:
                report = validator.validate(
                    data,
                    hierarchy=graph.schema.hierarchy,
                    allow_unsupported=allow_unsupported,
                )
            else:
                report = _audit_acyclic_apart(graph, data, acyclic, allow_unsupported)
    except UnsupportedFeatures as exc:
        raise BadInput(str(exc)) from None
    shapes = graph.schema.shapes
    report.results = redacted(report.results, shapes)  # the secret rule's values: never shown
    report.notes = [  # the store audit does not run SHACL-AF rules: say so
        f"rules of shape {shapes.label(node)} were not run (the store audit runs no rules)"
        for node in RuleSet.shapes_with_rules(shapes)
    ]
    shape_findings = {
        finding_from_result(r, graph.ids, graph.schema.shapes)
        for r in report.results
        if r.constraint_name != "acyclic"  # reported below, each cycle once with its path
    }
    findings = sorted(shape_findings, key=_order)
    for spec in graph.schema.relations.values():
        if spec.acyclic:
            findings += [_cycle_finding(graph, spec, c) for c in find_cycles(graph, spec)]
    findings += find_orphans(graph)
    return Audit(
        report=report,
        findings=findings,
        engines=dict(sorted(report.engines.items())),
        as_written=report.as_written,
        explanation=report.explanation(),
    )


def _acyclic_predicates(shapes: ShapeSet) -> dict[Term, NamedNode] | None:
    """The targeted shapes holding an acyclicity constraint, each with its predicate path;
    None when some acyclicity constraint sits elsewhere (a nested shape, a longer path): the
    audit then evaluates them all over every target, as any constraint."""
    found: dict[Term, NamedNode] = {}
    targeted = {s.node for s in shapes.targeted()}
    for node in shapes.all_shape_nodes():
        shape = shapes.shape(node)
        if not any(c.short_name == "acyclic" for c in shape.constraints):
            continue
        path = shape.path
        if shape.deactivated and node not in targeted:
            continue
        if node not in targeted or path is None or not path.is_predicate:
            return None
        if not isinstance(path.iri, NamedNode):
            return None
        found[node] = path.iri
    return found


def _audit_acyclic_apart(
    graph: Session, data: Any, acyclic: dict[Term, NamedNode], allow_unsupported: bool
) -> Report:
    """The audit's report, acyclicity evaluated only where it can fail. Its constraint asks,
    per focus node, whether the node reaches itself — a walk along the rest of the relation,
    quadratic in a long chain (a 5,000-task ``blocks`` chain: 40 s). A node reaches itself
    through a predicate exactly when it lies on a cycle of that predicate's edges, which one
    pass finds for every node (:func:`strong_components`). So every other constraint is
    evaluated over every target (the write validator: every shape but acyclicity), and the
    acyclic shapes by the same evaluator only on the nodes that lie on a cycle — the same
    results, none where the relation has no cycle."""
    schema = graph.schema
    report = schema.write_validator.validate(
        data, hierarchy=schema.hierarchy, allow_unsupported=allow_unsupported
    )
    on_cycle: set[Term] = set()
    for predicate in sorted(set(acyclic.values()), key=str):
        on_cycle |= _on_cycles(graph, predicate)
    if on_cycle:
        found = schema.audit_validator.validate(
            data,
            sorted(on_cycle, key=str),
            hierarchy=schema.hierarchy,
            only=set(acyclic),
            allow_unsupported=allow_unsupported,
        )
        report.results += [r for r in found.results if r.constraint_name == "acyclic"]
        for label, seconds in found.seconds.items():
            report.seconds[label] = report.seconds.get(label, 0.0) + seconds
        report.engines.update(found.engines)
    for node in acyclic:  # judged, though on no node where the relation has no cycle
        label = str(node.value) if isinstance(node, NamedNode) else str(node)
        report.engines.setdefault(label, "sparql")
    return report


def _on_cycles(graph: Session, predicate: NamedNode) -> set[Term]:
    """The nodes that lie on a cycle of ``predicate``'s edges (one pass: see find_cycles)."""
    edges = _edges(graph, predicate)
    component = strong_components(edges)
    return {
        _node(a)
        for a, targets in edges.items()
        if any(component[a] == component[b] for b in targets)
    }


def audit_warnings(result: Audit, shapes: ShapeSet) -> list[str]:
    """What the audit did not evaluate or run, for stderr: never silent."""
    return [
        f"{shapes.describe(u)}, which ontoloom did not evaluate" for u in result.report.unsupported
    ] + result.report.notes


def _order(f: Finding) -> tuple[str, ...]:
    return (f.focus, f.path or "", f.constraint, str(f.value))


# -- cycles ------------------------------------------------------------------------------------
def find_cycles(graph: Session, spec: RelationSpec) -> list[list[Term]]:
    """Every cycle of an acyclic relation once, as [a, b, …, a], shortest first found.

    One pass over the relation's edges: a link lies on a cycle exactly when both its ends
    are in one strongly connected component (:func:`strong_components`), so the search for
    each cycle's path is confined to those links (a property path ``?n rel+ ?n`` per node
    took time quadratic in the edges). Nodes are handled as their N-Triples text, read from
    one TSV result: hashing pyoxigraph terms, and a row object per edge, cost ~10x more."""
    edges = _edges(graph, spec.iri)
    component = strong_components(edges)
    cyclic = {a: [b for b in bs if component[a] == component[b]] for a, bs in edges.items()}
    on_cycle = [n for n, targets in cyclic.items() if targets]
    cycles: list[list[Term]] = []
    seen_edges: set[tuple[str, str]] = set()
    for start in sorted(on_cycle):
        for first in sorted(cyclic[start]):
            if (start, first) in seen_edges or len(cycles) >= MAX_CYCLES:
                continue
            path = _shortest_path(cyclic, first, start)
            if path is None:
                continue
            cycle = [start, *path]
            cycles.append([_node(n) for n in cycle])
            seen_edges.update(pairwise(cycle))
    return cycles


def _edges(graph: Session, predicate: NamedNode) -> dict[str, list[str]]:
    """The relation's edges, each end as its N-Triples text (see :func:`find_cycles`)."""
    _, tsv = graph.backend.serialize_results(
        f"SELECT ?a ?b WHERE {{ ?a {predicate} ?b }}", None, "tsv"
    )
    edges: dict[str, list[str]] = defaultdict(list)
    for line in tsv.decode("utf-8").splitlines()[1:]:
        a, _, b = line.partition("\t")
        edges[a].append(b)
    return edges


def _node(text: str) -> Term:
    """A subject as the TSV results write it (an IRI or a blank node; never a literal)."""
    return NamedNode(text[1:-1]) if text.startswith("<") else BlankNode(text[2:])


def _shortest_path(edges: dict[str, list[str]], start: str, goal: str) -> list[str] | None:
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = [node]
            step = parent[node]
            while step is not None:
                path.append(step)
                step = parent[step]
            return list(reversed(path))
        for nxt in sorted(edges.get(node, [])):
            if nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return None


def _cycle_finding(graph: Session, spec: RelationSpec, cycle: list[Term]) -> Finding:
    ids = [graph.ids.id_of(n) for n in cycle]
    return Finding(
        focus=ids[0],
        path=spec.name,
        constraint="acyclic",
        value=ids[1],
        message=(
            f"{spec.name} is acyclic but forms the cycle {' → '.join(ids)}: unrelate one link, "
            f"e.g. `ontoloom unrelate {ids[-2]} {spec.name} {ids[-1]}`"
        ),
        kind="cycle",
        cycle=tuple(ids),
    )


# -- orphans -----------------------------------------------------------------------------------
def find_orphans(graph: Session) -> list[Finding]:
    """Relations one of whose endpoints is no object (it has no type)."""
    base = graph.ids.base
    query = f"""
        SELECT DISTINCT ?s ?p ?o WHERE {{
            ?s ?p ?o .
            FILTER (isIRI(?o) && ?p != {RDF_TYPE} && STRSTARTS(STR(?p), "{OL}"))
            FILTER (STRSTARTS(STR(?s), "{base}") && STRSTARTS(STR(?o), "{base}"))
            FILTER (NOT EXISTS {{ ?o {RDF_TYPE} ?t1 }} || NOT EXISTS {{ ?s {RDF_TYPE} ?t2 }})
        }}"""
    out = []
    for row in graph.backend.select(query):
        s, p, o = graph.ids.id_of(row["s"]), vocab_name(row["p"]), graph.ids.id_of(row["o"])
        missing = o if not graph.exists(o) else s
        out.append(
            Finding(
                focus=s,
                path=p,
                constraint="orphan",
                value=o,
                message=(
                    f"{s} {p} {o}: {missing} does not exist (deleted or renamed); "
                    f"remove the relation with `ontoloom unrelate {s} {p} {o}` or `check --repair --yes`"
                ),
                kind="orphan",
            )
        )
    return sorted(out, key=_order)


# -- repairs -----------------------------------------------------------------------------------
@dataclass
class Repair:
    """What to do about one finding: delete quads (applied with --yes), or a manual step."""

    finding: Finding
    action: str  # delete | unset | fill | fix
    description: str
    removes: set[Quad] = field(default_factory=set)

    @property
    def automatic(self) -> bool:
        return bool(self.removes)

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "automatic": self.automatic,
            "description": self.description,
            "finding": self.finding.to_json(),
        }


def plan_repairs(graph: Session, result: Audit) -> list[Repair]:
    """The repairs the seeds describe: delete broken relations (and stored secrets); list
    missing required properties and other values to fix by hand."""
    repairs = []
    for f in result.violations:
        repairs.append(_repair(graph, f))
    return repairs


def _repair(graph: Session, f: Finding) -> Repair:
    rel = graph.schema.relations.get(f.path or "")
    node = graph.ids.iri(f.focus)
    if f.kind == "cycle" and f.cycle and rel is not None:
        a, b = f.cycle[-2], f.cycle[-1]
        return _delete(
            graph,
            f,
            [(graph.ids.iri(a), rel.iri, graph.ids.iri(b))],
            f"unrelate {a} {rel.name} {b} (closes the cycle)",
        )
    if f.kind == "orphan" and rel is not None:
        return _delete(
            graph,
            f,
            [(node, rel.iri, graph.ids.iri(str(f.value)))],
            f"unrelate {f.focus} {rel.name} {f.value}",
        )
    if rel is not None:
        if f.constraint == "maxCount":
            return _thin_out(graph, f, rel)
        if f.value is not None and f.value != f.focus:  # the target has the wrong type
            target = graph.ids.iri(str(f.value))
            return _delete(
                graph, f, [(node, rel.iri, target)], f"unrelate {f.focus} {rel.name} {f.value}"
            )
        # the source has the wrong type: none of its relations of this kind can stay
        targets = [
            r["o"]
            for r in graph.backend.select(f"SELECT ?s ?o WHERE {{ ?s {rel.iri} ?o }}", {"s": node})
        ]
        return _delete(
            graph,
            f,
            [(node, rel.iri, t) for t in targets],
            f"unrelate every {rel.name} of {f.focus}",
        )
    if f.constraint == "forbidden" and f.path:
        prop = NamedNode(OL + f.path)
        values = [
            r["o"]
            for r in graph.backend.select(f"SELECT ?s ?o WHERE {{ ?s {prop} ?o }}", {"s": node})
        ]
        return _delete(
            graph,
            f,
            [(node, prop, v) for v in values],
            f"unset {f.path} on {f.focus} (store a secret_ref instead)",
            "unset",
        )
    if f.constraint == "minCount" and f.path:
        return Repair(
            f, "fill", f"fill in {f.path} on {f.focus}: `ontoloom update {f.focus} -p {f.path}=…`"
        )
    return Repair(f, "fix", f"fix {f.focus} by hand: {f.message}")


def _thin_out(graph: Session, f: Finding, rel: RelationSpec) -> Repair:
    """Too many relations of a many_to_one (or one_to_many) kind: keep the first, drop the rest."""
    node = graph.ids.iri(f.focus)
    forward = [
        r["o"]
        for r in graph.backend.select(f"SELECT ?s ?o WHERE {{ ?s {rel.iri} ?o }}", {"s": node})
    ]
    if len(forward) > 1:
        keep, *drop = sorted(forward, key=str)
        triples = [(node, rel.iri, d) for d in drop]
        return _delete(
            graph,
            f,
            triples,
            f"keep {f.focus} {rel.name} {graph.ids.id_of(keep)}, unrelate the others",
        )
    backward = [
        r["s"]
        for r in graph.backend.select(f"SELECT ?s ?o WHERE {{ ?s {rel.iri} ?o }}", {"o": node})
    ]
    keep, *drop = sorted(backward, key=str)
    triples = [(d, rel.iri, node) for d in drop]
    return _delete(
        graph, f, triples, f"keep {graph.ids.id_of(keep)} {rel.name} {f.focus}, unrelate the others"
    )


def _delete(
    graph: Session,
    f: Finding,
    triples: Sequence[tuple[Term, NamedNode, Term]],
    description: str,
    action: str = "delete",
) -> Repair:
    removes: set[Quad] = set()
    from_records = False
    for s, p, o in triples:
        graphs = [
            r["g"]
            for r in graph.backend.select(
                "SELECT ?s ?p ?o ?g WHERE { GRAPH ?g { ?s ?p ?o } }", {"s": s, "p": p, "o": o}
            )
        ]
        for g in graphs:
            if g == FACTS or not str(g.value).startswith("https://ontoloom.dev/graph/record/"):
                removes.add(Quad(subject(s), p, o, g))
            else:
                from_records = True
    if from_records and not removes:
        return Repair(
            f, "fix", f"{description}: it comes from a record; edit the record and rebuild"
        )
    return Repair(f, action, description, removes)


def apply_repairs(graph: Session, repairs: list[Repair]) -> list[tuple[Repair, str | None]]:
    """Apply each automatic repair through the write path; (repair, refusal or None)."""
    outcomes: list[tuple[Repair, str | None]] = []
    done: set[Quad] = set()
    for repair in repairs:
        if not repair.automatic:
            continue
        removes = repair.removes - done
        if not removes:
            outcomes.append((repair, None))
            continue
        try:
            graph.writes.commit(Delta(removes=removes))
            done |= removes
            outcomes.append((repair, None))
        except ValidationFailed as refused:
            outcomes.append((repair, refused.message))
    return outcomes
