"""The memory-server drop-in never surprises an agent written for the reference server
(issue 14): the whole graph from read_graph, what the reference accepts accepted, words kept
verbatim, observations in order, refusals in the agent's names, no writes into the client's
directory; and the ways in from the reference's memory.jsonl and sage-memory's database,
tested on files the real tools wrote (tests/fixtures/memory-import/README.md)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import Cli, quads_of
from test_mcp import ONTOLOOM, Session, run

FIXTURES = Path(__file__).parent / "fixtures" / "memory-import"
INTERNAL_ID = re.compile(r"\b[a-z]{4}_[0-9a-f]{8}\b")


def ent(name: str, kind: str, *obs: str) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": list(obs)}


def rel(a: str, words: str, b: str) -> dict[str, str]:
    return {"from": a, "to": b, "relationType": words}


# The calls the issue says were refused, and more of the same kind.
ENTITIES = [
    ent("Alice", "person", "z: added first", "a: added second"),
    ent("Acme", "company"),
    ent("Org", "organization"),
    ent("Standup", "event", "mondays"),
    ent("Billing", "project"),
    ent("Event sourcing", "concept"),
    ent("CQRS", "concept"),
    ent("Fix bug", "task"),
    ent("Ship", "task"),
]
RELATIONS = [
    rel("Billing", "funded by", "Acme"),  # unknown to the schema: open, verbatim
    rel("Event sourcing", "inspired by", "CQRS"),  # open
    rel("Fix bug", "blocks", "Ship"),  # typed
    rel("Alice", "works at", "Acme"),  # open
    rel("Alice", "member of", "Org"),  # typed member_of, read back in these words
    rel("Fix bug", "assigned to", "Alice"),  # typed
    rel("Alice", "works_at", "Org"),
]
# Words that name a schema relation are that relation, under its rules: refused, as the
# typed `relate` refuses them, where the ends do not fit or the relation closes a cycle.
REFUSED = [
    (
        rel("Alice", "attendee of", "Standup"),
        "attendee_of points at an Event; 'Standup' is a Thing (entityType 'event')",
    ),
    (rel("Billing", "part of", "Acme"), "part_of starts at a Task"),  # starts at a Task…
    (rel("Event sourcing", "depends on", "CQRS"), "depends_on starts at a Task"),  # concepts
    (rel("Ship", "blocks", "Fix bug"), "would close the cycle 'Ship' → 'Fix bug' → 'Ship'"),
]


def test_what_the_reference_accepts_is_accepted_and_read_back_as_written(
    data_dir: Path,
) -> None:
    async def body(s: Session) -> None:
        assert await s.ok("create_entities", entities=ENTITIES) == ENTITIES
        assert await s.ok("create_relations", relations=RELATIONS) == RELATIONS
        assert await s.ok("create_relations", relations=RELATIONS) == []  # all there
        await s.ok(
            "add_observations",
            observations=[{"entityName": "Alice", "contents": ["m: added third"]}],
        )
        whole = await s.ok("read_graph")
        assert "nextCursor" not in whole and "note" not in whole
        by_name = {e["name"]: e for e in whole["entities"]}
        assert sorted(by_name) == sorted(e["name"] for e in ENTITIES)
        for e in ENTITIES:  # entityType verbatim, known to the schema or not
            assert by_name[e["name"]]["entityType"] == e["entityType"]
        assert by_name["Alice"]["observations"] == [
            "z: added first",
            "a: added second",
            "m: added third",
        ]
        key = lambda r: (r["from"], r["relationType"], r["to"])  # noqa: E731
        assert sorted(whole["relations"], key=key) == sorted(RELATIONS, key=key)

        # The typed tools see typed relations by their declared names, open ones as open.
        alice = (await s.ok("search", query="Alice"))[0]["id"]
        seen = {(r["rel"], r.get("open", False)) for r in await s.ok("relations", id=alice)}
        assert {("works at", True), ("member_of", False)} <= seen
        assert ("assigned_to", False) in seen and ("works_at", True) in seen
        # SPARQL: an open relation is an ol:OpenRelation labelled with the agent's words.
        found = await s.ok(
            "query",
            query='SELECT ?s ?o WHERE { ?p a ol:OpenRelation ; rdfs:label "works at" . ?s ?p ?o }',
        )
        assert len(found["results"]["bindings"]) == 1
        assert (await s.ok("check"))["conforms"] is True
        before = await s.ok("read_graph")
        for call, rule in REFUSED:
            text, _ = await s.refused("create_relations", relations=[RELATIONS[0], call])
            assert rule in text and not INTERNAL_ID.search(text), text
        assert await s.ok("read_graph") == before

        # Deleting by the agent's words removes typed and open relations alike.
        await s.raw("delete_relations", relations=RELATIONS[2:])
        left = (await s.ok("read_graph"))["relations"]
        assert sorted(left, key=key) == sorted(RELATIONS[:2], key=key)
        await s.raw("delete_entities", entityNames=["Alice", "Standup"])
        assert [r["from"] for r in (await s.ok("read_graph"))["relations"]] == [
            "Billing",
            "Event sourcing",
        ]
        assert (await s.ok("check"))["conforms"] is True

    run(data_dir, body)


def test_refusals_say_why_in_the_agents_names(data_dir: Path) -> None:
    async def body(s: Session) -> None:
        await s.ok("create_entities", entities=ENTITIES[:2])
        before = await s.ok("read_graph")
        for text, _ in [
            await s.refused("create_relations", relations=[rel("Alice", "knows", "Bob")]),
            await s.refused(
                "add_observations", observations=[{"entityName": "Bob", "contents": ["x"]}]
            ),
        ]:
            assert "Bob" in text and "create_entities" in text
            assert "ontoloom " not in text and "-p " not in text and not INTERNAL_ID.search(text)
        text, _ = await s.refused("create_relations", relations=[rel("Alice", "knows", "Bob")])
        assert "refused on purpose" in text
        text, _ = await s.refused(
            "add_observations",
            observations=[{"entityName": "Alice", "contents": ["password=Hunter2fake"]}],
        )
        assert text.startswith("refused on purpose: secrets are never stored")
        assert "Alice" in text and not INTERNAL_ID.search(text) and "Hunter2fake" not in text
        assert await s.ok("read_graph") == before

    run(data_dir, body)


def test_read_graph_past_1000_entities_starts_by_saying_what_it_left_out(
    tmp_path: Path,
) -> None:
    from ontoloom.api import Graph
    from ontoloom.memory import Memory
    from ontoloom.ops.memory import _graph_text

    with Graph.open(tmp_path / "d", write=True, create=True) as g:
        memory = Memory(g)
        memory.create_entities([ent(f"n{i:04d}", "person") for i in range(1000)])
        assert len(memory.read_graph()["entities"]) == 1000  # the reference's answer
        memory.create_entities([ent("one more", "widget")])
        page = memory.read_graph()
        assert len(page["entities"]) == 1000 and page["nextCursor"]
        text = _graph_text(page)
        assert text.startswith("Returned entities 1-1000 of 1001")
        assert page["nextCursor"] in text.splitlines()[0]
        rest = memory.read_graph(page["nextCursor"])
        assert len(rest["entities"]) == 1 and "nextCursor" not in rest
        assert _graph_text(rest).startswith("Returned 1 entity after the cursor")


def test_search_nodes_finds_what_the_reference_finds(data_dir: Path) -> None:
    async def body(s: Session) -> None:
        await s.ok("create_entities", entities=ENTITIES)
        # the reference: a case-insensitive substring of name, entityType or an observation
        for query, expected in [
            ("ali", {"Alice"}),
            ("CONCEPT", {"Event sourcing", "CQRS"}),
            ("added SECOND", {"Alice"}),
            ("comp", {"Acme"}),
        ]:
            found = await s.ok("search_nodes", query=query)
            assert expected <= {e["name"] for e in found["entities"]}, query

    run(data_dir, body)


def _serve_outside_instance(cwd: Path, env: dict[str, str], errlog: Path) -> None:
    async def main() -> None:
        params = StdioServerParameters(command=ONTOLOOM, args=["mcp"], env=env, cwd=str(cwd))
        with errlog.open("w") as err:
            async with (
                stdio_client(params, errlog=err) as (r, w),
                ClientSession(r, w) as session,
            ):
                await session.initialize()
                result = await session.call_tool("create_entities", {"entities": [ENTITIES[0]]})
                assert not result.isError

    asyncio.run(main())


def test_outside_any_instance_the_server_uses_the_per_user_data_dir(tmp_path: Path) -> None:
    cwd, xdg = tmp_path / "client-cwd", tmp_path / "xdg"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_HOME"}
    env["XDG_DATA_HOME"] = str(xdg)  # the per-user data dir on Linux
    errlog = tmp_path / "stderr.txt"
    _serve_outside_instance(cwd, env, errlog)
    assert list(cwd.iterdir()) == []  # nothing written where the client started it
    assert (xdg / "ontoloom" / "store").exists()
    said = errlog.read_text()
    assert said.count("per-user data dir") == 1 and str(xdg / "ontoloom") in said

    home = tmp_path / "home"
    _serve_outside_instance(cwd, {**env, "ONTOLOOM_HOME": str(home)}, errlog)
    assert (home / "store").exists() and list(cwd.iterdir()) == []
    assert "per-user" not in errlog.read_text()


# -- import --------------------------------------------------------------------------------
def ok(cli: Cli, *args: str) -> Any:
    result = cli("--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _reference_file() -> list[dict[str, Any]]:
    lines = (FIXTURES / "memory.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_import_memory_jsonl_maps_as_the_drop_in_does(cli: Cli, tmp_path: Path) -> None:
    from ontoloom.api import Graph
    from ontoloom.memory import Memory

    file = FIXTURES / "memory.jsonl"
    result = cli("--json", "import", str(file), "--from", "memory-jsonl")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["stored"] is True
    refused = {
        r.get("name") or (r["from"], r["relationType"], r["to"]): r["why"]
        for r in report["refused"]
    }
    # a line the drop-in would refuse is refused: a schema relation's rules apply to it
    assert refused == {
        "Staging DB": refused["Staging DB"],
        ("John_Smith", "knows", "Jane_Doe"): refused[("John_Smith", "knows", "Jane_Doe")],
        ("John_Smith", "attendee of", "Weekly standup"): "attendee_of points at an Event",
        ("Billing v2", "part of", "Acme Corp"): "part_of points at a Project",
        ("Event sourcing", "depends on", "CQRS"): (
            "depends_on points at a Task, a Project or an Event"
        ),
        ("Deploy checkout", "blocks", "Fix payment timeout"): refused[
            ("Deploy checkout", "blocks", "Fix payment timeout")
        ],
    }
    assert "secret" in refused["Staging DB"]
    assert "refused on purpose" in refused[("John_Smith", "knows", "Jane_Doe")]
    assert "close the cycle" in refused[("Deploy checkout", "blocks", "Fix payment timeout")]
    assert {e["name"] for e in report["entities"]["open"]} == {
        "Acme Corp",
        "Weekly standup",
        "Event sourcing",
        "CQRS",
    }
    assert {(r["relationType"], r["rel"]) for r in report["relations"]["typed"]} == {
        ("member of", "member_of"),
        ("assigned_to", "assigned_to"),
        ("part of", "part_of"),
        ("blocks", "blocks"),
    }
    assert "works at" in {r["relationType"] for r in report["relations"]["open"]}

    # The same calls through the drop-in give the same graph, as the agent reads it.
    items = _reference_file()
    entities = [
        {k: i[k] for k in ("name", "entityType", "observations")}
        for i in items
        if i["type"] == "entity" and i["name"] != "Staging DB"
    ]
    relations = [
        {k: i[k] for k in ("from", "to", "relationType")}
        for i in items
        if i["type"] == "relation" and (i["from"], i["relationType"], i["to"]) not in refused
    ]
    with Graph.open(tmp_path / "replay", write=True, create=True) as g:
        memory = Memory(g)
        memory.create_entities(entities)
        memory.create_relations(relations)
        replayed = memory.read_graph()
    with Graph.open(cli.data_dir) as g:
        imported = Memory(g).read_graph()
    assert imported == replayed
    # ... which is the reference's file, but for what was refused
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(imported["entities"], key=key) == sorted(entities, key=key)
    assert sorted(imported["relations"], key=key) == sorted(relations, key=key)
    assert ok(cli, "check")["conforms"] is True

    # The oracle: pySHACL finds the imported graph (open relations and all) conforms.
    from ontoloom.schema import builtin_triples
    from ontoloom.shacl.oracle import pyshacl_results
    from ontoloom.store.rdfio import read_triples
    from ontoloom.terms import NamedNode
    from ontoloom.vocab import OL
    from test_fast_path_vs_pyshacl import shape_subset

    exported = cli("export", "--format", "ntriples", "--graph", "facts").output
    ontology, shapes = builtin_triples()
    # The secret rule is compared with pySHACL in tests/test_secrets.py; pySHACL re-parses
    # its long query per node (the ontology's too), minutes here. The import's own refusal
    # of the secret is asserted above.
    shapes = shape_subset(shapes, without=NamedNode(OL + "NoSecrets"))
    conforms, results, _ = pyshacl_results(
        read_triples(data=exported, format_name="ntriples"),
        shapes,
        ontology=ontology,
        advanced=True,
    )
    assert conforms, results

    again = json.loads(cli("--json", "import", str(file), "--from", "memory-jsonl").output)
    assert again["entities"]["typed"] == [] and len(again["entities"]["existing"]) == 9
    assert again["relations"]["typed"] == [] or not any(
        r["new"] for r in again["relations"]["typed"] + again["relations"]["open"]
    )


def _empty_store(cli: Cli) -> None:
    from ontoloom.api import Graph

    with Graph.open(cli.data_dir, write=True, create=True):
        pass


def test_import_dry_run_stores_nothing_and_reports_the_same(cli: Cli) -> None:
    file = str(FIXTURES / "memory.jsonl")
    fresh = json.loads(cli("--json", "import", file, "--from", "memory-jsonl", "--dry-run").output)
    assert not cli.data_dir.exists() and fresh["stored"] is False  # no store: none made
    _empty_store(cli)
    before = quads_of(cli.data_dir)
    dry = json.loads(cli("--json", "import", file, "--from", "memory-jsonl", "--dry-run").output)
    assert dry["dry_run"] is True and dry["stored"] is False
    assert quads_of(cli.data_dir) == before
    real = json.loads(cli("--json", "import", file, "--from", "memory-jsonl").output)
    for part in ("entities", "relations", "refused"):
        assert dry[part] == real[part]
    text = cli("import", file, "--from", "memory-jsonl", "--dry-run").output
    assert text.startswith("dry run (nothing stored)") and "already there" in text


def test_import_sage_memory_reads_its_ontology_entries(cli: Cli) -> None:
    result = cli("--json", "import", str(FIXTURES / "sage-memory.db"), "--from", "sage-memory")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    typed = {e["name"]: e for e in report["entities"]["typed"]}
    assert set(typed) == {
        "Fix payment timeout in checkout flow",
        "Deploy checkout",
        "Alice Chen",
        "Billing v2 migration",
    }
    assert typed["Fix payment timeout in checkout flow"]["properties"] == ["priority", "status"]
    assert [e["name"] for e in report["entities"]["open"]] == ["Saga pattern"]
    assert [r.get("name") or r["relationType"] for r in report["refused"]] == [
        "depends_on",  # a Person depends on nothing: depends_on starts at a Task or a Project
        "Stripe key",  # a secret
    ]
    assert "sk_live" not in result.output
    assert [s["title"] for s in report["skipped"]] == ["Checkout retries need idempotency keys"]
    assert {(r["relationType"], r["rel"]) for r in report["relations"]["typed"]} == {
        ("blocks", "blocks"),
        ("assigned_to", "assigned_to"),
        ("has_task", "has_task"),
    }
    assert {r["relationType"] for r in report["relations"]["open"]} == {"uses"}
    task = ok(cli, "list", "--type", "Task")
    status = {t["properties"]["title"]: t["properties"]["status"] for t in task}
    assert status["Fix payment timeout in checkout flow"] == "in_progress"  # kept, not defaulted
    person = ok(cli, "list", "--type", "Person")[0]
    assert person["properties"]["observations"] == [
        "email: alice@example.com",
        "role: Backend Lead",
    ]
    assert ok(cli, "check")["conforms"] is True


def test_import_refuses_bad_input_readably(cli: Cli, tmp_path: Path) -> None:
    jsonl = tmp_path / "memory.jsonl"
    jsonl.write_text('{"type":"entity","name":"A","entityType":"x","observations":[]}\n{oops\n')
    result = cli("import", str(jsonl))
    assert result.exit_code == 2 and "--from memory-jsonl" in result.output
    result = cli("import", str(jsonl), "--from", "memory-jsonl")
    assert (
        result.exit_code == 0
        and "memory.jsonl:2: " in result.output
        and "not JSON" in result.output
    )
    secret = tmp_path / "secret.jsonl"
    secret.write_text(
        '{"type":"entity","name":"A","entityType":"x","observations":[]}\n'
        '{"type":"entity","name":"B","entityType":"y","observations":["ok"]}\n'
        '{"type":"relation","from":"A","to":"B","relationType":"password=Hunter2fake"}\n'
        '{"type":"relation","from":"A","to":"B","relationType":"knows"}\n'
    )
    result = cli("--json", "import", str(secret), "--from", "memory-jsonl")
    assert result.exit_code == 0 and "Hunter2fake" not in result.output
    report = json.loads(result.output)
    assert [r["where"] for r in report["refused"]] == ["secret.jsonl:3"]
    assert [r["relationType"] for r in report["relations"]["open"]] == ["knows"]
    bad = tmp_path / "memory.db"
    bad.write_text("not sqlite")
    result = cli("import", str(bad), "--from", "sage-memory")
    assert result.exit_code != 0 and "not a sage-memory database" in result.output
    assert "Traceback" not in result.output
    result = cli("import", str(tmp_path / "missing.jsonl"), "--from", "memory-jsonl")
    assert result.exit_code != 0 and "no such file" in result.output
    result = cli("import", str(jsonl), "--from", "memory-jsonl", "--format", "turtle")
    assert result.exit_code == 2


@pytest.mark.parametrize(
    "text", ["", "\n  \n", "not json\n", "# notes\n[oops\n"], ids=["empty", "blank", "text", "junk"]
)
def test_a_memory_file_with_no_json_line_is_bad_input_and_stores_nothing(
    cli: Cli, tmp_path: Path, text: str
) -> None:
    jsonl = tmp_path / "memory.jsonl"
    jsonl.write_text(text)
    for dry in ([], ["--dry-run"]):
        result = cli("import", str(jsonl), "--from", "memory-jsonl", *dry)
        assert result.exit_code == 2, result.output
        assert "memory.jsonl has no JSON line" in result.stderr
        as_json = json.loads(cli.json("import", str(jsonl), "--from", "memory-jsonl", *dry).stdout)
        assert as_json["error"] == "bad_input" and "stored" not in as_json


def test_a_refused_line_is_reported_without_a_doubled_colon(cli: Cli, tmp_path: Path) -> None:
    jsonl = tmp_path / "memory.jsonl"
    jsonl.write_text('{"type":"entity","name":"A","entityType":"x","observations":[]}\n{oops\n')
    result = cli("import", str(jsonl), "--from", "memory-jsonl")
    assert result.exit_code == 0, result.output
    assert "refused memory.jsonl:2: not JSON" in result.output
    assert ": :" not in result.output


def test_errors_from_below_the_drop_in_lose_their_cli_advice() -> None:

    from ontoloom.errors import BadInput, NotFound
    from ontoloom.ops.memory import _in_agent_terms

    def record(g: Any, a: Any) -> Any:
        raise BadInput("rec:x comes from a record, not from a direct write: edit the record "
                       "and run `ontoloom rebuild`")  # fmt: skip

    def missing(g: Any, a: Any) -> Any:
        raise NotFound("no entity with id 'x': check the id with `ontoloom list`")

    with pytest.raises(BadInput) as exc:
        _in_agent_terms(record)(None, {})
    assert "ontoloom" not in exc.value.message and "leave it out" in exc.value.message
    with pytest.raises(NotFound) as found:
        _in_agent_terms(missing)(None, {})
    assert found.value.message == "no entity with id 'x'"


def test_observations_keep_their_order_through_every_tool(graph: Any) -> None:
    """The typed tools set ``observations`` too: read back in the order they gave, by both
    kinds of tool, and the bookkeeping of that order is never shown as a property."""
    from ontoloom.memory import Memory

    memory = Memory(graph)
    memory.create_entities([ent("Alice", "person", "z first", "a second")])
    [entity_id] = [e.id for e in graph.entities() if e.properties.get("name") == "Alice"]
    assert graph.get(entity_id).properties["observations"] == ["z first", "a second"]
    assert "observation_order" not in graph.get(entity_id).properties

    graph.update(entity_id, {"observations": ["y new", "b newer", "z first"]})
    shown = graph.get(entity_id).properties
    assert shown["observations"] == ["y new", "b newer", "z first"]
    assert "observation_order" not in shown
    (node,) = memory.open_nodes(["Alice"])["entities"]
    assert node["observations"] == ["y new", "b newer", "z first"]

    memory.add_observations([{"entityName": "Alice", "contents": ["c last"]}])
    memory.delete_observations([{"entityName": "Alice", "observations": ["b newer"]}])
    assert graph.get(entity_id).properties["observations"] == ["y new", "z first", "c last"]
    graph.update(entity_id, unset=["observations"])
    assert "observation_order" not in graph.get(entity_id).properties


@pytest.mark.parametrize("first_microsecond", [None, 120000, 999990])
def test_read_graph_lists_entities_in_the_order_they_were_created(
    graph: Any, monkeypatch: pytest.MonkeyPatch, first_microsecond: int | None
) -> None:
    """As the reference does: in one call in the call's order, and across calls made
    within the same second in the order of the calls — also when a call starts on a
    microsecond count ending in 0, which a stamp never ends in (two stamps of one call
    were equal there, and the tie went by id)."""
    import datetime as dt
    import itertools
    import types

    from ontoloom import changes
    from ontoloom.memory import Memory

    if first_microsecond is not None:
        ticks = itertools.count(0, 10)
        base = dt.datetime(2026, 12, 3, 9, 0, 0, first_microsecond, tzinfo=dt.UTC)

        class Ticking(dt.datetime):
            @classmethod
            def now(cls, tz=None):  # type: ignore[override]
                return base + dt.timedelta(microseconds=next(ticks))

        monkeypatch.setattr(
            changes,
            "dt",
            types.SimpleNamespace(datetime=Ticking, UTC=dt.UTC, timedelta=dt.timedelta),
        )
    memory = Memory(graph)
    memory.create_entities([ent("Zed", "person"), ent("Mia", "person"), ent("Abe", "person")])
    memory.create_entities([ent("Yan", "person")])
    memory.create_entities([ent("Bo", "person")])
    names = [e["name"] for e in memory.read_graph()["entities"]]
    assert names == ["Zed", "Mia", "Abe", "Yan", "Bo"]


def test_blank_names_and_words_are_refused_saying_it_is_on_purpose(graph: Any) -> None:
    from ontoloom.errors import BadInput
    from ontoloom.memory import Memory

    memory = Memory(graph)
    memory.create_entities([ent("Alice", "person"), ent("Acme", "company")])
    before = memory.read_graph()
    calls = [
        (memory.create_entities, [ent("", "person")], "entities[0].name"),
        (memory.create_entities, [ent("Bob", " ")], "entities[0].entityType"),
        (memory.create_relations, [rel("Alice", "", "Acme")], "relations[0].relationType"),
        (memory.create_relations, [rel("Alice", "works at", "")], "relations[0].to"),
    ]
    for method, args, field in calls:
        with pytest.raises(BadInput) as refused:
            method(args)
        assert refused.value.message.startswith(f"{field} is blank: refused on purpose")
        assert "the reference server would store it" in refused.value.message
    assert memory.read_graph() == before


# -- drop-in relations are typed relations (issue 33) ---------------------------------------
TEAM = [
    ent("Fix bug", "task"),
    ent("Ship", "task"),
    ent("Alice", "person"),
    ent("Bob", "person"),
    ent("Org", "organization"),
]


def _typed(s_rels: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(r["from_id"], r["rel"], r["to_id"]) for r in s_rels if not r.get("open")}


def test_a_relation_closing_a_blocks_cycle_is_refused_as_relate_refuses_it(
    data_dir: Path,
) -> None:
    async def body(s: Session) -> None:
        await s.ok("create_entities", entities=TEAM)
        await s.ok("create_relations", relations=[rel("Fix bug", "blocks", "Ship")])
        before = quads_of(data_dir)
        for words in ("blocks", "Blocks", "BLOCKS"):
            # with an open relation in the same call: all of the call, or nothing
            text, data = await s.refused(
                "create_relations",
                relations=[rel("Alice", "knows", "Bob"), rel("Ship", words, "Fix bug")],
            )
            assert "cycle" in text and "'Ship'" in text and "'Fix bug'" in text, text
            assert "blocks" in text and not INTERNAL_ID.search(text), text
            assert data["error"] == "validation"
            assert quads_of(data_dir) == before
        # the typed tool refuses the same call by the same rule, in ids
        ship = (await s.ok("search", query="Ship"))[0]["id"]
        fix = (await s.ok("search", query="Fix bug"))[0]["id"]
        typed_text, typed = await s.refused("relate", from_id=ship, rel="blocks", to_id=fix)
        assert "close the cycle" in typed_text and quads_of(data_dir) == before
        rule = lambda d: [(f["path"], f["constraint"], f["kind"]) for f in d["results"]]  # noqa: E731
        assert rule(typed) == rule(data) == [("blocks", "acyclic", "cycle")]
        assert data["results"][0]["cycle"] == ["Ship", "Fix bug", "Ship"]
        assert (await s.ok("check"))["conforms"] is True

    run(data_dir, body)


def test_a_second_assigned_to_replaces_the_first_as_relate_does(graph: Any) -> None:
    from ontoloom.memory import Memory

    memory = Memory(graph)
    memory.create_entities(TEAM)
    ids = {e.properties.get("title") or e.properties.get("name"): e.id for e in graph.entities()}
    memory.create_relations([rel("Fix bug", "assigned to", "Alice")])
    made = memory.create_relations([rel("Fix bug", "Assigned-To", "Bob")])
    assert made == [rel("Fix bug", "Assigned-To", "Bob")]
    assert _typed([r.to_json() for r in graph.relations(ids["Fix bug"])]) == {
        (ids["Fix bug"], "assigned_to", ids["Bob"])
    }
    # the drop-in reads back the new one in its words, and nothing of the one it replaced
    assert memory.read_graph()["relations"] == [rel("Fix bug", "Assigned-To", "Bob")]
    assert not any("assigned to" in str(q.object) for q in graph.backend.quads())


@pytest.mark.parametrize(
    ("words", "declared"),
    [
        ("assigned_to", "assigned_to"),
        ("assignedTo", "assigned_to"),
        ("Assigned-To", "assigned_to"),
        ("assigned to", "assigned_to"),
        ("ASSIGNED TO", "assigned_to"),
        ("memberOf", "member_of"),
        ("relates to", "relates-to"),  # a declared name with "-" has the same key
        ("RelatesTo", "relates-to"),
    ],
)
def test_the_words_of_a_schema_relation_are_normalised(
    graph: Any, words: str, declared: str
) -> None:
    from ontoloom.memory import typed_relation

    spec = typed_relation(graph, words)
    assert spec is not None and spec.name == declared


def test_a_schema_relation_whose_ends_do_not_fit_is_refused_naming_the_rule(
    data_dir: Path,
) -> None:
    async def body(s: Session) -> None:
        await s.ok("create_entities", entities=TEAM)
        before = quads_of(data_dir)
        for call, rule in [
            (rel("Alice", "blocks", "Ship"), "blocks starts at a Task"),
            (rel("Org", "memberOf", "Alice"), "member_of"),
            (rel("Fix bug", "assigned to", "Org"), "assigned_to"),
        ]:
            text, _ = await s.refused("create_relations", relations=[call])
            assert rule in text and f"- {call['from']} · " in text, text
            assert "ontoloom " not in text and not INTERNAL_ID.search(text), text
            assert quads_of(data_dir) == before
        # words that name no schema relation stay open relations, whatever the ends
        await s.ok("create_relations", relations=[rel("Org", "employs", "Alice")])

    run(data_dir, body)


def test_an_entity_type_in_other_words_is_the_schema_type(graph: Any) -> None:
    from ontoloom.memory import Memory

    memory = Memory(graph)
    memory.create_entities([ent("A", "Task"), ent("B", "TASK"), ent("C", " person ")])
    types = {
        e.properties.get("title") or e.properties.get("name"): e.type for e in graph.entities()
    }
    assert types == {"A": "Task", "B": "Task", "C": "Person"}
    assert [e["entityType"] for e in memory.read_graph()["entities"]] == [
        "Task",
        "TASK",
        " person ",
    ]

    # a type of several words, in the words an agent writes it
    from ontoloom.extensions import add_type

    add_type(graph, {"type": "SoftwareProject"})
    words = ["software project", "softwareProject", "Software-Project", "SOFTWARE_PROJECT"]
    memory.create_entities([ent(f"S{i}", w) for i, w in enumerate(words)])
    made = {e.properties["name"]: e.type for e in graph.entities() if e.id.startswith("soft_")}
    assert made == {f"S{i}": "SoftwareProject" for i in range(len(words))}
    shown = {e["name"]: e["entityType"] for e in memory.read_graph()["entities"]}
    assert [shown[f"S{i}"] for i in range(len(words))] == words  # read back as written


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("create_relations", {"relations": {"from": "A"}}, "relations"),
        ("create_relations", {"relations": "A knows B"}, "relations"),
        ("create_relations", {"relations": [{"from": "A", "to": "B"}]}, "relationType"),
        ("create_relations", {"relations": [{"from": "A", "to": 3, "relationType": "x"}]}, "to"),
        ("create_relations", {"relations": [None]}, "relations.0"),
        ("create_relations", {}, "relations"),
        (
            "create_entities",
            {"entities": [{"name": "A", "entityType": 1, "observations": []}]},
            "entityType",
        ),
        ("create_entities", {"entities": [{"name": "A", "observations": []}]}, "entityType"),
        ("create_entities", {"entities": [ent("C", "person", 7)]}, "observations"),
        ("create_entities", {"entities": "A"}, "entities"),
        ("add_observations", {"observations": [{"entityName": "A"}]}, "contents"),
        ("add_observations", {"observations": [{"entityName": "A", "contents": "x"}]}, "contents"),
        ("delete_relations", {"relations": [{"from": "A", "to": "B"}]}, "relationType"),
        ("delete_entities", {"entityNames": "A"}, "entityNames"),
    ],
)
def test_a_malformed_call_is_a_tool_error_naming_the_field(
    data_dir: Path, tool: str, args: dict[str, Any], field: str
) -> None:
    async def body(s: Session) -> None:
        await s.ok("create_entities", entities=[ent("A", "person"), ent("B", "person")])
        before = quads_of(data_dir)
        text, _ = await s.refused(tool, **args)
        assert field in text and "Traceback" not in text, text
        assert quads_of(data_dir) == before

    run(data_dir, body)


# -- the drop-in and the typed tools write the same graph (issue 33) -------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_NAMES = {"Task": ["t0", "t1", "t2"], "Person": ["p0", "p1"], "Project": ["j0", "j1"]}
_LABELS = {"Task": {"status": "open"}, "Person": {}, "Project": {}}
_RELS = ["blocks", "assigned_to", "depends_on", "has_task", "part_of", "has_owner"]
_ALL_NAMES = [n for names in _NAMES.values() for n in names]


def _in_words(rel_name: str, style: int) -> str:
    """One of the ways an agent writes a schema relation's name."""
    parts = rel_name.split("_")
    return [
        rel_name,
        " ".join(parts),
        "-".join(p.title() for p in parts),
        parts[0] + "".join(p.title() for p in parts[1:]),
        " ".join(parts).upper(),
    ][style]


_ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("create"),
            st.sampled_from(sorted(_NAMES)),
            st.integers(0, 2),
            st.sampled_from([str.lower, str.upper, str]),
        ),
        st.tuples(
            st.just("relate"),
            st.sampled_from(_RELS),
            st.sampled_from(_ALL_NAMES),
            st.sampled_from(_ALL_NAMES),
            st.integers(0, 4),
        ),
    ),
    min_size=1,
    max_size=14,
)


def _typed_quads(g: Any) -> set[tuple[str, str, str]]:
    """The graph as the typed tools see it: every fact about an entity but the stamps and
    the drop-in's bookkeeping (``kind``, the observation order, the agent's wording)."""
    from ontoloom.model import vocab_iri
    from ontoloom.vocab import DCTERMS_MODIFIED, FACTS, PROV_GENERATED

    skipped = {PROV_GENERATED, DCTERMS_MODIFIED, vocab_iri("kind")}
    return {
        (str(q.subject), str(q.predicate), str(q.object))
        for q in g.backend.quads(FACTS)
        if q.subject.value.startswith(g.ids.base) and q.predicate not in skipped
    }


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=_ops)
def test_the_drop_in_and_the_typed_tools_write_the_same_graph(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[Any, ...]]
) -> None:
    """Random calls through the memory tools and the same calls through the typed API
    (create, relate) on two fresh stores: the same typed facts, the same calls refused —
    a cycle, ends that do not fit, a missing end — and a many-to-one relation replaced."""
    from ontoloom.api import Graph
    from ontoloom.errors import OntoloomError
    from ontoloom.memory import Memory, stable_id

    root = tmp_path_factory.mktemp("same")
    with (
        Graph.open(root / "dropin", write=True, create=True) as a,
        Graph.open(root / "typed", write=True, create=True) as b,
    ):
        memory = Memory(a)
        type_of = {n: t for t, names in _NAMES.items() for n in names}
        refused: list[tuple[bool, bool]] = []
        for op in ops:
            if op[0] == "create":
                _, type_name, i, case = op
                name = _NAMES[type_name][i % len(_NAMES[type_name])]
                memory.create_entities([ent(name, case(type_name))])
                entity_id = stable_id(type_name, name)
                if not b.exists(entity_id):  # as the drop-in skips a name it has
                    label = "title" if type_name == "Task" else "name"
                    b.create(type_name, {label: name, **_LABELS[type_name]}, id=entity_id)
                continue
            _, rel_name, source, target, style = op
            outcome = []
            try:
                memory.create_relations([rel(source, _in_words(rel_name, style), target)])
                outcome.append(False)
            except OntoloomError:
                outcome.append(True)
            try:
                b.relate(
                    stable_id(type_of[source], source), rel_name, stable_id(type_of[target], target)
                )
                outcome.append(False)
            except OntoloomError:
                outcome.append(True)
            refused.append((op, *outcome))  # type: ignore[arg-type]
        assert [r for r in refused if r[1] != r[2]] == []
        assert _typed_quads(a) == _typed_quads(b)


