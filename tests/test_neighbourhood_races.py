"""Concurrency by neighbourhood on a SPARQL store (issue 35): a commit is guarded by what its
validation read (the focus nodes' neighbourhoods, the relations a property path walked, the
schema), not by the store's generation alone.

Each race is made deterministic: gateway A validates, then — before A's commit goes out —
gateway B (another data dir on the same store) commits. The oracle is the spec, not the
implementation: a write that conflicts with B's must be validated again (and refused when
the two together break a shape: triangles and chains of ``blocks``, two owners of one task,
a schema that now refuses it); a write to a disjoint part of the graph must go in without
validating again; and afterwards ``check`` conforms and every acknowledged write is there.
Against a real ``oxigraph serve`` (Virtuoso too under ``make test-virtuoso``)."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from ontoloom.api import Graph
from ontoloom.cli import main
from ontoloom.errors import ValidationFailed
from ontoloom.store.base import Delta
from ontoloom.store.reads import ALL_KEY, ReadSet, Recording, in_key, out_key, touched_keys
from ontoloom.terms import Literal, NamedNode, Quad

pytestmark = pytest.mark.endpoint

OL = "https://ontoloom.dev/ns#"


def _init(tmp_path: Path, server, name: str) -> Path:
    root = tmp_path / name
    args = ["init", str(root), "--endpoint", server.query_url]
    result = CliRunner().invoke(main, [*args, "--update-endpoint", server.update_url])
    assert result.exit_code == 0, result.output
    return root / ".ontoloom"


def _cli(data_dir: Path, *args: str):
    return CliRunner().invoke(main, ["--data-dir", str(data_dir), *args])


def _check(data_dir: Path) -> None:
    result = _cli(data_dir, "check")
    assert result.exit_code == 0, result.output


@contextmanager
def _raced(g: Graph, other: Callable[[], object]) -> Iterator[list[int]]:
    """While the block runs, gateway ``g``'s first commit is preceded by ``other()`` (another
    gateway's write), after ``g`` validated. Yields the number of validations ``g`` ran."""
    backend, writes = g.backend, g.writes
    apply, findings = backend.apply, writes._findings
    raced: list[bool] = []
    validations = [0]

    def interleaved(delta, expected=None, **kw):  # type: ignore[no-untyped-def]
        if not raced:
            raced.append(True)
            other()
        return apply(delta, expected, **kw)

    def counted(*args, **kw):  # type: ignore[no-untyped-def]
        validations[0] += 1
        return findings(*args, **kw)

    backend.apply = interleaved  # type: ignore[method-assign]
    writes._findings = counted  # type: ignore[method-assign]
    try:
        yield validations
    finally:
        backend.apply = apply  # type: ignore[method-assign]
        writes._findings = findings  # type: ignore[method-assign]
    assert raced, "the other gateway never wrote in between"


def _tasks(g: Graph, *ids: str) -> None:
    for i in ids:
        g.create("Task", {"title": i, "status": "open"}, id=i)


def _pair(tmp_path: Path, server) -> tuple[Path, Path]:
    return _init(tmp_path, server, "gw_a"), _init(tmp_path, server, "gw_b")


# -- without a server: what is keyed ------------------------------------------------------------
def test_a_literal_is_keyed_by_the_value_the_store_keeps_and_a_read_notes_its_direction() -> None:
    s, p = NamedNode("http://example.org/s"), NamedNode("http://example.org/p")
    integer = NamedNode("http://www.w3.org/2001/XMLSchema#integer")
    assert in_key(Literal("01", datatype=integer)) == in_key(Literal("1", datatype=integer))
    delta = Delta(adds={Quad(s, p, Literal("1", datatype=integer), NamedNode("http://g"))})
    assert {out_key(s), in_key(Literal("1", datatype=integer))} <= touched_keys(delta)
    assert in_key(s) not in touched_keys(delta)  # nothing points at s

    class Stub:
        def around(self, nodes, predicate=None, *, incoming=False):  # type: ignore[no-untyped-def]
            return iter(())

        def quads(self):  # type: ignore[no-untyped-def]
            return iter(())

    reads = ReadSet(3)
    seen = Recording(Stub(), reads)
    list(seen.around([s], incoming=True))
    assert reads.keys == {ALL_KEY, in_key(s)} and not reads.whole
    list(seen.around([Literal("x")]))  # nothing starts at a literal: nothing to guard
    assert reads.keys == {ALL_KEY, in_key(s)}
    list(seen.quads())
    assert reads.whole  # a read of everything is guarded by the whole store's generation


