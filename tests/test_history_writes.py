"""The write side of facts in time (issue 36): a write's versions are derived from its delta
and committed with it, validated only as far as a shape can read them. Held to the full
route — every derived quad validated with the delta, as any quad — and to full validation of
the whole store before and after, for random timed writes, with the built-in shapes and with
user shapes that do read versions."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from differential import ACYCLIC, key
from ontoloom.api import Graph
from ontoloom.errors import BadInput, NotFound, ValidationFailed
from ontoloom.extensions import add_shapes
from ontoloom.store.base import Delta
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.terms import Literal, NamedNode, Quad
from ontoloom.vocab import HISTORY, RDF_OBJECT, RDF_SUBJECT, VERSION_BASE

PROLOGUE = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix schema: <https://schema.org/> .
"""
# Shapes that read versions, each another way: by class, as the subjects of a version's
# predicate, and walking back from an entity to the versions that name it.
READS_VERSIONS = {
    "by class": """ol:NoDoneVersion a sh:NodeShape ; sh:targetClass rdf:Statement ;
        sh:property [ sh:path rdf:object ; sh:not [ sh:hasValue "done" ] ] .""",
    "subjects of": """ol:NeverEnded a sh:NodeShape ; sh:targetSubjectsOf schema:validThrough ;
        sh:property [ sh:path schema:validThrough ; sh:maxCount 0 ] .""",
    "walked back": """ol:FewVersions a sh:NodeShape ; sh:targetClass ol:Task ;
        sh:property [ sh:path [ sh:inversePath rdf:subject ] ; sh:maxCount 4 ] .""",
}


def _with_shapes(graph: Graph, tmp_path: Path, text: str) -> None:
    path = tmp_path / "shapes.ttl"
    path.write_text(PROLOGUE + text, encoding="utf-8")
    add_shapes(graph, path)


def test_the_built_in_shapes_read_no_version_but_through_the_secret_rule(graph: Graph) -> None:
    assert graph.writes.blind_to_versions


@pytest.mark.parametrize("name", sorted(READS_VERSIONS))
def test_a_user_shape_that_reads_versions_has_them_validated(
    graph: Graph, tmp_path: Path, name: str
) -> None:
    _with_shapes(graph, tmp_path, READS_VERSIONS[name])
    assert not graph.writes.blind_to_versions
    graph.create("Task", {"title": "Short", "status": "open"}, id="task_a")
    # a version of "done"; the end of the "open" one; a fifth version about task_a
    with pytest.raises(ValidationFailed):
        graph.update("task_a", {"title": "Longer", "status": "done"})
    assert graph.get("task_a").properties["status"] == "open"


def test_a_secret_in_a_derived_quad_is_refused_as_in_any_quad(graph: Graph) -> None:
    node = NamedNode(VERSION_BASE + "0123456789abcdef01234567")
    secret = Quad(node, RDF_OBJECT, Literal("password: hunter2 is the one"), HISTORY)
    plain = Quad(node, RDF_SUBJECT, graph.ids.iri("task_a"), HISTORY)
    with pytest.raises(ValidationFailed) as derived:
        graph.writes.commit(Delta(), derived=Delta(adds={secret, plain}))
    with pytest.raises(ValidationFailed) as whole:
        graph.writes.commit(Delta(adds={secret, plain}))
    assert derived.value.findings == whole.value.findings
    assert not any(q.graph_name == HISTORY for q in graph.backend.quads(HISTORY))


def test_a_stored_version_some_quad_names_is_validated_with_the_delta(graph: Graph) -> None:
    graph.create("Task", {"title": "Named", "status": "open"}, id="task_a")
    (version,) = [v["version"] for v in graph.history("task_a") if v["predicate"] == "status"]
    node = NamedNode(VERSION_BASE + version)
    graph.writes.commit(Delta(adds={Quad(graph.ids.iri("task_a"), RDF_OBJECT, node, HISTORY)}))
    changes = graph.changes()
    changes.update("task_a", {"status": "done"})
    assert graph.writes._reads_derived(changes.history())


