"""Ids, IRIs, literal values and the JSON shapes agents see.

JSON shapes follow the seeds' encoding, so agents recognise them:

* entity   ``{"id", "type", "properties": {…}, "created", "updated"}``
* relation ``{"id", "from_id", "from_type", "rel", "to_id", "to_type"}``
* refusal  ``{"error": "validation", "message", …report, "results": [finding…]}``: the one
  findings shape, defined in :mod:`ontoloom.findings`
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import secrets
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from ontoloom.errors import BadInput
from ontoloom.secret_text import holds_secret, holds_token
from ontoloom.terms import Literal, NamedNode, Term
from ontoloom.vocab import OL, XSD, XSD_INTEGER_TYPES, IdSpace, vocab_name

__all__ = [
    "OBSERVATIONS",
    "OBSERVATION_ORDER",
    "Entity",
    "IdSpace",
    "Relation",
    "check_id",
    "check_property_name",
    "deletion_json",
    "in_written_order",
    "label_of",
    "literal_from_json",
    "new_id",
    "now_literal",
    "nth_stamp",
    "observation_digest",
    "relation_id",
    "shown_id",
    "value_to_json",
    "vocab_iri",
    "vocab_name",
]

JSONScalar = str | int | float | bool
_ID_RE = re.compile(r"^[^\W_][\w.:/@+-]*$")
_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_INT_RE = re.compile(r"^-?\d+$")
_FLOAT_RE = re.compile(r"^-?\d+\.\d+$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$")
MAX_ID_LENGTH = 200
RESERVED_PROPERTIES = frozenset({"id", "type", "created", "updated", "properties"})


def new_id(type_name: str) -> str:
    """A fresh entity id: ``{type.lower()[:4]}_{8 hex}``.

    >>> new_id("Task")[:5], len(new_id("Task"))
    ('task_', 13)
    """
    return f"{type_name.lower()[:4]}_{secrets.token_hex(4)}"


def is_id(value: Any) -> bool:
    """Whether :func:`check_id` accepts ``value``, without the message a refusal carries:
    a name tried as an id first (the drop-in's names) costs a pattern match.

    >>> is_id("task_a1b2c3d4"), is_id("Person 42"), is_id("")
    (True, False, False)
    """
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_ID_LENGTH
        and _ID_RE.match(value) is not None
        and not holds_token(value)
    )


def check_id(value: str) -> str:
    """Validate a given id: letters or digits first, then letters, digits, ``_ . : / @ + -``.

    >>> check_id("task_a1b2c3d4")
    'task_a1b2c3d4'
    >>> check_id("bad id")
    Traceback (most recent call last):
    ontoloom.errors.BadInput: invalid id 'bad id': ...
    """
    if (
        not isinstance(value, str)
        or not value
        or len(value) > MAX_ID_LENGTH
        or not _ID_RE.match(value)
    ):
        raise BadInput(
            f"invalid id {shown_id(value)}: an id starts with a letter or digit and holds only "
            f"letters, digits and _ . : / @ + - (at most {MAX_ID_LENGTH} characters), "
            "e.g. task_a1b2c3d4"
        )
    if holds_token(value):  # never printed back: it is a secret's value
        raise BadInput(
            "invalid id: it holds a token or key, and an id is shown wherever the object is; "
            "secrets are never stored in the graph: use a plain id, e.g. task_a1b2c3d4"
        )
    return value


def shown_id(value: Any) -> str:
    """An id as a message quotes it: never one that holds a secret.

    >>> shown_id("task_a1b2c3d4"), shown_id("AKIA" + "A" * 16), shown_id("password=hunter2")
    ("'task_a1b2c3d4'", '(not shown: it holds a secret)', '(not shown: it holds a secret)')
    """
    return "(not shown: it holds a secret)" if holds_secret(str(value)) else repr(value)


def check_property_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name) or len(name) > 64:
        raise BadInput(
            f"invalid property name {name!r}: use a letter followed by letters, digits, _ or -"
        )
    if name in RESERVED_PROPERTIES:
        raise BadInput(f"{name!r} is reserved and cannot be set as a property")
    return name


def relation_id(from_id: str, rel: str, to_id: str) -> str:
    """``sha256(from_id + "\\n" + rel + "\\n" + to_id)`` in hex.

    >>> relation_id("a", "blocks", "b")[:12]
    '4f911b45d548'
    """
    return hashlib.sha256(f"{from_id}\n{rel}\n{to_id}".encode()).hexdigest()


def vocab_iri(name: str) -> NamedNode:
    return NamedNode(OL + name)


def parse_scalar(text: str) -> Any:
    """A command-line value: JSON literals (numbers, booleans, null, lists) or else a string.

    >>> parse_scalar("3"), parse_scalar("1.5"), parse_scalar("true"), parse_scalar("open")
    (3, 1.5, True, 'open')
    >>> parse_scalar('["a", "b"]')
    ['a', 'b']

    An integer written with a leading zero or as ``-0`` is kept as written, a string (a
    postcode, a version, an id): read as a number it would lose what was written.

    >>> parse_scalar("01"), parse_scalar("-0"), parse_scalar("10")
    ('01', '-0', 10)
    """
    if _INT_RE.match(text):
        number = int(text)
        return number if str(number) == text else text
    if text in ("true", "false", "null") or _FLOAT_RE.match(text):
        return json.loads(text)
    if text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    return text


def literal_from_json(value: Any, *, field_name: str = "value") -> list[Literal]:
    """A JSON value as literals: lists give one literal per item; ``None`` gives none.

    >>> [str(x) for x in literal_from_json(3)]
    ['"3"^^<http://www.w3.org/2001/XMLSchema#integer>']
    >>> [str(x) for x in literal_from_json("2026-11-02")]
    ['"2026-11-02"^^<http://www.w3.org/2001/XMLSchema#date>']
    >>> [x.value for x in literal_from_json(["a", "b"])]
    ['a', 'b']
    """
    if value is None:
        return []
    if isinstance(value, list):
        out: list[Literal] = []
        for item in value:
            if isinstance(item, list | dict) or item is None:
                raise BadInput(f"{field_name}: list items must be strings, numbers or booleans")
            out.extend(literal_from_json(item, field_name=field_name))
        return out
    if isinstance(value, bool):
        return [Literal("true" if value else "false", datatype=NamedNode(XSD + "boolean"))]
    if isinstance(value, int):
        return [Literal(str(value), datatype=NamedNode(XSD + "integer"))]
    if isinstance(value, float | Decimal):
        if isinstance(value, float) and not math.isfinite(value):
            raise BadInput(f"{field_name}: {value} is not a finite number")
        text = format(Decimal(repr(value)) if isinstance(value, float) else value, "f")
        return [Literal(text, datatype=NamedNode(XSD + "decimal"))]
    if isinstance(value, str):
        _unicode(value, field_name)
        if _DATE_RE.match(value) and _valid(dt.date.fromisoformat, value):
            return [Literal(value, datatype=NamedNode(XSD + "date"))]
        if _DATETIME_RE.match(value) and _valid(dt.datetime.fromisoformat, value):
            return [Literal(value, datatype=NamedNode(XSD + "dateTime"))]
        return [Literal(value)]
    raise BadInput(
        f"{field_name}: unsupported value {value!r}; use a string, number, boolean or a list of them"
    )


def _unicode(text: str, field_name: str) -> None:
    """RDF terms hold Unicode text: a lone surrogate (from JSON's ``"\\ud800"``, or bytes
    that are not UTF-8 in a command line) is refused, not a crash.

    >>> _unicode("caf\\udce9", "title")
    Traceback (most recent call last):
    ontoloom.errors.BadInput: title: the text is not valid Unicode (a lone surrogate at character 4)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadInput(
            f"{field_name}: the text is not valid Unicode (a lone surrogate at character {exc.start + 1})"
        ) from None


def _valid(parse: Any, text: str) -> bool:
    try:
        parse(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def value_to_json(term: Term) -> JSONScalar:
    """A literal back as the JSON value it was written as (dates stay ISO strings).

    >>> value_to_json(literal_from_json(1.5)[0]), value_to_json(literal_from_json(True)[0])
    (1.5, True)
    """
    if not isinstance(term, Literal):
        return str(term.value)
    dtype = term.datatype.value
    try:
        if dtype in XSD_INTEGER_TYPES:
            return int(term.value)
        if dtype == XSD + "decimal":
            return float(Decimal(term.value))
        if dtype in (XSD + "double", XSD + "float"):
            return float(term.value)
        if dtype == XSD + "boolean":
            return term.value in ("true", "1")
    except (ValueError, InvalidOperation):
        pass
    return term.value


@dataclass
class Entity:
    id: str
    type: str
    properties: dict[str, Any] = field(default_factory=dict)
    created: str | None = None
    updated: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "type": self.type, "properties": self.properties}
        if self.created:
            out["created"] = self.created
        if self.updated:
            out["updated"] = self.updated
        return out

    @property
    def label(self) -> str:
        return label_of(self.properties, self.id)


def label_of(properties: dict[str, Any], entity_id: str) -> str:
    """What an entity is called: its title (or name, description, content, service), else
    its id.

    >>> label_of({"name": "Ada"}, "person_1"), label_of({}, "person_1")
    ('Ada', 'person_1')
    """
    for key in ("title", "name", "description", "content", "service"):
        value = properties.get(key)
        if isinstance(value, str) and value:
            return value
    return entity_id


def now_literal(at: dt.datetime | None = None) -> Literal:
    """Now (or ``at``), to the microsecond, as an xsd:dateTime in UTC in its canonical form
    (no trailing zeros in the fraction, which SPARQL engines would drop): creation and change
    stamps.

    >>> now_literal(dt.datetime(2026, 12, 2, 9, 30, 5, 120000, tzinfo=dt.UTC)).value
    '2026-12-02T09:30:05.120001Z'
    >>> now_literal(dt.datetime(2026, 12, 2, 9, 30, 5, tzinfo=dt.UTC)).value
    '2026-12-02T09:30:05Z'
    """
    at = at or dt.datetime.now(dt.UTC)
    if at.microsecond % 10 == 0 and at.microsecond:  # engines print six digits: none to drop
        at += dt.timedelta(microseconds=1)
    stamp = at.isoformat(timespec="microseconds")
    stamp = stamp.removesuffix("+00:00").rstrip("0").removesuffix(".")
    return Literal(stamp + "Z", datatype=NamedNode(XSD + "dateTime"))


def nth_stamp(start: dt.datetime, n: int) -> dt.datetime:
    """The ``n``-th instant from ``start`` (0 is the first) whose microsecond count does not end
    in 0, which :func:`now_literal` would move up by one: ``n`` objects created in one write get
    ``n`` distinct stamps in the order they were created.

    >>> [nth_stamp(dt.datetime(2026, 1, 1, 0, 0, 0, 8), n).microsecond for n in range(4)]
    [8, 9, 11, 12]
    >>> nth_stamp(dt.datetime(2026, 1, 1, 0, 0, 0, 120000), 0).microsecond
    120001
    """
    first = start.microsecond + (1 if start.microsecond % 10 == 0 else 0)
    place = first % 10 - 1 + n  # its place among the nine counts of its ten
    offset = (first - first % 10 + 1) + place // 9 * 10 + place % 9 - start.microsecond
    return start + dt.timedelta(microseconds=offset)


# ``observations`` is multi-valued, and RDF values have no order: the order they were written
# in is kept beside them as ``observation_order`` (digests, oldest first) by every write
# (:class:`ontoloom.changes.Changes`) and applied by every read, which never shows it.
OBSERVATIONS = "observations"
OBSERVATION_ORDER = "observation_order"


def observation_digest(observation: Any) -> str:
    return hashlib.sha256(str(observation).encode("utf-8")).hexdigest()[:12]


def in_written_order(observations: list[Any], order: str | None) -> list[Any]:
    """``observations`` (sorted) in the order ``order`` keeps; those it does not list (a
    store written without it) follow, sorted."""
    rank = {d: i for i, d in enumerate((order or "").split())}
    return sorted(observations, key=lambda o: rank.get(observation_digest(o), len(rank)))


def deletion_json(entity: Entity, relations: list[Relation]) -> dict[str, Any]:
    """What ``delete`` reports: the entity as it was and the relations that went with it."""
    return {"deleted": entity.to_json(), "relations_removed": [r.to_json() for r in relations]}


@dataclass(frozen=True)
class Relation:
    from_id: str
    rel: str
    to_id: str
    from_type: str | None = None
    to_type: str | None = None
    open: bool = False  # an open relation: the agent's own words, no schema rule behind it

    @property
    def id(self) -> str:
        return relation_id(self.from_id, self.rel, self.to_id)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "from_id": self.from_id,
            "from_type": self.from_type,
            "rel": self.rel,
            "to_id": self.to_id,
            "to_type": self.to_type,
        }
        if self.open:
            out["open"] = True
        return out