# -- races, deterministic ---------------------------------------------------------------------
def test_a_disjoint_write_in_between_commits_without_validating_again(
    tmp_path: Path, endpoint_server
) -> None:
    a, b = _pair(tmp_path, endpoint_server)
    with Graph.open(a, write=True) as ga, Graph.open(b, write=True) as gb:
        # (On an empty store the two would conflict, rightly: whether the class, the status
        # value, … are in the graph at all is read, and the first write changes it.)
        _tasks(ga, "task_0")
        with _raced(ga, lambda: _tasks(gb, "task_b")) as validations:
            _tasks(ga, "task_a")
        assert validations == [1]
        before = ga.backend.generation()
        with _raced(ga, lambda: gb.update("task_b", {"title": "renamed"}, [])) as validations:
            ga.update("task_a", {"title": "renamed too"}, [])
        assert validations == [1]
        assert ga.backend.generation() == before + 2  # one sequence of generations
    _check(a)
    listed = json.loads(_cli(b, "list", "--json").output)
    assert sorted(e["id"] for e in listed) == ["task_0", "task_a", "task_b"]


def test_a_write_to_the_same_node_in_between_is_validated_again(
    tmp_path: Path, endpoint_server
) -> None:
    a, b = _pair(tmp_path, endpoint_server)
    with Graph.open(a, write=True) as ga, Graph.open(b, write=True) as gb:
        _tasks(ga, "task_x")
        with _raced(ga, lambda: gb.update("task_x", {"status": "done"}, [])) as validations:
            ga.update("task_x", {"title": "still fine"}, [])
        assert validations == [2]
    asked = f"SELECT ?t ?s WHERE {{ ?x <{OL}title> ?t ; <{OL}status> ?s }}"
    shown = _cli(b, "query", asked, "--format", "json")
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.output)["results"]["bindings"]
    assert [(r["t"]["value"], r["s"]["value"]) for r in rows] == [("still fine", "done")]
    _check(b)


def test_a_triangle_closed_by_two_gateways_is_refused_to_the_second(
    tmp_path: Path, endpoint_server
) -> None:
    """x → y exists; A adds y → z, B adds z → x: each alone is fine, both close x→y→z→x.
    Disjoint nodes, one relation: acyclicity reads the whole relation, so they conflict."""
    a, b = _pair(tmp_path, endpoint_server)
    with Graph.open(a, write=True) as ga, Graph.open(b, write=True) as gb:
        _tasks(ga, "task_x", "task_y", "task_z")
        ga.relate("task_x", "blocks", "task_y")
        with (
            _raced(ga, lambda: gb.relate("task_z", "blocks", "task_x")) as validations,
            pytest.raises(ValidationFailed, match="cycle"),
        ):
            ga.relate("task_y", "blocks", "task_z")
        assert validations == [2]
    _check(a)


def test_a_chain_closed_far_from_either_end_is_refused_to_the_second(
    tmp_path: Path, endpoint_server
) -> None:
    """c0 → c1 → … → c5; A adds c5 → d, B adds d → c0 (d is a node neither read around the
    other's edge): the cycle runs through six links A's validation walked, not B's."""
    a, b = _pair(tmp_path, endpoint_server)
    chain = [f"task_c{i}" for i in range(6)]
    with Graph.open(a, write=True) as ga, Graph.open(b, write=True) as gb:
        _tasks(ga, *chain, "task_d")
        for here, there in itertools.pairwise(chain):
            ga.relate(here, "blocks", there)
        with (
            _raced(ga, lambda: gb.relate("task_d", "blocks", "task_c0")),
            pytest.raises(ValidationFailed, match="cycle"),
        ):
            ga.relate("task_c5", "blocks", "task_d")
    _check(b)


