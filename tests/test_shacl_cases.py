"""Data-driven SHACL cases: the compiled fast path, pySHACL and the reviewed expected
report must all agree (tests/cases/<name>/{shapes.ttl?, data.ttl, expected.ttl}).

A case without shapes.ttl runs against ontoloom's own ontology and shapes. When the
expected report states messages (sh:resultMessage), messages are compared too. Where
pySHACL departs from the spec, the case holds ``pyshacl-expected.ttl``: what pySHACL
reports instead, with a comment saying how it departs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ontoloom.schema import builtin_triples
from ontoloom.shacl import Validator
from ontoloom.shacl.oracle import pyshacl_results, results_from_report
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.store.base import Delta
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.store.rdfio import read_quads, read_triples
from ontoloom.terms import NamedNode
from ontoloom.vocab import OL, RDFS, SH
from shacl_keys import result_keys

CASES = sorted(p for p in (Path(__file__).parent / "cases").iterdir() if (p / "data.ttl").exists())


def load_case(case: Path):
    prefixes: dict[str, str] = {}  # the files' own, for generated messages
    if (case / "shapes.ttl").exists():
        shapes, ontology = read_triples(path=case / "shapes.ttl", prefixes=prefixes), []
    else:
        ontology, shapes = builtin_triples()
    data = read_quads(path=case / "data.ttl", prefixes=prefixes)
    expected_triples = read_triples(path=case / "expected.ttl")
    return shapes, ontology, data, expected_triples, prefixes


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_fast_path_pyshacl_and_expected_report_agree(case: Path) -> None:
    shapes, ontology, data, expected_triples, prefixes = load_case(case)
    subclasses = [
        (t.subject, t.object) for t in ontology if t.predicate.value == RDFS + "subClassOf"
    ]
    backend = EmbeddedBackend.memory()
    backend.apply(Delta(adds=set(data)))

    ours = Validator(shapes, extra_classes=subclasses, prefixes=prefixes).validate(backend)
    # pySHACL with SHACL-AF, for custom targets (ontoloom evaluates them always).
    oracle = oracle_shapes(shapes, ontology)
    _, theirs, _ = pyshacl_results(
        [q.triple for q in data], oracle, ontology=ontology, advanced=True
    )
    expected = results_from_report(expected_triples)
    pyshacl_file = case / "pyshacl-expected.ttl"
    pyshacl_triples = read_triples(path=pyshacl_file) if pyshacl_file.exists() else None
    messages = any(t.predicate.value == SH + "resultMessage" for t in expected_triples)

    shape_index = TripleIndex(shapes)
    expected_index = TripleIndex(expected_triples)
    want = result_keys(expected, expected_index, messages=messages)
    assert result_keys(ours.results, shape_index, messages=messages) == want
    if pyshacl_triples is not None:
        want = result_keys(
            results_from_report(pyshacl_triples), TripleIndex(pyshacl_triples), messages=messages
        )
    if oracle is not shapes:
        ours_too = Validator(oracle, extra_classes=subclasses, prefixes=prefixes).validate(backend)
        want = result_keys(ours_too.results, shape_index, messages=messages)
    assert result_keys(theirs, shape_index, messages=messages) == want
    assert set(ours.engines.values()) <= {"native", "sparql"}, "the fast path handled every shape"


def oracle_shapes(shapes: list, ontology: list) -> list:
    """The shapes pySHACL is compared on. With the built-in schema, all but the secret rule:
    pySHACL evaluates its query over every triple of the data and ontology for each node (a
    minute for a ten-line case); tests/test_secrets.py compares that rule with pySHACL alone."""
    if not ontology:
        return shapes
    from test_fast_path_vs_pyshacl import shape_subset

    return shape_subset(shapes, without=NamedNode(OL + "NoSecrets"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_focus_restricted_validation_finds_the_same_results_per_node(case: Path) -> None:
    """What the write path relies on: validating a few focus nodes gives exactly
    their share of the full validation."""
    shapes, ontology, data, _, _ = load_case(case)
    subclasses = [
        (t.subject, t.object) for t in ontology if t.predicate.value == RDFS + "subClassOf"
    ]
    backend = EmbeddedBackend.memory()
    backend.apply(Delta(adds=set(data)))
    validator = Validator(shapes, extra_classes=subclasses)
    full = validator.validate(backend).results
    index = TripleIndex(shapes)
    for node in sorted({r.focus for r in full}, key=str):
        only = validator.validate(backend, focus=[node]).results
        assert result_keys(only, index) == result_keys([r for r in full if r.focus == node], index)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.name.startswith("core-")], ids=lambda p: p.name
)
def test_turtle_report_is_isomorphic_to_pyshacls(case: Path) -> None:
    from rdflib.compare import isomorphic

    from ontoloom.shacl.oracle import to_rdflib
    from ontoloom.shacl.report import report_triples

    shapes, ontology, data, _, _ = load_case(case)
    subclasses = [
        (t.subject, t.object) for t in ontology if t.predicate.value == RDFS + "subClassOf"
    ]
    backend = EmbeddedBackend.memory()
    backend.apply(Delta(adds=set(data)))
    shapes = oracle_shapes(shapes, ontology)
    validator = Validator(shapes, extra_classes=subclasses)
    ours = report_triples(validator.validate(backend).results, validator.shapes)
    _, _, theirs = pyshacl_results(
        [q.triple for q in data], shapes, ontology=ontology, advanced=True
    )
    assert isomorphic(to_rdflib(ours), to_rdflib(theirs))
