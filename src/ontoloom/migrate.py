"""``ontoloom import --from memory-jsonl|sage-memory``: the memories agents keep today, moved
into the graph exactly as the memory-server drop-in (:mod:`ontoloom.memory`) maps its calls.

Each source is read into the drop-in's terms — entities (name, entityType, observations, and,
from sage-memory, the properties the schema declares) and relations (from, to, the relation's
words) — then staged as one delta through :class:`~ontoloom.memory.Memory`: an entityType the
schema knows becomes that type, any other a ``Thing`` keeping the word; words that name a
schema relation are that typed relation under the schema's rules, any others kept verbatim as
an open relation. What cannot be stored is *refused by item* with the reason (a relation to
an entity the file does not have, a secret, a value a shape refuses, a typed relation the
schema's rules refuse — the line the drop-in would have refused: of ``blocks`` both ways, the
one closing the cycle), and everything else commits through the one write path
at once, or nothing does. The report lists what became typed, what stayed open, what was
refused and why, and what the source holds that is not an entity or relation (skipped, by
name).

Sources:

* ``memory-jsonl`` — the reference server's ``memory.jsonl``: one JSON object per line,
  ``{"type": "entity", "name", "entityType", "observations"}`` or ``{"type": "relation",
  "from", "to", "relationType"}``.
* ``sage-memory`` — its SQLite database (``.sage-memory/memory.db``), read-only. Entities are
  the ``memories`` rows tagged ``ontology`` and ``entity`` in the encoding of its ontology
  skill: title ``[Type:id] label``, content ``{"id", "type", "properties"}``; relations are
  the ``edges`` between them. The name is ``properties.name``, else ``properties.title``,
  else the title's label; properties the schema declares become properties, the others
  observations ``"key: value"``.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, ValidationFailed
from ontoloom.findings import Finding
from ontoloom.memory import GENERIC_TYPE, Memory
from ontoloom.model import OBSERVATION_ORDER, OBSERVATIONS

if TYPE_CHECKING:
    from ontoloom.changes import Changes
    from ontoloom.session import Session

__all__ = ["SOURCES", "import_memory", "read_memory", "read_memory_jsonl", "read_sage_memory"]

SOURCES = ("memory-jsonl", "sage-memory")
_TITLE = re.compile(r"^\[(?P<type>[^:\]]+):(?P<id>[^\]]+)\]\s*(?P<label>.*)$")
# Kept by the drop-in itself, never taken from a source's properties.
_RESERVED = frozenset({"name", "title", "kind", OBSERVATIONS, OBSERVATION_ORDER})


@dataclass
class Item:
    """An entity in the drop-in's terms, with where it came from (for the report)."""

    where: str
    name: str
    entity_type: str
    observations: list[str]
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class Link:
    where: str
    source: str
    target: str
    words: str


@dataclass
class Source:
    entities: list[Item] = field(default_factory=list)
    relations: list[Link] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)  # unreadable items
    skipped: list[dict[str, Any]] = field(default_factory=list)  # not entities/relations
    notes: list[str] = field(default_factory=list)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def read_memory(path: Path, source: str) -> dict[str, Any]:
    """What the process naming another tool's memory reads of it (the caller reads its own
    files): the reference server's memory.jsonl as ``{"text"}``, sage-memory's database as
    its rows ``{"memories", "edges"}``; :func:`import_memory` takes it from there.

    :raises BadInput: no such file, or not what ``source`` says it is.
    """
    if source == "memory-jsonl":
        try:
            return {"text": path.read_text(encoding="utf-8")}
        except FileNotFoundError:
            raise BadInput(f"{path}: no such file; give the path of the memory.jsonl") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    if source == "sage-memory":
        return _sage_memory_rows(path)
    raise BadInput(f"--from is one of {', '.join(SOURCES)}, not {source!r}")


