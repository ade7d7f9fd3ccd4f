"""Facts in time (issue 36): every version of a fact kept beside the current graph, with when
it held and when the store recorded it — reassigning keeps who held it before, `--as-of` and
`--recorded-as-of` read the past, `--purge` erases, bad dates are usage errors, and the rules
hold at every instant (a cycle needs versions valid at a common instant)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from ontoloom.api import Graph
from ontoloom.vocab import HISTORY
from test_mcp import Session as McpSession
from test_mcp import run as run_mcp

VERSION_KEYS = {
    "version",
    "kind",
    "subject",
    "predicate",
    "object",
    "valid_from",
    "valid_to",
    "recorded",
    "retired",
}


def ok(cli: Cli, *args: str) -> Any:
    result = cli.json(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output) if result.output.strip() else None


def team(cli: Cli) -> None:
    ok(cli, "create", "Person", "-p", "name=Alice", "--id", "pers_alice")
    ok(cli, "create", "Person", "-p", "name=Bob", "--id", "pers_bob")
    ok(cli, "create", "Task", "-p", "title=Ship it", "-p", "status=open", "--id", "task_ship")


def assigned(versions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in versions if v["predicate"] == "assigned_to"]


# -- reassigning keeps who held it before ------------------------------------------------------
def test_a_reassigned_task_says_who_held_it_before_and_when(cli: Cli) -> None:
    team(cli)
    ok(cli, "relate", "task_ship", "assigned_to", "pers_alice", "--valid-from", "2020-10-01")
    out = ok(cli, "relate", "task_ship", "assigned_to", "pers_bob", "--valid-from", "2020-11-01")
    assert [r["to_id"] for r in out["replaced"]] == ["pers_alice"]

    # the current graph holds bob alone, as it always did
    now = ok(cli, "relations", "task_ship", "--rel", "assigned_to")
    assert [r["to_id"] for r in now] == ["pers_bob"]
    then = ok(cli, "relations", "task_ship", "--rel", "assigned_to", "--as-of", "2020-10-15")
    assert [r["to_id"] for r in then] == ["pers_alice"]
    assert then[0]["from_type"] == "Task" and then[0]["to_type"] == "Person"
    before = ok(cli, "relations", "task_ship", "--as-of", "2020-09-15")
    assert before == []

    alice, bob = assigned(ok(cli, "history", "task_ship"))
    assert (alice["object"], bob["object"]) == ("pers_alice", "pers_bob")
    assert alice["valid_from"] == "2020-10-01T00:00:00Z"
    assert alice["valid_to"] == bob["valid_from"] == "2020-11-01T00:00:00Z"
    assert bob["valid_to"] is None and bob["retired"] is None
    # alice's end was recorded by the commit that recorded bob
    assert alice["retired"] == bob["recorded"] and alice["recorded"] < bob["recorded"]

    # get reads the same past: its properties and relations then
    got = ok(cli, "get", "task_ship", "--as-of", "2020-10-15")
    assert got["relations"]["outgoing"][0]["to_id"] == "pers_alice"
    assert got["as_of"] == "2020-10-15T00:00:00Z" and got["recorded_as_of"] is None
    # the person's side sees it too (incoming)
    held = ok(cli, "relations", "pers_alice", "--direction", "in", "--as-of", "2020-10-15")
    assert [r["from_id"] for r in held] == ["task_ship"]


def test_the_history_json_has_one_entry_per_version_with_both_times(cli: Cli) -> None:
    ok(cli, "create", "Task", "-p", "title=Ship it", "-p", "status=open", "--id", "task_ship",
       "--valid-from", "2020-06-01")  # fmt: skip
    ok(cli, "update", "task_ship", "-p", "status=done", "--valid-from", "2021-01-01")
    versions = ok(cli, "history", "task_ship")
    assert all(set(v) == VERSION_KEYS for v in versions)
    assert {v["kind"] for v in versions} == {"type", "property"}
    status = [v for v in versions if v["predicate"] == "status"]
    # in the order they held
    assert [(v["object"], v["valid_from"], v["valid_to"]) for v in status] == [
        ("open", "2020-06-01T00:00:00Z", "2021-01-01T00:00:00Z"),
        ("done", "2021-01-01T00:00:00Z", None),
    ]
    kinds = {v["predicate"]: v for v in versions}
    assert kinds["type"]["object"] == "Task" and kinds["title"]["object"] == "Ship it"
    assert all(v["subject"] == "task_ship" for v in versions)
    text = cli("history", "task_ship")
    assert text.exit_code == 0 and "valid from" in text.output and '"done"' in text.output
    missing = cli("history", "task_nothere")
    assert missing.exit_code == 2 and "no entity" in missing.output


def test_the_replaced_value_of_a_property_ends_when_the_new_one_starts(cli: Cli) -> None:
    team(cli)
    created = {v["predicate"]: v for v in ok(cli, "history", "task_ship")}["status"]
    ok(cli, "update", "task_ship", "-p", "status=done")
    status = [v for v in ok(cli, "history", "task_ship") if v["predicate"] == "status"]
    old = next(v for v in status if v["object"] == "open")
    new = next(v for v in status if v["object"] == "done")
    assert old["version"] == created["version"]
    assert old["valid_to"] == new["valid_from"] == new["recorded"] == old["retired"]


# -- what the store knew then -------------------------------------------------------------------
def test_recorded_as_of_reads_what_the_store_knew_then(cli: Cli) -> None:
    team(cli)
    ok(cli, "relate", "task_ship", "assigned_to", "pers_alice", "--valid-from", "2020-10-01")
    first = assigned(ok(cli, "history", "task_ship"))[0]["recorded"]
    # learned later: bob took it over in November (back-dated)
    ok(cli, "relate", "task_ship", "assigned_to", "pers_bob", "--valid-from", "2020-11-01")

    def holder(*args: str) -> list[str]:
        return [
            r["to_id"] for r in ok(cli, "relations", "task_ship", "--rel", "assigned_to", *args)
        ]

    assert holder("--as-of", "2020-11-15") == ["pers_bob"]  # what we know now
    # what the store knew when it recorded alice: she held it, open-ended
    assert holder("--as-of", "2020-11-15", "--recorded-as-of", first) == ["pers_alice"]
    assert holder("--recorded-as-of", first) == ["pers_alice"]
    # before anything was recorded the store knew nothing of the task
    early = cli.json("get", "task_ship", "--recorded-as-of", "2020-01-01")
    assert early.exit_code == 2 and "as of 2020-01-01" in early.output


# -- purge --------------------------------------------------------------------------------------
def test_unrelate_ends_a_version_and_purge_erases_it(cli: Cli, data_dir: Path) -> None:
    team(cli)
    ok(cli, "relate", "task_ship", "assigned_to", "pers_alice")
    ok(cli, "unrelate", "task_ship", "assigned_to", "pers_alice")
    (ended,) = assigned(ok(cli, "history", "task_ship"))
    assert ended["valid_to"] is not None and ended["retired"] == ended["valid_to"]
    assert ok(cli, "relations", "task_ship") == []
    # the fact no longer holds, yet its history can be erased
    ok(cli, "unrelate", "task_ship", "assigned_to", "pers_alice", "--purge")
    assert assigned(ok(cli, "history", "task_ship")) == []
    gone = cli.json("unrelate", "task_ship", "assigned_to", "pers_alice", "--purge")
    assert gone.exit_code == 2 and "no relation" in gone.output


def test_delete_keeps_the_history_and_delete_purge_erases_every_version(
    cli: Cli, data_dir: Path
) -> None:
    team(cli)
    ok(cli, "relate", "task_ship", "assigned_to", "pers_alice")
    ok(cli, "delete", "pers_alice")
    assert cli.json("get", "pers_alice").exit_code == 2
    kept = ok(cli, "history", "pers_alice")
    assert {v["predicate"] for v in kept} == {"type", "name", "assigned_to"}
    assert all(v["valid_to"] is not None for v in kept)
    # before the delete she existed, with the task assigned to her
    then = kept[0]["recorded"]
    was = ok(cli, "get", "pers_alice", "--recorded-as-of", then)
    assert was["properties"] == {"name": "Alice"}

    ok(cli, "delete", "pers_bob", "--purge")
    assert cli.json("history", "pers_bob").exit_code == 2
    exported = cli("export", "--format", "nquads")
    assert exported.exit_code == 0 and "pers_bob" not in exported.output
    assert "pers_alice" in exported.output  # the kept history is exported


# -- bad dates are usage errors -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("relate", "task_ship", "assigned_to", "pers_alice", "--valid-from", "yesterday"),
         "--valid-from"),
        (("relate", "task_ship", "assigned_to", "pers_alice", "--valid-to", "2020-13-01"),
         "--valid-to"),
        (("create", "Task", "-p", "title=x", "-p", "status=open", "--valid-from", "1/2/2020"),
         "--valid-from"),
        (("relate", "task_ship", "assigned_to", "pers_alice", "--valid-from", "2020-10-05",
          "--valid-to", "2020-10-01"), "--valid-to"),
        (("get", "task_ship", "--as-of", "soon"), "--as-of"),
        (("relations", "task_ship", "--recorded-as-of", "2020-10"), "--recorded-as-of"),
        (("get", "task_ship", "--as-of", "2020-10-02", "--recorded-as-of", "2020-10-01"),
         "--as-of"),
    ],
)  # fmt: skip
def test_a_date_that_does_not_parse_or_an_end_before_a_start_is_a_usage_error(
    cli: Cli, args: tuple[str, ...], option: str
) -> None:
    team(cli)
    before = ok(cli, "history", "task_ship")
    result = cli.json(*args)
    assert result.exit_code == 2, result.output
    error = json.loads(result.output)
    assert error["error"] == "bad_input"
    assert option in error["message"] and "ISO 8601" in error["message"]
    assert ok(cli, "history", "task_ship") == before  # nothing stored


# -- rules at every instant ---------------------------------------------------------------------
def test_a_blocks_cycle_is_refused_only_when_its_versions_overlap(cli: Cli) -> None:
    ok(cli, "create", "Task", "-p", "title=A", "-p", "status=open", "--id", "task_a")
    ok(cli, "create", "Task", "-p", "title=B", "-p", "status=open", "--id", "task_b")
    ok(cli, "create", "Task", "-p", "title=C", "-p", "status=open", "--id", "task_c")
    # a blocked b in the first quarter (a fact of the past: history only)
    ok(cli, "relate", "task_a", "blocks", "task_b", "--valid-from", "2020-01-01",
       "--valid-to", "2020-04-01")  # fmt: skip
    assert ok(cli, "relations", "task_a") == []  # over before now: nothing current
    # b blocking a from April on overlaps nothing: no cycle at any instant
    ok(cli, "relate", "task_b", "blocks", "task_a", "--valid-from", "2020-04-01",
       "--valid-to", "2020-06-01")  # fmt: skip
    before = ok(cli, "history", "task_a")
    # b blocking a in February, while a blocked b: a cycle then
    refused = cli.json("relate", "task_b", "blocks", "task_a", "--valid-from", "2020-02-01",
                       "--valid-to", "2020-03-01")  # fmt: skip
    assert refused.exit_code == 1, refused.output
    report = json.loads(refused.output)
    (finding,) = report["results"]
    assert finding["constraint"] == "acyclic" and finding["kind"] == "cycle"
    assert finding["cycle"] == ["task_b", "task_a", "task_b"]
    assert "task_b → task_a → task_b" in finding["message"]
    assert ok(cli, "history", "task_a") == before  # nothing stored
    # through a third task: a→b [Jan, Apr), b→c [Mar, May) and c→a [Feb, Mar) share no instant
    ok(cli, "relate", "task_b", "blocks", "task_c", "--valid-from", "2020-03-01",
       "--valid-to", "2020-05-01")  # fmt: skip
    ok(cli, "relate", "task_c", "blocks", "task_a", "--valid-from", "2020-02-01",
       "--valid-to", "2020-03-01")  # fmt: skip
    # … but c→a in [Mar 15, Mar 20) closes a→b→c→a at those instants
    closing = cli.json("relate", "task_c", "blocks", "task_a", "--valid-from", "2020-03-15",
                       "--valid-to", "2020-03-20")  # fmt: skip
    assert closing.exit_code == 1
    assert "task_c → task_a → task_b → task_c" in closing.output
    assert "2020-03-15T00:00:00Z to 2020-03-20T00:00:00Z" in closing.output


def test_a_many_to_one_relation_has_one_version_at_any_instant(cli: Cli) -> None:
    team(cli)
    ok(cli, "relate", "task_ship", "assigned_to", "pers_alice", "--valid-from", "2020-10-01")
    ok(cli, "relate", "task_ship", "assigned_to", "pers_bob", "--valid-from", "2020-11-01")
    before = ok(cli, "history", "task_ship")
    # back-dated: bob in mid-October, while alice held it
    overlap = cli.json("relate", "task_ship", "assigned_to", "pers_bob", "--valid-from",
                       "2020-10-10", "--valid-to", "2020-10-20")  # fmt: skip
    assert overlap.exit_code == 1
    assert "assigned_to is many-to-one" in overlap.output and "pers_alice" in overlap.output
    # a replacement starting before the current holder began would end bob before he began
    early = cli.json("relate", "task_ship", "assigned_to", "pers_alice", "--valid-from",
                     "2020-10-15")  # fmt: skip
    assert early.exit_code == 1 and "before it began" in early.output
    assert ok(cli, "history", "task_ship") == before
    # before anyone held it: a September holder fits
    ok(cli, "relate", "task_ship", "assigned_to", "pers_bob", "--valid-from", "2020-09-01",
       "--valid-to", "2020-10-01")  # fmt: skip
    assert [r["to_id"] for r in ok(cli, "relations", "task_ship", "--as-of", "2020-09-15")] == [
        "pers_bob"
    ]
    # relating again with dates would not change them: said, not skipped
    again = cli.json("relate", "task_ship", "assigned_to", "pers_bob", "--valid-from", "2020-12-01")
    assert again.exit_code == 2 and "already holds" in again.output
    assert ok(cli, "relate", "task_ship", "assigned_to", "pers_bob")["created"] is False


def test_an_overlapping_version_of_the_same_fact_is_that_fact_holding(cli: Cli) -> None:
    team(cli)
    ok(cli, "relate", "task_ship", "assigned_to", "pers_alice", "--valid-from", "2020-10-01",
       "--valid-to", "2020-10-20")  # fmt: skip
    # alice again, from mid-October into November: not a second value of assigned_to
    ok(cli, "relate", "task_ship", "assigned_to", "pers_alice", "--valid-from", "2020-10-10",
       "--valid-to", "2020-11-05")  # fmt: skip
    spans = [(v["object"], v["valid_from"][:10], v["valid_to"][:10])
             for v in assigned(ok(cli, "history", "task_ship"))]  # fmt: skip
    assert spans == [
        ("pers_alice", "2020-10-01", "2020-10-20"),
        ("pers_alice", "2020-10-10", "2020-11-05"),
    ]
    for day, holders in [("2020-10-05", ["pers_alice"]), ("2020-10-15", ["pers_alice"]),
                         ("2020-11-01", ["pers_alice"]), ("2020-11-10", [])]:  # fmt: skip
        if holders:  # (the task itself was created now: then, it is only its relation)
            got = ok(cli, "get", "task_ship", "--as-of", day)
            assert [r["to_id"] for r in got["relations"]["outgoing"]] == holders, day
        listed = ok(cli, "relations", "task_ship", "--as-of", day)
        assert [r["to_id"] for r in listed] == holders, day
    # another person while either version of alice holds is still a second value
    bob = cli.json("relate", "task_ship", "assigned_to", "pers_bob", "--valid-from",
                   "2020-11-01", "--valid-to", "2020-11-03")  # fmt: skip
    assert bob.exit_code == 1
    assert "assigned_to is many-to-one" in bob.output and "pers_alice" in bob.output
    assert "2020-10-10T00:00:00Z to 2020-11-05T00:00:00Z" in bob.output
    ok(cli, "relate", "task_ship", "assigned_to", "pers_bob", "--valid-from", "2020-11-05",
       "--valid-to", "2020-11-08")  # fmt: skip


# -- beside the current graph, never in its way ---------------------------------------------------
def test_history_is_left_out_of_search_summary_and_the_audit(cli: Cli) -> None:
    team(cli)
    ok(cli, "create", "Task", "-p", "title=Zanzibar review", "-p", "status=open",
       "--id", "task_zan")  # fmt: skip
    ok(cli, "relate", "task_zan", "assigned_to", "pers_alice")
    summary = ok(cli, "summary")
    ok(cli, "delete", "task_zan")
    assert ok(cli, "search", "Zanzibar") == []
    after = ok(cli, "summary")
    assert after["objects"] == summary["objects"] - 1 and after["relations"] == 0
    assert ok(cli, "check")["conforms"] is True
    assert ok(cli, "relations", "pers_alice") == []  # no version read as a relation


def test_export_then_import_keeps_the_history(cli: Cli, tmp_path: Path) -> None:
    team(cli)
    ok(cli, "relate", "task_ship", "assigned_to", "pers_alice", "--valid-from", "2020-10-01")
    ok(cli, "relate", "task_ship", "assigned_to", "pers_bob", "--valid-from", "2020-11-01")
    dump = tmp_path / "all.trig"
    assert cli("export", "--format", "trig", "-o", str(dump)).exit_code == 0
    history_only = cli("export", "--graph", "history", "--format", "nquads")
    assert history_only.exit_code == 0
    assert HISTORY.value in history_only.output and "validThrough" in history_only.output
    other = Cli(tmp_path / "other")
    assert other("init").exit_code == 0
    assert other.json("import", str(dump)).exit_code == 0
    assert ok(other, "history", "task_ship") == ok(cli, "history", "task_ship")
    then = ok(other, "relations", "task_ship", "--as-of", "2020-10-15")
    assert [r["to_id"] for r in then] == ["pers_alice"]


# -- the Python API -----------------------------------------------------------------------------
def test_the_python_api_takes_the_same_times(graph: Graph) -> None:
    alice = graph.create("Person", {"name": "Alice"})
    graph.create("Task", {"title": "T", "status": "open"}, id="task_t")
    graph.relate("task_t", "assigned_to", alice.id, valid_from="2020-10-01")
    (version,) = assigned(graph.history("task_t"))
    assert version["valid_from"] == "2020-10-01T00:00:00Z"
    assert (
        graph.describe_as_of("task_t", "2020-10-02")["relations"]["outgoing"][0]["to_id"]
        == alice.id
    )


# -- MCP through a real client ------------------------------------------------------------------
def test_an_agent_reassigns_a_task_and_asks_who_held_it_before(data_dir: Path) -> None:
    async def body(s: McpSession) -> None:
        await s.ok("create_entity", type="Person", properties={"name": "Alice"}, id="pers_alice")
        await s.ok("create_entity", type="Person", properties={"name": "Bob"}, id="pers_bob")
        await s.ok(
            "create_entity",
            type="Task",
            properties={"title": "Ship it", "status": "open"},
            id="task_ship",
        )
        await s.ok("relate", from_id="task_ship", rel="assigned_to", to_id="pers_alice",
                   valid_from="2020-10-01")  # fmt: skip
        moved = await s.ok("relate", from_id="task_ship", rel="assigned_to", to_id="pers_bob",
                           valid_from="2020-11-01")  # fmt: skip
        assert [r["to_id"] for r in moved["replaced"]] == ["pers_alice"]
        versions = await s.ok("history", id="task_ship")
        alice, bob = assigned(versions)
        assert alice["object"] == "pers_alice" and alice["valid_to"] == bob["valid_from"]
        then = await s.ok("relations", id="task_ship", rel="assigned_to", as_of="2020-10-15")
        assert [r["to_id"] for r in then] == ["pers_alice"]
        got = await s.ok("get_entity", id="task_ship", as_of="2020-10-15")
        assert got["relations"]["outgoing"][0]["to_id"] == "pers_alice"
        known = await s.ok("relations", id="task_ship", as_of="2020-11-15",
                           recorded_as_of=alice["recorded"])  # fmt: skip
        assert [r["to_id"] for r in known] == ["pers_alice"]
        text, _ = await s.refused("relate", from_id="task_ship", rel="assigned_to",
                                  to_id="pers_alice", valid_from="last tuesday")  # fmt: skip
        assert "--valid-from" in text and "ISO 8601" in text
        await s.ok("unrelate", from_id="task_ship", rel="assigned_to", to_id="pers_bob",
                   purge=True)  # fmt: skip
        assert [v["object"] for v in assigned(await s.ok("history", id="task_ship"))] == [
            "pers_alice"
        ]

    run_mcp(data_dir, body)


# -- the per-instant rules against a brute-force oracle ------------------------------------------
def _cycle_at_some_instant(edges: list[tuple[str, str, int, int]]) -> bool:
    """Oracle: whether, at some instant, the edges valid then hold a cycle — tried at every
    interval start (validity only begins there), by depth-first search of that snapshot."""
    for t in {start for _, _, start, _ in edges}:
        live: dict[str, set[str]] = {}
        for a, b, start, end in edges:
            if start <= t < end:
                live.setdefault(a, set()).add(b)

        if any(_reaches(live, a, a, {a}) for a in live):
            return True
    return False


def _reaches(live: dict[str, set[str]], node: str, goal: str, seen: set[str]) -> bool:
    for nxt in live.get(node, ()):
        if nxt == goal or (nxt not in seen and _reaches(live, nxt, goal, seen | {nxt})):
            return True
    return False


def _day(n: int) -> str:
    return f"2020-01-{n:02d}"


@pytest.mark.parametrize("seed", range(12))
def test_blocks_refusals_in_time_match_a_brute_force_oracle(graph: Graph, seed: int) -> None:
    import random

    from ontoloom.errors import ValidationFailed

    rng = random.Random(seed)
    tasks = [f"task_{c}" for c in "abcd"]
    for t in tasks:
        graph.create("Task", {"title": t, "status": "open"}, id=t)
    accepted: list[tuple[str, str, int, int]] = []
    for _ in range(10):
        a, b = rng.sample(tasks, 2)
        start = rng.randint(1, 25)
        end = rng.randint(start + 1, 28)
        edge = (a, b, start, end)
        expected = _cycle_at_some_instant([*accepted, edge])
        try:
            graph.relate(a, "blocks", b, valid_from=_day(start), valid_to=_day(end))
            refused = False
        except ValidationFailed:
            refused = True
        except Exception as other:  # an overlapping version of the same fact, say
            pytest.fail(f"{edge}: {other}")
        assert refused == expected, (edge, accepted)
        if not refused:
            accepted.append(edge)


@pytest.mark.parametrize("seed", range(8))
def test_many_to_one_refusals_in_time_match_a_brute_force_oracle(graph: Graph, seed: int) -> None:
    import random

    from ontoloom.errors import ValidationFailed

    rng = random.Random(seed)
    people = [graph.create("Person", {"name": n}).id for n in ("Ana", "Ben", "Cy")]
    graph.create("Task", {"title": "T", "status": "open"}, id="task_t")
    held: list[tuple[str, int, int]] = []
    for _ in range(8):
        start = rng.randint(1, 25)
        end = rng.randint(start + 1, 28)
        who = rng.choice(people)
        # another person at an instant someone held it; the same person again is the same
        # fact holding, not a second value
        expected = any(start < e and s < end and p != who for p, s, e in held)
        try:
            graph.relate("task_t", "assigned_to", who, valid_from=_day(start),
                         valid_to=_day(end))  # fmt: skip
            refused = False
        except ValidationFailed:
            refused = True
        assert refused == expected, ((who, start, end), held)
        if not refused:
            held.append((who, start, end))
    versions = assigned(graph.history("task_t"))
    assert sorted((v["object"], v["valid_from"], v["valid_to"]) for v in versions) == sorted(
        (p, _day(s) + "T00:00:00Z", _day(e) + "T00:00:00Z") for p, s, e in held
    )


# -- the time index: the graph as it was, off an index, equal to every version joined ----------
def _joined(graph: Graph, at: str, known: str | None = None) -> list[Any]:
    """The graph as it was by the route that reads every version (SPARQL in the engine)."""
    from ontoloom.history import facts_at, when

    return facts_at(graph.backend, *when(at, known))


def _indexed(graph: Graph, at: str, known: str | None = None) -> list[Any]:
    from ontoloom.history import when

    return graph.facts_then(*when(at, known))


@pytest.mark.parametrize("seed", range(4))
def test_the_time_index_reads_what_joining_every_version_reads(graph: Graph, seed: int) -> None:
    import random

    from ontoloom.errors import OntoloomError
    from ontoloom.history import format_time

    rng = random.Random(seed)
    tasks = [graph.create("Task", {"title": f"T{i}", "status": "open"}).id for i in range(4)]
    people = [graph.create("Person", {"name": n}).id for n in ("Ana", "Ben", "Cy")]
    stamps: list[str | None] = []
    for _ in range(14):
        t, p = rng.choice(tasks), rng.choice(people)
        start = rng.randint(1, 25)
        step = rng.random()
        try:
            if step < 0.4:
                graph.relate(t, "assigned_to", p, valid_from=_day(start),
                             valid_to=_day(rng.randint(start + 1, 28)))  # fmt: skip
            elif step < 0.6:
                graph.relate(t, "assigned_to", p, valid_from=_day(start))
            elif step < 0.75:
                graph.update(t, {"status": rng.choice(["open", "done", "blocked"])},
                             valid_from=_day(start))  # fmt: skip
            elif step < 0.85:
                graph.unrelate(t, "assigned_to", p, purge=rng.random() < 0.5)
            else:
                graph.relate(t, "blocks", rng.choice(tasks), valid_from=_day(start))
        except OntoloomError:
            pass  # refused: nothing written, and both routes must still agree
        stamps.append(format_time(_now()))
    instants = [_day(d) for d in (1, 5, 10, 15, 20, 27)] + ["2999-01-01"]
    known = [None, *(s for s in stamps if s)]
    for at in instants:
        for k in known:
            if k is not None and at > k:
                continue
            assert _indexed(graph, at, k) == _joined(graph, at, k), (at, k)
    # the index rebuilt whole from the store (what a lost or older index gets): the same
    graph.reindex()
    for at in instants:
        assert _indexed(graph, at) == _joined(graph, at), at


def _now() -> Any:
    import datetime as dt

    return dt.datetime.now(dt.UTC)