@pytest.mark.parametrize(
    ("method", "arg", "field"),
    [
        ("create_relations", {"from": "A", "to": "B", "relationType": "x"}, "relations is a list"),
        ("create_relations", "A knows B", "relations is a list"),
        ("create_relations", [{"from": "A", "to": "B"}], "relations[0].relationType is missing"),
        ("create_relations", [{"from": "A", "to": 3, "relationType": "x"}], "relations[0].to"),
        ("create_relations", [None], "relations[0] is an object"),
        ("create_entities", None, "entities is a list"),
        ("create_entities", [{"name": "C", "entityType": 1}], "entities[0].entityType"),
        ("add_observations", [{"entityName": "A"}], "observations[0].contents"),
        ("add_observations", [{"entityName": 1, "contents": []}], "observations[0].entityName"),
        ("delete_observations", "A", "deletions is a list"),
        ("delete_relations", [{"from": "A", "relationType": "x"}], "relations[0].to"),
        ("delete_entities", "A", "entityNames"),
        ("open_nodes", "A", "names"),
    ],
)
def test_a_malformed_python_call_is_bad_input_naming_the_field(
    graph: Any, method: str, arg: Any, field: str
) -> None:
    """The Python API has no argument schema in front of it: the tools check for
    themselves, and store nothing from the call."""
    from ontoloom.errors import BadInput
    from ontoloom.memory import Memory

    memory = Memory(graph)
    memory.create_entities([ent("A", "person"), ent("B", "person")])
    before = _typed_quads(graph)
    with pytest.raises(BadInput) as refused:
        getattr(memory, method)(arg)
    assert field in refused.value.message
    assert _typed_quads(graph) == before
