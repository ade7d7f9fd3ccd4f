"""One door: every change to the store goes through WritePath.commit, which validates it and
runs the listeners — so no operation leaves the search index needing a full resync."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import ontoloom
from conftest import Cli
from ontoloom.search import SearchIndex
from ontoloom.store import open_backend
from records_fixture import build
from test_proposals import enforced, ingest

SRC = Path(ontoloom.__file__).parent
# Backend methods that change a store. Only writes.py calls them; store/ defines them.
_STORE_WRITES = {"apply", "patch", "bulk_load", "bulk_extend", "checkpoint", "switch"}


def test_nothing_but_the_commit_function_writes_to_a_store() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel == "writes.py" or rel.startswith("store/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _STORE_WRITES
            ):
                offenders.append(f"{rel}:{node.lineno} .{node.func.attr}(…)")
    assert offenders == []


def _in_step(cli: Cli) -> tuple[int, int]:
    with open_backend(cli.data_dir, write=False) as backend:
        store = backend.generation()
    index = SearchIndex.of(cli.data_dir, readonly=True)
    try:
        return index.generation(), store
    finally:
        index.close()


@pytest.fixture
def inst(tmp_path: Path) -> Cli:
    root = build(tmp_path / "inst")
    cli = Cli(root / ".ontoloom")
    assert cli("init", str(root)).exit_code == 0
    return cli


def test_every_operation_keeps_the_search_index_in_step_with_the_store(
    inst: Cli, tmp_path: Path
) -> None:
    shapes = tmp_path / "hint.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .\n"
        "ol:SprintGoalHint a sh:PropertyShape ; sh:targetClass ol:Sprint ; sh:path ol:goal ;"
        " sh:maxCount 1 .\n"
    )
    data = tmp_path / "more.ttl"
    data.write_text(
        "@prefix ol: <https://ontoloom.dev/ns#> . @prefix id: <https://ontoloom.dev/id/> .\n"
        'id:pers_bob a ol:Person ; ol:name "Bob" .\n'
    )
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            [{"op": "create", "type": "Person", "id": "pers_carol", "properties": {"name": "C"}}]
        )
    )
    steps: list[tuple[str, ...]] = [
        ("rebuild",),
        ("create", "Task", "--id", "task_a", "-p", "title=A", "-p", "status=open"),
        ("create", "Task", "--id", "task_b", "-p", "title=B", "-p", "status=open"),
        ("update", "task_a", "-p", "priority=high"),
        ("relate", "task_a", "blocks", "task_b"),
        ("unrelate", "task_a", "blocks", "task_b"),
        ("schema", "add-type", '{"type": "Sprint", "required": ["name"]}'),
        (
            "schema",
            "add-relation",
            '{"rel": "in_sprint", "from_types": ["Task"], "to_types": ["Sprint"]}',
        ),
        ("schema", "add-shapes", str(shapes)),
        ("import", str(data)),
        ("plan", "apply", str(plan)),
        ("delete", "task_b"),
        ("gc",),
    ]
    for step in steps:
        result = inst(*step)
        # The fixture holds records rebuild rejects on purpose: exit 1, the rest is in.
        assert result.exit_code in ((0, 1) if step == ("rebuild",) else (0,)), (step, result.output)
        index, store = _in_step(inst)
        assert index == store, (
            f"after `{' '.join(step)}` the index is at {index}, the store at {store}"
        )
    outcome = ingest(inst, tmp_path, [enforced()])
    assert _in_step(inst)[0] == _in_step(inst)[1], "after enrich --ingest"
    pid = outcome["outcomes"][0]["id"]
    assert inst("proposals", "reject", pid).exit_code == 0
    index, store = _in_step(inst)
    assert index == store, "after proposals reject"


def test_a_write_through_a_graph_opened_read_only_is_refused_by_name(inst: Cli) -> None:
    from ontoloom.api import Graph
    from ontoloom.errors import OntoloomError

    with Graph.open(inst.data_dir) as g:
        before = g.summary()
        with pytest.raises(OntoloomError, match=r"read-only.*write=True"):
            g.create("Task", {"title": "t", "status": "open"})
        assert g.summary() == before