# -- the derived route against the full route and full validation ------------------------------
def _random_write(graph: Graph, rng: random.Random, tasks: list[str], people: list[str]):
    """One staged write of a random kind with random times (None: nothing to stage)."""
    days = [None, None, "2020-01-05", "2020-02-01", "2031-01-01", "2032-06-01"]
    start, end = rng.choice(days), rng.choice(days)
    if start and end and end <= start:
        start, end = end, start
    if start == end:
        end = None
    kind = rng.choice(["create", "update", "relate", "relate", "unrelate", "blocks", "delete"])
    changes = graph.changes()
    try:
        if kind == "create":
            changes.timed(*_times(start, None))
            title = rng.choice(["T", "A title longer than twelve", "password: hunter2 x"])
            tasks.append(changes.create("Task", {"title": title, "status": "open"}))
        elif kind == "update" and tasks:
            changes.timed(*_times(start, None))
            status = rng.choice(["open", "done", "blocked"])
            changes.update(rng.choice(tasks), {"status": status})
        elif kind in ("relate", "blocks") and tasks:
            changes.timed(*_times(start, end))
            if kind == "relate":
                changes.relate(rng.choice(tasks), "assigned_to", rng.choice(people))
            else:
                changes.relate(rng.choice(tasks), "blocks", rng.choice(tasks))
        elif kind == "unrelate" and tasks:
            changes.timed(*_times(None, end))
            changes.unrelate(rng.choice(tasks), "assigned_to", rng.choice(people))
        elif kind == "delete" and len(tasks) > 2:
            gone = tasks.pop(rng.randrange(len(tasks)))
            changes.delete(gone, purge=rng.random() < 0.3)
        else:
            return None
    except (BadInput, NotFound, ValidationFailed):
        return None
    return changes


def _times(start: str | None, end: str | None):
    from ontoloom.history import parse_time

    return parse_time(start, "--valid-from"), parse_time(end, "--valid-to")


@pytest.mark.parametrize("shapes", [None, *sorted(READS_VERSIONS)])
@pytest.mark.parametrize("seed", range(2))
def test_derived_versions_are_refused_exactly_as_full_validation_finds(
    graph: Graph, tmp_path: Path, shapes: str | None, seed: int
) -> None:
    if shapes is not None:
        _with_shapes(graph, tmp_path, READS_VERSIONS[shapes])
    rng = random.Random(seed)
    people = [graph.create("Person", {"name": n}).id for n in ("Ana", "Ben")]
    tasks = [graph.create("Task", {"title": "T", "status": "open"}).id for _ in range(3)]
    writes, schema, checked = graph.writes, graph.schema, 0
    for _ in range(24):
        changes = _random_write(graph, rng, tasks, people)
        if changes is None:
            continue
        try:
            derived = changes.history()
        except (BadInput, ValidationFailed):
            continue  # a rule per instant: the history's own refusal, before any shape
        source = changes.delta.normalized()
        whole = Delta(adds=source.adds | derived.adds, removes=source.removes | derived.removes)
        # the route the write takes, against the full route (every derived quad validated)
        route = whole if writes._reads_derived(derived) else source
        taken = {key(r) for r in writes.new_violations(route)}
        assert taken == {key(r) for r in writes.new_violations(whole)}
        # … and against full validation of the whole store, before and after the write
        copy = EmbeddedBackend.scratch(graph.backend.quads())
        before = {key(r) for r in _audit(schema, copy)}
        copy.patch(whole)
        made = {key(r) for r in _audit(schema, copy)} - before
        assert taken == {k for k in made if k[-1] != ACYCLIC}  # cycles: new_cycles' part
        checked += 1
        try:
            graph.commit(changes)
        except ValidationFailed:
            assert taken or writes.new_cycles(source) or _secret_names(writes, whole)
        else:
            assert not taken
    assert checked >= 8


def _audit(schema, backend: EmbeddedBackend):
    return schema.audit_validator.validate(backend, hierarchy=schema.hierarchy).violations


def _secret_names(writes, delta: Delta) -> bool:
    from ontoloom.writes import _secret_names as names

    return bool(names(delta.adds, writes.ids))
