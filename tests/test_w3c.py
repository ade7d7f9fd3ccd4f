"""The W3C SHACL test suite, core and SPARQL, at "full compliance": the report graph must be
isomorphic to the expected report under the suite's comparison rules (tests/w3c_compare.py);
core tests must be handled by the compiled fast path, not the fallback."""

from __future__ import annotations

import pytest

from ontoloom.shacl.report import report_triples
from ontoloom.shacl.shapes import ShapeSet
from ontoloom.shacl.validate import ShapesGraphError, validate_graphs
from w3c_compare import expected_report, isomorphic_reports, report_diff
from w3c_suite import W3CTest, load

CORE = load("core")
SPARQL = load("sparql")


def run(test: W3CTest, *, compiled_only: bool) -> None:
    if test.expected is None:
        with pytest.raises(ShapesGraphError):
            validate_graphs(test.data, test.shapes)
        return
    report = validate_graphs(test.data, test.shapes)
    actual = report_triples(report.results, ShapeSet(test.shapes))
    expected = expected_report(test.graph, test.expected)
    assert isomorphic_reports(actual, expected), report_diff(actual, expected)
    if compiled_only:
        assert set(report.engines.values()) <= {"native", "sparql"}, report.engines


@pytest.mark.parametrize("test", CORE, ids=lambda t: t.name)
def test_w3c_core(test: W3CTest) -> None:
    run(test, compiled_only=True)


@pytest.mark.parametrize("test", SPARQL, ids=lambda t: t.name)
def test_w3c_sparql(test: W3CTest) -> None:
    run(test, compiled_only=False)


def test_the_suite_is_all_there() -> None:
    assert len(CORE) + len(SPARQL) == 121, (len(CORE), len(SPARQL))
