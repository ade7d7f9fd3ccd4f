"""The write path validates a bounded neighbourhood, so a write's cost does not grow with
the graph: the scratch store it validates in has the same size at any graph size."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest

from conftest import Cli, quads_of
from ontoloom.api import Graph
from ontoloom.shacl.neighbourhood import Changed
from ontoloom.store.base import Delta
from ontoloom.terms import Quad
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


# -- the defects issue 10 reported: writes accepted that `check` then refused ------------------------
RULES = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .
"""


def _rules(cli: Cli, tmp_path: Path, text: str) -> dict:
    shapes = tmp_path / "rules.ttl"
    shapes.write_text(RULES + text, encoding="utf-8")
    result = cli.json("schema", "add-shapes", str(shapes))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _tasks(cli: Cli, *ids: str, **props: str) -> None:
    for task in ids:
        args = ["create", "Task", "--id", task, "-p", f"title={task}", "-p", "status=open"]
        for k, v in props.items():
            args += ["-p", f"{k}={v}"]
        assert cli(*args).exit_code == 0


def _refused_and_still_conforming(cli: Cli, *write: str) -> None:
    before = quads_of(cli.data_dir)
    result = cli.json(*write)
    assert result.exit_code == 1, result.output
    assert json.loads(result.output)["error"] == "validation"
    assert quads_of(cli.data_dir) == before
    assert cli("check").exit_code == 0


def test_a_shape_walking_an_inverse_path_sees_a_change_at_the_other_end(
    cli: Cli, tmp_path: Path
) -> None:
    # Whatever blocks a task must be urgent: the rule is read from the *blocked* task.
    out = _rules(
        cli,
        tmp_path,
        "ol:BlockersAreUrgent a sh:NodeShape ; sh:targetClass ol:Task ; sh:property [ "
        "sh:path [ sh:inversePath ol:blocks ] ; "
        'sh:node [ sh:property [ sh:path ol:priority ; sh:hasValue "urgent" ] ] ] .',
    )
    assert [c["route"] for c in out["checks"]] == ["bounded"]
    _tasks(cli, "task_a", priority="urgent")
    _tasks(cli, "task_b")
    assert cli("relate", "task_a", "blocks", "task_b").exit_code == 0
    _refused_and_still_conforming(cli, "update", "task_a", "-p", "priority=low")


def test_a_path_with_no_bound_is_followed_to_its_end(cli: Cli, tmp_path: Path) -> None:
    # Nothing downstream of a task may be cancelled, however far down.
    out = _rules(
        cli,
        tmp_path,
        "ol:NothingDownstreamCancelled a sh:NodeShape ; sh:targetClass ol:Task ; sh:property [ "
        "sh:path [ sh:oneOrMorePath ol:blocks ] ; "
        'sh:node [ sh:property [ sh:path ol:status ; sh:in ("open" "blocked" "in_progress" "done") ] ] ] .',
    )
    assert [c["route"] for c in out["checks"]] == ["unbounded"]
    chain = [f"task_{i}" for i in range(6)]
    _tasks(cli, *chain)
    for a, b in pairwise(chain):
        assert cli("relate", a, "blocks", b).exit_code == 0
    _refused_and_still_conforming(cli, "update", chain[-1], "-p", "status=cancelled")


def test_a_sparql_constraint_reading_edges_into_the_focus_sees_them(
    cli: Cli, tmp_path: Path
) -> None:
    # A task that something blocks must say it is blocked.
    out = _rules(
        cli,
        tmp_path,
        'ol: sh:declare [ sh:prefix "ol" ; sh:namespace "https://ontoloom.dev/ns#" ] .\n'
        "ol:BlockedSaysSo a sh:NodeShape ; sh:targetClass ol:Task ; sh:sparql [ "
        'sh:prefixes ol: ; sh:select """SELECT $this WHERE { ?blocker ol:blocks $this . '
        'FILTER NOT EXISTS { $this ol:status "blocked" } }""" ] .',
    )
    assert [c["route"] for c in out["checks"]] == ["bounded"]
    _tasks(cli, "task_a")
    _tasks(cli, "task_b")
    assert cli("update", "task_b", "-p", "status=blocked").exit_code == 0
    assert cli("relate", "task_a", "blocks", "task_b").exit_code == 0
    _refused_and_still_conforming(cli, "update", "task_b", "-p", "status=open")


@pytest.mark.parametrize(
    ("join", "route"),
    [
        # joined through the literal both share: a walk back from "urgent" finds them all
        ('?other ol:priority "urgent" . FILTER (?other != $this)', "bounded"),
        # joined by nothing but a FILTER: a rule about the whole graph
        ('?other ol:priority ?p . FILTER (?p = "urgent" && ?other != $this)', "global"),
    ],
)
def test_a_sparql_constraint_reading_beyond_the_focus_is_checked_exactly(
    cli: Cli, tmp_path: Path, join: str, route: str
) -> None:
    # At most one task may be urgent.
    out = _rules(
        cli,
        tmp_path,
        'ol: sh:declare [ sh:prefix "ol" ; sh:namespace "https://ontoloom.dev/ns#" ] .\n'
        "ol:OneUrgent a sh:NodeShape ; sh:targetClass ol:Task ; sh:sparql [ sh:prefixes ol: ; "
        f'sh:select """SELECT $this WHERE {{ $this ol:priority "urgent" . {join} }}""" ] .',
    )
    assert [c["route"] for c in out["checks"]] == [route]
    _tasks(cli, "task_a", priority="urgent")
    _tasks(cli, "task_b")
    _refused_and_still_conforming(cli, "update", "task_b", "-p", "priority=urgent")


def test_a_writer_that_keeps_losing_the_race_says_busy_and_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another gateway committing first every time: the delta is validated again each time,
    for at least COMMIT_ATTEMPTS tries and ONTOLOOM_LOCK_TIMEOUT seconds, then "busy"."""
    import time

    from ontoloom.errors import Busy, CommitConflict
    from ontoloom.writes import COMMIT_ATTEMPTS

    monkeypatch.setenv("ONTOLOOM_LOCK_TIMEOUT", "0.5")
    with Graph.open(tmp_path / "g", write=True, create=True) as g:
        before = set(g.backend.quads())
        tries = []

        def lost(delta: Delta, expected: int, **_: object) -> int:
            tries.append(expected)
            raise CommitConflict("another gateway committed first")

        monkeypatch.setattr(g.backend, "apply", lost)
        started = time.monotonic()
        with pytest.raises(Busy, match="nothing was stored"):
            g.create("Task", {"title": "T", "status": "open"})
        assert len(tries) >= COMMIT_ATTEMPTS and time.monotonic() - started >= 0.5
        monkeypatch.undo()
        assert set(g.backend.quads()) == before
