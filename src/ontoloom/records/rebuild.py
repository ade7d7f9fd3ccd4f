"""``ontoloom rebuild``: every configured root read into the trusted graph, one named graph
per record, through the write path — incrementally (by content hash) unless ``full``.

Order (RECORDS.md): every object is made first; relation entries are then resolved against
all objects of the instance and added in sorted path order (paths compared as bytes) and,
within a file, in line order. The entry that would close a ``builds-on`` cycle is rejected.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from ontoloom.config import load_config
from ontoloom.egress import most_restrictive, privacy_of
from ontoloom.errors import BadInput, ValidationFailed
from ontoloom.findings import Finding
from ontoloom.model import literal_from_json, vocab_iri
from ontoloom.records.extract import (
    Candidate,
    Extracted,
    RecordObject,
    RelationEntry,
    extract,
    extract_confirmed,
    extract_decision_log,
)
from ontoloom.records.frontmatter import Note, parse_record
from ontoloom.records.identity import Resolver
from ontoloom.records.walk import RecordFile, walk_root
from ontoloom.records.writeback import finish_writebacks
from ontoloom.store.base import Delta
from ontoloom.terms import Literal, NamedNode, Quad
from ontoloom.vocab import (
    CLASS_GRAPH_PREFIX,
    GRAPH_BASE,
    OL,
    RDF,
    RDF_TYPE,
    RECORD_GRAPH_PREFIX,
    XSD,
)

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = ["RebuildReport", "rebuild"]

MANIFEST = "records.json"
EVIDENCE = "https://ontoloom.dev/evidence/"
CANDIDATE = "https://ontoloom.dev/candidate/"
_ALL_TYPES = {"Object", "Record", "Entity"}


def record_graph(path: str) -> NamedNode:
    return NamedNode(RECORD_GRAPH_PREFIX + quote(path, safe="/"))


def class_graph(class_id: str) -> NamedNode:
    return NamedNode(CLASS_GRAPH_PREFIX + quote(class_id.partition(":")[2], safe=""))


@dataclass
class RebuildReport:
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    objects_by_type: dict[str, int] = field(default_factory=dict)
    relations_by_type: dict[str, int] = field(default_factory=dict)
    files: int = 0

    @property
    def nothing_changed(self) -> bool:
        return not self.changed and not self.removed

    @property
    def rejected(self) -> list[Note]:
        return [
            n
            for n in self.notes
            if n.kind in ("rejected", "malformed", "encoding", "collision", "unresolvable")
        ]

    def to_json(self) -> dict[str, Any]:
        by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for note in self.notes:
            by_kind[note.kind].append(note.to_json())
        return {
            "files": self.files,
            "changed": self.changed,
            "removed": self.removed,
            "nothing_changed": self.nothing_changed,
            "objects": self.objects_by_type,
            "relations": self.relations_by_type,
            "rejected": len(self.rejected),
            "notes": dict(sorted(by_kind.items())),
        }


def collect(graph: Session) -> tuple[Path, list[RecordFile], list[Note]]:
    """Every record file of the instance, in sorted path order (as bytes)."""
    config = load_config(graph.data_dir) if graph.data_dir is not None else None
    if config is None or config.instance is None:
        raise BadInput(
            "rebuild needs an instance: run it inside a folder with ontoloom.toml (`ontoloom init`), "
            "or point --data-dir at that instance's .ontoloom/"
        )
    notes: list[Note] = []
    files: list[RecordFile] = []
    for kind, root in config.record_roots().items():
        files += walk_root(config.instance, root, kind, "internal", notes)
    # Records ontoloom writes itself (knowledge confirmed from conversations).
    files += walk_root(config.instance, "ontoloom", "confirmed", "internal", notes)
    files += walk_root(config.instance, "records/ontoloom", "confirmed", "internal", notes)
    seen_docs: dict[str, str] = {}
    for doc_root in config.document_roots():
        for f in walk_root(config.instance, doc_root.root, "documents", doc_root.privacy, notes):
            files.append(f)
            seen_docs.setdefault(f.path, doc_root.root)
    unique: dict[str, RecordFile] = {}
    for f in files:  # a file under two overlapping roots is read once, from the first
        unique.setdefault(f.path, f)
    ordered = sorted(unique.values(), key=lambda f: f.path.encode("utf-8"))
    return config.instance, ordered, notes


def _load_manifest(graph: Session) -> dict[str, Any]:
    assert graph.data_dir is not None
    path = graph.data_dir / MANIFEST
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") == 1:
                return data
        except (OSError, json.JSONDecodeError):
            pass
    return {"version": 1, "files": {}}


def _save_manifest(graph: Session, manifest: dict[str, Any]) -> None:
    assert graph.data_dir is not None
    path = graph.data_dir / MANIFEST
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def _extract(f: RecordFile) -> Extracted:
    parsed = parse_record(f.path, f.data)
    raw = f.data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if f.kind == "decision-log":
        return extract_decision_log(parsed, f.privacy)
    if f.kind == "confirmed":
        return extract_confirmed(parsed, raw)
    return extract(f.kind, parsed, f.rel, f.privacy, raw)


def rebuild(
    graph: Session, *, full: bool = False, progress: Callable[[int, int], None] | None = None
) -> RebuildReport:
    """Read the instance's records into the graph.

    :raises BadInput: not an instance. :raises ValidationFailed: only if the graph as a whole
        could not be made valid (nothing is changed then).
    """
    # A confirmation interrupted between its commit and its writeback is finished first,
    # so the records read below carry what the store already holds.
    finished = finish_writebacks(graph)
    _, files, notes = collect(graph)
    report = RebuildReport(files=len(files), notes=[*finished, *notes])
    manifest = _load_manifest(graph)
    old = manifest["files"]
    hashes = {f.path: hashlib.sha256(f.data).hexdigest() for f in files}
    changed = [f for f in files if full or old.get(f.path, {}).get("hash") != hashes[f.path]]
    present = set(hashes)
    removed = sorted(p for p in old if p not in present)

    extracted: dict[str, Extracted] = {}
    for i, f in enumerate(changed):
        extracted[f.path] = _extract(f)
        report.notes += extracted[f.path].notes
        if progress:
            progress(i + 1, len(changed))

    # Every object first: unchanged records' from the manifest, changed ones just read.
    summaries: dict[str, list[dict[str, Any]]] = {
        p: old[p]["objects"] for p in present if p not in extracted and p in old
    }
    owner: dict[str, str] = {}  # object id → the path that makes it
    objects: dict[str, RecordObject] = {}
    order = sorted(present, key=lambda p: p.encode("utf-8"))
    for path in order:
        if path in extracted:
            keep = []
            for obj in extracted[path].objects:
                if obj.id in owner:
                    report.notes.append(
                        Note(
                            path,
                            obj.line,
                            "collision",
                            f"{obj.id} is already made by {owner[obj.id]}; this one yields no object",
                        )
                    )
                    continue
                owner[obj.id] = path
                objects[obj.id] = obj
                keep.append(obj)
            extracted[path].objects = keep
        else:
            for summary in summaries.get(path, []):
                owner.setdefault(summary["id"], path)

    classes = _classes(old, extracted, present)
    resolver = Resolver(
        [
            *_entities(graph),
            *(s for p in summaries for s in summaries[p]),
            *(o.summary() for o in objects.values()),
            *(
                {
                    "id": c,
                    "type": "FailureClass",
                    "title": info["title"],
                    "aliases": info["aliases"],
                }
                for c, info in classes.items()
            ),
        ],
    )

    # Relation entries in path order, then line order, each checked.
    acyclic_rels = [r.name for r in graph.schema.relations.values() if r.acyclic]
    acyclic = {rel: _stored_edges(old, present - set(extracted), rel) for rel in acyclic_rels}
    accepted: dict[str, list[tuple[RelationEntry, str, str]]] = defaultdict(list)
    symmetric = _symmetric_pairs(graph, {record_graph(p) for p in [*extracted, *removed]})
    for path in order:
        if path not in extracted:
            continue
        for entry in sorted(extracted[path].relations, key=lambda e: e.line or 0):
            if (
                not any(o.id == entry.source for o in extracted[path].objects)
                and not entry.confirmed
            ):
                continue  # its object was not made (collision)
            outcome = _check(graph, resolver, entry, acyclic)
            if isinstance(outcome, str):
                report.notes.append(
                    Note(path, entry.line, "rejected", f"{entry.rel}: {entry.target} — {outcome}")
                )
                continue
            source, target = outcome
            if entry.rel in symmetric:  # stored once, as first written
                pair = frozenset((source, target))
                if pair in symmetric[entry.rel]:
                    continue
                symmetric[entry.rel].add(pair)
            accepted[path].append((entry, source, target))
            if entry.rel in acyclic:
                acyclic[entry.rel][source].add(target)

    for path in order:
        for ref, alias, line in extracted.get(path, Extracted()).aliases:
            if resolver.resolve(ref).id is None:
                report.notes.append(
                    Note(path, line, "rejected", f"merges: {alias!r} into {ref} — no such object")
                )

    # Wikilinks that resolve to nothing are reported; the rest go on the worklist.
    for path in order:
        for cand in extracted.get(path, Extracted()).candidates:
            if resolver.resolve(cand.target).id is None:
                report.notes.append(
                    Note(
                        path,
                        cand.line,
                        "unresolved-wikilink",
                        f"[[{cand.target}]] matches no object",
                    )
                )

    def remake() -> Delta:  # failure classes are remade too: a rejected occurrence counts not
        return _delta(
            graph, extracted, accepted, _classes(old, extracted, present), removed, old, resolver
        )

    rejected = _commit(graph, remake, extracted, accepted, resolver, report)
    dropped = {p for p, ex in extracted.items() if p in rejected.values() and not ex.objects}
    for path in dropped:
        extracted.pop(path, None)

    # The manifest records what each file made, for the next incremental rebuild.
    new_files = {p: v for p, v in old.items() if p in present and p not in dropped}
    for f in changed:
        if f.path in dropped:
            new_files.pop(f.path, None)
            continue
        ex = extracted[f.path]
        new_files[f.path] = {
            "hash": hashes[f.path],
            "notes": [n.to_json() for n in report.notes if n.path == f.path],
            "objects": [o.summary() for o in ex.objects],
            "classes": ex.classes,
            "edges": {
                rel: [[s, t] for e, s, t in accepted.get(f.path, []) if e.rel == rel]
                for rel in acyclic_rels
            },
        }
    manifest["files"] = new_files
    # What unchanged records gave to report last time is reported again: the summary is
    # the instance's, not only this run's.
    reread = {f.path for f in changed}
    for path in sorted(new_files, key=lambda p: p.encode("utf-8")):
        if path not in reread:
            report.notes += [Note(**n) for n in new_files[path].get("notes", [])]
    report.changed = sorted(f.path for f in changed if f.path not in dropped)
    report.removed = removed
    # Orphans appear only when objects vanish: check the relations into those, and the
    # orphans found before (gc may have removed them since).
    now = set(resolver.types)
    vanished = {
        s["id"]
        for p in [*reread, *removed]
        for s in old.get(p, {}).get("objects", [])
        if s["id"] not in now
    }
    vanished |= {
        c for p in [*reread, *removed] for c in old.get(p, {}).get("classes", {}) if c not in now
    }
    orphans, missing = _orphans(
        graph, vanished | set(rejected) | set(manifest.get("orphans", [])), rejected
    )
    manifest["orphans"] = sorted(missing)
    report.notes += orphans
    if report.nothing_changed and "counts" in manifest:
        report.objects_by_type, report.relations_by_type = manifest["counts"]
    else:
        report.objects_by_type, report.relations_by_type = _counts(graph)
        manifest["counts"] = [report.objects_by_type, report.relations_by_type]
    # When the records were last read in (the SessionStart hook says "rebuilt 3 h ago").
    manifest["rebuilt"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    _save_manifest(graph, manifest)
    return report


def _classes(
    old: dict[str, Any], extracted: dict[str, Extracted], present: set[str]
) -> dict[str, dict[str, Any]]:
    """Failure classes from all their occurrences: title, aliases, most restrictive privacy."""
    occurrences: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in present:
        source = (
            extracted[path].classes if path in extracted else old.get(path, {}).get("classes", {})
        )
        for class_id, info in source.items():
            occurrences[class_id].append(info)
    out = {}
    for class_id, infos in occurrences.items():
        aliases = sorted({a for i in infos for a in i.get("aliases", [])})
        privacy = most_restrictive(privacy_of([i.get("privacy")]) for i in infos).cls
        out[class_id] = {
            "title": class_id.partition(":")[2].replace("-", " "),
            "aliases": aliases,
            "privacy": privacy or "private",
            "occurrences": sorted(i.get("occurrence", "") for i in infos),
        }
    return out


def _entities(graph: Session) -> list[dict[str, Any]]:
    """Entities written by agents, so records can point at them by id, title or name."""
    from ontoloom.vocab import FACTS

    query = (
        f"SELECT ?s ?t ?label WHERE {{ GRAPH {FACTS} {{ ?s {RDF_TYPE} ?t "
        f"OPTIONAL {{ ?s {vocab_iri('title')} ?title }} OPTIONAL {{ ?s {vocab_iri('name')} ?name }} }} "
        f"BIND(COALESCE(?title, ?name) AS ?label) }}"
    )
    return [
        {
            "id": graph.ids.id_of(r["s"]),
            "type": r["t"].value.rsplit("#", 1)[-1],
            "title": r["label"].value if r["label"] is not None else None,
        }
        for r in graph.backend.select(query)
    ]


def _symmetric_pairs(graph: Session, rebuilt: set[NamedNode]) -> dict[str, set[frozenset[str]]]:
    """Symmetric relations already stored by records that are not being re-read."""
    out: dict[str, set[frozenset[str]]] = {}
    for spec in graph.schema.relations.values():
        if not spec.symmetric:
            continue
        pairs = out.setdefault(spec.name, set())
        query = f"SELECT ?g ?s ?o WHERE {{ GRAPH ?g {{ ?s {spec.iri} ?o }} }}"
        for r in graph.backend.select(query):
            if r["g"] not in rebuilt and r["g"].value.startswith(RECORD_GRAPH_PREFIX):
                pairs.add(frozenset((graph.ids.id_of(r["s"]), graph.ids.id_of(r["o"]))))
    return out


def _stored_edges(old: dict[str, Any], unchanged: set[str], rel: str) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for path in unchanged:
        for s, t in old.get(path, {}).get("edges", {}).get(rel, []):
            edges[s].add(t)
    return edges


def _reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return False


def _allowed(types: list[str], graph: Session) -> set[str] | None:
    if any(t in _ALL_TYPES for t in types):
        return None
    expanded = set()
    for t in types:
        spec = graph.schema.types.get(t)
        if spec is None:
            continue
        expanded |= {
            c.value.rsplit("#", 1)[-1] for c in graph.schema.hierarchy.subclasses(spec.iri)
        }
    return expanded


def _check(
    graph: Session,
    resolver: Resolver,
    entry: RelationEntry,
    acyclic: dict[str, dict[str, set[str]]],
) -> tuple[str, str] | str:
    spec = graph.schema.relations.get(entry.rel)
    if spec is None:
        return f"unknown relation {entry.rel!r} (known: {', '.join(graph.schema.relations)})"
    source = resolver.resolve(entry.source).id if entry.confirmed else entry.source
    if source is None:
        return f"the source {entry.source!r} matches no object"
    domain = _allowed(spec.from_types, graph)
    source_type = resolver.types.get(source)
    if domain is not None and source_type not in domain:
        return f"{entry.rel} starts at a {' or '.join(spec.from_types)}, and {source} is a {source_type or 'entity'}"
    target = resolver.resolve(entry.target, _allowed(spec.to_types, graph))
    if target.id is None:
        return target.reason or "unresolvable"
    if spec.acyclic and (target.id == source or _reaches(acyclic[entry.rel], target.id, source)):
        return f"would close a {entry.rel} cycle ({target.id} already reaches {source})"
    return source, target.id


def _literal(value: Any) -> list[Literal]:
    try:
        return literal_from_json(value)
    except Exception:  # a value JSON cannot type is kept as text
        return [Literal(str(value))]


def _delta(
    graph: Session,
    extracted: dict[str, Extracted],
    accepted: dict[str, list[tuple[RelationEntry, str, str]]],
    classes: dict[str, dict[str, Any]],
    removed: list[str],
    old: dict[str, Any],
    resolver: Resolver,
) -> Delta:
    iri = graph.ids.iri
    adds: set[Quad] = set()
    removes: set[Quad] = set()
    graphs = {path: record_graph(path) for path in [*extracted, *removed]}
    for g in graphs.values():
        removes |= set(graph.backend.quads(g))
    for path, ex in extracted.items():
        g = graphs[path]
        for obj in ex.objects:
            node = iri(obj.id)
            adds |= {
                Quad(node, RDF_TYPE, vocab_iri(obj.type), g),
                Quad(node, vocab_iri("title"), Literal(obj.title), g),
                Quad(node, vocab_iri("privacy"), Literal(obj.privacy), g),
                Quad(node, vocab_iri("source"), Literal(obj.path), g),
            }
            if obj.body.strip():
                adds.add(Quad(node, vocab_iri("body"), Literal(obj.body), g))
            for alias in obj.aliases:
                adds.add(Quad(node, vocab_iri("aliases"), Literal(alias), g))
            if obj.date:
                adds |= {Quad(node, vocab_iri("date"), lit, g) for lit in _literal(obj.date)}
            for key, value in obj.properties.items():
                adds |= {Quad(node, vocab_iri(key), lit, g) for lit in _literal(value)}
        for entry, source, target in accepted.get(path, []):
            rel = vocab_iri(entry.rel)
            pairs = [(source, target)]
            if entry.on_class:
                pairs.append((entry.on_class, target))
            for s, t in pairs:
                adds.add(Quad(iri(s), rel, iri(t), g))
                ev = NamedNode(
                    EVIDENCE
                    + hashlib.sha256(
                        f"{path}\n{s}\n{entry.rel}\n{t}\n{entry.line}".encode()
                    ).hexdigest()[:32]
                )
                adds |= {
                    Quad(ev, RDF_TYPE, NamedNode(RDF + "Statement"), g),
                    Quad(ev, NamedNode(RDF + "subject"), iri(s), g),
                    Quad(ev, NamedNode(RDF + "predicate"), rel, g),
                    Quad(ev, NamedNode(RDF + "object"), iri(t), g),
                    Quad(ev, vocab_iri("source"), Literal(entry.path), g),
                    Quad(ev, vocab_iri("quote"), Literal(entry.quote), g),
                }
                if entry.line:
                    adds.add(
                        Quad(
                            ev,
                            vocab_iri("line"),
                            Literal(str(entry.line), datatype=NamedNode(XSD + "integer")),
                            g,
                        )
                    )
                if entry.confirmed:
                    adds.add(
                        Quad(
                            ev,
                            vocab_iri("confirmed"),
                            Literal("true", datatype=NamedNode(XSD + "boolean")),
                            g,
                        )
                    )
        for cand in ex.candidates:
            adds |= _candidate_quads(graph, cand, resolver, g)
        for ref, alias, _line in ex.aliases:  # merges confirmed from conversations
            merged = resolver.resolve(ref).id
            if merged is not None:
                adds.add(Quad(iri(merged), vocab_iri("aliases"), Literal(alias), g))
    # Failure classes: one derived graph each, remade when any occurrence of it changed.
    touched = {c for ex in extracted.values() for c in ex.classes}
    touched |= {c for p in [*extracted, *removed] for c in old.get(p, {}).get("classes", {})}
    for class_id in touched:
        g = class_graph(class_id)
        removes |= set(graph.backend.quads(g))
        info = classes.get(class_id)
        if info is None:
            continue
        node = iri(class_id)
        adds |= {
            Quad(node, RDF_TYPE, vocab_iri("FailureClass"), g),
            Quad(node, vocab_iri("title"), Literal(info["title"]), g),
            Quad(node, vocab_iri("privacy"), Literal(info["privacy"]), g),
            Quad(node, vocab_iri("body"), Literal(" · ".join(info["occurrences"])), g),
        }
        adds |= {Quad(node, vocab_iri("aliases"), Literal(a), g) for a in info["aliases"]}
    return Delta(adds=adds, removes=removes)


def _candidate_quads(
    graph: Session, cand: Candidate, resolver: Resolver, g: NamedNode
) -> set[Quad]:
    node = NamedNode(CANDIDATE + candidate_id(cand.source, cand.target, cand.key))
    quads = {
        Quad(node, RDF_TYPE, vocab_iri("LinkCandidate"), g),
        Quad(node, vocab_iri("candidateFrom"), graph.ids.iri(cand.source), g),
        Quad(node, vocab_iri("targetText"), Literal(cand.target), g),
        Quad(node, vocab_iri("sentence"), Literal(cand.sentence), g),
        Quad(node, vocab_iri("sentenceKey"), Literal(cand.key), g),
        Quad(node, vocab_iri("source"), Literal(cand.path), g),
        Quad(
            node, vocab_iri("line"), Literal(str(cand.line), datatype=NamedNode(XSD + "integer")), g
        ),
    }
    target = resolver.resolve(cand.target).id
    if target is not None:
        quads.add(Quad(node, vocab_iri("candidateTo"), graph.ids.iri(target), g))
    if cand.label:
        quads.add(Quad(node, vocab_iri("label"), Literal(cand.label), g))
    return quads


def candidate_id(source: str, target: str, key: str) -> str:
    return hashlib.sha256(f"{source}\n{target}\n{key}".encode()).hexdigest()[:12]


def _commit(
    graph: Session,
    remake: Callable[[], Delta],
    extracted: dict[str, Extracted],
    accepted: dict[str, list[tuple[RelationEntry, str, str]]],
    resolver: Resolver,
    report: RebuildReport,
) -> dict[str, str]:
    """Commit; an object whose values still break a rule is rejected (``path:line`` and the
    reason), the other objects of its record are kept, and the rest is retried.

    Returns the rejected objects (id → the path that made it).
    """
    rejected: dict[str, str] = {}
    owner = {o.id: (path, o) for path, ex in extracted.items() for o in ex.objects}
    relations = set(graph.schema.relations)

    def orphaned(f: Finding) -> bool:
        # A relation left pointing at, or out of, an object that does not exist after this
        # rebuild (its record is gone, or the object was rejected): an orphan, reported by
        # name after the commit (and removed by `gc`), not a reason to reject the record
        # that holds it. Only relation endpoints: a bad value is never an orphan.
        if f.focus in rejected:
            return True  # the only statements left about a rejected object are such edges
        return (
            f.path in relations
            and f.constraint in ("class", "or")
            and isinstance(f.value, str)
            and f.value != f.focus
            and (f.value in rejected or f.value not in resolver.types)
        )

    for _ in range(5):
        delta = remake()
        try:
            graph.writes.commit(delta, tolerate=orphaned)
            return rejected
        except ValidationFailed as refused:
            blamed: dict[str, list[Finding]] = defaultdict(list)
            for f in refused.findings:
                if f.focus in owner and f.focus not in rejected:
                    blamed[f.focus].append(f)
            if not blamed:
                raise
            for object_id, findings in sorted(blamed.items()):
                path, obj = owner[object_id]
                first = findings[0].path
                line = obj.lines.get(first, obj.line) if first else obj.line
                reasons = "; ".join(f.describe() for f in findings)
                report.notes.append(
                    Note(
                        path, line, "rejected", f"a value breaks a rule, no object made: {reasons}"
                    )
                )
                rejected[object_id] = path
                ex = extracted[path]
                ex.objects = [o for o in ex.objects if o.id != object_id]
                ex.candidates = [c for c in ex.candidates if c.source != object_id]
                # Its own relations go with it (those of other records into it are orphans);
                # a record left with no object yields nothing (a failure's class goes too).
                accepted[path] = [a for a in accepted.get(path, []) if a[1] != object_id]
                if not ex.objects:
                    extracted[path] = Extracted(notes=ex.notes)
                    accepted.pop(path, None)
    raise ValidationFailed([], "rebuild could not make the records valid; nothing was changed")


def _orphans(
    graph: Session, missing: set[str], rejected: dict[str, str]
) -> tuple[list[Note], set[str]]:
    """Relations held by records that point at, or out of, an object that does not exist
    (named, with why); and those objects, to check again next time (gc may remove them)."""
    if not missing:
        return [], set()
    notes, still = [], set()
    nodes = sorted(missing)
    common = f"""
        FILTER(STRSTARTS(STR(?g), "{RECORD_GRAPH_PREFIX}") && ?p != {RDF_TYPE}
               && STRSTARTS(STR(?p), "{OL}") && STRSTARTS(STR(?s), "{graph.ids.base}")
               && STRSTARTS(STR(?o), "{graph.ids.base}"))"""
    for i in range(0, len(nodes), 400):
        listed = " ".join(str(graph.ids.iri(t)) for t in nodes[i : i + 400])
        query = f"""
            SELECT ?s ?p ?o ?g ?gone WHERE {{
                VALUES ?gone {{ {listed} }}
                {{ GRAPH ?g {{ ?s ?p ?gone }} BIND(?gone AS ?o) }}
                UNION {{ GRAPH ?g {{ ?gone ?p ?o }} BIND(?gone AS ?s) }}
                {common}
                FILTER NOT EXISTS {{ ?gone {RDF_TYPE} ?t }}
            }}"""
        for row in graph.backend.select(query):
            s, o = graph.ids.id_of(row["s"]), graph.ids.id_of(row["o"])
            gone = graph.ids.id_of(row["gone"])
            rel = row["p"].value.rsplit("#", 1)[-1]
            path = unquote(row["g"].value.removeprefix(RECORD_GRAPH_PREFIX))
            why = (
                f"{gone} was rejected (see {rejected[gone]}); the relation counts again once "
                "that is fixed"
                if gone in rejected
                else f"{gone} no longer exists (run `ontoloom gc`)"
            )
            notes.append(Note(path, None, "orphan", f"{s} {rel} {o}: {why}"))
            still.add(gone)
    return sorted(set(notes), key=lambda n: (n.path, n.message)), still


def _counts(graph: Session) -> tuple[dict[str, int], dict[str, int]]:
    types: Counter[str] = Counter()
    rels: Counter[str] = Counter()
    record_types = {
        c.value.rsplit("#", 1)[-1] for c in graph.schema.hierarchy.subclasses(vocab_iri("Record"))
    }
    for row in graph.backend.select(
        f"SELECT ?t (COUNT(DISTINCT ?s) AS ?n) WHERE {{ GRAPH ?g {{ ?s {RDF_TYPE} ?t }} "
        f'FILTER(STRSTARTS(STR(?g), "{GRAPH_BASE}record")) }} GROUP BY ?t'
    ):
        name = row["t"].value.rsplit("#", 1)[-1]
        if name in record_types:
            types[name] = int(row["n"].value)
    for row in graph.backend.select(
        f"SELECT ?p (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?s ?p ?o WHERE {{ GRAPH ?g {{ ?s ?p ?o }} "
        f'FILTER(STRSTARTS(STR(?g), "{RECORD_GRAPH_PREFIX}") && isIRI(?o) && ?p != {RDF_TYPE} '
        f'&& STRSTARTS(STR(?s), "{graph.ids.base}")) }} }} GROUP BY ?p'
    ):
        rels[row["p"].value.rsplit("#", 1)[-1]] = int(row["n"].value)
    return dict(sorted(types.items())), dict(sorted(rels.items()))