def read_memory_jsonl(text: str, file_name: str) -> Source:
    """The reference server's file, line by line; an unreadable line is refused by number.

    :raises BadInput: no line of it is JSON (an empty file, or not a memory.jsonl at all):
        there is nothing to import, and "imported nothing" would pass for a success.
    """
    out = Source()
    json_lines = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{file_name}:{number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            out.refused.append({"where": where, "why": f"not JSON ({exc.msg})"})
            continue
        json_lines += 1
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "entity":
            name, entity_type = item.get("name"), item.get("entityType")
            observations = item.get("observations", [])
            if not isinstance(name, str) or not name.strip():
                out.refused.append({"where": where, "why": "an entity needs a non-empty name"})
            elif not isinstance(entity_type, str) or not entity_type.strip():
                out.refused.append(
                    {"where": where, "name": name, "why": "an entity needs an entityType"}
                )
            elif not _strings(observations):
                out.refused.append(
                    {"where": where, "name": name, "why": "observations is a list of strings"}
                )
            else:
                out.entities.append(Item(where, name, entity_type, list(observations)))
        elif kind == "relation":
            ends = [item.get(k) for k in ("from", "to", "relationType")]
            if all(isinstance(v, str) and v.strip() for v in ends):
                out.relations.append(Link(where, *ends))
            else:
                out.refused.append(
                    {"where": where, "why": "a relation needs from, to and relationType strings"}
                )
        else:
            out.refused.append(
                {"where": where, "why": f"type is {kind!r}, neither 'entity' nor 'relation'"}
            )
    if not json_lines:
        raise BadInput(
            f"{file_name} has no JSON line: a memory.jsonl holds one JSON object per line, "
            'e.g. {"type": "entity", "name": "Alice", "entityType": "person", "observations": []}'
        )
    return out


def _scalar_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _sage_memory_rows(path: Path) -> dict[str, Any]:
    """sage-memory's database, opened read-only: its memories and its edges, as rows."""
    if not path.is_file():
        raise BadInput(f"{path}: no such file; give the path of sage-memory's memory.db")
    try:
        con = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
        try:
            memories = con.execute(
                "SELECT id, title, content, tags FROM memories ORDER BY created_at, rowid"
            ).fetchall()
            edges = con.execute(
                "SELECT id, source_id, target_id, relation, properties FROM edges "
                "ORDER BY created_at, rowid"
            ).fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise BadInput(
            f"{path}: not a sage-memory database ({exc}); give its .sage-memory/memory.db"
        ) from None
    return {"memories": [list(m) for m in memories], "edges": [list(e) for e in edges]}


def read_sage_memory(rows: dict[str, Any], declared: set[str]) -> Source:
    """sage-memory's rows (:func:`_sage_memory_rows`): its ontology entries and the edges
    between them. ``declared``: the property names the schema declares (they stay
    properties)."""
    memories, edges = rows.get("memories") or [], rows.get("edges") or []
    out = Source()
    names: dict[str, str] = {}  # memory id → entity name
    for memory_id, title, content, tags in memories:
        where = f"memories[{memory_id}]"
        try:
            tag_list = json.loads(tags)
        except (TypeError, json.JSONDecodeError):
            tag_list = []
        if not (isinstance(tag_list, list) and {"ontology", "entity"} <= set(tag_list)):
            out.skipped.append(
                {"where": where, "title": title, "why": "not an ontology entity entry"}
            )
            continue
        try:
            data = json.loads(content)
        except (TypeError, json.JSONDecodeError):
            data = None
        props = data.get("properties") if isinstance(data, dict) else None
        if not isinstance(props, dict) or not isinstance(data.get("type"), str):
            out.refused.append(
                {
                    "where": where,
                    "title": title,
                    "why": 'content is not the ontology encoding {"id", "type", "properties"}',
                }
            )
            continue
        match = _TITLE.match(title or "")
        label = match.group("label") if match else title
        name = next(
            (props[k] for k in ("name", "title") if isinstance(props.get(k), str) and props[k]),
            label or data.get("id"),
        )
        if not isinstance(name, str) or not name.strip():
            out.refused.append({"where": where, "title": title, "why": "the entry has no name"})
            continue
        properties: dict[str, Any] = {}
        observations: list[str] = []
        for key, value in props.items():
            if key in ("name", "title") and value == name:
                continue
            if key in declared and key not in _RESERVED and isinstance(value, str | int | float):
                properties[key] = value
            else:
                observations.append(f"{key}: {_scalar_text(value)}")
        names[memory_id] = name
        out.entities.append(Item(where, name, data["type"], observations, properties))
    for edge_id, source_id, target_id, relation, edge_props in edges:
        where = f"edges[{edge_id}]"
        source, target = names.get(source_id), names.get(target_id)
        if source is None or target is None:
            out.refused.append(
                {
                    "where": where,
                    "relationType": relation,
                    "why": "an end is not an ontology entity entry (a plain memory or missing)",
                }
            )
            continue
        out.relations.append(Link(where, source, target, relation))
        if edge_props not in (None, "", "{}"):
            out.notes.append(
                f"{where}: the edge's properties {edge_props} are not kept (relations carry none)"
            )
    return out


def import_memory(
    graph: Session, content: dict[str, Any], source: str, *, file: str, dry_run: bool = False
) -> dict[str, Any]:
    """Import a memory file or database (``content``, as :func:`read_memory` read the file
    called ``file``) as the drop-in would have stored it; the report."""
    if source == "memory-jsonl":
        found = read_memory_jsonl(str(content.get("text") or ""), Path(file).name)
    elif source == "sage-memory":
        found = read_sage_memory(content, graph.schema.datatype_properties)
    else:
        raise BadInput(f"--from is one of {', '.join(SOURCES)}, not {source!r}")
    memory = Memory(graph)
    entity_refusals: list[dict[str, Any]] = []  # by validation, across rounds
    dropped: set[str] = set()  # their names
    skipped_links: set[int] = set()  # relations refused by validation (by object id)

    def stage() -> tuple[Changes, dict[str, dict[str, Any]]]:
        changes = graph.changes()
        staged: dict[str, dict[str, Any]] = {}
        for item in found.entities:
            if item.name in dropped:
                continue
            props = {k: v for k, v in item.properties.items() if k not in _RESERVED}
            made = memory.stage_entity(
                changes, item.name, item.entity_type, item.observations, props
            )
            if made is not None:
                entity_id, type_name = made
                staged[item.name] = {
                    "name": item.name,
                    "entityType": item.entity_type,
                    "type": type_name,
                    "id": entity_id,
                    "observations": len(dict.fromkeys(item.observations)),
                    "properties": sorted(props),
                    "where": item.where,
                }
            else:  # the name is taken (in the store, or earlier in the source): add to it
                entity_id = memory._require(item.name, changes)
                added = memory.stage_observations(changes, entity_id, item.observations)
                entry = staged.setdefault(
                    item.name,
                    {"name": item.name, "id": entity_id, "existing": True, "observations": 0},
                )
                entry["observations"] += len(added)
        return changes, staged

    while True:
        probe, staged = stage()
        relation_refusals: list[dict[str, Any]] = []
        links: list[tuple[str, str, str]] = []
        link_items: list[Link] = []
        for link in found.relations:
            if id(link) in skipped_links:
                continue
            ends = [
                None if end in dropped else memory._one(end, probe)
                for end in (link.source, link.target)
            ]
            from_id, to_id = ends
            if from_id is None or to_id is None:
                missing = [
                    e for e, i in zip((link.source, link.target), ends, strict=True) if i is None
                ]
                relation_refusals.append(
                    {
                        "where": link.where,
                        "from": link.source,
                        "to": link.target,
                        "relationType": link.words,
                        "why": f"no entity named {missing[0]!r}"
                        + (" (refused itself)" if missing[0] in dropped else "")
                        + ": relations to entities that do not exist are refused on purpose",
                    }
                )
                continue
            links.append((from_id, link.words, to_id))
            link_items.append(link)
        changes = stage()[0]
        outcome = memory.stage_relations(changes, links)
        findings = graph.writes.check(changes.delta)
        if not findings:
            break
        # Refuse what the findings are about — a typed relation the schema's rules refuse
        # (a cycle, ends that do not fit), an entity, or a relation whose words hold a
        # secret — with the reason, and try again without it, as the drop-in would have
        # refused that line's call.
        by_id = {e["id"]: e for e in staged.values()}
        by_words = _relation_nodes(graph, links)
        typed_links = {
            i: (links[i][0], _canonical(graph, links[i][1]), links[i][2])
            for i, typed, _ in outcome
            if typed
        }
        blamed_entities: set[str] = set()
        blamed_links: set[int] = set()
        broken: dict[int, Finding] = {}  # typed relations refused by a rule → the finding
        about_links: set[int] = set()  # the findings (by id) about a typed relation
        for f in findings:
            # the relation the finding names most closely: the latest on its cycle, else its
            # subject and value (a domain, a range), else an end, else the relation alone
            same = [(i, a, b) for i, (a, r, b) in typed_links.items() if f.path == r]
            on_cycle = set(f.cycle or ())
            about = (
                [i for i, a, b in same if {a, b} <= on_cycle]  # the latest closes it
                or [i for i, a, b in same if f.focus == a and f.value in (a, b)]
                or [i for i, a, b in same if f.focus in (a, b)]
                or [i for i, _, _ in same]
            )
            if about:
                about_links.add(
                    id(f)
                )  # of "blocks" both ways, the one closing the cycle is refused
                broken.setdefault(max(about), f)
            elif f.focus in by_id:
                blamed_entities.add(by_id[f.focus]["name"])
            elif f.focus in by_words:
                blamed_links |= {i for i in by_words[f.focus] if i < len(link_items)}
            else:
                raise memory.for_agent(ValidationFailed(findings))
        translated = memory.for_agent(ValidationFailed(findings)).findings
        said = dict(zip(map(id, findings), translated, strict=True))

        def refuse_link(link: Any, words: str, why: str) -> None:
            skipped_links.add(id(link))
            entity_refusals.append(
                {
                    "where": link.where,
                    "from": link.source,
                    "to": link.target,
                    "relationType": words,
                    "why": why,
                }
            )

        for i, f in sorted(broken.items()):
            refuse_link(link_items[i], link_items[i].words, said[id(f)].message)
        for f, raw in zip(translated, findings, strict=True):
            if raw.focus in by_id and id(raw) not in about_links:
                entity = by_id[raw.focus]
                entity_refusals.append(
                    {
                        "where": entity.get("where"),
                        "name": entity["name"],
                        "entityType": entity.get("entityType"),
                        "why": f.message,
                    }
                )
        for i in sorted(blamed_links):
            refuse_link(
                link_items[i],
                "(withheld: it holds a secret)",
                "the relation's words hold a secret, and secrets are never stored",
            )
        dropped |= blamed_entities
    refused = [*found.refused, *entity_refusals, *relation_refusals]

    typed_rel: list[dict[str, Any]] = []
    open_rel: list[dict[str, Any]] = []
    for (_, typed, is_new), link in zip(outcome, link_items, strict=True):
        row = {"from": link.source, "to": link.target, "relationType": link.words, "new": is_new}
        if typed:
            row["rel"] = _canonical(graph, link.words)
        (typed_rel if typed else open_rel).append(row)
    entities = [e for e in staged.values() if not e.get("existing")]
    report = {
        "source": source,
        "file": file,
        "dry_run": dry_run,
        "entities": {
            "typed": [e for e in entities if e["type"] != GENERIC_TYPE],
            "open": [e for e in entities if e["type"] == GENERIC_TYPE],
            "existing": [e for e in staged.values() if e.get("existing")],
        },
        "relations": {"typed": typed_rel, "open": open_rel},
        "observations": sum(e["observations"] for e in staged.values()),
        "refused": refused,
        "skipped": found.skipped,
        "notes": found.notes,
    }
    if not dry_run:
        graph.commit(changes)  # through the one write path: all of it, or nothing
    report["stored"] = not dry_run
    return report


def _relation_nodes(graph: Session, links: list[tuple[str, str, str]]) -> dict[str, list[int]]:
    """The nodes a finding can name for each staged relation's words (its open predicate,
    the wording of a typed one), as finding focuses, → the relations' indexes."""
    from ontoloom.memory import typed_relation, wording_iri
    from ontoloom.vocab import open_relation_iri

    out: dict[str, list[int]] = {}
    ids = graph.ids
    for i, (from_id, words, to_id) in enumerate(links):
        nodes = [open_relation_iri(words)]
        spec = typed_relation(graph, words)
        if spec is not None:
            nodes.append(wording_iri(ids.iri(from_id), spec.iri, ids.iri(to_id)))
        for node in nodes:
            out.setdefault(ids.id_of(node), []).append(i)
    return out


def _canonical(graph: Session, words: str) -> str:
    from ontoloom.memory import typed_relation

    spec = typed_relation(graph, words)
    return spec.name if spec else words


def render(report: dict[str, Any]) -> str:
    """The report as text: counts, then every refused and skipped item with the reason."""
    ents, rels = report["entities"], report["relations"]
    head = "dry run (nothing stored): " if report["dry_run"] else ""
    lines = [
        f"{head}{report['source']} {report['file']}",
        f"  entities: {len(ents['typed'])} typed, {len(ents['open'])} open (Thing, "
        f"entityType kept), {len(ents['existing'])} already there",
        f"  relations: {len(rels['typed'])} typed, {len(rels['open'])} open (kept verbatim)",
        f"  observations: {report['observations']}",
        f"  refused: {len(report['refused'])}, skipped: {len(report['skipped'])}",
    ]
    for e in ents["typed"]:
        lines.append(f"  typed   {e['name']!r}: {e['entityType']} → {e['type']}")
    for e in ents["open"]:
        lines.append(
            f"  open    {e['name']!r}: {e['entityType']} → Thing (kind {e['entityType']!r})"
        )
    for r in rels["typed"]:
        lines.append(f"  typed   {r['from']!r} {r['relationType']!r} {r['to']!r} → {r['rel']}")
    for r in rels["open"]:
        lines.append(f"  open    {r['from']!r} {r['relationType']!r} {r['to']!r}")
    for r in report["refused"]:
        what = r.get("name") or (
            f"{r.get('from')!r} {r.get('relationType')!r} {r.get('to')!r}"
            if "from" in r
            else r.get("title") or ""
        )
        lines.append(f"  refused {r.get('where')}: {what + ': ' if what else ''}{r['why']}")
    for r in report["skipped"]:
        lines.append(f"  skipped {r['where']}: {r.get('title', '')}: {r['why']}")
    for note in report["notes"]:
        lines.append(f"  note    {note}")
    return "\n".join(lines)
