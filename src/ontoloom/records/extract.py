"""What a record yields: objects, relation entries (with the line they came from), wikilink
candidates and confirmed (written-back) relations — per RECORDS.md, deterministically."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from ontoloom.egress import privacy_of
from ontoloom.records.frontmatter import Note, ParsedRecord
from ontoloom.records.slug import KIND_PREFIX, PREFIXES, slug

__all__ = [
    "Candidate",
    "Extracted",
    "RecordObject",
    "RelationEntry",
    "extract",
    "extract_decision_log",
]

MAX_BODY = 100_000
_KNOWN = {"title", "aliases", "date", "privacy", "relations", "ontoloom", "id", "mentions"}
_FAILURE_FIELDS = {"class", "class-aliases", "covered-by", "resolved-by"}
_WIKILINK = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|([^\[\]\n]+?))?\]\]")
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SECTION = re.compile(r"^##\s+(\d{4}-\d{2}-\d{2})\s+(.+?)\s*$")
_PROPERTY_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


@dataclass
class RecordObject:
    id: str
    type: str
    title: str
    path: str
    line: int
    privacy: str
    aliases: list[str] = field(default_factory=list)
    date: str | None = None
    body: str = ""
    properties: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # frontmatter key → its line

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "title": self.title, "aliases": self.aliases}


@dataclass(frozen=True)
class RelationEntry:
    source: str  # object id
    rel: str
    target: str  # a reference: id, slug, title or alias
    path: str
    line: int | None
    quote: str  # the frontmatter line it came from
    on_class: str | None = None  # also stored on this failure class
    confirmed: bool = False  # an ontoloom: (written back) entry


@dataclass(frozen=True)
class Candidate:
    """A wikilink in a body: a relation someone may type later."""

    source: str
    target: str
    label: str | None
    sentence: str
    key: str  # the normalised sentence's hash: verdicts are keyed to it
    path: str
    line: int


@dataclass
class Extracted:
    objects: list[RecordObject] = field(default_factory=list)
    relations: list[RelationEntry] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)  # failure-class id → info
    notes: list[Note] = field(default_factory=list)
    # (object reference, alias, line): names a conversation gave an existing object (merges:)
    aliases: list[tuple[str, str, int | None]] = field(default_factory=list)


def _privacy(value: Any, default: str) -> str:
    """RECORDS.md's rule, as the egress gate applies it: unrecognised values are private."""
    return privacy_of([] if value is None else [value], default).cls or "private"


