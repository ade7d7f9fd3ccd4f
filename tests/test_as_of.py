"""Asking in time (issue 36, item 3): `traverse`, `list`, `search` and `query` take `--as-of`
and `--recorded-as-of` (MCP: `as_of`, `recorded_as_of`) and read the graph as it was — the
facts valid then, as the store knew them — while without them they read the current graph
unchanged. The acceptance path, end to end: a task is reassigned from Alice to Bob, and who
held it before is asked from the command line and from an agent over MCP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from test_mcp import Session as McpSession
from test_mcp import run as run_mcp

FORMS = "ISO 8601 date (2026-10-01) or date-time (2026-10-01T09:00:00Z)"


def ok(cli: Cli, *args: str) -> Any:
    result = cli.json(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output) if result.output.strip() else None


def reassigned(cli: Cli) -> None:
    """Alice holds the task through October 2020, Bob from November; Alice's name was
    Alicia until 2020-10-10; the task blocked a release only in September."""
    ok(
        cli,
        "create",
        "Person",
        "--id",
        "pers_alice",
        "-p",
        "name=Alicia",
        "--valid-from",
        "2020-09-01",
    )
    ok(cli, "update", "pers_alice", "-p", "name=Alice", "--valid-from", "2020-10-10")
    ok(cli, "create", "Person", "--id", "pers_bob", "-p", "name=Bob", "--valid-from", "2020-09-01")
    ok(cli, "create", "Task", "--id", "task_ship", "-p", "title=Ship it", "-p", "status=open",
       "--valid-from", "2020-09-01")  # fmt: skip
    ok(cli, "create", "Task", "--id", "task_release", "-p", "title=Release", "-p", "status=open",
       "--valid-from", "2020-09-01")  # fmt: skip
    ok(cli, "relate", "task_ship", "assigned_to", "pers_alice", "--valid-from", "2020-10-01")
    ok(cli, "relate", "task_ship", "assigned_to", "pers_bob", "--valid-from", "2020-11-01")
    ok(cli, "relate", "task_ship", "blocks", "task_release", "--valid-from", "2020-09-01",
       "--valid-to", "2020-10-01")  # fmt: skip


def test_who_held_the_task_before_from_the_command_line(cli: Cli) -> None:
    reassigned(cli)
    # now: Bob, everywhere
    assert [r["to_id"] for r in ok(cli, "relations", "task_ship", "--rel", "assigned_to")] == [
        "pers_bob"
    ]
    got = ok(cli, "get", "task_ship", "--as-of", "2020-10-15")
    assert [r["to_id"] for r in got["relations"]["outgoing"]] == ["pers_alice"]
    then = ok(cli, "relations", "task_ship", "--rel", "assigned_to", "--as-of", "2020-10-15")
    assert [r["to_id"] for r in then] == ["pers_alice"]

    # traverse follows the edges of then: Alice in October, Bob now, the blocker in September
    def reached(*args: str) -> list[str]:
        return [r["id"] for r in ok(cli, "traverse", "task_ship", *args)]

    assert reached("--rel", "assigned_to", "--as-of", "2020-10-15") == ["pers_alice"]
    assert reached("--rel", "assigned_to") == ["pers_bob"]
    assert reached("--rel", "blocks", "--as-of", "2020-09-15") == ["task_release"]
    assert reached("--rel", "blocks") == []
    assert reached("--as-of", "2020-09-15") == ["task_release"]

    # list: who existed, with the values of then
    people = ok(cli, "list", "--type", "Person", "--as-of", "2020-10-05")
    assert {p["id"]: p["properties"]["name"] for p in people} == {
        "pers_alice": "Alicia",
        "pers_bob": "Bob",
    }
    assert ok(cli, "list", "--as-of", "2020-08-01") == []
    assert ok(cli, "list", "--where", "name=Alicia", "--as-of", "2020-10-05")[0]["id"] == (
        "pers_alice"
    )
    assert ok(cli, "list", "--where", "name=Alicia") == []

    # search: the words of then
    assert [
        h["id"] for h in ok(cli, "search", "Alicia", "--type", "Person", "--as-of", "2020-10-05")
    ] == ["pers_alice"]
    assert ok(cli, "search", "Alicia") == []
    # the relation of then is found by the name of then: who held it
    labels = [h["id"] for h in ok(cli, "search", "Alicia", "--as-of", "2020-10-05")]
    assert "task_ship assigned_to pers_alice" in labels

    # query: the user's SPARQL over the graph as it was
    sparql = "SELECT ?who WHERE { ?t ol:assigned_to ?who }"
    rows = ok(cli, "query", sparql, "--format", "json", "--as-of", "2020-10-15")
    assert [b["who"]["value"].rsplit("/", 1)[-1] for b in rows["results"]["bindings"]] == [
        "pers_alice"
    ]
    rows = ok(cli, "query", sparql, "--format", "json")
    assert [b["who"]["value"].rsplit("/", 1)[-1] for b in rows["results"]["bindings"]] == [
        "pers_bob"
    ]
    table = cli("query", sparql, "--as-of", "2020-10-15")
    assert table.exit_code == 0 and "pers_alice" in table.output and "pers_bob" not in table.output


def test_recorded_as_of_reads_what_the_store_knew(cli: Cli) -> None:
    reassigned(cli)
    (alice,) = [
        v
        for v in ok(cli, "history", "task_ship")
        if v["predicate"] == "assigned_to" and v["object"] == "pers_alice"
    ]
    # when Alice's version was recorded the store did not yet know it would end: as it knew
    # then, Alice held the task in mid-November too
    known = alice["recorded"]
    args = ("--rel", "assigned_to", "--as-of", "2020-11-15", "--recorded-as-of", known)
    assert [r["id"] for r in ok(cli, "traverse", "task_ship", *args)] == ["pers_alice"]
    assert [r["id"] for r in ok(cli, "traverse", "task_ship", *args[:4])] == ["pers_bob"]
    # with --recorded-as-of alone, the instant asked about is that one
    found = ok(cli, "list", "--type", "Person", "--recorded-as-of", known)
    assert {p["id"] for p in found} == {"pers_alice", "pers_bob"}


@pytest.mark.parametrize(
    "command",
    [
        ("traverse", "task_ship"),
        ("list",),
        ("search", "ship"),
        ("query", "SELECT * WHERE { ?s ?p ?o } LIMIT 1"),
    ],
)
def test_a_bad_date_or_as_of_after_recorded_as_of_is_a_usage_error(
    cli: Cli, command: tuple[str, ...]
) -> None:
    reassigned(cli)
    bad = cli(*command, "--as-of", "last tuesday")
    assert bad.exit_code == 2, bad.output
    assert "--as-of" in bad.output and FORMS in bad.output and "Traceback" not in bad.output
    bad = cli(*command, "--recorded-as-of", "2020-13-45")
    assert bad.exit_code == 2 and "--recorded-as-of" in bad.output and FORMS in bad.output
    later = cli(*command, "--as-of", "2020-11-01", "--recorded-as-of", "2020-10-01")
    assert later.exit_code == 2, later.output
    assert "--as-of is after --recorded-as-of" in later.output and FORMS in later.output


def test_an_entity_that_did_not_exist_then_is_not_found_then(cli: Cli) -> None:
    reassigned(cli)
    gone = cli("traverse", "task_ship", "--as-of", "2020-08-01")
    assert gone.exit_code != 0 and "as it was at 2020-08-01" in gone.output
    assert "ontoloom history" in gone.output and "Traceback" not in gone.output
    assert cli("traverse", "task_ship").exit_code == 0


def test_query_as_of_refuses_infer_and_still_refuses_updates(cli: Cli) -> None:
    reassigned(cli)
    both = cli("query", "ASK { ?s ?p ?o }", "--as-of", "2020-10-01", "--infer")
    assert both.exit_code == 2 and "--infer" in both.output and "--as-of" in both.output
    update = cli("query", "INSERT DATA { <urn:a> <urn:b> <urn:c> }", "--as-of", "2020-10-01")
    assert update.exit_code != 0 and "read-only" in update.output


def test_an_agent_asks_who_held_the_task_before_over_mcp(cli: Cli, data_dir: Path) -> None:
    reassigned(cli)

    async def body(s: McpSession) -> None:
        got = await s.ok("get_entity", id="task_ship", as_of="2020-10-15")
        assert [r["to_id"] for r in got["relations"]["outgoing"]] == ["pers_alice"]
        then = await s.ok("relations", id="task_ship", rel="assigned_to", as_of="2020-10-15")
        assert [r["to_id"] for r in then] == ["pers_alice"]
        now = await s.ok("relations", id="task_ship", rel="assigned_to")
        assert [r["to_id"] for r in now] == ["pers_bob"]
        walked = await s.ok("traverse", id="task_ship", rel="assigned_to", as_of="2020-10-15")
        assert [r["id"] for r in walked] == ["pers_alice"]
        listed = await s.ok("list_entities", type="Person", as_of="2020-10-05")
        assert {e["id"]: e["properties"]["name"] for e in listed} == {
            "pers_alice": "Alicia",
            "pers_bob": "Bob",
        }
        hits = await s.ok("search", query="Alicia", type="Person", as_of="2020-10-05")
        assert [h["id"] for h in hits] == ["pers_alice"]
        assert await s.ok("search", query="Alicia") == []
        rows = await s.ok(
            "query", query="SELECT ?who WHERE { ?t ol:assigned_to ?who }", as_of="2020-10-15"
        )
        assert [b["who"]["value"].rsplit("/", 1)[-1] for b in rows["results"]["bindings"]] == [
            "pers_alice"
        ]
        text, _ = await s.refused("traverse", id="task_ship", as_of="last tuesday")
        assert "--as-of" in text and FORMS in text
        text, _ = await s.refused("list_entities", as_of="2020-11-01", recorded_as_of="2020-10-01")
        assert "--as-of is after --recorded-as-of" in text

    run_mcp(data_dir, body)


def test_the_tools_that_read_take_as_of_and_the_hook_does_not() -> None:
    from ontoloom.ops.typed import typed_operations
    from ontoloom.schema import Schema

    tools = {op.name: op for op in typed_operations(Schema.load())}
    for name in ("get_entity", "relations", "traverse", "list_entities", "search", "query"):
        assert {"as_of", "recorded_as_of"} <= set(tools[name].properties), name
    for name in ("create_entity", "relate", "history", "check"):
        assert "as_of" not in tools[name].properties, name
