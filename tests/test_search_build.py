"""The whole-index build (reindex) against the per-object route (what writes use): the same
rows in every table of the search index, on a generated graph with what the index must get
right — private objects (a private end makes a relation private), language tags, several values,
long record bodies quoted as passages, the agent's words for typed relations, open relations,
untyped and foreign nodes, and conversation passages that a reindex must leave as they were."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

from ontoloom.api import Graph
from ontoloom.search import SearchIndex
from ontoloom.store.base import Delta
from ontoloom.terms import Literal, NamedNode, Quad
from ontoloom.vocab import FACTS, OL, RDF_TYPE, RDFS_LABEL, open_relation_iri, wording_iri

WORDS = tuple(
    [
        "payment",
        "timeout",
        "retry",
        "ledger",
        "Zürich",
        "migration",
        "naïve",
        "café",
        "deploy",
        "checkout",
        "salaries",
        "payroll",
        "İstanbul",
        "ΣΊΣΥΦΟΣ",
        "runbook",
        "rollback",
        "nightly",
    ]
)


def _ol(local: str) -> NamedNode:
    return NamedNode(OL + local)


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _body(rng: random.Random) -> str:
    paragraphs = []
    for _ in range(rng.randint(1, 4)):
        sentences = [_text(rng, rng.randint(2, 40)) + rng.choice(".?!") for _ in range(6)]
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs) + " " + "x" * 300  # and a run longer than a window


def generated(g: Graph, n: int = 300, seed: int = 7) -> list[Quad]:
    rng = random.Random(seed)
    quads: list[Quad] = []
    nodes = [g.ids.iri(f"obj_{i:04d}") for i in range(n)]
    types = ["Task", "Person", "Project", "Rule", "Decision", "Action", "Note"]
    for i, node in enumerate(nodes):
        kind = types[i % len(types)]

        def add(p: NamedNode, o: NamedNode | Literal, node: NamedNode = node) -> None:
            quads.append(Quad(node, p, o, FACTS))

        if i % 17 != 5:  # some are untyped: no document, but their titles label relations
            add(RDF_TYPE, _ol(kind))
        if i % 11 == 0:
            add(RDF_TYPE, _ol("Entity"))
        key = ("title", "name", "description")[i % 3]
        add(_ol(key), Literal(f"{_text(rng, 3)} {i}"))
        if i % 4 == 0:
            add(_ol(key), Literal(f"second {key} {i}"))  # two values
        if i % 5 == 0:
            add(_ol("description"), Literal(_text(rng, 12), language=rng.choice(["en", "de"])))
        if i % 3 == 0:
            privacy = ("private", "Private", "team", "public")[i % 4]
            add(_ol("privacy"), Literal(privacy))
        if i % 6 == 0:
            for t in {_text(rng, 1) for _ in range(3)}:
                add(_ol("tags"), Literal(t))
        if i % 9 == 0:
            add(_ol("aliases"), Literal(f"Alias{i}"))
        if i % 7 == 0:
            add(_ol("observations"), Literal(f"Observed {_text(rng, 5)}\nline two"))
            add(_ol("observations"), Literal("nul\x00inside"))
        if i % 10 == 0:
            add(_ol("kind"), Literal("custom kind"))
        if kind in ("Rule", "Decision", "Action") and i % 2:
            add(_ol("body"), Literal(_body(rng)))
            if i % 4 == 1:
                add(_ol("source"), Literal(f"records/{i}.md"))
                add(_ol("date"), Literal("2026-11-0" + str(i % 9 + 1)))
        add(_ol("status"), Literal(rng.choice(["open", "done", "blocked"])))
        add(NamedNode("http://example.org/other"), Literal("not an ol property"))
        for _ in range(rng.randint(0, 3)):
            other = rng.choice(nodes)
            p = _ol(rng.choice(["blocks", "assigned_to", "member_of", "has_task"]))
            quads.append(Quad(node, p, other, FACTS))
            if rng.random() < 0.3:
                label = Literal(f"words for {p.value[len(OL) :]}")
                quads.append(Quad(wording_iri(node, p, other), RDFS_LABEL, label, FACTS))
        if i % 8 == 0:
            words = open_relation_iri(rng.choice(["works at", "reports to"]))
            quads.append(Quad(node, words, rng.choice(nodes), FACTS))
        if i % 13 == 0:
            quads.append(Quad(node, _ol("see_also"), NamedNode("http://example.org/x"), FACTS))
    foreign = NamedNode("http://example.org/thing")
    quads.append(Quad(foreign, _ol("title"), Literal("not an instance"), FACTS))
    return quads


TABLES = {
    "docs": "SELECT key, kind, id, type, title, private, from_id, rel, to_id, words FROM docs",
    "tags": "SELECT d.key, t.tag FROM tags t JOIN docs d ON d.rowid = t.rowid",
    "fts": "SELECT d.key, f.id, f.title, f.body, f.tags FROM fts f JOIN docs d ON d.rowid = f.rowid",
    "subs": "SELECT d.key, s.* FROM subs s JOIN docs d ON d.rowid = s.rowid",
    "views": "SELECT d.key, v.shown, v.view FROM views v JOIN docs d ON d.rowid = v.rowid",
    "versions": "SELECT * FROM versions",
    "df": "SELECT term, n FROM df WHERE n > 0",
    "said": "SELECT s.kind, s.source, s.label, s.at, s.privacy, s.text, f.context FROM said s "
    "JOIN said_fts f ON f.rowid = s.rowid",
    "transcripts": "SELECT * FROM transcripts",
    "meta": "SELECT * FROM meta",
}


def _rows(path: Path) -> dict[str, list[Any]]:
    db = sqlite3.connect(path)
    try:
        out = {name: sorted(db.execute(sql), key=repr) for name, sql in TABLES.items()}
        out["order"] = [k for (k,) in db.execute("SELECT key FROM docs ORDER BY rowid")]
        return out
    finally:
        db.close()


def _transcript(index: SearchIndex) -> None:
    said = [
        ("m1", "2026-11-01T10:00:00Z", "We pinned the SDK to stop the payment retries.", ""),
        ("m2", None, "The ledger migration runs nightly, after the rollback window.", "m1?"),
    ]
    index.put_transcript("chat-1", "abc", "private", said)


def test_a_reindex_writes_the_rows_the_per_object_route_writes(tmp_path: Path) -> None:
    with Graph.open(tmp_path / "d", write=True, create=True) as g:
        g.writes.commit(Delta(adds=set(generated(g))), trusted="test: generated graph")
        _transcript(g.search_index())
        g.search_index()  # (an index exists, with the conversation's passages)
        objects = g.reindex(conversations=False)
        # the typed ones (those with a document: the per-object route would also label the
        # relations between an untyped node and a foreign IRI, which a reindex never has)
        instances = [g.ids.iri(f"obj_{i:04d}") for i in range(300) if i % 17 != 5]
        generation = g.backend.generation()
        oracle = SearchIndex(tmp_path / "oracle.sqlite")
        _transcript(oracle)
        oracle.db.execute("BEGIN IMMEDIATE")
        assert oracle._index(g.backend, g.ids, instances) == objects
        oracle._set_generation(generation)
        oracle.db.execute("COMMIT")
        oracle.close()
    built, expected = _rows(tmp_path / "d" / "search.sqlite"), _rows(tmp_path / "oracle.sqlite")
    assert objects == 300 - len(range(5, 300, 17))
    assert len(expected["said"]) > 20 and len(expected["docs"]) > 600  # (it tests something)
    assert any(d[5] for d in expected["docs"]) and any(d[6] for d in expected["docs"])
    for table in TABLES:
        assert built[table] == expected[table], table
    # documents in the order the whole build has always made them: objects by id, then
    # relations by (from, rel, to) — equal scores rank by it
    keys = built["order"]
    objs = [k for k in keys if k.startswith("object:")]
    rels = [k for k in keys if k.startswith("relation:")]
    assert keys == objs + rels
    assert objs == sorted(objs) and [r.split("\n") for r in rels] == sorted(
        r.split("\n") for r in rels
    )


def test_a_private_object_flags_its_relations_and_its_passages_keep_their_privacy(
    tmp_path: Path,
) -> None:
    with Graph.open(tmp_path / "d", write=True, create=True) as g:
        g.writes.commit(Delta(adds=set(generated(g, 60))), trusted="test: generated graph")
        g.reindex(conversations=False)
    rows = _rows(tmp_path / "d" / "search.sqlite")
    private = {d[2] for d in rows["docs"] if d[1] == "object" and d[5] == 1}
    assert private
    for _key, kind, _id, _type, _title, flag, start, _rel, end, _words in rows["docs"]:
        if kind == "relation":
            assert flag == int(start in private or end in private)