def _scalar(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return json.dumps(
            {str(k): _scalar(v) for k, v in value.items()}, ensure_ascii=False, default=str
        )
    if isinstance(value, list):
        return [_scalar(v) for v in value if not isinstance(v, list | dict)] or None
    if isinstance(value, bool | int | float | str):
        return value
    return None if value is None else str(value)


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [str(_scalar(v)) for v in items if v is not None and not isinstance(v, dict | list)]


def _quote(raw_lines: list[str], line: int | None) -> str:
    if line is None or not 1 <= line <= len(raw_lines):
        return ""
    return raw_lines[line - 1].strip()


def object_id(
    kind: str, record: ParsedRecord, rel_path: PurePosixPath, extracted: Extracted
) -> str | None:
    prefix, _ = KIND_PREFIX[kind]
    given = record.meta.get("id")
    if given is not None:
        text = str(given)
        head, sep, rest = text.partition(":")
        if sep and head in PREFIXES:
            if head != prefix:
                extracted.notes.append(
                    Note(
                        record.path,
                        record.line_of("id"),
                        "rejected",
                        f"id {text!r} carries the prefix of another kind ({head}:); this folder makes {prefix}: ids",
                    )
                )
                return None
            text = rest
        value = slug(text)
    elif kind == "documents":
        parts = [slug(p) for p in rel_path.with_suffix("").parts]
        value = "/".join(p for p in parts if p)
    else:
        value = slug(rel_path.stem)
    if not value:
        extracted.notes.append(
            Note(
                record.path,
                record.line_of("id"),
                "rejected",
                "no id can be made: the name has no letters or digits",
            )
        )
        return None
    return f"{prefix}:{value}"


def _title(record: ParsedRecord, stem: str) -> str:
    title = record.meta.get("title")
    if title is not None and str(title).strip():
        return str(_scalar(title)).strip()
    heading = _HEADING.search(record.body)
    if heading:
        return heading.group(1).strip()
    return re.sub(r"[-_]+", " ", stem).strip() or stem


def extract(
    kind: str, record: ParsedRecord, rel_path: PurePosixPath, default_privacy: str, raw: str
) -> Extracted:
    """The objects and entries of one record file of ``kind``."""
    out = Extracted(notes=list(record.notes))
    if not record.ok:
        return out
    entity_id = object_id(kind, record, rel_path, out)
    if entity_id is None:
        return out
    meta = record.meta
    raw_lines = raw.replace("\r\n", "\n").split("\n")
    _, type_name = KIND_PREFIX[kind]
    date = meta.get("date")
    obj = RecordObject(
        id=entity_id,
        type=type_name,
        title=_title(record, rel_path.stem),
        path=record.path,
        line=1,
        privacy=_privacy(meta.get("privacy"), default_privacy),
        aliases=_strings(meta.get("aliases")),
        date=str(_scalar(date)) if date is not None else None,
        body=record.body[:MAX_BODY],
        # So a value the shapes refuse can be reported at its line.
        lines={str(k): n for k in meta if (n := record.line_of(str(k))) is not None},
    )
    reserved = _KNOWN | (_FAILURE_FIELDS if kind == "failures" else set())
    for key, value in meta.items():
        key = str(key)
        if key in reserved:
            continue
        if not _PROPERTY_NAME.match(key) or key in (
            "type",
            "created",
            "updated",
            "properties",
            "body",
            "source",
        ):
            out.notes.append(
                Note(
                    record.path,
                    record.line_of(key),
                    "skipped",
                    f"field {key!r} cannot be stored as a property",
                )
            )
            continue
        scalar = _scalar(value)
        if scalar is not None:
            obj.properties[key] = scalar
    out.objects.append(obj)

    def entries(key: str, rel: str, on_class: str | None = None) -> None:
        value = meta.get(key)
        items = value if isinstance(value, list) else [value] if value is not None else []
        for i, item in enumerate(items):
            line = record.line_of(key, i) if isinstance(value, list) else record.line_of(key)
            for target in _strings(item):
                out.relations.append(
                    RelationEntry(
                        entity_id, rel, target, record.path, line, _quote(raw_lines, line), on_class
                    )
                )

    if kind == "failures":
        class_value = meta.get("class")
        class_slug = (
            slug(str(class_value).removeprefix("failure-class:")) if class_value is not None else ""
        )
        if not class_slug:
            out.notes.append(
                Note(
                    record.path,
                    record.line_of("class") or 1,
                    "rejected",
                    "a failure needs class: (the kind of failure it recurs as); the record was skipped",
                )
            )
            out.objects.clear()
            return out
        class_id = f"failure-class:{class_slug}"
        line = record.line_of("class")
        out.relations.append(
            RelationEntry(
                entity_id, "recurs-as", class_id, record.path, line, _quote(raw_lines, line)
            )
        )
        out.classes[class_id] = {
            "aliases": _strings(meta.get("class-aliases")),
            "privacy": obj.privacy,
            "occurrence": obj.title,
        }
        entries("covered-by", "covered-by", class_id)
        entries("resolved-by", "resolved-by", class_id)
    entries("mentions", "mentions")
    _relations_block(record, meta.get("relations"), entity_id, raw_lines, out)
    _confirmed_block(record, meta.get("ontoloom"), raw_lines, out)
    out.candidates.extend(wikilinks(entity_id, record.path, obj.body, record.body_line))
    return out


def _relations_block(
    record: ParsedRecord, block: Any, source: str, raw_lines: list[str], out: Extracted
) -> None:
    """Both forms: a list of single-key mappings, or a mapping of relation → target(s)."""
    if block is None:
        return
    pairs: list[tuple[str, Any, int | None]] = []
    if isinstance(block, list):
        for i, item in enumerate(block):
            line = (
                record.meta["relations"].lc.item(i)[0] + 2
                if hasattr(block, "lc")
                else record.line_of("relations")
            )
            if not isinstance(item, dict) or len(item) != 1:
                out.notes.append(
                    Note(
                        record.path,
                        line,
                        "rejected",
                        "a relations: item is one mapping relation: target, e.g. - applies: rule:x",
                    )
                )
                continue
            ((rel, target),) = item.items()
            pairs.append((str(rel), target, line))
    elif isinstance(block, dict):
        for rel, target in block.items():
            line = block.lc.key(rel)[0] + 2 if hasattr(block, "lc") else record.line_of("relations")
            pairs.append((str(rel), target, line))
    else:
        out.notes.append(
            Note(
                record.path,
                record.line_of("relations"),
                "rejected",
                "relations: is a list or a mapping of relation: target",
            )
        )
        return
    for rel, target, line in pairs:
        for t in _strings(target):
            out.relations.append(
                RelationEntry(source, rel, t, record.path, line, _quote(raw_lines, line))
            )


def _confirmed_block(
    record: ParsedRecord, block: Any, raw_lines: list[str], out: Extracted
) -> None:
    """``ontoloom:`` entries written back when a person confirmed a proposal."""
    if block is None:
        return
    if not isinstance(block, list):
        out.notes.append(
            Note(
                record.path,
                record.line_of("ontoloom"),
                "rejected",
                "ontoloom: is a list of confirmed relations",
            )
        )
        return
    for i, item in enumerate(block):
        line = record.line_of("ontoloom", i)
        if not isinstance(item, dict) or not all(
            k in item for k in ("source", "relation", "target")
        ):
            out.notes.append(
                Note(
                    record.path,
                    line,
                    "rejected",
                    "an ontoloom: entry needs source, relation and target",
                )
            )
            continue
        out.relations.append(
            RelationEntry(
                str(item["source"]),
                str(item["relation"]),
                str(item["target"]),
                record.path,
                line,
                _quote(raw_lines, line),
                confirmed=True,
            )
        )


def _sentence(text: str, start: int, end: int) -> str:
    left = max(
        text.rfind("\n\n", 0, start),
        max(text.rfind(p, 0, start) for p in (". ", "! ", "? ", ".\n", "!\n", "?\n")),
    )
    left = 0 if left < 0 else left + 1
    rights = [
        i
        for i in (text.find(p, end) for p in (". ", "! ", "? ", ".\n", "!\n", "?\n", "\n\n"))
        if i >= 0
    ]
    right = min(rights) + 1 if rights else len(text)
    return " ".join(text[left:right].split())


def sentence_key(sentence: str) -> str:
    """Verdicts are keyed to the sentence's normalised text (case and spacing ignored)."""
    return hashlib.sha256(" ".join(sentence.lower().split()).encode()).hexdigest()[:24]


def wikilinks(source: str, path: str, body: str, body_line: int) -> list[Candidate]:
    out = []
    for match in _WIKILINK.finditer(body):
        target, label = match.group(1).strip(), (match.group(2) or "").strip() or None
        sentence = _sentence(body, match.start(), match.end())
        line = body_line + body.count("\n", 0, match.start())
        out.append(Candidate(source, target, label, sentence, sentence_key(sentence), path, line))
    return out


def extract_confirmed(record: ParsedRecord, raw: str) -> Extracted:
    """A record ontoloom writes itself: its ``objects:`` (objects confirmed from
    conversations) and its ``ontoloom:`` entries (confirmed relations) count."""
    out = Extracted(notes=list(record.notes))
    if record.ok:
        _confirmed_objects(record, record.meta.get("objects"), out)
        for i, item in enumerate(record.meta.get("merges") or []):
            line = record.line_of("merges", i)
            if isinstance(item, dict) and isinstance(item.get("into"), str) and item.get("alias"):
                out.aliases.append((item["into"], str(item["alias"]), line))
            else:
                out.notes.append(
                    Note(record.path, line, "rejected", "a merges: entry needs into and alias")
                )
        _confirmed_block(
            record, record.meta.get("ontoloom"), raw.replace("\r\n", "\n").split("\n"), out
        )
    return out


_CONFIRMED_OBJECT_KEYS = {"id", "type", "title", "aliases", "properties", "date", "privacy"}


def _confirmed_objects(record: ParsedRecord, block: Any, out: Extracted) -> None:
    """``objects:`` entries: ``{id, type, title, aliases?, properties?, date?}`` (anchors
    such as transcript, message and quote are kept as provenance, not read)."""
    if block is None:
        return
    if not isinstance(block, list):
        out.notes.append(
            Note(record.path, record.line_of("objects"), "rejected", "objects: is a list")
        )
        return
    privacy_default = _privacy(record.meta.get("privacy"), "internal")
    for i, item in enumerate(block):
        line = record.line_of("objects", i) or 1
        if (
            not isinstance(item, dict)
            or not all(
                isinstance(item.get(k), str) and item.get(k) for k in ("id", "type", "title")
            )
            or ":" not in str(item["id"])
            or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", str(item["type"]))
        ):
            out.notes.append(
                Note(
                    record.path,
                    line,
                    "rejected",
                    "an objects: entry needs id (prefix:slug), type (a schema type) and title",
                )
            )
            continue
        props = item.get("properties") or {}
        aliases = item.get("aliases") or []
        out.objects.append(
            RecordObject(
                str(item["id"]),
                str(item["type"]),
                str(item["title"]),
                record.path,
                line,
                _privacy(item.get("privacy"), privacy_default),
                aliases=[str(a) for a in aliases] if isinstance(aliases, list) else [],
                date=str(item["date"]) if item.get("date") else None,
                properties={str(k): v for k, v in props.items()} if isinstance(props, dict) else {},
            )
        )


def extract_decision_log(record: ParsedRecord, default_privacy: str) -> Extracted:
    """``decision-log.md``: every ``## <date> <title>`` section is one decision."""
    out = Extracted(notes=list(record.notes))
    if not record.ok:
        return out
    privacy = _privacy(record.meta.get("privacy"), default_privacy)
    lines = record.body.split("\n")
    sections: list[tuple[int, str, str, list[str]]] = []
    for i, text in enumerate(lines):
        match = _SECTION.match(text)
        if match:
            sections.append((record.body_line + i, match.group(1), match.group(2), []))
        elif text.startswith("## ") and sections:
            sections.append((record.body_line + i, "", "", []))  # another heading ends a section
        elif sections:
            sections[-1][3].append(text)
    seen: set[str] = set()
    for line, date, title, body_lines in sections:
        if not date:
            continue
        entity_id = f"decision:{slug(f'{date} {title}')}"
        if entity_id in seen:
            out.notes.append(
                Note(
                    record.path,
                    line,
                    "collision",
                    f"a second section makes {entity_id}; it was skipped",
                )
            )
            continue
        seen.add(entity_id)
        body = "\n".join(body_lines).strip("\n")
        out.objects.append(
            RecordObject(
                entity_id,
                "Decision",
                title,
                record.path,
                line,
                privacy,
                date=date,
                body=body[:MAX_BODY],
            )
        )
        out.candidates.extend(wikilinks(entity_id, record.path, body, line + 1))
    return out
