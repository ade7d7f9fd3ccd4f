"""The memory-server tools, driven by the very calls an agent sends to
`@modelcontextprotocol/server-memory`, through a real stdio MCP session."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from conftest import Cli, quads_of
from test_mcp import Session, run

JOHN = {"name": "John_Smith", "entityType": "person", "observations": ["Speaks fluent Spanish"]}
ANTHROPIC = {"name": "Anthropic", "entityType": "organization", "observations": []}


async def text_of(s: Session, tool: str, **args: Any) -> tuple[str, Any]:
    result = await s.raw(tool, **args)
    assert not result.isError, result.content[0].text  # type: ignore[union-attr]
    return result.content[0].text, result.structuredContent  # type: ignore[union-attr]


def test_the_reference_conversation_round_trips(data_dir: Path, cli: Cli) -> None:
    async def body(s: Session) -> None:
        text, data = await text_of(s, "create_entities", entities=[JOHN, ANTHROPIC])
        assert data == {"entities": [JOHN, ANTHROPIC]}
        assert json.loads(text) == [JOHN, ANTHROPIC]  # the reference's text: the bare list
        _, again = await text_of(s, "create_entities", entities=[JOHN])
        assert again == {"entities": []}  # an existing name is skipped

        rel = {"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"}
        text, data = await text_of(s, "create_relations", relations=[rel])
        assert data == {"relations": [rel]} and json.loads(text) == [rel]
        _, again = await text_of(s, "create_relations", relations=[rel])
        assert again == {"relations": []}

        add = {
            "entityName": "John_Smith",
            "contents": ["Graduated in 2019", "Speaks fluent Spanish"],
        }
        text, data = await text_of(s, "add_observations", observations=[add])
        expected = [{"entityName": "John_Smith", "addedObservations": ["Graduated in 2019"]}]
        assert data == {"results": expected} and json.loads(text) == expected

        opened = await s.ok("open_nodes", names=["John_Smith"])
        assert opened == {
            "entities": [
                {
                    "name": "John_Smith",
                    "entityType": "person",
                    "observations": ["Speaks fluent Spanish", "Graduated in 2019"],  # as added
                }
            ],
            "relations": [rel],  # one end in the set is enough
        }
        found = await s.ok("search_nodes", query="spanish")
        assert [e["name"] for e in found["entities"]] == ["John_Smith"]
        assert found["relations"] == [rel]
        whole = await s.ok("read_graph")
        assert sorted(e["name"] for e in whole["entities"]) == ["Anthropic", "John_Smith"]
        assert whole["relations"] == [rel] and "nextCursor" not in whole

        text, data = await text_of(
            s,
            "delete_observations",
            deletions=[{"entityName": "John_Smith", "observations": ["Graduated in 2019"]}],
        )
        assert text == "Observations deleted successfully"
        assert data == {"success": True, "message": text}
        text, _ = await text_of(s, "delete_relations", relations=[rel])
        assert text == "Relations deleted successfully"
        assert (await s.ok("open_nodes", names=["John_Smith"]))["relations"] == []
        text, _ = await text_of(s, "delete_entities", entityNames=["Anthropic", "Nobody"])
        assert text == "Entities deleted successfully"
        assert [e["name"] for e in (await s.ok("read_graph"))["entities"]] == ["John_Smith"]

    run(data_dir, body)


def test_memory_entities_are_typed_and_validated(data_dir: Path) -> None:
    async def body(s: Session) -> None:
        await s.ok("create_entities", entities=[
            JOHN,
            ANTHROPIC,
            {"name": "Ship v2", "entityType": "task", "observations": ["due friday"]},
            {"name": "Dark mode", "entityType": "preference", "observations": ["prefers dark"]},
        ])  # fmt: skip
        people = await s.ok("list_entities", type="Person")
        assert [(p["type"], p["properties"]["name"]) for p in people] == [("Person", "John_Smith")]
        john = people[0]
        assert john["id"].startswith("pers_") and john["properties"]["observations"] == [
            "Speaks fluent Spanish"
        ]
        task = (await s.ok("list_entities", type="Task"))[0]
        assert task["properties"]["title"] == "Ship v2"
        assert task["properties"]["status"] == "open"  # the type's required enum, defaulted
        thing = (await s.ok("list_entities", type="Thing"))[0]
        assert thing["properties"]["kind"] == "preference"

        # The same name gives the same id in another data dir too: stable, not random.
        assert john["id"] == "pers_" + hashlib.sha256(b"John_Smith").hexdigest()[:8]

        # A declared relation whose ends do not fit (member_of runs Person → Organization)
        # is refused as `relate` refuses it, naming the rule and what the ends are.
        text, _ = await s.refused(
            "create_relations",
            relations=[{"from": "Anthropic", "to": "John_Smith", "relationType": "memberOf"}],
        )
        assert "member_of starts at a Person; 'Anthropic' is an Organization" in text
        assert "member_of points at an Organization; 'John_Smith' is a Person" in text
        await s.ok(
            "create_relations",
            relations=[
                {"from": "John_Smith", "to": "Anthropic", "relationType": "Member_Of"},
                {"from": "Ship v2", "to": "John_Smith", "relationType": "assigned to"},
                {"from": "John_Smith", "to": "Dark mode", "relationType": "prefers"},
            ],
        )
        org = (await s.ok("list_entities", type="Organization"))[0]
        rels = await s.ok("relations", id=john["id"])
        assert {(r["from_id"], r["rel"], r["to_id"], r.get("open", False)) for r in rels} == {
            (john["id"], "member_of", org["id"], False),
            (task["id"], "assigned_to", john["id"], False),
            (john["id"], "prefers", thing["id"], True),  # a relation the schema does not know
        }

        # Typed entities are visible to the memory tools by title, name or id.
        created = await s.ok(
            "create_entity", type="Task", properties={"title": "Write docs", "status": "done"}
        )
        opened = await s.ok("open_nodes", names=["Write docs", created["id"]])
        assert opened["entities"] == [
            {"name": "Write docs", "entityType": "Task", "observations": []}
        ]

        before = await s.ok("read_graph")
        text, _ = await s.refused(
            "create_relations",
            relations=[
                {"from": "John_Smith", "to": "Anthropic", "relationType": "knows"},
                {"from": "John_Smith", "to": "Jane_Doe", "relationType": "knows"},
            ],
        )
        assert "no entity named 'Jane_Doe'" in text
        text, data = await s.refused(
            "add_observations", observations=[{"entityName": "Jane_Doe", "contents": ["x"]}]
        )
        assert "Entity with name Jane_Doe not found" in text and data["error"] == "not_found"
        text, _ = await s.refused(
            "create_entities", entities=[{"name": " ", "entityType": "x", "observations": []}]
        )
        assert "name" in text
        assert await s.ok("read_graph") == before
        assert (await s.ok("check"))["conforms"] is True

    run(data_dir, body)


def test_read_graph_pages_the_mcp_way(data_dir: Path) -> None:
    count = 230

    async def body(s: Session) -> None:
        people = [
            {"name": f"Person {i:03d}", "entityType": "person", "observations": [f"n{i}"]}
            for i in range(count)
        ]
        await s.ok("create_entities", entities=[*people, ANTHROPIC])
        await s.ok("create_relations", relations=[
            {"from": p["name"], "to": "Anthropic", "relationType": "member_of"} for p in people
        ])  # fmt: skip

        whole = await s.ok("read_graph")  # up to 1,000 entities: the whole graph, no cursor
        assert len(whole["entities"]) == count + 1 and len(whole["relations"]) == count
        assert "nextCursor" not in whole and "note" not in whole
        first = (await s.raw("read_graph", limit=100)).structuredContent
        assert first is not None
        assert len(first["entities"]) == 100 and "nextCursor" in first
        assert first["note"].startswith("Returned 100 entities (with the relations leaving")
        seen, relations, cursor, pages = [], [], None, 0
        while True:
            result = await s.raw("read_graph", limit=100, **({"cursor": cursor} if cursor else {}))
            text, page = result.content[0].text, result.structuredContent  # type: ignore[union-attr]
            assert page is not None and text.startswith("Returned ")
            pages += 1
            seen += [e["name"] for e in page["entities"]]
            relations += page["relations"]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert pages == 3 and len(seen) == count + 1 == len(set(seen))
        assert len(relations) == count  # each relation once, on its source's page
        small = (await s.raw("read_graph", limit=7)).structuredContent
        assert len(small["entities"]) == 7

        summary = await s.ok("read_graph", summary=True)  # whole graph: no note
        assert summary["summary"] == {
            "entities": count + 1,
            "relations": count,
            "entityTypes": {"organization": 1, "person": count},
            "relationTypes": {"member_of": count},
        }
        assert set(summary["entities"][0]) == {"name", "entityType", "observationCount"}
        assert "relations" not in summary

        text, _ = await s.refused("read_graph", cursor="not-a-cursor")
        assert "invalid cursor" in text
        text, _ = await s.refused("read_graph", limit=0)
        assert "limit" in text

    run(data_dir, body)


def test_search_nodes_ranks_name_matches_first_and_never_finds_words_apart(
    data_dir: Path,
) -> None:
    async def body(s: Session) -> None:
        await s.ok("create_entities", entities=[
            {"name": "Timeout bug", "entityType": "issue", "observations": ["payment timeout at checkout"]},
            {"name": "Payments team", "entityType": "team", "observations": ["owns the checkout"]},
            {"name": "payment", "entityType": "concept", "observations": []},
            {"name": "Lunch", "entityType": "event", "observations": ["pizza"]},
        ])  # fmt: skip
        await s.ok(
            "create_relations",
            relations=[{"from": "Payments team", "to": "Lunch", "relationType": "attends"}],
        )
        found = await s.ok("search_nodes", query="PAYMENT")
        # the exact name, then a name containing it, then an observation
        assert [e["name"] for e in found["entities"]] == ["payment", "Payments team", "Timeout bug"]
        assert found["relations"] == [
            {"from": "Payments team", "to": "Lunch", "relationType": "attends"}
        ]
        # words apart are not a substring: the reference finds nothing, and so do we
        assert await s.ok("search_nodes", query="payment checkout") == {
            "entities": [],
            "relations": [],
        }
        capped = await s.raw("search_nodes", query="payment", limit=1)
        assert len(capped.structuredContent["entities"]) == 1  # type: ignore[index]
        assert capped.content[0].text.startswith("Returned 1 of 3 matching entities")  # type: ignore[union-attr]

    run(data_dir, body)


def test_a_refused_memory_write_leaves_the_store_as_it_was(data_dir: Path) -> None:
    async def body(s: Session) -> None:
        await s.ok("create_entities", entities=[JOHN])
        before = quads_of(data_dir)
        await s.refused("create_relations", relations=[
            {"from": "John_Smith", "to": "Nobody", "relationType": "knows"},
        ])  # fmt: skip
        await s.refused("create_entities", entities=[{"name": "x"}])
        await s.refused(
            "add_observations", observations=[{"entityName": "Nobody", "contents": ["x"]}]
        )
        assert quads_of(data_dir) == before

    run(data_dir, body)


def _pages(memory: Any, limit: int, cursor: str | None = None) -> list[list[str]]:
    pages = []
    while True:
        page = memory.read_graph(cursor, limit)
        pages.append([e["name"] for e in page["entities"]])
        cursor = page.get("nextCursor")
        if cursor is None:
            return pages


def test_read_graph_pages_are_keyset_slices_of_the_full_list(tmp_path: Path) -> None:
    """Every object exactly once across pages, in id order; a page started from any
    object's cursor is the slice of the full list after it; inserts between pages appear
    when they sort after the cursor and never repeat or shift what was already read."""
    from ontoloom.api import Graph
    from ontoloom.demo import load_entities
    from ontoloom.memory import Memory, _encode_cursor

    root = Path(__file__).resolve().parents[1]
    with Graph.open(tmp_path / "d", write=True, create=True) as g:
        load_entities(g, root / "examples" / "team" / "entities.json")
        memory = Memory(g)
        memory.create_entities(
            [{"name": f"n{i}", "entityType": "person", "observations": []} for i in range(15)]
        )
        everything = sorted(e.id for e in g.entities())
        full = [e["name"] for e in memory.open_nodes(everything)["entities"]]
        assert len(full) == len(everything) > 15  # every object, named
        for limit in (1, 3, 7, len(full), 1000):
            pages = _pages(memory, limit)
            assert [n for p in pages for n in p] == full
            assert all(len(p) == limit for p in pages[:-1]) and 1 <= len(pages[-1]) <= limit
        for k in (0, 5, len(everything) - 2):
            deep = memory.read_graph(_encode_cursor(everything[k]), 4)
            assert [e["name"] for e in deep["entities"]] == full[k + 1 : k + 5]
        assert "nextCursor" not in memory.read_graph(_encode_cursor(everything[-1]), 4)

        first = memory.read_graph(None, 5)
        cursor = first["nextCursor"]
        g.create("Person", {"name": "Early"}, id="aaaa_0000")  # sorts before the cursor
        g.create("Person", {"name": "Late"}, id="zzzz_0000")  # sorts after it
        rest = [n for p in _pages(memory, 5, cursor) for n in p]
        seen = [e["name"] for e in first["entities"]] + rest
        assert "Early" not in seen and seen[-1] == "Late"
        assert seen == [n for n in full if n != "Early"] + ["Late"]
        assert len(seen) == len(set(seen))


def test_an_open_relation_reads_in_its_own_words_in_search_and_the_hook(
    data_dir: Path, cli: Cli
) -> None:
    import subprocess

    from test_mcp import ONTOLOOM

    async def body(s: Session) -> None:
        john = {"name": "John", "entityType": "person", "observations": ["likes Zorblax"]}
        acme = {"name": "Acme", "entityType": "company", "observations": []}
        await text_of(s, "create_entities", entities=[john, acme])
        rel = {"from": "John", "to": "Acme", "relationType": "works at"}
        await text_of(s, "create_relations", relations=[rel])

    run(data_dir, body)
    for reindexed in (False, True):  # as written, and as a reindex makes it
        if reindexed:
            assert cli("reindex").exit_code == 0
        hits = json.loads(cli("search", "John", "--json").output)
        said = json.dumps(hits)
        assert "open/" not in said and "%20" not in said
        assert any("works at → Acme" in r for h in hits for r in h.get("relations", []))
    done = subprocess.run(
        [ONTOLOOM, "--data-dir", str(data_dir), "hook", "prompt-context"],
        input=json.dumps({"prompt": "what about John"}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "John" in done.stdout, done
    assert "open/" not in done.stdout and '"works at" (open)' in done.stdout


def test_a_name_that_is_a_secret_is_refused_and_never_printed_back(data_dir: Path) -> None:
    secrets = ["sk-ant-api03-iK2ZWeqhFWCEPyYngFb51yBMWXaSCrUZoL8g5ubb", "password=hunter2hunter2"]

    async def body(s: Session) -> None:
        for secret in secrets:
            entity = {"name": secret, "entityType": "service", "observations": []}
            result = await s.raw("create_entities", entities=[entity])
            assert result.isError
            said = json.dumps([c.model_dump() for c in result.content]) + json.dumps(
                result.structuredContent
            )
            assert secret not in said and "hunter2" not in said, said
        assert (await s.ok("read_graph"))["entities"] == []

    run(data_dir, body)
