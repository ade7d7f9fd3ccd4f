"""The drop-in's reads (``open_nodes``, ``search_nodes``, pages of ``read_graph``) are answered
off the search index (issue 33: a row per object and per relation, where the store's are a
query's dozens of rows). The index is derived: these tests hold its answers to the store's
own — every object as the drop-in shows it (name, entityType, observations in the order
added) and every relation with an end among them (ends by name, a typed relation's words) —
after creates, observations added and deleted, renames through the typed tools, typed and
open relations made, replaced and removed, deletions and a rebuild; with the index following
each commit and with it left behind the commits (as the data dir's owner runs it)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ontoloom.api import Graph
from ontoloom.memory import Memory
from ontoloom.store import scratch


def _from_store(memory: Memory, ids: list[str]) -> dict[str, Any]:
    """The answer read from the store alone (what the drop-in answered before the index)."""
    g = memory.graph
    nodes = memory._nodes(ids)
    return memory._graph_json(nodes, g.relations_among([n.id for n in nodes], types=False))


def _from_index(memory: Memory, ids: list[str]) -> dict[str, Any]:
    nodes = memory._shown_nodes(ids)
    return memory._shown(nodes, [n.id for n in nodes])


def _every_id(g: Graph) -> list[str]:
    return Memory(g)._all_ids()


def _same(g: Graph, step: str) -> None:
    memory = Memory(g)
    ids = _every_id(g)
    assert ids, step  # not vacuous
    assert _from_index(memory, ids) == _from_store(memory, ids), step
    for i in ids:  # one at a time too: the relations with an end there
        assert _from_index(memory, [i]) == _from_store(memory, [i]), (step, i)


def _names(answer: dict[str, Any]) -> set[str]:
    return {e["name"] for e in answer["entities"]}


@pytest.mark.parametrize("behind", [False, True], ids=["following", "behind"])
def test_index_reads_hold_what_the_store_holds_through_every_change(
    graph: Graph, behind: bool
) -> None:
    graph.index_behind = behind  # the owner's way: commits noted, indexed before a read
    memory = Memory(graph)
    memory.create_entities(
        [
            {"name": "Alice", "entityType": "person", "observations": ["z first", "a second"]},
            {"name": "Bob", "entityType": "Person", "observations": []},
            {"name": "Ship it", "entityType": "task", "observations": ["Due Friday"]},
            {"name": "Widget", "entityType": "gadget", "observations": ["blue", "small"]},
            {"name": "Acme", "entityType": "organization", "observations": []},
        ]
    )
    _same(graph, "created")
    memory.create_relations(
        [
            {"from": "Ship it", "to": "Alice", "relationType": "assignedTo"},
            {"from": "Alice", "to": "Acme", "relationType": "member of"},
            {"from": "Bob", "to": "Widget", "relationType": "likes"},
            {"from": "Widget", "to": "Ship it", "relationType": "needed by"},
        ]
    )
    _same(graph, "related")
    memory.add_observations(
        [
            {"entityName": "Alice", "contents": ["m third", "b fourth"]},
            {"entityName": "Bob", "contents": ["only one"]},
        ]
    )
    view = {e["name"]: e for e in memory.open_nodes(["Alice"])["entities"]}
    assert view["Alice"]["observations"] == ["z first", "a second", "m third", "b fourth"]
    _same(graph, "observations added")
    memory.delete_observations([{"entityName": "Alice", "observations": ["a second"]}])
    _same(graph, "an observation deleted")
    # a many-to-one relation replaced (its words go with the old one), an open one removed
    memory.create_relations([{"from": "Ship it", "to": "Bob", "relationType": "assigned to"}])
    _same(graph, "assigned_to replaced")
    memory.delete_relations([{"from": "Bob", "to": "Widget", "relationType": "likes"}])
    _same(graph, "an open relation deleted")
    # renamed through the typed tools: the relations naming it by its name follow
    [bob] = memory._find("Bob")
    graph.update(bob, {"name": "Robert"})
    assert _names(memory.open_nodes(["Robert"])) == {"Robert"}
    assert memory.open_nodes(["Bob"])["entities"] == []
    _same(graph, "renamed")
    memory.delete_entities(["Widget"])
    assert memory.open_nodes(["Widget"]) == {"entities": [], "relations": []}
    _same(graph, "deleted")
    graph.catch_up_index()
    graph.reindex()
    _same(graph, "rebuilt")


def test_index_reads_match_the_store_on_generated_graphs(graph: Graph) -> None:
    """Random names, types and observations (some repeated, some in other cases), random
    open and typed relations, random deletions: the index answers what the store holds."""
    rng = random.Random(33)
    memory = Memory(graph)
    kinds = ["person", "task", "project", "note", "Widget", "event"]
    words = ["likes", "blocks", "member of", "part_of", "mentions", "assigned to"]
    names = [f"{rng.choice(['Ann', 'ann', 'Émile', '東京', 'x'])} {i}" for i in range(30)]
    for name in names:
        observations = [rng.choice(["a", "B", "ç", "a b", "Z"]) + str(rng.randrange(5))]
        observations += rng.sample(["first", "second", "third", "fourth"], rng.randrange(4))
        memory.create_entities(
            [{"name": name, "entityType": rng.choice(kinds), "observations": observations}]
        )
    for _ in range(40):
        a, b = rng.sample(names, 2)
        try:
            memory.create_relations([{"from": a, "to": b, "relationType": rng.choice(words)}])
        except Exception:  # a typed relation its ends' types refuse: nothing stored
            continue
    _same(graph, "generated")
    for name in rng.sample(names, 5):
        memory.delete_entities([name])
    for name in rng.sample([n for n in names if memory._find(n)], 5):
        memory.add_observations([{"entityName": name, "contents": ["later", "Later still"]}])
    _same(graph, "after deletions and additions")
    found = memory.search_nodes("ann")
    assert found["entities"], "not vacuous"
    ids = [i for i, _ in graph.objects_containing("ann")]
    assert found == {
        "entities": _from_store(memory, ids)["entities"],
        "relations": _from_store(memory, ids)["relations"],
    }


def test_a_scratch_graph_without_an_index_reads_the_store() -> None:
    """No data dir, no index: the same answers, read from the store."""
    g = Graph(scratch())
    memory = Memory(g)
    memory.create_entities(
        [
            {"name": "Ann", "entityType": "person", "observations": ["one", "two"]},
            {"name": "Bo", "entityType": "thing", "observations": []},
        ]
    )
    memory.create_relations([{"from": "Ann", "to": "Bo", "relationType": "knows"}])
    assert memory.open_nodes(["Ann"]) == {
        "entities": [{"name": "Ann", "entityType": "person", "observations": ["one", "two"]}],
        "relations": [{"from": "Ann", "to": "Bo", "relationType": "knows"}],
    }


def test_the_answers_text_is_json_dumps_indented_byte_for_byte() -> None:
    """indented_json (the reference's text of a graph answer, built in a few steps per
    entity and relation) against ``json.dumps(indent=2, ensure_ascii=False)`` itself, on
    random values: entities, relations, nested and empty containers, keys json.dumps turns
    into strings, escapes, lone surrogates."""
    import json

    from ontoloom.ops.memory import indented_json

    rng = random.Random(7)
    alphabet = ["a", "é", '"', "\\", "\n", "東", "\x00", "\ud800", " ", "ß", "\u2028"]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(4)))

    def value(depth: int = 0) -> Any:
        r = rng.random()
        if depth > 3 or r < 0.3:
            return rng.choice([text(), 1, 2.5, True, None])
        if r < 0.5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        if r < 0.6:
            return [text() for _ in range(rng.randrange(3))]
        if r < 0.75:
            return {text(): text() for _ in range(rng.randrange(4))}
        if r < 0.85:
            return {text(): [text() for _ in range(rng.randrange(3))] for _ in range(3)}
        return {rng.choice([text(), 1]): value(depth + 1) for _ in range(rng.randrange(4))}

    for _ in range(5000):
        v = value()
        assert indented_json(v) == json.dumps(v, indent=2, ensure_ascii=False), v