def test_two_owners_given_to_one_task_at_once_leave_it_one(tmp_path: Path, endpoint_server) -> None:
    """has_owner is many-to-one. The task is owned by p0; A replaces p0 with p1 while B
    replaces p0 with p2 in between: A's delta (drop p0, add p1), committed blindly, would
    leave two owners. It is validated again on the store as B left it, and refused."""
    a, b = _pair(tmp_path, endpoint_server)
    with Graph.open(a, write=True) as ga, Graph.open(b, write=True) as gb:
        _tasks(ga, "task_t")
        for p in ("p0", "p1", "p2"):
            ga.create("Person", {"name": p}, id=f"person_{p}")
        ga.relate("task_t", "has_owner", "person_p0")

        # relate() on a many-to-one relation replaces: A's delta drops p0 and adds p1
        with (
            _raced(ga, lambda: gb.relate("task_t", "has_owner", "person_p2")),
            pytest.raises(ValidationFailed, match="owner"),
        ):
            ga.relate("task_t", "has_owner", "person_p1")
    owners = _cli(a, "query", f"SELECT ?o WHERE {{ ?t <{OL}has_owner> ?o }}", "--format", "json")
    assert owners.exit_code == 0, owners.output
    found = [r["o"]["value"] for r in json.loads(owners.output)["results"]["bindings"]]
    assert [f.rsplit("/", 1)[-1] for f in found] == ["person_p2"]
    _check(a)


def test_a_schema_changed_in_between_refuses_what_its_new_shapes_refuse(
    tmp_path: Path, endpoint_server
) -> None:
    """A validated a create under the old schema; B adds a shape refusing it before A's
    commit goes out. The schema generation is part of every precondition: A validates
    again under the new shapes, and is refused, though no node A read was touched."""
    a, b = _pair(tmp_path, endpoint_server)
    shapes = tmp_path / "short.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        "@prefix ol: <https://ontoloom.dev/ns#> .\n"
        "ol:ShortTitle a sh:NodeShape ; sh:targetClass ol:Task ;\n"
        "  sh:property [ sh:path ol:title ; sh:maxLength 5 ] .\n"
    )

    def b_adds_shapes() -> None:
        added = _cli(b, "schema", "add-shapes", str(shapes))
        assert added.exit_code == 0, added.output

    with Graph.open(a, write=True) as ga:
        ga.create("Task", {"title": "ok", "status": "open"}, id="task_1")
        with _raced(ga, b_adds_shapes), pytest.raises(ValidationFailed, match="title"):
            ga.create("Task", {"title": "far too long", "status": "open"}, id="task_2")
    listed = json.loads(_cli(b, "list", "--json").output)
    assert [e["id"] for e in listed] == ["task_1"]
    _check(b)


# -- races, concurrent --------------------------------------------------------------------------
def test_gateways_writing_at_once_lose_nothing_and_close_no_cycle(
    tmp_path: Path, endpoint_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three gateways at once: each creates its own tasks (disjoint) and links them into a
    ring of ``blocks`` shared by all (conflicting). Every acknowledged create is there, the
    ring is never closed, the generations form one sequence, and ``check`` conforms."""
    monkeypatch.setenv("ONTOLOOM_LOCK_TIMEOUT", "20")
    gateways = [_init(tmp_path, endpoint_server, f"gw{i}") for i in range(3)]
    ring = [f"task_r{i}" for i in range(6)]
    with Graph.open(gateways[0], write=True) as g:
        _tasks(g, *ring)
        start = g.backend.generation()
    made: list[str] = []
    linked: list[tuple[str, str]] = []
    errors: list[BaseException] = []

    def write(data_dir: Path, n: int) -> None:
        try:
            with Graph.open(data_dir, write=True) as g:
                for i in range(4):
                    made.append(g.create("Task", {"title": f"T{n}-{i}", "status": "open"}).id)
                    here, there = ring[(2 * n + i) % 6], ring[(2 * n + i + 1) % 6]
                    try:
                        g.relate(here, "blocks", there)
                        linked.append((here, there))
                    except ValidationFailed:
                        pass  # it would have closed the ring
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(d, n)) for n, d in enumerate(gateways)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    listed = {e["id"] for e in json.loads(_cli(gateways[1], "list", "--json").output)}
    assert set(made) <= listed and len(made) == 12
    assert len(set(linked)) < 6  # six links would be the ring
    with Graph.open(gateways[2]) as g:
        changes = g.backend.changes_since(start)
        assert changes is not None
        numbers = [n for n, _ in changes]
        assert numbers == list(range(start + 1, start + 1 + len(numbers)))
    _check(gateways[2])
