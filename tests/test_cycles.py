"""Acyclicity over every target decided from the nodes on a cycle (ontoloom.shacl.cycles):
the same results as pySHACL, the oracle, gives with ol:AcyclicValidator's SPARQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from ontoloom.shacl.cycles import on_cycles, strong_components
from ontoloom.shacl.engine import Validator
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.oracle import pyshacl_results
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.shacl.validate import validate_graphs
from ontoloom.store.rdfio import read_triples
from shacl_keys import result_keys

COMPONENTS = (Path(__file__).parent.parent / "shapes" / "components.ttl").read_text()
PREFIXES = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
@prefix ol: <https://ontoloom.dev/ns#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
SHAPES = (
    COMPONENTS
    + """
@prefix ex: <http://example.org/> .
ex:BlocksAcyclic a sh:PropertyShape ; sh:targetSubjectsOf ex:blocks ; sh:path ex:blocks ;
    ol:acyclic true ; sh:message "blocks itself" .
# a class target: a node on a cycle that is no Task is not a focus node
ex:TaskDeps a sh:NodeShape ; sh:targetClass ex:Task ;
    sh:property [ sh:path ex:dep ; ol:acyclic true ] .
ex:Off a sh:PropertyShape ; sh:targetSubjectsOf ex:blocks ; sh:path ex:blocks ; ol:acyclic false .
"""
)


def chain(n: int, p: str = "blocks", prefix: str = "t") -> str:
    return "".join(f"ex:{prefix}{i} ex:{p} ex:{prefix}{i + 1} .\n" for i in range(n))


CASES = {
    "chain": chain(40),
    "cycle": chain(5) + "ex:t5 ex:blocks ex:t0 .",
    "self-loop": chain(3) + "ex:t2 ex:blocks ex:t2 .",
    "several cycles, tails and a bridge": chain(4)
    + "ex:t4 ex:blocks ex:t1 . ex:a ex:blocks ex:b . ex:b ex:blocks ex:a . "
    + "ex:b ex:blocks ex:t0 . ex:t4 ex:blocks ex:z .",
    "blank nodes on a cycle": "ex:t0 ex:blocks _:x . _:x ex:blocks _:y . _:y ex:blocks ex:t0 .",
    "a literal at the end": 'ex:t0 ex:blocks "t0" . ex:t0 ex:blocks ex:t0 .',
    "class target, a cycle through a non-task": "ex:k1 a ex:Task . ex:k2 a ex:Task . "
    "ex:k1 ex:dep ex:k2 . ex:k2 ex:dep ex:other . ex:other ex:dep ex:k1 . "
    "ex:k3 a ex:Task . ex:k3 ex:dep ex:k1 .",
    "class target, a task chain": "".join(f"ex:k{i} a ex:Task .\n" for i in range(20))
    + chain(19, "dep", "k"),
}


# How many nodes on a cycle each case's shapes target.
FOUND = dict(zip(CASES.values(), [0, 6, 1, 6, 3, 1, 2, 0], strict=True))


@pytest.mark.parametrize("data", list(CASES.values()), ids=list(CASES))
def test_acyclicity_over_every_target_gives_what_pyshacl_gives(data: str) -> None:
    shapes = read_triples(data=SHAPES, format_name="turtle")
    graph = read_triples(data=PREFIXES + data, format_name="turtle")
    ours = validate_graphs(graph, shapes)
    _, theirs, _ = pyshacl_results(graph, shapes)
    index = TripleIndex(shapes)
    # (as sets: pySHACL reports a self-loop's node twice, where the SELECT DISTINCT has one
    # solution — as the store's own evaluation of it has, checked below)
    assert set(result_keys(ours.results, index, messages=True)) == set(
        result_keys(theirs, index, messages=True)
    )
    assert sorted(result_keys(ours.results, index, messages=True)) == sorted(
        result_keys(_by_the_query(graph, shapes), index, messages=True)
    )
    assert len(ours.results) == FOUND[data]  # (so that the cases hold cycles to find)


def _by_the_query(graph, shapes):
    """The results of the same validation with the constraint's SPARQL run over every
    target (the route before the cycles were read)."""
    from ontoloom.shacl import engine

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "_cycles", lambda *_: None)
        return validate_graphs(graph, shapes).results


def test_the_acyclic_units_run_on_the_nodes_on_a_cycle() -> None:
    """(Not a walk from every target: the plan names the predicate whose cycles it reads.)"""
    validator = Validator(read_triples(data=SHAPES, format_name="turtle"))
    units, _ = validator.plan(Hierarchy([]))
    found = {str(u.cycles) for u in units if u.constraint.short_name == "acyclic"}
    assert found == {"<http://example.org/blocks>", "<http://example.org/dep>"}


def test_on_cycles_finds_every_node_on_a_cycle_and_no_other() -> None:
    edges = [(i, i + 1) for i in range(5000)] + [(5000, 4990), (7, 7), (8, 9)]
    assert on_cycles(edges) == [7, *range(4990, 5001)]
    component = strong_components({"a": ["b"], "b": ["a"], "c": ["c"]})
    assert component["a"] == component["b"] != component["c"]
