"""Differential: for every delta, the write path refuses exactly the violations that full
validation of the store after the delta has and before it had not.

Replayed on every W3C core test's shapes and data, on every tests/cases case, and on
ontoloom's own schema — one triple at a time (adds, then removes) and in random batches.
Hypothesis-generated shapes and deltas are in tests/test_differential_generated.py.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest

from differential import Replay, as_quads, subclass_triples
from ontoloom.store.base import Delta
from ontoloom.store.rdfio import read_quads, read_triples
from ontoloom.terms import BlankNode, NamedNode, Quad
from ontoloom.vocab import FACTS, RDF_TYPE
from w3c_suite import load

CORE = [t for t in load("core") if t.expected is not None]
CASES = sorted(p for p in (Path(__file__).parent / "cases").iterdir() if (p / "data.ttl").exists())


def _rng(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


@pytest.mark.parametrize("test", CORE, ids=lambda t: t.name)
def test_w3c_core_data_replayed_through_the_write_path(test) -> None:
    quads = as_quads(test.data)
    replay = Replay.of(test.shapes, ontology=subclass_triples(test.data))
    rng = _rng(test.name)
    big = len(quads) > 300  # core/complex/shacl-shacl: a sample of its steps
    replay.one_by_one(quads, rng, limit=12 if big else 40)
    replay.batches(quads, rng, rounds=2 if big else 6)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_case_data_replayed_through_the_write_path(case: Path) -> None:
    data = [
        Quad(q.subject, q.predicate, q.object, FACTS) for q in read_quads(path=case / "data.ttl")
    ]
    if (case / "shapes.ttl").exists():
        replay = Replay.of(read_triples(path=case / "shapes.ttl"))
    else:
        replay = Replay.of([], builtin=True)
    rng = _rng(case.name)
    replay.one_by_one(data, rng)
    replay.batches(data, rng)


# -- examples the generated tests found, kept as they were found --------------------------------
ZERO_LENGTH = """@prefix ex: <http://example.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
ex:S a sh:NodeShape ; sh:targetNode ex:n3 ;
    sh:property [ sh:path [ sh:zeroOrMorePath ex:p ] ; sh:minCount 1 ] ."""


def test_a_node_still_in_the_graph_after_losing_one_edge_keeps_its_zero_length_path() -> None:
    # ex:n3 ex:p* gives ex:n3 while ex:n3 is in the graph. Removing one of its two edges
    # leaves it there: the neighbourhood copy must still hold a triple that says so.
    replay = Replay.of(read_triples(data=ZERO_LENGTH, format_name="turtle"))
    ex = "http://example.org/"
    data = read_triples(
        data=f"<{ex}n2> <{ex}q> <{ex}n3> . <{ex}n3> <{ex}q> <{ex}n4> .", format_name="turtle"
    )
    quads = as_quads(data)
    replay.step(Delta(adds=set(quads)))
    replay.step(Delta(removes={quads[1]}))
    replay.step(Delta(removes={quads[0]}))  # now it is gone: a new violation, refused


NESTED = """@prefix ex: <http://example.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
ex:PersonShape a sh:NodeShape ; sh:targetClass ex:Person ;
    sh:property [ sh:path ex:address ; sh:property ex:CityShape ] .
ex:CityShape sh:path ex:city ; sh:class ex:City ."""


def test_a_nested_violation_counts_for_its_target_when_a_blank_node_changes_too() -> None:
    # Found by the W3C replay (core/property/property-001): a delta that also touches a blank
    # node is validated over the whole copy and its results kept by focus node; a result of a
    # nested shape belongs to the target it was reached from (its root), not to its own focus.
    replay = Replay.of(read_triples(data=NESTED, format_name="turtle"))
    ex = "http://example.org/"
    data = f"<{ex}p1> <{ex}address> <{ex}a1> . <{ex}a1> <{ex}city> <{ex}nowhere> . _:b <{ex}q> 1 ."
    quads = as_quads(read_triples(data=data, format_name="turtle"))
    replay.step(Delta(adds=set(quads)))
    typed = Quad(NamedNode(f"{ex}p1"), RDF_TYPE, NamedNode(f"{ex}Person"), FACTS)
    blank = next(q for q in quads if isinstance(q.subject, BlankNode))
    replay.step(Delta(adds={typed}, removes={blank}))
