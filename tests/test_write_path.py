"""The write path validates a bounded neighbourhood, so a write's cost does not grow with
the graph: the scratch store it validates in has the same size at any graph size."""

from __future__ import annotations

from pathlib import Path

from ontoloom.api import Graph
from ontoloom.neighbourhood import Changed
from ontoloom.store.base import Delta
from ontoloom.store.terms import Quad
from ontoloom.vocab import FACTS


def _chain(g: Graph, n: int) -> None:
    for i in range(n):
        g.create("Task", {"title": f"T{i}", "status": "open"}, id=f"task_{i}")
        if i:
            g.relate(f"task_{i - 1}", "blocks", f"task_{i}")


def _copied(g: Graph, delta: Delta) -> int:
    _, copied = g.writes.scope(Changed.of(delta))
    return len(copied)


def test_the_validated_neighbourhood_does_not_grow_with_the_graph(tmp_path: Path) -> None:
    sizes = []
    for n in (5, 60):
        with Graph.open(tmp_path / f"g{n}", write=True, create=True) as g:
            _chain(g, n)
            g.create("Person", {"name": "P"}, id="pers_p")
            s, o = g.ids.iri("task_2"), g.ids.iri("pers_p")
            delta = Delta(adds={Quad(s, g.schema.relations["assigned_to"].iri, o, FACTS)})
            sizes.append(_copied(g, delta))
    assert sizes[0] == sizes[1]


def test_a_cycle_closed_by_two_new_edges_in_one_delta_is_found(tmp_path: Path) -> None:
    with Graph.open(tmp_path / "g", write=True, create=True) as g:
        for i in range(3):
            g.create("Task", {"title": f"T{i}", "status": "open"}, id=f"t{i}")
        g.relate("t0", "blocks", "t1")
        blocks = g.schema.relations["blocks"].iri
        iri = g.ids.iri
        delta = Delta(
            adds={
                Quad(iri("t1"), blocks, iri("t2"), FACTS),
                Quad(iri("t2"), blocks, iri("t0"), FACTS),
            }
        )
        findings = g.writes.check(delta)
        assert [f.constraint for f in findings] == ["acyclic"]


def test_removing_an_edge_in_the_same_delta_avoids_a_false_cycle(tmp_path: Path) -> None:
    with Graph.open(tmp_path / "g", write=True, create=True) as g:
        for i in range(2):
            g.create("Task", {"title": f"T{i}", "status": "open"}, id=f"t{i}")
        g.relate("t0", "blocks", "t1")
        blocks = g.schema.relations["blocks"].iri
        iri = g.ids.iri
        delta = Delta(
            adds={Quad(iri("t1"), blocks, iri("t0"), FACTS)},
            removes={Quad(iri("t0"), blocks, iri("t1"), FACTS)},
        )
        assert g.writes.check(delta) == []
