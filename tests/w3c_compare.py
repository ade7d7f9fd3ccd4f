"""Report comparison as the W3C SHACL test suite defines it ("full compliance"): the actual
report, reduced to the predicates an expected report uses, must be isomorphic to the
expected one. Messages count only where the expected report states them.

See https://w3c.github.io/data-shapes/data-shapes-test-suite/ (section "Validation"):
expected = the triples of the report node R, of its sh:result values, and the blank node
structures of their sh:resultPath; results nested via sh:detail, other predicates and
messages the expected graph does not hold are removed from the actual report; path
structures are not shared between results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.terms import BlankNode, Literal, NamedNode, Term, Triple
from ontoloom.vocab import RDF, SH, XSD

__all__ = ["expected_report", "isomorphic_reports", "reduce_actual", "report_diff"]

RDF_TYPE = NamedNode(RDF + "type")
REPORT = NamedNode(SH + "ValidationReport")
RESULT = NamedNode(SH + "result")
RESULT_PATH = NamedNode(SH + "resultPath")
MESSAGE = NamedNode(SH + "resultMessage")
CONFORMS = NamedNode(SH + "conforms")
KEPT = {
    NamedNode(SH + p)
    for p in (
        "focusNode",
        "resultSeverity",
        "sourceConstraint",
        "sourceConstraintComponent",
        "sourceShape",
        "value",
    )
}


def _path_copy(g: TripleIndex, result: Term, path: Term) -> list[Triple]:
    """``result sh:resultPath path`` with the path's blank structure cloned for this result."""
    if not isinstance(path, BlankNode):
        return [Triple(result, RESULT_PATH, path)]
    fresh: dict[Term, BlankNode] = {}

    def clone(node: Term) -> Term:
        if not isinstance(node, BlankNode):
            return node
        if node not in fresh:
            fresh[node] = BlankNode()
        return fresh[node]

    out = [Triple(result, RESULT_PATH, clone(path))]
    for t in g.describe(path):
        out.append(Triple(clone(t.subject), t.predicate, clone(t.object)))
    return out


def _report(
    g: TripleIndex, node: Term, conforms: Term | None, keep_message: Callable[[Literal], bool]
) -> list[Triple]:
    out = [Triple(node, RDF_TYPE, REPORT)]
    if conforms is not None:
        out.append(Triple(node, CONFORMS, _boolean(conforms)))
    for result in g.objects(node, RESULT):
        out.append(Triple(node, RESULT, result))
        for t in g.triples_of(result):
            if t.predicate == RESULT_PATH:
                out += _path_copy(g, result, t.object)
            elif _kept(t, keep_message):
                out.append(t)
    return out


def _kept(t: Triple, keep_message: Callable[[Literal], bool]) -> bool:
    if t.predicate == RDF_TYPE:
        return t.object == NamedNode(SH + "ValidationResult")
    if t.predicate == MESSAGE:
        return isinstance(t.object, Literal) and keep_message(t.object)
    return t.predicate in KEPT


def _boolean(term: Term) -> Literal:
    """``true``, ``"true"^^xsd:boolean`` and ``1`` are one value."""
    truth = isinstance(term, Literal) and term.value.strip() in ("true", "1")
    return Literal("true" if truth else "false", datatype=NamedNode(XSD + "boolean"))


def expected_report(graph: TripleIndex, node: Term) -> list[Triple]:
    """The expected graph of a report node, as the suite defines it."""
    return _report(graph, node, graph.value(node, CONFORMS), lambda _: True)


def reduce_actual(actual: Iterable[Triple], expected: list[Triple]) -> list[Triple]:
    """The actual report graph with what the comparison ignores removed."""
    g = TripleIndex(actual)
    messages = {t.object for t in expected if t.predicate == MESSAGE}
    reports = g.subjects(RDF_TYPE, REPORT)
    if len(reports) != 1:
        raise AssertionError(f"expected one sh:ValidationReport, found {len(reports)}")
    node = reports[0]
    return _report(g, node, g.value(node, CONFORMS), lambda m: m in messages)


def isomorphic_reports(actual: Iterable[Triple], expected: list[Triple]) -> bool:
    from rdflib.compare import isomorphic

    from ontoloom.shacl.oracle import to_rdflib

    return isomorphic(to_rdflib(reduce_actual(actual, expected)), to_rdflib(expected))


def report_diff(actual: Iterable[Triple], expected: list[Triple]) -> str:
    """What a failed comparison shows: the triples of each side the other lacks (blank
    nodes by label, so a difference of structure alone shows on both sides)."""
    reduced = {str(t) for t in reduce_actual(actual, expected)}
    wanted = {str(t) for t in expected}
    return "\n".join(
        [
            "only in actual:",
            *sorted(reduced - wanted),
            "only in expected:",
            *sorted(wanted - reduced),
        ]
    )
