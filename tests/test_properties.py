"""Property-based: random sequences of valid and invalid operations never leave the store
invalid (pySHACL full validation of the final state conforms), and every refused
operation leaves the store's quads exactly as they were."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ontoloom.api import Graph
from ontoloom.errors import BadInput, NotFound, OntoloomError, ValidationFailed
from ontoloom.schema import builtin_triples
from ontoloom.shacl.oracle import pyshacl_results
from ontoloom.vocab import META, SCHEMA_GRAPH

IDS = [f"n{i}" for i in range(6)]
TYPES = ["Task", "Person", "Project", "Event", "Goal", "Organization", "Note"]
RELS = [
    "blocks",
    "depends_on",
    "assigned_to",
    "has_task",
    "part_of",
    "has_owner",
    "member_of",
    "has_goal",
    "mentions",
    "attendee_of",
    "follows_up",
    "nope",
]
VALUES = st.one_of(
    st.sampled_from(
        [
            "open",
            "done",
            "wip",
            "active",
            "planning",
            "low",
            "urgent",
            "2026-01-01",
            "2025-12-31",
            "x",
            "2026-01-01T10:00:00Z",
        ]
    ),
    st.integers(-3, 3),
    st.booleans(),
)
PROPS = st.dictionaries(
    st.sampled_from(
        [
            "title",
            "status",
            "name",
            "priority",
            "start",
            "end",
            "description",
            "content",
            "password",
            "tags",
            "note",
        ]
    ),
    VALUES,
    max_size=4,
)

operations = st.one_of(
    st.tuples(st.just("create"), st.sampled_from(TYPES), st.sampled_from(IDS), PROPS),
    st.tuples(
        st.just("update"),
        st.sampled_from(IDS),
        PROPS,
        st.lists(st.sampled_from(["title", "status", "end"]), max_size=2),
    ),
    st.tuples(st.just("delete"), st.sampled_from(IDS)),
    st.tuples(st.just("relate"), st.sampled_from(IDS), st.sampled_from(RELS), st.sampled_from(IDS)),
    st.tuples(
        st.just("unrelate"), st.sampled_from(IDS), st.sampled_from(RELS), st.sampled_from(IDS)
    ),
)

# Seeds that make valid entities likely, so relations have something to connect.
VALID = {
    "Task": {"title": "T", "status": "open"},
    "Person": {"name": "P"},
    "Project": {"name": "P", "status": "active"},
    "Event": {"title": "E", "start": "2026-01-01"},
    "Goal": {"description": "G"},
    "Organization": {"name": "O"},
    "Note": {"content": "N"},
}


def apply(g: Graph, op: tuple) -> None:
    kind = op[0]
    if kind == "create":
        _, type_name, entity_id, props = op
        g.create(
            type_name, {**VALID[type_name], **props} if len(props) % 2 == 0 else props, id=entity_id
        )
    elif kind == "update":
        g.update(op[1], op[2], op[3])
    elif kind == "delete":
        g.delete(op[1])
    elif kind == "relate":
        g.relate(op[1], op[2], op[3])
    else:
        g.unrelate(op[1], op[2], op[3])


def state(g: Graph) -> set:
    return {q for q in g.backend.quads() if q.graph_name not in (META, SCHEMA_GRAPH)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operations, min_size=1, max_size=25))
def test_random_operations_keep_the_store_valid_and_refusals_change_nothing(ops: list) -> None:
    ontology, shapes = builtin_triples()
    with (
        tempfile.TemporaryDirectory() as tmp,
        Graph.open(Path(tmp) / "d", write=True, create=True) as g,
    ):
        refused = 0
        for op in ops:
            before = state(g)
            try:
                apply(g, op)
            except (ValidationFailed, BadInput, NotFound):
                refused += 1
                assert state(g) == before, f"refused {op} changed the store"
            except OntoloomError as exc:  # pragma: no cover - any other error is a bug here
                raise AssertionError(f"{op}: {exc}") from exc
        triples = [q.triple for q in state(g)]
        conforms, results, _ = pyshacl_results(triples, shapes, ontology=ontology)
        assert conforms, [(str(r.focus), r.constraint_name) for r in results]
