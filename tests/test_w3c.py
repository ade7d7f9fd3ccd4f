"""The W3C SHACL test suite, core and SPARQL: conformance flag and the set of results
(focus node, path, value, source shape, constraint component, severity) must equal the
expected report; core tests must be handled by the compiled fast path, not the fallback."""

from __future__ import annotations

import pytest

from ontoloom.shacl.engine import Result
from ontoloom.shacl.oracle import results_from_report
from ontoloom.shacl.validate import ShapesGraphError, validate_graphs
from ontoloom.store.terms import NamedNode, Triple
from ontoloom.vocab import RDF, SH
from w3c_suite import W3CTest, load

CORE = load("core")
SPARQL = load("sparql")


def keys(results: list[Result]) -> list[tuple[str, ...]]:
    return sorted(r.key() for r in results)


def expected_of(test: W3CTest) -> tuple[bool, list[Result]]:
    assert test.expected is not None
    conforms = test.graph.value(test.expected, NamedNode(SH + "conforms"))
    node = test.expected
    triples = [Triple(node, NamedNode(RDF + "type"), NamedNode(SH + "ValidationReport"))]
    for result in test.graph.objects(node, NamedNode(SH + "result")):
        triples.append(Triple(node, NamedNode(SH + "result"), result))
        triples.extend(test.graph.describe(result))
    return conforms is not None and conforms.value == "true", results_from_report(triples)


def run(test: W3CTest, *, compiled_only: bool) -> None:
    if test.expected is None:
        with pytest.raises(ShapesGraphError):
            validate_graphs(test.data, test.shapes)
        return
    report = validate_graphs(test.data, test.shapes)
    conforms, expected = expected_of(test)
    assert report.conforms == conforms
    assert keys(report.results) == keys(expected)
    if compiled_only:
        assert set(report.engines.values()) <= {"sparql"}, report.engines


@pytest.mark.parametrize("test", CORE, ids=lambda t: t.name)
def test_w3c_core(test: W3CTest) -> None:
    run(test, compiled_only=True)


@pytest.mark.parametrize("test", SPARQL, ids=lambda t: t.name)
def test_w3c_sparql(test: W3CTest) -> None:
    run(test, compiled_only=False)


def test_the_suite_is_all_there() -> None:
    assert len(CORE) + len(SPARQL) == 121, (len(CORE), len(SPARQL))
